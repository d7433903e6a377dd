/**
 * makeJobFolder (src/util/contain.ts): the job folder and its outputs/, made without going
 * through a link an earlier agent planted, and telling whether it is new (then its first turn
 * needs no scan for planted links).
 */
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile, lstat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeJobFolder } from '../../src/util/contain.js';

let tmp: string;
let iteration: string;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'skill-up-jobfolder-'));
  iteration = path.join(tmp, 'iteration-1');
  await mkdir(iteration);
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('makeJobFolder', () => {
  it('makes <case>/<variant>/run-k/outputs; fresh the first time only', async () => {
    const made = new Set<string>();
    expect(await makeJobFolder(iteration, 'c1/with_skill/run-1', made)).toEqual({ fresh: true, removed: [] });
    expect((await lstat(path.join(iteration, 'c1/with_skill/run-1/outputs'))).isDirectory()).toBe(true);
    expect(await makeJobFolder(iteration, 'c1/with_skill/run-2', made)).toEqual({ fresh: true, removed: [] });
    // A retry: the folder is an earlier attempt's.
    expect(await makeJobFolder(iteration, 'c1/with_skill/run-1', made)).toEqual({ fresh: false, removed: [] });
    expect(made).toEqual(new Set([path.join(iteration, 'c1'), path.join(iteration, 'c1/with_skill')]));
  });

  it('unlinks a planted link at any level and makes a real folder there; the victim stays empty', async () => {
    const victim = path.join(tmp, 'victim');
    await mkdir(victim);
    const made = new Set<string>();
    await makeJobFolder(iteration, 'c1/with_skill/run-1', made);
    // An agent swaps the variant folder (made by this run) for a link, and plants one where another case's folder goes.
    await rm(path.join(iteration, 'c1/with_skill'), { recursive: true });
    await symlink(victim, path.join(iteration, 'c1/with_skill'));
    await symlink(victim, path.join(iteration, 'c2'));
    const a = await makeJobFolder(iteration, 'c1/with_skill/run-2', made);
    const b = await makeJobFolder(iteration, 'c2/with_skill/run-1', made);
    expect(a).toEqual({ fresh: true, removed: [path.join(iteration, 'c1/with_skill')] });
    expect(b).toEqual({ fresh: true, removed: [path.join(iteration, 'c2')] });
    expect((await lstat(path.join(iteration, 'c2'))).isDirectory()).toBe(true);
    expect(await readdir(victim)).toEqual([]);
  });

  it('refuses a file in the way and a path that leaves the folder', async () => {
    await writeFile(path.join(iteration, 'c1'), 'not a folder');
    await expect(makeJobFolder(iteration, 'c1/with_skill/run-1')).rejects.toThrow(/not a folder/);
    await expect(makeJobFolder(iteration, '../x/run-1')).rejects.toThrow(/leaves/);
  });
});
