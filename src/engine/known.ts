/**
 * The engines skill-up knows how to install and resolve: canonical name → npm package and the
 * name of the executable the package puts in `node_modules/.bin/`. Derived from the engine
 * registry (engines/index.ts), where each engine's definition holds these facts;
 * `resolve.ts`, `cache.ts` and `engines-command.ts` read them through here.
 */
import { engineDefinitions } from '../../engines/index.js';

/** One installable engine. */
export interface KnownEngine {
  /** Canonical engine name as written in eval.yaml (`engine.name`). */
  name: string;
  /** npm package that ships the engine's CLI. */
  npmPackage: string;
  /** Executable name under `node_modules/.bin/` (and on PATH). */
  bin: string;
}

/** Every engine skill-up can install from npm, in display order (read at call time, so a registered engine is included). */
export function knownEngines(): readonly KnownEngine[] {
  return engineDefinitions().map((d) => ({ name: d.name, npmPackage: d.npmPackage, bin: d.bin }));
}

/** The known engines when this module loaded (the built-in ones); prefer `knownEngines()`. */
export const KNOWN_ENGINES: readonly KnownEngine[] = Object.freeze(knownEngines());

/** The known engine called `name` (canonical name), or undefined. */
export function findKnownEngine(name: string): KnownEngine | undefined {
  return knownEngines().find((e) => e.name === name);
}

/** The known engine shipped by npm package `npmPackage`, or undefined. */
export function findKnownEngineByPackage(npmPackage: string): KnownEngine | undefined {
  return knownEngines().find((e) => e.npmPackage === npmPackage);
}

/**
 * Name of the environment variable that overrides an engine's binary path:
 * `SKILL_UP_<ENGINE>_BIN`, e.g. `claude_code` → `SKILL_UP_CLAUDE_CODE_BIN`.
 * Any character outside `[A-Za-z0-9]` becomes `_`.
 */
export function binOverrideVar(engineName: string): string {
  return `SKILL_UP_${engineName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_BIN`;
}
