/**
 * Where a run writes: `<root>/iteration-N/` with N the next free number, root defaulting
 * to `<skill-name>-workspace` beside the skill folder (skill-creator's layout).
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** The output folder cannot be used; the CLI reports it as a usage error (exit code 2). */
export class OutputDirError extends Error {}

/**
 * Creates `dir` and its missing parents. Written out (instead of `mkdir -p`) because Node's
 * recursive mkdir loops forever on some pseudo file systems (e.g. `/proc/x`).
 */
async function ensureDir(dir: string, depth = 0): Promise<void> {
  try {
    await mkdir(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      if (!(await stat(dir)).isDirectory()) throw new OutputDirError(`${dir} exists and is not a folder`);
      return;
    }
    if (code === 'ENOENT' && depth < 64 && dirname(dir) !== dir) {
      await ensureDir(dirname(dir), depth + 1);
      try {
        await mkdir(dir);
        return;
      } catch (again) {
        throw new OutputDirError(`cannot create ${dir}: ${(again as Error).message}`);
      }
    }
    if (e instanceof OutputDirError) throw e;
    throw new OutputDirError(`cannot create ${dir}: ${(e as Error).message}`);
  }
}

/**
 * Creates and returns the next free `iteration-N` folder under `root` (race-safe: mkdir is atomic).
 * @throws OutputDirError when `root` cannot be created or used.
 */
export async function createIterationDir(root: string): Promise<{ dir: string; iteration: number }> {
  await ensureDir(root);
  const taken = (await readdir(root))
    .map((n) => /^iteration-(\d+)$/.exec(n)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
  let n = taken.length ? Math.max(...taken) + 1 : 1;
  for (;;) {
    const dir = join(root, `iteration-${n}`);
    try {
      await mkdir(dir);
      return { dir, iteration: n };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new OutputDirError(`cannot create ${dir}: ${(e as Error).message}`);
      n++;
    }
  }
}

/** Default output root: `<parent of skill folder>/<skill-name>-workspace`. */
export function defaultOutputRoot(skillDir: string, skillName: string): string {
  return join(dirname(resolve(skillDir)), `${skillName}-workspace`);
}

/**
 * `iteration-n` under `root`, emptied first (alibaba/skill-up's `--iteration N`: each of
 * iteration-1..N is deleted and written anew).
 * @throws OutputDirError when it cannot be removed or created.
 */
export async function resetIterationDir(root: string, n: number): Promise<{ dir: string; iteration: number }> {
  await ensureDir(root);
  const dir = join(root, `iteration-${n}`);
  try {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
  } catch (e) {
    throw new OutputDirError(`cannot reset ${dir}: ${(e as Error).message}`);
  }
  return { dir, iteration: n };
}

/**
 * The folder of one iteration under `root`: `n` = 0 the next free `iteration-N`
 * ({@link createIterationDir}), else `iteration-n` emptied ({@link resetIterationDir}). Any
 * file-system error (a write-only or unreadable folder, EACCES, ENOSPC …) becomes an
 * OutputDirError naming the folder (exit code 2: the folder is the user's choice and nothing
 * ran yet), never a stack trace. @throws OutputDirError
 */
export async function iterationTarget(root: string, n: number): Promise<{ dir: string; iteration: number }> {
  try {
    return await (n === 0 ? createIterationDir(root) : resetIterationDir(root, n));
  } catch (e) {
    if (e instanceof OutputDirError || typeof (e as NodeJS.ErrnoException).code !== 'string') throw e;
    throw new OutputDirError(`cannot use the output folder ${root}: ${(e as Error).message}`);
  }
}
