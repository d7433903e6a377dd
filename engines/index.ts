/**
 * The engine registry: every engine skill-up drives, one line each. Everything that lists
 * engines derives from here: src/engine/known.ts (install and resolve), src/engine/registry.ts
 * (adapters), src/config/engines.ts (names and aliases in eval.yaml), src/model/ (the scripted
 * model's engine recognition), test/setup/engines.ts (the binaries the tests install),
 * `skill-up engines list` and the README's engine table (test/engines/registry.test.ts checks
 * the static copies: the README and schemas/eval.schema.json).
 *
 * Only the definitions are imported here; each adapter is loaded by its definition's `load()`
 * (a dynamic `import()`), so a run that uses one engine does not load the others.
 * Adding an engine: README.md, "Adding an engine".
 */
import type { EngineDefinition } from '../src/engine/definition.js';
import type { EngineAdapter } from '../src/engine/types.js';
import type { CustomEngineConfig } from '../src/config/types.js';
import { claudeCode } from './claude-code/index.js';
import { codex } from './codex/index.js';
import { opencode } from './opencode/index.js';
import { geminiCli } from './gemini-cli/index.js';
import { qwenCode } from './qwen-code/index.js';

/** The built-in CLI engines, in display order. */
const DEFINITIONS: EngineDefinition[] = [claudeCode, codex, opencode, geminiCli, qwenCode];

/** Name of the engine described by an `engine.custom` block instead of a definition. */
export const CUSTOM_ENGINE = 'custom';

/** Loads the custom engine's adapter factory (engines/custom/adapter.ts). */
export async function loadCustomEngine(): Promise<(config: CustomEngineConfig, skillDir: string) => EngineAdapter> {
  return (await import('./custom/adapter.js')).createCustomAdapter;
}

/** Every CLI engine's definition, in display order (a live view: `registerEngine` adds to it). */
export function engineDefinitions(): readonly EngineDefinition[] {
  return DEFINITIONS;
}

/** The definition whose canonical name or alias is `name`, or undefined. */
export function findEngineDefinition(name: string): EngineDefinition | undefined {
  return DEFINITIONS.find((d) => d.name === name || d.aliases.includes(name));
}

/**
 * Adds an engine at run time, after the built-in ones, and returns a function that removes it
 * again. What a line in DEFINITIONS does, for plug-ins and for tests that prove a new engine
 * needs nothing else.
 * @throws Error when the name or an alias is already taken (by an engine or `custom`).
 */
export function registerEngine(def: EngineDefinition): () => void {
  for (const n of [def.name, ...def.aliases]) {
    if (n === CUSTOM_ENGINE || findEngineDefinition(n)) throw new Error(`engine name \`${n}\` is already registered`);
  }
  DEFINITIONS.push(def);
  return () => {
    const at = DEFINITIONS.indexOf(def);
    if (at >= 0) DEFINITIONS.splice(at, 1);
  };
}
