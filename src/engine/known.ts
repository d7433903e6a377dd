/**
 * The engines skill-up knows how to install and resolve: canonical name → npm package and the
 * name of the executable the package puts in `node_modules/.bin/`. This table is the single
 * place these facts live; `resolve.ts`, `cache.ts` and `engines-command.ts` read it.
 *
 * Sources: shared/engines/claude-code-and-codex.md ("TL;DR" table) and
 * shared/engines/opencode-gemini-qwen-docker.md.
 */

/** One installable engine. */
export interface KnownEngine {
  /** Canonical engine name as written in eval.yaml (`engine.name`). */
  name: string;
  /** npm package that ships the engine's CLI. */
  npmPackage: string;
  /** Executable name under `node_modules/.bin/` (and on PATH). */
  bin: string;
}

/** Every engine skill-up can install from npm, in display order. */
export const KNOWN_ENGINES: readonly KnownEngine[] = Object.freeze([
  { name: 'claude_code', npmPackage: '@anthropic-ai/claude-code', bin: 'claude' },
  { name: 'codex', npmPackage: '@openai/codex', bin: 'codex' },
  { name: 'opencode', npmPackage: 'opencode-ai', bin: 'opencode' },
  { name: 'gemini_cli', npmPackage: '@google/gemini-cli', bin: 'gemini' },
  { name: 'qwen_code', npmPackage: '@qwen-code/qwen-code', bin: 'qwen' },
]);

/** The known engine called `name` (canonical name), or undefined. */
export function findKnownEngine(name: string): KnownEngine | undefined {
  return KNOWN_ENGINES.find((e) => e.name === name);
}

/** The known engine shipped by npm package `npmPackage`, or undefined. */
export function findKnownEngineByPackage(npmPackage: string): KnownEngine | undefined {
  return KNOWN_ENGINES.find((e) => e.npmPackage === npmPackage);
}

/**
 * Name of the environment variable that overrides an engine's binary path:
 * `SKILL_UP_<ENGINE>_BIN`, e.g. `claude_code` → `SKILL_UP_CLAUDE_CODE_BIN`.
 * Any character outside `[A-Za-z0-9]` becomes `_`.
 */
export function binOverrideVar(engineName: string): string {
  return `SKILL_UP_${engineName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_BIN`;
}
