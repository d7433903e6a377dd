/**
 * The Claude Code engine's definition (`engine.name: claude_code`): its static facts, read
 * without loading the adapter. How it runs: README.md beside this file.
 */
import type { EngineDefinition } from '../../src/engine/definition.js';
import { modelToolName } from './mcp.js';

/** The engine's registry entry (engines/index.ts). */
export const claudeCode: EngineDefinition = {
  name: 'claude_code',
  aliases: ['claude-code'],
  label: 'Claude Code',
  npmPackage: '@anthropic-ai/claude-code',
  bin: 'claude',
  testedVersion: '2.1.332',
  // In a container image: its Bash tool: "No suitable shell found" without it.
  imageCommands: ['bash'],
  skillDirs: ['.claude/skills'],
  supportsResume: true,
  activation: 'the `Skill` tool',
  /**
   * With a real model, `ANTHROPIC_*` and `CLAUDE_*` (key, base URL, auth token, model and Claude
   * Code settings), plus `AWS_*` when `CLAUDE_CODE_USE_BEDROCK` is set and Google Cloud's
   * variables when `CLAUDE_CODE_USE_VERTEX` is set; with the scripted model nothing more.
   */
  envAllow: {
    realModel: [/^ANTHROPIC_/, /^CLAUDE_/, 'MAX_THINKING_TOKENS', 'DISABLE_PROMPT_CACHING'],
    select: (_engine, parent) => [
      ...(parent.CLAUDE_CODE_USE_BEDROCK ? [/^AWS_/] : []),
      ...(parent.CLAUDE_CODE_USE_VERTEX ? ['GOOGLE_APPLICATION_CREDENTIALS', /^GOOGLE_CLOUD_/, 'CLOUD_ML_REGION', /^VERTEX_REGION_/] : []),
    ],
  },
  // MCP tools are `mcp__<server>__<tool>`; by default deferred behind ToolSearch (README, "MCP servers").
  model: { protocol: 'anthropic', mcpTool: (server, tool) => ({ name: modelToolName(server, tool) }) },
  doc: 'engines/claude-code/README.md',
  load: async () => (await import('./adapter.js')).claudeCodeAdapter,
};
