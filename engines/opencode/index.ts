/**
 * The OpenCode engine's definition (`engine.name: opencode`): its static facts, read without
 * loading the adapter. How it runs: README.md beside this file.
 */
import type { EngineDefinition } from '../../src/engine/definition.js';
import type { EnvPattern } from '../../src/engine/env.js';
import { modelToolName } from './mcp.js';

/** Environment prefixes of OpenCode providers whose variables are not simply `<ID>_*`. */
const PROVIDER_ENV: Record<string, readonly EnvPattern[]> = {
  google: ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY'],
  'google-vertex': [/^GOOGLE_/, /^VERTEX_/],
  'google-vertex-anthropic': [/^GOOGLE_/, /^VERTEX_/],
  'amazon-bedrock': [/^AWS_/],
  azure: [/^AZURE_/],
  togetherai: [/^TOGETHER_/],
  'github-copilot': [],
};

/** The engine's registry entry (engines/index.ts). */
export const opencode: EngineDefinition = {
  name: 'opencode',
  aliases: [],
  label: 'OpenCode',
  npmPackage: 'opencode-ai',
  bin: 'opencode',
  testedVersion: '1.18.33',
  // In a container image: its grep, glob and skill tools call rg.
  imageCommands: ['rg'],
  // Skills: project skills are found in all of these; skill-up installs into the first.
  skillDirs: ['.opencode/skills', '.opencode/skill', '.claude/skills', '.agents/skills'],
  supportsResume: true,
  activation: 'the `skill` tool',
  needs: '`rg` on PATH',
  /**
   * With a real model `OPENCODE_*` and the variables of the model's provider only
   * (`engine.model.provider`, else the `provider/` of `engine.model.name`): `<ID>_*` for provider
   * id ID (`anthropic` → `ANTHROPIC_*`, `openrouter` → `OPENROUTER_*`), or the provider's known
   * names (PROVIDER_ENV: `google`, `google-vertex`, `amazon-bedrock` → `AWS_*`, `azure`, …);
   * with the scripted model nothing more.
   */
  envAllow: {
    realModel: [/^OPENCODE_/],
    select: (engine) => {
      const id = engine.model.provider ?? (engine.model.name?.includes('/') ? engine.model.name.split('/')[0] : undefined);
      if (!id) return [];
      const known = PROVIDER_ENV[id];
      if (known) return known;
      return [new RegExp(`^${id.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_`)];
    },
  },
  model: {
    protocol: 'openai_chat',
    userAgent: ['opencode'],
    systemPrompt: /^\s*You are opencode\b/i,
    quotesPrompts: true,
    stepsExhaustedPrefill: 'CRITICAL - MAXIMUM STEPS REACHED',
    // MCP tools: `<server>_<tool>` (README, "MCP servers").
    mcpTool: (server, tool) => ({ name: modelToolName(server, tool) }),
  },
  doc: 'engines/opencode/README.md',
  load: async () => (await import('./adapter.js')).opencodeAdapter,
};
