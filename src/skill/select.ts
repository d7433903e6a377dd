/**
 * Which files of a skill folder get installed: include/exclude globs over relative POSIX paths.
 */
import path from 'node:path';
import { globMatcher, walkTree } from './files.js';

/** Paths never installed, whatever the globs say: the skill's own evals and any git metadata. */
export const ALWAYS_EXCLUDED = ['evals/**', '.git/**'] as const;

/**
 * Lists the files of `skillDir` to install, as sorted relative POSIX paths
 * (e.g. `scripts/run.py`).
 *
 * Regular files and symbolic links are listed (links are never followed; a link to a
 * folder is listed as one entry). `include` globs select (empty = every file), then
 * `exclude` globs remove; `evals/` at the skill root and every `.git/` folder are always
 * left out. Globs use picomatch syntax with `dot: true`; a glob naming a folder (`scripts`)
 * selects everything under it.
 *
 * @throws the `fs` error (e.g. ENOENT) when `skillDir` cannot be read.
 */
export async function selectSkillFiles(skillDir: string, include: string[], exclude: string[]): Promise<string[]> {
  const root = path.resolve(skillDir);
  const entries = await walkTree(root, (rel) => rel === 'evals' || rel === '.git' || rel.endsWith('/.git'));
  const included = include.length === 0 ? () => true : globMatcher(include);
  const excluded = globMatcher([...exclude, ...ALWAYS_EXCLUDED]);
  return entries.map((e) => e.rel).filter((rel) => included(rel) && !excluded(rel));
}
