/**
 * The Qwen Code engine's definition (`engine.name: qwen_code`): its static facts, read without
 * loading the adapter. How it runs: README.md beside this file.
 */
import type { EngineConfig } from '../../src/config/types.js';
import type { EngineDefinition } from '../../src/engine/definition.js';
import { qwenModelToolName } from './mcp.js';

/** `--auth-type`: `openai` for the scripted model and OpenAI-compatible providers; the provider's
 * own type when it is one Qwen Code knows (`anthropic`, `gemini`, `vertex-ai`, `qwen-oauth`, `openai-responses`). */
export function qwenAuthType(engine: EngineConfig): string {
  const p = engine.model.provider;
  if (!p || p === 'scripted') return 'openai';
  return ['openai', 'openai-responses', 'anthropic', 'qwen-oauth', 'gemini', 'vertex-ai'].includes(p) ? p : 'openai';
}

/** The engine's registry entry (engines/index.ts). */
export const qwenCode: EngineDefinition = {
  name: 'qwen_code',
  aliases: ['qwen', 'qwen-code'],
  label: 'Qwen Code',
  npmPackage: '@qwen-code/qwen-code',
  bin: 'qwen',
  testedVersion: '0.24.4',
  // In a container image: its shell tool runs bash.
  imageCommands: ['bash'],
  // Skills: PROJECT_SKILL_DIRS = [".qwen", ".agents"]; `.claude/skills` is not read.
  skillDirs: ['.qwen/skills', '.agents/skills'],
  supportsResume: true,
  activation: 'the `skill` tool',
  /**
   * With a real model `OPENAI_*`, `DASHSCOPE_*` and `QWEN_*`, plus the provider's own for
   * `--auth-type anthropic` (`ANTHROPIC_*`), `gemini` (`GEMINI_*`, `GOOGLE_API_KEY`) and
   * `vertex-ai` (`GOOGLE_*`, `GEMINI_*`); with the scripted model nothing more.
   */
  envAllow: {
    realModel: [/^OPENAI_/, /^DASHSCOPE_/, /^QWEN_/],
    select: (engine) => {
      const auth = qwenAuthType(engine);
      if (auth === 'anthropic') return [/^ANTHROPIC_/];
      if (auth === 'gemini') return [/^GEMINI_/, 'GOOGLE_API_KEY'];
      if (auth === 'vertex-ai') return [/^GOOGLE_/, /^GEMINI_/];
      return [];
    },
  },
  model: {
    protocol: 'openai_chat',
    userAgent: ['qwencode', 'qwen-code', 'qwen code'],
    systemPrompt: /^\s*You are Qwen Code\b/,
    userMarker: 'This is the Qwen Code.',
    // MCP tools: `mcp__<server>__<tool>`, declared (not deferred) with `alwaysLoadTools` (README, "MCP servers").
    mcpTool: (server, tool) => ({ name: qwenModelToolName(server, tool) }),
  },
  doc: 'engines/qwen-code/README.md',
  load: async () => (await import('./adapter.js')).qwenCodeAdapter,
};
