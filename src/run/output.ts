/**
 * Where a run writes: `<root>/iteration-N/` with N the next free number, root defaulting
 * to `<skill-name>-workspace` beside the skill folder (skill-creator's layout).
 */
import { mkdir, readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/** Creates and returns the next free `iteration-N` folder under `root` (race-safe: mkdir is atomic). */
export async function createIterationDir(root: string): Promise<{ dir: string; iteration: number }> {
  await mkdir(root, { recursive: true });
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
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      n++;
    }
  }
}

/** Default output root: `<parent of skill folder>/<skill-name>-workspace`. */
export function defaultOutputRoot(skillDir: string, skillName: string): string {
  return join(dirname(resolve(skillDir)), `${skillName}-workspace`);
}
