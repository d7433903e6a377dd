/**
 * The synchronous tree walks give the event loop back every FS_BATCH calls (src/util/fs-batch.ts):
 * walking or removing a big tree never holds it for the whole tree, so the other jobs' output
 * and timers go on meanwhile.
 */
import { mkdirSync, mkdtempSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FS_BATCH, FsBatch } from '../../src/util/fs-batch.js';
import { removeTree } from '../../src/runtime/removal.js';
import { walkTree } from '../../src/skill/files.js';

/** A tree of `dirs` folders holding `files` files each. */
function tree(dirs: number, files: number): string {
  const root = mkdtempSync(join(tmpdir(), 'su-fsbatch-'));
  for (let d = 0; d < dirs; d++) {
    mkdirSync(join(root, `d${d}`));
    for (let f = 0; f < files; f++) writeFileSync(join(root, `d${d}`, `f${f}`), 'x');
  }
  return root;
}

/** How many event-loop turns pass while `work` runs. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let on = true;
  const spin = () => {
    if (!on) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work();
  on = false;
  return turns;
}

describe('tree walks a batch at a time', () => {
  it('FsBatch yields once per FS_BATCH calls, not before', async () => {
    const b = new FsBatch();
    let turned = false;
    setImmediate(() => (turned = true));
    for (let i = 0; i < FS_BATCH - 1; i++) await b.tick();
    expect(turned).toBe(false);
    await b.tick();
    expect(turned).toBe(true);
  });

  it('walkTree and removeTree of a 1,200-file tree in 300 folders let the event loop turn meanwhile, and still do all the work', async () => {
    const root = tree(300, 4);
    let entries: unknown[] = [];
    const walked = await turnsDuring(async () => (entries = await walkTree(root)));
    expect(entries).toHaveLength(1200);
    // 301 readdirs: at least two batches.
    expect(walked).toBeGreaterThanOrEqual(2);
    const removed = await turnsDuring(() => removeTree(root));
    expect(existsSync(root)).toBe(false);
    // 1,200 unlinks + 301 × (lstat, readdir, rmdir) ≈ 2,100 calls: about 2,100 / FS_BATCH turns.
    expect(removed).toBeGreaterThanOrEqual(Math.floor(2100 / FS_BATCH) - 1);
  });
});
