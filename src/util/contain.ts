/**
 * Containment: a path named by a user or an agent must stay inside the folder it belongs to
 * (the workspace, a fixture, the skill folder), after symbolic links are followed. One module
 * for every runtime check (workspace set-up, the custom engine's files, artifact collection,
 * judges' file reads), so they all mean the same thing by "inside".
 */
import { constants } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/** A path leaves the folder it must stay in. `message` says which path, and where it leads. */
export class ContainmentError extends Error {
  constructor(
    message: string,
    /** The path as given. */
    readonly given: string,
    /** Where it leads (absolute, symbolic links followed as far as they exist). */
    readonly target: string,
  ) {
    super(message);
    this.name = 'ContainmentError';
  }
}

/**
 * True when `abs` is `root` or lies inside it. Purely lexical: both must be absolute and
 * already resolved (no `..`); a name that merely starts with dots (`..x`) is inside.
 */
export function isInside(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/**
 * The real path of `abs` as far as it exists: the real path (symbolic links followed) of its
 * nearest existing ancestor, with the missing rest appended. A dangling link counts as
 * existing and is followed to where it points (that is where a write through it would land).
 * Link chains longer than 40 hops are refused with ELOOP, as the kernel does.
 */
export async function realpathNearest(abs: string): Promise<string> {
  let current = path.resolve(abs);
  const rest: string[] = [];
  for (let hops = 0; hops <= 40; ) {
    try {
      const real = await realpath(current);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
    }
    // `current` does not fully resolve: a dangling link is followed, a missing name climbs up.
    const st = await lstat(current).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      current = path.resolve(path.dirname(current), await readlink(current));
      hops++;
      continue;
    }
    const parent = path.dirname(current);
    if (parent === current) return path.join(current, ...rest.reverse());
    rest.push(path.basename(current));
    current = parent;
  }
  throw Object.assign(new Error(`too many levels of symbolic links: ${abs}`), { code: 'ELOOP' });
}

/**
 * Resolves `p` (relative to `root`, or absolute) and checks that it stays inside `root`,
 * lexically and after symbolic links (see {@link realpathNearest}). Returns the real path,
 * which callers use from then on (so a link swapped in later is not followed by name).
 *
 * @param what names the path in the message, e.g. `engine.custom.local.input_file`.
 * @throws ContainmentError when it leads outside: "<what> `<p>` resolves to <target>, outside <root>".
 */
export async function resolveInside(root: string, p: string, what = 'path'): Promise<string> {
  if (p.includes('\0')) throw new ContainmentError(`${what} \`${p}\` contains a NUL character`, p, p);
  const realRoot = await realpathNearest(root);
  const abs = path.resolve(root, p);
  const refuse = (target: string, how: string) =>
    new ContainmentError(`${what} \`${p}\` ${how} ${target}, outside ${realRoot}`, p, target);
  if (!isInside(path.resolve(root), abs) && !isInside(realRoot, abs)) throw refuse(abs, 'resolves to');
  const real = await realpathNearest(abs);
  if (!isInside(realRoot, real)) throw refuse(real, 'leads through a symbolic link to');
  return real;
}

/**
 * Opens an existing file inside `root` for reading without following a link out: the path is
 * checked with {@link resolveInside}, then its real path is opened with `O_NOFOLLOW`, so a
 * final component swapped for a link in between fails (ELOOP) instead of being read.
 *
 * @throws ContainmentError when it leads outside; the `open` error (ENOENT, ELOOP, …) otherwise.
 */
export async function openInside(root: string, p: string, what = 'path'): Promise<FileHandle> {
  const real = await resolveInside(root, p, what);
  return open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
}
