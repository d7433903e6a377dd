/**
 * Engine plug-ins by name, loaded on demand from the engine registry (engines/index.ts): only
 * the adapter of an engine a run uses is imported.
 */
import type { EngineConfig, Suite } from '../config/types.js';
import { CUSTOM_ENGINE, engineDefinitions, findEngineDefinition, loadCustomEngine } from '../../engines/index.js';
import { blankTurn, type EngineAdapter, EngineUnavailable } from './types.js';

/** Engine names this build can run: every registered engine, then `custom` (read at call time). */
export function availableEngines(): string[] {
  return [...engineDefinitions().map((d) => d.name), CUSTOM_ENGINE];
}

/**
 * Returns the adapter for `engine` (importing its code on first use).
 * @throws EngineUnavailable when this build has no adapter for it, or `custom` lacks its block.
 */
export async function getAdapter(engine: EngineConfig, suite: Suite): Promise<EngineAdapter> {
  if (engine.name === CUSTOM_ENGINE) {
    if (!engine.custom) throw new EngineUnavailable(`engine \`${engine.displayName}\` needs an engine.custom block`);
    return (await loadCustomEngine())(engine.custom, suite.skillDir);
  }
  const def = findEngineDefinition(engine.name);
  if (def && def.name === engine.name) return def.load();
  throw new EngineUnavailable(`engine \`${engine.name}\` is not available in this version of skill-up (available: ${availableEngines().join(', ')})`);
}

/**
 * An adapter standing in for an engine that cannot run: every turn ends in an `error` of
 * kind `missing` carrying the reason, so the run records errors instead of failing silently.
 */
export function unavailableAdapter(name: string, reason: string): EngineAdapter {
  return {
    name,
    skillDirs: ['.agents/skills'],
    supportsResume: true,
    async prepare() {
      return undefined;
    },
    async runTurn(_ctx, _p, turn) {
      return blankTurn(turn, { error: { kind: 'missing', message: reason } });
    },
  };
}
