/**
 * File-tree helpers shared by skill selection/installation and artifact collection:
 * a directory walk that never follows symbolic links, and a glob matcher with
 * gitignore-like folder semantics.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { PicomatchOptions } from 'picomatch';
import type Picomatch from 'picomatch';
import { requireCjs } from '../util/cjs.js';
import { FsBatch } from '../util/fs-batch.js';

const picomatch = requireCjs('picomatch') as typeof Picomatch;

/** One entry found by {@link walkTree}. `rel` is a POSIX path relative to the walk root. */
export interface TreeEntry {
  rel: string;
  kind: 'file' | 'symlink';
}

/**
 * Lists the regular files and symbolic links under `root` (recursively, sorted by path).
 * Symbolic links below `root` are reported, never followed; other special files (sockets, FIFOs,
 * devices) are skipped. `skipDir(rel)` is asked for every folder before it is entered;
 * returning true prunes it.
 *
 * @throws the underlying `fs` error when `root` cannot be read.
 */
export async function walkTree(root: string, skipDir: (rel: string) => boolean = () => false): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  // Synchronous calls, a batch at a time (src/util/fs-batch.ts): most trees walked are a job's small workspace.
  const batch = new FsBatch();
  async function visit(absDir: string, relDir: string): Promise<void> {
    const entries = readdirSync(absDir, { withFileTypes: true });
    await batch.tick();
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const rel = relDir ? `${relDir}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!skipDir(rel)) await visit(path.join(absDir, e.name), rel);
      } else if (e.isSymbolicLink()) {
        out.push({ rel, kind: 'symlink' });
      } else if (e.isFile()) {
        out.push({ rel, kind: 'file' });
      }
    }
  }
  const st = statSync(root); // the root itself may be a symbolic link to a folder
  if (!st.isDirectory()) throw Object.assign(new Error(`not a directory: ${root}`), { code: 'ENOTDIR' });
  await visit(root, '');
  return out;
}

/** Longest glob accepted (characters). */
export const MAX_GLOB_LENGTH = 1024;
/** Most single `*` wildcards one path segment of a glob may hold (`**` not counted). */
export const MAX_GLOB_STARS_PER_SEGMENT = 2;

/**
 * Why `pattern` is refused as a user glob, or undefined when it is fine. picomatch compiles a
 * glob into a backtracking JS regex, and the matched names come from agents: extglobs and
 * parenthesised groups (`@(a*|a*)+(…)`: exponential) and many `*` in one segment (`*a*a*a*x`
 * against a 255-character name: polynomial, about 1 s for three, a minute for four) would
 * block the event loop, so no timeout could fire. Refused: more than {@link MAX_GLOB_LENGTH}
 * characters, an unescaped `(`, `)` or `|`, more than {@link MAX_GLOB_STARS_PER_SEGMENT}
 * single `*` in one `/`-separated segment. Every user glob is also compiled with
 * `noextglob: true` ({@link compileGlob}).
 */
export function globError(pattern: string): string | undefined {
  if (pattern.length > MAX_GLOB_LENGTH) return `glob is longer than ${MAX_GLOB_LENGTH} characters`;
  const plain = pattern.replace(/\\./g, '');
  if (/[()|]/.test(plain)) return `glob \`${pattern}\` uses \`(\`, \`)\` or \`|\` (extglob or regex groups are not supported; escape them as \`\\(\`)`;
  for (const segment of plain.split('/')) {
    const stars = segment.replace(/\*\*+/g, '').split('*').length - 1;
    if (stars > MAX_GLOB_STARS_PER_SEGMENT) return `glob \`${pattern}\` has ${stars} \`*\` in one path segment (at most ${MAX_GLOB_STARS_PER_SEGMENT}: matching more is slow on long names)`;
  }
  return undefined;
}

/** A user glob that {@link globError} refuses. */
export class GlobError extends Error {}

/**
 * picomatch for user globs: `noextglob: true` and `maxLength`, after {@link globError}.
 * @throws GlobError naming the glob and why it is refused.
 */
export function compileGlob(patterns: string | string[], options: PicomatchOptions = {}): (s: string) => boolean {
  for (const p of Array.isArray(patterns) ? patterns : [patterns]) {
    const why = globError(p);
    if (why) throw new GlobError(why);
  }
  return picomatch(patterns, { ...options, noextglob: true, maxLength: MAX_GLOB_LENGTH });
}

/**
 * Compiles globs (picomatch syntax, `dot: true`) into a predicate over relative POSIX paths.
 * A path matches when a glob matches the path itself *or one of its parent folders*, so
 * `scripts` or `scripts/` selects everything below `scripts/` (as in `.gitignore`).
 * A leading `./` in a glob is ignored. An empty list matches nothing.
 * @throws GlobError for a glob {@link globError} refuses (extglob, groups, too many `*`).
 */
export function globMatcher(globs: string[]): (rel: string) => boolean {
  const cleaned = globs
    .map((g) => g.trim().replace(/^(\.\/)+/, '').replace(/\/+$/, ''))
    .filter((g) => g.length > 0);
  if (cleaned.length === 0) return () => false;
  const isMatch = compileGlob(cleaned, { dot: true });
  return (rel: string) => {
    if (isMatch(rel)) return true;
    for (let i = rel.lastIndexOf('/'); i > 0; i = rel.lastIndexOf('/', i - 1)) {
      if (isMatch(rel.slice(0, i))) return true;
    }
    return false;
  };
}

/** True when `child` is `parent` or lies inside it (both absolute, already resolved). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (rel !== '..' && !rel.startsWith('..' + path.sep) && !path.isAbsolute(rel));
}
