/**
 * Per-test-file temporary folder: every `os.tmpdir()` of the tests, and of the CLI and engine
 * processes they start (they inherit TMPDIR), lands in one folder removed after the file's
 * tests, so the suite leaves nothing behind in /tmp.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const base = process.env.SKILL_UP_TEST_TMP_BASE ?? (process.env.SKILL_UP_TEST_TMP_BASE = process.env.TMPDIR ?? '/tmp');
const dir = mkdtempSync(join(base, 'skill-up-tests-'));
process.env.TMPDIR = dir;
// skill-up's per-user cache (engine versions probed, src/engine/cache.ts) likewise, unless a test run names one.
process.env.SKILL_UP_CACHE_DIR ??= join(dir, 'cache');

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
