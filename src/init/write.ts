/**
 * Writes the files of src/init/files.ts into a skill folder. Nothing that exists is replaced
 * unless asked (`force`); the check covers every file before the first is written, so a
 * refused `init` leaves the folder as it was.
 */
import { lstatSync } from 'node:fs';
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { InitFile } from './files.js';

/** Thrown when a file `init` would write exists and `force` is off; `existing` are the absolute paths. */
export class InitConflict extends Error {
  constructor(readonly existing: string[]) {
    super(`would overwrite ${existing.join(', ')}`);
  }
}

/**
 * The files of `files` (and `evals/eval.yml`: a suite already there, under the other name a run
 * accepts) that exist under `skillDir`, as absolute paths. A symbolic link counts as existing,
 * even a dangling one: writing through it would write elsewhere.
 */
export function existingFiles(skillDir: string, files: readonly InitFile[]): string[] {
  const targets = [...files.map((f) => f.path), 'evals/eval.yml'];
  return targets.map((p) => path.join(skillDir, p)).filter((abs) => {
    try {
      lstatSync(abs);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Writes `files` under `skillDir` and returns their absolute paths, in order. With `force`, an
 * existing file (or link) is removed first, so a link is replaced, never written through.
 * @throws InitConflict when one exists and `force` is false (nothing is written then);
 *   the file system's errors (EACCES, ENOTDIR, …) as they come.
 */
export async function writeInitFiles(skillDir: string, files: readonly InitFile[], opts: { force?: boolean } = {}): Promise<string[]> {
  const existing = existingFiles(skillDir, files);
  if (existing.length && !opts.force) throw new InitConflict(existing);
  const written: string[] = [];
  for (const f of files) {
    const abs = path.join(skillDir, f.path);
    await mkdir(path.dirname(abs), { recursive: true });
    if (opts.force) await rm(abs, { force: true });
    // `wx`: fails rather than follow a file or link that appeared since the check.
    await writeFile(abs, f.text, { flag: 'wx', mode: f.mode ?? 0o644 });
    // The umask may have taken bits off: an executable stays executable.
    if (f.mode !== undefined) await chmod(abs, f.mode);
    written.push(abs);
  }
  return written;
}
