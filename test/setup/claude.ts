/**
 * vitest global set-up: makes the real Claude Code binary (the pinned version the examples
 * use) available to every test that drives it, installing it once from the npm registry into
 * a test cache. Tests read `SKILL_UP_CLAUDE_CODE_BIN`, which the engine resolver also honours.
 * Fails loudly (never a silent skip) when the binary cannot be had.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveEngineBinary } from '../../src/engine/resolve.js';

/** The Claude Code version skill-up's tests and examples pin. */
export const CLAUDE_CODE_VERSION = '2.1.332';

export default async function setup(): Promise<void> {
  if (process.env.SKILL_UP_CLAUDE_CODE_BIN) return;
  const cache = process.env.SKILL_UP_TEST_CACHE_DIR ?? join(tmpdir(), 'skill-up-test-cache');
  process.env.SKILL_UP_TEST_CACHE_DIR = cache;
  const saved = process.env.SKILL_UP_CACHE_DIR;
  process.env.SKILL_UP_CACHE_DIR = cache;
  try {
    const r = await resolveEngineBinary({
      npmPackage: '@anthropic-ai/claude-code',
      bin: 'claude',
      version: CLAUDE_CODE_VERSION,
      onProgress: (line) => console.log(line),
    });
    process.env.SKILL_UP_CLAUDE_CODE_BIN = r.path;
  } catch (e) {
    throw new Error(`cannot install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} for the engine tests (needs the npm registry, or set SKILL_UP_CLAUDE_CODE_BIN): ${(e as Error).message}`);
  } finally {
    if (saved === undefined) delete process.env.SKILL_UP_CACHE_DIR;
    else process.env.SKILL_UP_CACHE_DIR = saved;
  }
}
