/**
 * vitest global set-up: makes the REAL engine binaries at their pinned versions available to
 * every test that drives them, installing each once from the npm registry into a test cache
 * with the same resolver a run uses. Each engine's path is exported as
 * `SKILL_UP_<ENGINE>_BIN` (e.g. `SKILL_UP_CLAUDE_CODE_BIN`), which the resolver honours, so
 * the examples and CLI tests use the same binaries. Fails loudly, never a silent skip.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binOverrideVar } from '../../src/engine/known.js';
import { resolveEngineBinary } from '../../src/engine/resolve.js';
import { engineDefinitions } from '../../engines/index.js';

/** Engine → the version skill-up's tests and examples pin: each definition's `testedVersion` (engines/<name>/index.ts). */
export const PINNED: Record<string, string> = Object.fromEntries(engineDefinitions().map((d) => [d.name, d.testedVersion]));

export default async function setup(): Promise<void> {
  const cache = process.env.SKILL_UP_TEST_CACHE_DIR ?? join(tmpdir(), 'skill-up-test-cache');
  process.env.SKILL_UP_TEST_CACHE_DIR = cache;
  for (const [name, version] of Object.entries(PINNED)) {
    const envVar = binOverrideVar(name);
    if (process.env[envVar]) continue;
    const known = engineDefinitions().find((d) => d.name === name)!;
    try {
      const r = await resolveEngineBinary({
        npmPackage: known.npmPackage,
        bin: known.bin,
        version,
        env: { ...process.env, SKILL_UP_CACHE_DIR: cache, [envVar]: undefined },
        onProgress: (line) => console.log(line),
      });
      process.env[envVar] = r.path;
    } catch (e) {
      throw new Error(`cannot install ${known.npmPackage}@${version} for the engine tests (needs the npm registry, or set ${envVar}): ${(e as Error).message}`, { cause: e });
    }
  }
}
