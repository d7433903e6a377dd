/**
 * The engine cache: naming, version order, and real `npm install`s of a tiny package
 * (`semver`, which ships a `semver` executable) — first install, reuse, concurrent installs from
 * two independent installers (as two processes would), npm failures and leftovers.
 * Needs the npm registry.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  cacheRoot,
  cachedBinPath,
  compareVersionsDesc,
  displayPath,
  installDir,
  installToCache,
  listCachedVersions,
  sanitisePackage,
  summariseNpmErrors,
} from '../../src/engine/cache.js';
import { EngineUnavailable } from '../../src/engine/types.js';
import type * as CacheModule from '../../src/engine/cache.js';

const PKG = 'semver';
const BIN = 'semver';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'skill-up-cache-test-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('cache layout', () => {
  it('cache root: SKILL_UP_CACHE_DIR, else ~/.cache/skill-up', () => {
    expect(cacheRoot({ SKILL_UP_CACHE_DIR: '/x/y' })).toBe('/x/y');
    expect(cacheRoot({ SKILL_UP_CACHE_DIR: ' ' })).toBe(join(homedir(), '.cache', 'skill-up'));
    expect(cacheRoot({})).toBe(join(homedir(), '.cache', 'skill-up'));
  });

  it('one folder per package version', () => {
    expect(sanitisePackage('@anthropic-ai/claude-code')).toBe('anthropic-ai+claude-code');
    expect(sanitisePackage('opencode-ai')).toBe('opencode-ai');
    expect(installDir('/c', '@openai/codex', '0.171.0')).toBe('/c/engines/openai+codex@0.171.0');
    expect(cachedBinPath('/c', '@anthropic-ai/claude-code', '2.1.332', 'claude')).toBe(
      '/c/engines/anthropic-ai+claude-code@2.1.332/node_modules/.bin/claude',
    );
  });

  it('versions sort newest first, numerically, pre-releases before their release', () => {
    expect(['1.2.0', '1.10.0', '1.9.9', '2.0.0-rc.1', '2.0.0', '2.0.0-rc.10', '0.1'].sort(compareVersionsDesc)).toEqual([
      '2.0.0',
      '2.0.0-rc.10',
      '2.0.0-rc.1',
      '1.10.0',
      '1.9.9',
      '1.2.0',
      '0.1',
    ]);
  });

  it('displayPath abbreviates the home folder', () => {
    expect(displayPath(join(homedir(), '.cache', 'skill-up'))).toBe('~/.cache/skill-up');
    expect(displayPath('/opt/x')).toBe('/opt/x');
  });

  it('an absent cache lists nothing', async () => {
    expect(await listCachedVersions(join(root, 'absent'), PKG, BIN)).toEqual([]);
  });
});

describe('installToCache (real npm)', () => {
  it('installs once, reports one progress line, then reuses the folder', async () => {
    const cache = join(root, 'c1');
    const lines: string[] = [];
    const r = await installToCache({ root: cache, npmPackage: PKG, version: '7.6.3', bin: BIN, onProgress: (l) => lines.push(l) });
    expect(r).toEqual({ path: cachedBinPath(cache, PKG, '7.6.3', BIN), dir: installDir(cache, PKG, '7.6.3'), installed: true });
    expect(existsSync(r.path)).toBe(true);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^installing semver@7\\.6\\.3 into ${cache.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} … done in \\d+\\.\\d s$`));
    const again = await installToCache({ root: cache, npmPackage: PKG, version: '7.6.3', bin: BIN, onProgress: (l) => lines.push(l) });
    expect(again.installed).toBe(false);
    expect(lines).toHaveLength(1);
    expect(await listCachedVersions(cache, PKG, BIN)).toEqual(['7.6.3']);
    expect((await readdir(join(cache, 'engines'))).filter((n) => n.startsWith('.tmp-'))).toEqual([]);
  }, 180_000);

  it('concurrent calls in one process share one install', async () => {
    const cache = join(root, 'c2');
    const lines: string[] = [];
    const opts = { root: cache, npmPackage: PKG, version: '7.6.2', bin: BIN, onProgress: (l: string) => lines.push(l) };
    const [a, b, c] = await Promise.all([installToCache(opts), installToCache(opts), installToCache(opts)]);
    expect(a.path).toBe(b.path);
    expect(b.path).toBe(c.path);
    expect(lines).toHaveLength(1);
  }, 180_000);

  it('two independent installers (as two processes) race into the same folder harmlessly', async () => {
    const cache = join(root, 'c3');
    vi.resetModules();
    // @ts-expect-error a query string makes vitest load a second module instance
    const other = (await import('../../src/engine/cache.js?second')) as typeof CacheModule;
    expect(other.installToCache).not.toBe(installToCache);
    const opts = { root: cache, npmPackage: PKG, version: '7.6.1', bin: BIN };
    const [a, b] = await Promise.all([installToCache(opts), other.installToCache(opts)]);
    expect(a.path).toBe(b.path);
    expect(existsSync(a.path)).toBe(true);
    const names = await readdir(join(cache, 'engines'));
    expect(names).toEqual(['semver@7.6.1']); // the loser's temporary copy is gone
  }, 180_000);

  it('a failed install throws EngineUnavailable with npm’s own words and leaves nothing behind', async () => {
    const cache = join(root, 'c4');
    // A stale temporary folder from a process that died a day ago is swept.
    const stale = join(cache, 'engines', '.tmp-semver@1.0.0-123-deadbeef');
    await mkdir(stale, { recursive: true });
    const old = new Date(Date.now() - 3 * 24 * 3600_000);
    await utimes(stale, old, old);
    const lines: string[] = [];
    const err = await installToCache({ root: cache, npmPackage: PKG, version: '0.0.0-no-such-version', bin: BIN, onProgress: (l) => lines.push(l) }).catch(
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(EngineUnavailable);
    expect((err as Error).message).toMatch(/^could not install semver@0\.0\.0-no-such-version: npm exited with code \d+\n/);
    expect((err as Error).message).toMatch(/npm (error|ERR!) code ETARGET/);
    expect((err as Error).message).toMatch(/No matching version found for semver@0\.0\.0-no-such-version/);
    expect(lines[0]).toMatch(/ failed after \d+\.\d s$/);
    expect(await readdir(join(cache, 'engines'))).toEqual([]);
  }, 180_000);

  it('a package without the expected executable is refused', async () => {
    const cache = join(root, 'c5');
    await expect(installToCache({ root: cache, npmPackage: PKG, version: '7.6.3', bin: 'not-there' })).rejects.toThrow(
      /has no executable "not-there"/,
    );
    expect(await readdir(join(cache, 'engines'))).toEqual([]);
  }, 180_000);

  it('a cache folder that is a file is EngineUnavailable naming the folder, not a raw ENOTDIR (no npm run)', async () => {
    const file = join(root, 'a-file');
    await writeFile(file, 'not a folder');
    const err = await installToCache({ root: file, npmPackage: PKG, version: '7.6.3', bin: BIN }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineUnavailable);
    expect((err as Error).message).toMatch(new RegExp(`^could not install semver@7\\.6\\.3 into ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: ENOTDIR: .*SKILL_UP_CACHE_DIR`));
  });
});

describe('summariseNpmErrors', () => {
  it('keeps npm’s error lines without stack frames and object dumps', () => {
    const stderr = [
      'npm warn EBADENGINE Unsupported engine',
      'npm error code ECONNREFUSED',
      'npm error FetchError: request to http://127.0.0.1:9/semver failed',
      'npm error     at ClientRequest.<anonymous> (/usr/lib/node_modules/npm/x.js:130:14)',
      "npm error   code: 'ECONNREFUSED',",
      'npm error }',
      'npm error',
      'npm error A complete log of this run can be found in: /root/.npm/_logs/x.log',
    ].join('\n');
    expect(summariseNpmErrors(stderr)).toBe(
      [
        'npm error code ECONNREFUSED',
        'npm error FetchError: request to http://127.0.0.1:9/semver failed',
        'npm error A complete log of this run can be found in: /root/.npm/_logs/x.log',
      ].join('\n'),
    );
    expect(summariseNpmErrors('sh: 1: node-gyp: not found\nnpm warn x\n')).toBe('sh: 1: node-gyp: not found');
  });
});
