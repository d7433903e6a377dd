/**
 * The engine version check's cache (src/engine/resolve.ts probeVersion, src/engine/cache.ts):
 * a second probe of the same executable does not run it; a changed executable (size, mtime),
 * another environment or another cache is probed again; a corrupt entry is ignored; failures
 * are never cached. The "engines" are shell scripts that count their runs in a file.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, utimes, writeFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { versionCacheFile } from '../../src/engine/cache.js';
import { probeVersion } from '../../src/engine/resolve.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'skill-up-version-cache-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
/** An executable printing `version` and appending a line to its count file per run, with its own cache dir. */
async function counting(version: string, opts: { fail?: boolean } = {}) {
  const dir = join(root, `w${++n}`);
  await mkdir(dir, { recursive: true });
  const exe = join(dir, 'engine');
  const count = join(dir, 'runs');
  await writeScript(exe, count, version, opts.fail);
  const env = { PATH: process.env.PATH, SKILL_UP_CACHE_DIR: join(dir, 'cache') };
  const runs = async () => (await readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
  return { dir, exe, count, env, runs };
}

async function writeScript(exe: string, count: string, version: string, fail = false): Promise<void> {
  await writeFile(exe, `#!/bin/sh\necho run >> '${count}'\n${fail ? 'echo broken >&2\nexit 1\n' : `echo "${version} (Counting Engine)"\n`}`);
  await chmod(exe, 0o755);
}

describe('probeVersion cache', () => {
  it('runs the executable once: the second probe answers from the cache', async () => {
    const w = await counting('1.2.3');
    expect(await probeVersion(w.exe, w.env)).toBe('1.2.3');
    expect(await probeVersion(w.exe, w.env)).toBe('1.2.3');
    expect(await w.runs()).toBe(1);
    const entry = JSON.parse(await readFile(versionCacheFile(w.env.SKILL_UP_CACHE_DIR, w.exe), 'utf8'));
    expect(entry).toMatchObject({ path: w.exe, version: '1.2.3' });
    // Written atomically: no temporary file is left beside the entry.
    expect((await readdir(join(w.env.SKILL_UP_CACHE_DIR, 'versions'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('probes again when the executable changes: new content (size), or only its mtime', async () => {
    const w = await counting('1.2.3');
    await probeVersion(w.exe, w.env);
    await writeScript(w.exe, w.count, '1.2.40');
    expect(await probeVersion(w.exe, w.env)).toBe('1.2.40');
    expect(await w.runs()).toBe(2);
    // Same size and content, another modification time (an upgrade that kept the size).
    const later = new Date(Date.now() + 5000);
    await utimes(w.exe, later, later);
    expect(await probeVersion(w.exe, w.env)).toBe('1.2.40');
    expect(await w.runs()).toBe(3);
    expect(await probeVersion(w.exe, w.env)).toBe('1.2.40');
    expect(await w.runs()).toBe(3);
  });

  it('is keyed on the name called too: one multi-call binary behind links named claude and codex gets each its own version', async () => {
    const w = await counting('3.0.1');
    const shim = join(w.dir, 'shim');
    await writeFile(shim, `#!/bin/sh\necho run >> '${w.count}'\ncase "$(basename "$0")" in claude) echo "2.1.332 (Claude Code)" ;; *) echo "codex-cli 0.171.0" ;; esac\n`);
    await chmod(shim, 0o755);
    await symlink(shim, join(w.dir, 'claude'));
    await symlink(shim, join(w.dir, 'codex'));
    expect(await probeVersion(join(w.dir, 'claude'), w.env)).toBe('2.1.332');
    expect(await probeVersion(join(w.dir, 'codex'), w.env)).toBe('0.171.0');
    expect(await probeVersion(join(w.dir, 'claude'), w.env)).toBe('2.1.332');
    expect(await probeVersion(join(w.dir, 'codex'), w.env)).toBe('0.171.0');
    expect(await w.runs()).toBe(2);
  });

  it('probes again under another PATH, or with another cache', async () => {
    const w = await counting('2.0.0');
    await probeVersion(w.exe, w.env);
    await probeVersion(w.exe, { ...w.env, PATH: `${w.dir}:${w.env.PATH}` });
    expect(await w.runs()).toBe(2);
    await probeVersion(w.exe, { ...w.env, SKILL_UP_CACHE_DIR: join(w.dir, 'other-cache') });
    expect(await w.runs()).toBe(3);
  });

  it('ignores a corrupt or foreign entry and replaces it', async () => {
    const w = await counting('4.5.6');
    await probeVersion(w.exe, w.env);
    const file = versionCacheFile(w.env.SKILL_UP_CACHE_DIR, w.exe);
    const good = JSON.parse(await readFile(file, 'utf8'));
    for (const bad of ['{not json', 'null', '[]', JSON.stringify({ ...good, version: '9.9.9 && rm -rf' }), JSON.stringify({ ...good, format: 0 }), JSON.stringify({ ...good, size: '1' })]) {
      await writeFile(file, bad);
      const before = await w.runs();
      expect(await probeVersion(w.exe, w.env)).toBe('4.5.6');
      expect(await w.runs()).toBe(before + 1);
    }
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(good);
  });

  it('never caches a failure', async () => {
    const w = await counting('0.0.0', { fail: true });
    await expect(probeVersion(w.exe, w.env)).rejects.toThrow(/exit code 1.*broken/s);
    await expect(probeVersion(w.exe, w.env)).rejects.toThrow(/exit code 1/);
    expect(await w.runs()).toBe(2);
  });

  it('still probes when the cache cannot be written', async () => {
    const w = await counting('5.0.0');
    // The cache "folder" is a file: nothing can be stored, every probe runs, none fails.
    await writeFile(join(w.dir, 'blocked'), '');
    const env = { ...w.env, SKILL_UP_CACHE_DIR: join(w.dir, 'blocked') };
    expect(await probeVersion(w.exe, env)).toBe('5.0.0');
    expect(await probeVersion(w.exe, env)).toBe('5.0.0');
    expect(await w.runs()).toBe(2);
  });
});
