/**
 * The Gemini CLI engine's definition (`engine.name: gemini_cli`): its static facts, read
 * without loading the adapter. How it runs: README.md beside this file.
 */
import type { EngineDefinition } from '../../src/engine/definition.js';
import { geminiModelToolName } from './mcp.js';

/** The engine's registry entry (engines/index.ts). */
export const geminiCli: EngineDefinition = {
  name: 'gemini_cli',
  aliases: ['gemini', 'gemini-cli'],
  label: 'Gemini CLI',
  npmPackage: '@google/gemini-cli',
  bin: 'gemini',
  testedVersion: '0.61.0',
  // In a container image: its shell tool runs bash.
  imageCommands: ['bash'],
  // Both are scanned (cli/skills.md "Discovery tiers"); within the workspace tier the
  // `.agents/skills` alias wins over `.gemini/skills`, so the skill under test is installed there.
  skillDirs: ['.agents/skills', '.gemini/skills'],
  supportsResume: true,
  activation: 'the `activate_skill` tool',
  // stream-json `tool_result` says `status: "success"` for a shell command that exited non-zero
  // (the exit code goes only into the request sent to the model), so a shell call's outcome is unknown.
  shellExitObservable: false,
  /**
   * With a real model `GEMINI_*`, `GOOGLE_*` (API key, Vertex AI project, location, credentials
   * file), `CODE_ASSIST_*` and `CLOUD_SHELL`; with the scripted model nothing more.
   */
  envAllow: { realModel: [/^GEMINI_/, /^GOOGLE_/, /^CODE_ASSIST_/, 'CLOUD_SHELL'] },
  // MCP tools: `mcp_<server>_<tool>` (README, "MCP servers").
  model: { protocol: 'gemini', mcpTool: (server, tool) => ({ name: geminiModelToolName(server, tool) }) },
  doc: 'engines/gemini-cli/README.md',
  load: async () => (await import('./adapter.js')).geminiCliAdapter,
};
