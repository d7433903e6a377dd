import { mkdir, mkdtemp, readdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { collectArtifacts, MAX_ARTIFACT_BYTES } from '../../src/runtime/artifacts.js';

let tmp: string;
let ws: string;
let n = 0;
const dest = () => path.join(tmp, `out-${++n}`);

async function put(rel: string, content = rel): Promise<void> {
  const p = path.join(ws, rel);
  await mkdir(path.dirname(p), { recursive: true });
  await writeFile(p, content);
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'skill-up-art-'));
  ws = path.join(tmp, 'ws');
  for (const f of ['hello.py', 'notes.txt', 'out/report.md', 'out/deep/data.json', 'src/a.ts', 'src/lib/b.ts', '.env.example']) await put(f);
  await put('.git/config', '[core]');
  await put('.git/HEAD', 'ref: refs/heads/main');
  await put('vendor/dep/.git/HEAD', 'x');
  await put('.skill-up/input.json', '{}');
  await put('node_modules/pkg/index.js');
  await writeFile(path.join(tmp, 'secret.txt'), 'secret');
  await symlink('notes.txt', path.join(ws, 'notes-link.txt'));
  await symlink(path.join(tmp, 'secret.txt'), path.join(ws, 'leak.txt'));
  await symlink('out', path.join(ws, 'out-link'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isDirectory()) out.push(path.relative(dir, path.join(e.parentPath, e.name)));
  }
  return out.sort();
}

describe('collectArtifacts', () => {
  test('copies matching files to dest/<relative path> and returns them sorted', async () => {
    const d = dest();
    const got = await collectArtifacts(ws, ['*.py', 'out/**', 'src/**/*.ts'], d);
    expect(got).toEqual(['hello.py', 'out/deep/data.json', 'out/report.md', 'src/a.ts', 'src/lib/b.ts']);
    expect(await files(d)).toEqual(got);
    expect(await readFile(path.join(d, 'out/deep/data.json'), 'utf8')).toBe('out/deep/data.json');
  });

  test('a folder name selects everything below it; ./ prefixes are ignored', async () => {
    expect(await collectArtifacts(ws, ['./out'], dest())).toEqual(['out/deep/data.json', 'out/report.md']);
  });

  test('`**` never collects .git/ (at any depth) or .skill-up/, but does collect other dotfiles', async () => {
    const got = await collectArtifacts(ws, ['**'], dest());
    expect(got.some((f) => f.startsWith('.git/') || f.includes('/.git/') || f.startsWith('.skill-up/'))).toBe(false);
    expect(got).toContain('.env.example');
    expect(got).toContain('node_modules/pkg/index.js');
    expect(await collectArtifacts(ws, ['.git/**', '.skill-up/input.json', '.git'], dest())).toEqual([]);
  });

  test('symlinks: a link to a file inside is collected as a file; links outside or to folders are skipped', async () => {
    const skipped: string[] = [];
    const d = dest();
    const got = await collectArtifacts(ws, ['*.txt', 'out-link'], d, { onSkip: (rel, why) => skipped.push(`${rel}: ${why}`) });
    expect(got).toEqual(['notes-link.txt', 'notes.txt']);
    expect(await readFile(path.join(d, 'notes-link.txt'), 'utf8')).toBe('notes.txt');
    expect(skipped).toEqual(['leak.txt: symbolic link pointing outside the workspace', 'out-link: not a regular file']);
    await expect(readFile(path.join(d, 'leak.txt'))).rejects.toThrow(/ENOENT/);
  });

  test('files over 50 MB are skipped without a crash', async () => {
    const big = path.join(ws, 'big', 'huge.bin');
    await mkdir(path.dirname(big), { recursive: true });
    await writeFile(big, '');
    await truncate(big, MAX_ARTIFACT_BYTES + 1); // sparse: no real disk use
    await put('big/small.txt', 'ok');
    const skipped: string[] = [];
    const got = await collectArtifacts(ws, ['big/**'], dest(), { onSkip: (rel, why) => skipped.push(`${rel}: ${why}`) });
    expect(got).toEqual(['big/small.txt']);
    expect(skipped).toEqual([`big/huge.bin: larger than 50 MB (${MAX_ARTIFACT_BYTES + 1} bytes)`]);
    expect(await collectArtifacts(ws, ['big/small.txt'], dest(), { maxBytes: 1 })).toEqual([]);
    await rm(path.join(ws, 'big'), { recursive: true });
  });

  test('no globs, no matches or a missing workspace give []', async () => {
    expect(await collectArtifacts(ws, [], dest())).toEqual([]);
    expect(await collectArtifacts(ws, ['nothing/**'], dest())).toEqual([]);
    expect(await collectArtifacts(path.join(tmp, 'gone'), ['**'], dest())).toEqual([]);
  });
});
