/**
 * Copies the job folders of the shards into the merged run's folder. Files are copied (a
 * copy-on-write clone where the file system offers one), never hard-linked: the reports
 * rewrite some per-job files (grading.json) in place, which through a hard link would change
 * the shard's own folder too.
 */
import { constants } from 'node:fs';
import { copyFile, mkdir, readdir, readlink, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { safeJobDir } from './check.js';

/** Copies `src` (a folder) to `dst` recursively; symlinks are copied as links. */
async function copyTree(src: string, dst: string): Promise<number> {
  await mkdir(dst, { recursive: true });
  let files = 0;
  for (const e of await readdir(src, { withFileTypes: true })) {
    const from = join(src, e.name);
    const to = join(dst, e.name);
    if (e.isDirectory()) files += await copyTree(from, to);
    else if (e.isSymbolicLink()) await symlink(await readlink(from), to);
    else if (e.isFile()) {
      await copyFile(from, to, constants.COPYFILE_FICLONE);
      files++;
    }
  }
  return files;
}

/**
 * Copies each job folder `rel` from `fromDir` to `toDir`. Returns the folders that were not
 * there to copy (a shard kept without its job folders): the merge goes on without them.
 */
export async function copyJobDirs(fromDir: string, toDir: string, rels: readonly string[]): Promise<{ copied: number; missing: string[] }> {
  const missing: string[] = [];
  let copied = 0;
  for (const rel of rels) {
    if (!safeJobDir(rel)) throw new Error(`job folder \`${rel}\` is outside the run folder`);
    const src = join(fromDir, rel);
    try {
      if (!(await stat(src)).isDirectory()) throw new Error('not a folder');
    } catch {
      missing.push(rel);
      continue;
    }
    await copyTree(src, join(toDir, rel));
    copied++;
  }
  return { copied, missing };
}
