/**
 * Removing workspaces (src/runtime/removal.ts): removeTree deletes a tree without following a
 * link out of it, and the RemovalQueue removes nothing before it is released, bounds how many
 * removals run at once, drains what is still held, and reports every failure.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { removeTree, RemovalQueue, type Removable } from '../../src/runtime/removal.js';

let tmp: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'skill-up-removal-'));
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('removeTree', () => {
  it('deletes nested folders, files and links, never what a link points to', async () => {
    const outside = path.join(tmp, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'keep.txt'), 'mine');
    const ws = path.join(tmp, 'ws');
    await mkdir(path.join(ws, 'a/b/c'), { recursive: true });
    await writeFile(path.join(ws, 'a/b/c/deep.txt'), 'x');
    await writeFile(path.join(ws, 'top.txt'), 'y');
    await symlink(outside, path.join(ws, 'a/to-outside'));
    await symlink(path.join(outside, 'keep.txt'), path.join(ws, 'file-link'));
    await symlink('missing', path.join(ws, 'dangling'));
    await removeTree(ws);
    expect(existsSync(ws)).toBe(false);
    expect(await readFile(path.join(outside, 'keep.txt'), 'utf8')).toBe('mine');
  });

  it('unlinks a link put in place of the folder itself (an agent swapped its workspace or home for a link to a folder outside), never emptying that folder', async () => {
    const outside = path.join(tmp, 'outside');
    await mkdir(path.join(outside, 'sub'), { recursive: true });
    await writeFile(path.join(outside, 'precious.txt'), 'mine');
    await writeFile(path.join(outside, 'sub/f2'), 'also mine');
    const ws = path.join(tmp, 'ws');
    await symlink(outside, ws);
    await removeTree(ws);
    expect(existsSync(ws)).toBe(false);
    expect(await readFile(path.join(outside, 'precious.txt'), 'utf8')).toBe('mine');
    expect(await readFile(path.join(outside, 'sub/f2'), 'utf8')).toBe('also mine');
  });

  it('copes with read-only folders, a missing folder and a plain file', async () => {
    const ws = path.join(tmp, 'ro');
    await mkdir(path.join(ws, 'locked/inner'), { recursive: true });
    await writeFile(path.join(ws, 'locked/inner/f'), 'z');
    await chmod(path.join(ws, 'locked/inner'), 0o500);
    await chmod(path.join(ws, 'locked'), 0o500);
    await removeTree(ws);
    expect(existsSync(ws)).toBe(false);
    await removeTree(path.join(tmp, 'never-made'));
    const f = path.join(tmp, 'file.txt');
    await writeFile(f, 'x');
    await removeTree(f);
    expect(existsSync(f)).toBe(false);
  });
});

/** A removable whose removal is counted and held open until `finish()` is called. */
function slowItem(dir: string, log: string[], live: { now: number; max: number }) {
  let finish!: () => void;
  const gate = new Promise<void>((r) => (finish = r));
  const item: Removable = {
    dir,
    remove: async () => {
      live.now++;
      live.max = Math.max(live.max, live.now);
      log.push(`start ${dir}`);
      await gate;
      live.now--;
      log.push(`end ${dir}`);
    },
  };
  return { item, finish };
}

describe('RemovalQueue', () => {
  it('removes nothing held until released, then at most `concurrency` at once, in order', async () => {
    const log: string[] = [];
    const live = { now: 0, max: 0 };
    const q = new RemovalQueue({ concurrency: 2 });
    const items = ['a', 'b', 'c', 'd'].map((d) => slowItem(d, log, live));
    q.hold('job-1', items[0]!.item);
    q.hold('job-1', items[1]!.item); // a retried job: both attempts' workspaces
    q.hold('job-2', items[2]!.item);
    q.hold('job-3', items[3]!.item);
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual([]);
    q.release('job-2');
    q.release('job-1');
    expect(log).toEqual(['start c', 'start a']);
    expect(q.pending).toBe(3);
    const drained = q.drain(); // releases job-3 too
    for (const i of items) i.finish();
    await drained;
    expect(live.max).toBe(2);
    expect(log.filter((l) => l.startsWith('start'))).toEqual(['start c', 'start a', 'start b', 'start d']);
    expect(q.pending).toBe(0);
    expect(q.failures).toEqual([]);
  });

  it('reports a removal that fails, and goes on with the others', async () => {
    const seen: string[] = [];
    const q = new RemovalQueue({ onError: (f) => seen.push(`${f.path}: ${f.message}`) });
    let removed = false;
    q.hold('x', { dir: '/ws/broken', remove: () => Promise.reject(new Error('EBUSY: resource busy')) });
    q.hold('y', { dir: '/ws/fine', remove: async () => void (removed = true) });
    await q.drain();
    expect(seen).toEqual(['/ws/broken: EBUSY: resource busy']);
    expect(q.failures).toEqual([{ path: '/ws/broken', message: 'EBUSY: resource busy' }]);
    expect(removed).toBe(true);
  });

  it('drain with nothing held resolves at once; a real tree is gone after drain', async () => {
    const q = new RemovalQueue();
    await q.drain();
    const ws = path.join(tmp, 'real');
    await mkdir(path.join(ws, 'sub'), { recursive: true });
    await writeFile(path.join(ws, 'sub/f'), 'x');
    q.hold('j', { dir: ws, remove: () => removeTree(ws) });
    expect((await stat(ws)).isDirectory()).toBe(true);
    await q.drain();
    expect(existsSync(ws)).toBe(false);
  });
});
