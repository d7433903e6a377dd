/**
 * Containment: a path named by a user or an agent must stay inside the folder it belongs to
 * (the workspace, a fixture, the skill folder), after symbolic links are followed. One module
 * for every runtime check (workspace set-up, the custom engine's files, artifact collection,
 * judges' file reads), so they all mean the same thing by "inside".
 */
import { constants, lstatSync, mkdirSync, readdirSync, readlinkSync, realpathSync, unlinkSync, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, unlink, type FileHandle } from 'node:fs/promises';
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
  // Synchronous: realpath(3), lstat and readlink of existing paths cost a few µs each, a
  // fraction of a trip through libuv's threads, and this runs several times per job (issue 13).
  let current = path.resolve(abs);
  const rest: string[] = [];
  for (let hops = 0; hops <= 40; ) {
    try {
      const real = realpathSync.native(current);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
    }
    // `current` does not fully resolve: a dangling link is followed, a missing name climbs up.
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(current);
    } catch {
      st = undefined;
    }
    if (st?.isSymbolicLink()) {
      current = path.resolve(path.dirname(current), readlinkSync(current));
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

/** Entries {@link removePlantedLinks} looks at between two turns of the event loop. */
const LINK_SCAN_SLICE = 2000;

/** `lstat` of `p`, undefined when it cannot be read (gone, no permission). */
function lstatOrUndefined(p: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

/** `unlink` of `p`, a failure ignored (already gone). */
function unlinkQuietly(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    /* gone already */
  }
}

/** Most entries {@link removePlantedLinks} looks at in one folder tree. */
export const MAX_LINK_SCAN_ENTRIES = 200_000;

/**
 * Removes (unlinks, never follows) every symbolic link under `dir`, `dir` itself included,
 * every FIFO, socket and device node (opening one could block skill-up or hand its output to
 * the agent), and every file name under it whose file has more than one hard link, and returns their
 * `dir`-relative POSIX paths (`.` for `dir`). skill-up creates no link in a job folder, so
 * any link there was planted by an agent given `${output_dir}`: left in place, a later write
 * by skill-up (response.md, raw output, collected artifacts) would go through a linked FOLDER
 * to wherever it points, or truncate and rewrite a hard-linked file elsewhere. Unlinking a
 * name never changes the file it shared. Folders are walked without following links; at
 * most {@link MAX_LINK_SCAN_ENTRIES} entries are visited. A missing `dir` is nothing to do.
 * `folders`, when given, receives the `dir`-relative path of every real folder walked (so a
 * caller knows `outputs/` is still there without asking again).
 */
export async function removePlantedLinks(dir: string, folders?: Set<string>): Promise<string[]> {
  // Direct system calls (a job folder holds a handful of entries: a thread-pool hand-off per
  // call would cost more than the call, issue 13); the event loop gets a turn every
  // LINK_SCAN_SLICE entries, so a folder an agent filled does not hold it for long.
  const removed: string[] = [];
  const top = lstatOrUndefined(dir);
  if (!top) return removed;
  if (top.isSymbolicLink()) {
    unlinkSync(dir);
    return ['.'];
  }
  if (!top.isDirectory()) return removed;
  let seen = 0;
  const walk = async (abs: string, rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (++seen > MAX_LINK_SCAN_ENTRIES) return;
      if (seen % LINK_SCAN_SLICE === 0) await new Promise((r) => setImmediate(r));
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const child = path.join(abs, e.name);
      if (e.isSymbolicLink() || e.isFIFO() || e.isSocket() || e.isCharacterDevice() || e.isBlockDevice()) {
        unlinkQuietly(child);
        removed.push(childRel);
      } else if (e.isDirectory()) {
        folders?.add(childRel);
        await walk(child, childRel);
      }
      else if (e.isFile() && (lstatOrUndefined(child)?.nlink ?? 1) > 1) {
        unlinkQuietly(child);
        removed.push(childRel);
      }
    }
  };
  await walk(dir, '');
  return removed;
}

/**
 * Creates the folder `root/rel` one component at a time, refusing to go through anything
 * that is not a real folder: an existing component that is a symbolic link (or a file) throws
 * instead of being followed. `root` itself must not be a link. Returns the absolute path.
 *
 * @throws ContainmentError when a component is a link or not a folder; the `mkdir` error otherwise.
 */
export async function mkdirNoFollow(root: string, rel: string): Promise<string> {
  let current = path.resolve(root);
  const parts = ['', ...rel.split(/[\\/]/).filter((p) => p !== '' && p !== '.')];
  for (const part of parts) {
    if (part === '..') throw new ContainmentError(`folder \`${rel}\` leaves ${root}`, rel, path.resolve(root, rel));
    if (part) current = path.join(current, part);
    let st = await lstat(current).catch(() => undefined);
    if (!st) {
      await mkdir(current, part ? undefined : { recursive: true }).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'EEXIST') throw e;
      });
      st = await lstat(current);
    }
    if (st.isSymbolicLink() || !st.isDirectory()) {
      throw new ContainmentError(`\`${path.relative(root, current) || '.'}\` is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a folder'}; not written through`, rel, current);
    }
  }
  return current;
}

/**
 * Unlinks every symbolic link among the folders `root/a`, `root/a/b`, … leading to
 * `root/<rel>` (never following one), so `mkdir -p` of a job folder cannot be sent elsewhere
 * by a link an earlier agent planted at the iteration level (it was handed `${output_dir}`).
 * Three `lstat` calls for a `<case>/<variant>/run-<k>` id. Returns the removed paths.
 */
export async function unlinkPlantedAncestors(root: string, rel: string): Promise<string[]> {
  const removed: string[] = [];
  let cur = root;
  for (const part of rel.split('/').filter(Boolean)) {
    cur = path.join(cur, part);
    const st = await lstat(cur).catch(() => undefined);
    if (!st) break;
    if (st.isSymbolicLink()) {
      await unlink(cur);
      removed.push(cur);
      break;
    }
  }
  return removed;
}

/** What {@link makeJobFolder} did. */
export interface JobFolder {
  /** True when the job folder itself was created now (a first attempt): nothing is in it but `outputs/`. */
  fresh: boolean;
  /** Absolute paths of planted symbolic links unlinked on the way. */
  removed: string[];
}

/**
 * Creates the job folder `root/<rel>` and its `outputs/`, one component at a time, never
 * through a symbolic link: a component that is a link (planted by an earlier agent, which was
 * handed `${output_dir}`) is unlinked and made as a real folder, one that is a file is an
 * error. `made` remembers the folders this run created: for them one `lstat` checks that they
 * are still real folders, instead of a `mkdir` that fails with EEXIST and an `lstat` after it.
 * For a `<case>/<variant>/run-<k>` id: four calls (two `lstat`, two `mkdir`) once the case's
 * folders exist.
 *
 * @throws when a component is not a folder, or a `mkdir`/`unlink` fails (EACCES, ENOSPC, …).
 */
export async function makeJobFolder(root: string, rel: string, made?: Set<string>): Promise<JobFolder> {
  const removed: string[] = [];
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new ContainmentError(`job folder \`${rel}\` leaves ${root}`, rel, path.resolve(root, rel));
  let cur = root;
  let fresh = false;
  // Direct system calls: a few metadata calls, each cheaper than a thread-pool hand-off (issue 13).
  const unlinkIfLink = (p: string): 'folder' | 'gone' => {
    const st = lstatOrUndefined(p);
    if (!st) return 'gone';
    if (st.isDirectory()) return 'folder';
    if (!st.isSymbolicLink()) throw new ContainmentError(`\`${path.relative(root, p)}\` is not a folder`, rel, p);
    unlinkSync(p);
    removed.push(p);
    return 'gone';
  };
  for (let i = 0; i < parts.length; i++) {
    cur = path.join(cur, parts[i]!);
    const last = i === parts.length - 1;
    if (!last && made?.has(cur) && unlinkIfLink(cur) === 'folder') continue;
    try {
      mkdirSync(cur);
      fresh = last;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      if (unlinkIfLink(cur) === 'gone') {
        mkdirSync(cur);
        fresh = last;
      } else fresh = false;
    }
    if (!last) made?.add(cur);
  }
  try {
    mkdirSync(path.join(cur, 'outputs'));
  } catch (e) {
    // An earlier attempt's: the job checks the folder for planted links before its first turn.
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || fresh) throw e;
  }
  return { fresh, removed };
}
