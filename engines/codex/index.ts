/**
 * The OpenAI Codex CLI engine's definition (`engine.name: codex`): its static facts, read
 * without loading the adapter. How it runs: README.md beside this file.
 */
import type { EngineDefinition } from '../../src/engine/definition.js';
import { modelToolAddress } from './mcp.js';

/** The engine's registry entry (engines/index.ts). */
export const codex: EngineDefinition = {
  name: 'codex',
  aliases: ['codex-cli'],
  label: 'Codex',
  npmPackage: '@openai/codex',
  bin: 'codex',
  testedVersion: '0.171.0',
  // Both are scanned from the cwd (verified with 0.171.0); `.agents/skills` is the
  // agentskills.io location and where skill-up installs.
  skillDirs: ['.agents/skills', '.codex/skills'],
  supportsResume: true,
  activation: 'a shell read of its SKILL.md',
  /** With a real model `OPENAI_*`, `CODEX_*` and `AZURE_OPENAI_*`; with the scripted model nothing more. */
  envAllow: { realModel: [/^OPENAI_/, /^CODEX_/, /^AZURE_OPENAI_/] },
  // MCP tools: function `<tool>` in namespace `mcp__<server>` (README, "MCP servers").
  model: { protocol: 'openai_responses', mcpTool: modelToolAddress },
  doc: 'engines/codex/README.md',
  load: async () => (await import('./adapter.js')).codexAdapter,
};
