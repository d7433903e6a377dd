/**
 * Engine plug-ins by name. Each adapter lives in the top-level `engines/<name>/` folder;
 * this is the one place that knows them all.
 */
import type { EngineConfig, Suite } from '../config/types.js';
import { createCustomAdapter } from '../../engines/custom/adapter.js';
import { claudeCodeAdapter } from '../../engines/claude-code/adapter.js';
import { codexAdapter } from '../../engines/codex/adapter.js';
import { geminiCliAdapter } from '../../engines/gemini-cli/adapter.js';
import { opencodeAdapter } from '../../engines/opencode/adapter.js';
import { qwenCodeAdapter } from '../../engines/qwen-code/adapter.js';
import { blankTurn, type EngineAdapter, EngineUnavailable } from './types.js';

/** Engine names this build can run. */
export const AVAILABLE_ENGINES = ['claude_code', 'codex', 'opencode', 'gemini_cli', 'qwen_code', 'custom'] as const;

/**
 * Returns the adapter for `engine`.
 * @throws EngineUnavailable when this build has no adapter for it.
 */
export async function getAdapter(engine: EngineConfig, suite: Suite): Promise<EngineAdapter> {
  if (engine.name === 'custom') {
    if (!engine.custom) throw new EngineUnavailable(`engine \`${engine.displayName}\` needs an engine.custom block`);
    return createCustomAdapter(engine.custom, suite.skillDir);
  }
  if (engine.name === 'claude_code') return claudeCodeAdapter as EngineAdapter;
  if (engine.name === 'codex') return codexAdapter as EngineAdapter;
  if (engine.name === 'opencode') return opencodeAdapter as EngineAdapter;
  if (engine.name === 'qwen_code') return qwenCodeAdapter as EngineAdapter;
  if (engine.name === 'gemini_cli') return geminiCliAdapter as EngineAdapter;
  throw new EngineUnavailable(`engine \`${engine.name}\` is not available in this version of skill-up (available: ${AVAILABLE_ENGINES.join(', ')})`);
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
