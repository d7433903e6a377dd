/**
 * What the agent changed in its workspace: a cheap stat snapshot taken after the workspace is
 * prepared and the skill installed (before the first turn), compared with the workspace after
 * the last turn. The same comparison git's index uses (size, modification time, mode), so no
 * file is read or hashed; a file rewritten with the same size in the same millisecond would
 * be missed, which an engine process (hundreds of ms to start) cannot do in practice.
 *
 * The changed files are also saved into the job folder (`outputs/changes/`), so a saved run
 * can be graded again (`skill-up regrade`) from a fresh copy of the case's workspace with the
 * agent's changes applied on top ({@link restoreChanges}).
 */
import { lstat, mkdir, readFile, readlink, realpath, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { walkTree } from '../skill/files.js';
import { isInside, mkdirNoFollow } from '../util/contain.js';
import { copyRedacted, writeJson } from '../util/out.js';
import { redactor } from '../util/redact.js';

/** Most files one snapshot records; past it the snapshot (and the changes) are marked truncated. */
export const MAX_SNAPSHOT_FILES = 50_000;
/** Most bytes of changed files saved per job for regrading: 50 MB. */
export const MAX_SAVED_CHANGE_BYTES = 50 * 1024 * 1024;

/** One entry's state: size in bytes, modification time in ms, mode bits; `link` for a symbolic link's target. */
export interface EntryState {
  size: number;
  mtimeMs: number;
  mode: number;
  link?: string;
}

/** The workspace at one moment: workspace-relative POSIX path → state. `.git/` folders are left out. */
export interface WorkspaceSnapshot {
  files: Map<string, EntryState>;
  /** True when the workspace held more than {@link MAX_SNAPSHOT_FILES} files. */
  truncated: boolean;
}

/** What changed between two snapshots; each list sorted. */
export interface WorkspaceChanges {
  /** Files (or links) that exist now and did not before. */
  added: string[];
  /** Files present before and now whose size, modification time or mode (or link target) differ. */
  modified: string[];
  /** Files present before and gone now. */
  deleted: string[];
  /** True when either snapshot was truncated: the lists may be incomplete. */
  truncated: boolean;
}

/**
 * Folders whose state is already known (a skill just installed: src/skill/install.ts returns
 * each new file's fstat), keyed by workspace-relative POSIX path: the snapshot takes their
 * entries as given instead of walking the folder and `lstat`-ing each file again.
 */
export type KnownFolders = Map<string, Map<string, EntryState>>;

/**
 * Records every regular file and symbolic link under `dir` (links not followed; `.git/`
 * folders at any depth skipped, since a commit is not a change the judges look at, and the
 * top-level `.skill-up/`, which holds skill-up's own files). A
 * missing folder is an empty snapshot. Never throws: an entry that vanishes is left out.
 * `known` folders are not walked: their given entries are recorded (see {@link KnownFolders}).
 */
export async function snapshotWorkspace(dir: string, maxFiles = MAX_SNAPSHOT_FILES, known?: KnownFolders): Promise<WorkspaceSnapshot> {
  const files = new Map<string, EntryState>();
  let entries;
  try {
    // `.skill-up/` at the top is skill-up's own (a custom engine's session input, a grader's context).
    entries = await walkTree(dir, (rel) => rel === '.git' || rel.endsWith('/.git') || rel === '.skill-up' || known?.has(rel) === true);
  } catch {
    return { files, truncated: false };
  }
  for (const [folder, states] of known ?? []) {
    for (const [rel, state] of states) {
      if (files.size >= maxFiles) break;
      files.set(`${folder}/${rel}`, state);
    }
  }
  const truncated = entries.length + files.size > maxFiles;
  for (const e of entries.slice(0, Math.max(0, maxFiles - files.size))) {
    const abs = path.join(dir, e.rel);
    try {
      const st = await lstat(abs);
      const state: EntryState = { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode };
      if (e.kind === 'symlink') state.link = await readlink(abs);
      files.set(e.rel, state);
    } catch {
      /* vanished while walking */
    }
  }
  return { files, truncated };
}

/** Compares two snapshots of one workspace. */
export function diffSnapshots(before: WorkspaceSnapshot, after: WorkspaceSnapshot): WorkspaceChanges {
  const added: string[] = [];
  const modified: string[] = [];
  const deleted: string[] = [];
  for (const [rel, now] of after.files) {
    const was = before.files.get(rel);
    if (!was) added.push(rel);
    else if (was.size !== now.size || was.mtimeMs !== now.mtimeMs || was.mode !== now.mode || was.link !== now.link) modified.push(rel);
  }
  for (const rel of before.files.keys()) if (!after.files.has(rel)) deleted.push(rel);
  return { added: added.sort(), modified: modified.sort(), deleted: deleted.sort(), truncated: before.truncated || after.truncated };
}

/** What {@link saveChanges} wrote: `changes.json` beside the saved `files/`. */
export interface SavedChanges extends WorkspaceChanges {
  /** Saved files (paths relative to `files/`, as in the workspace, secrets in names redacted). */
  saved: string[];
  /** Symbolic links the agent made or changed, with their targets (recreated only when they stay inside). */
  links: { path: string; target: string }[];
  /** Changed files not saved, with the reason (too large, hard link, link out of the workspace, …). */
  notSaved: { path: string; reason: string }[];
}

/** Name of the change record inside the save folder. */
export const CHANGES_FILE = 'changes.json';

/**
 * Saves the added and modified files of `changes` from `workspaceDir` into
 * `<destDir>/files/<rel>` (secrets redacted, as every copy skill-up writes) and writes
 * `<destDir>/changes.json` ({@link SavedChanges}). Regular files only, never through a link
 * out of the workspace or a hard link (its content may come from outside); at most
 * `maxBytes` in all. `destRoot` is the trusted folder the destination lies in (the job
 * folder): no folder on the way is followed if it is a link.
 *
 * @throws when `destDir` cannot be written.
 */
export async function saveChanges(
  workspaceDir: string,
  changes: WorkspaceChanges,
  destDir: string,
  destRoot: string,
  maxBytes = MAX_SAVED_CHANGE_BYTES,
): Promise<SavedChanges> {
  const out: SavedChanges = { ...changes, saved: [], links: [], notSaved: [] };
  let root: string;
  try {
    root = await realpath(workspaceDir);
  } catch {
    root = workspaceDir;
  }
  let budget = maxBytes;
  const redact = redactor();
  for (const rel of [...changes.added, ...changes.modified]) {
    const src = path.join(root, rel);
    try {
      const st = await lstat(src);
      if (st.isSymbolicLink()) {
        out.links.push({ path: redact.redact(rel), target: redact.redact(await readlink(src)) });
        continue;
      }
      if (!st.isFile()) throw new Error('not a regular file');
      if (st.nlink > 1) throw new Error(`hard link (${st.nlink} links)`);
      if (st.size > budget) throw new Error(`over the ${Math.round(maxBytes / 1024 / 1024)} MB kept for regrading`);
      const name = redact.redact(rel);
      const dst = path.join(destDir, 'files', name);
      await mkdirNoFollow(destRoot, path.relative(destRoot, path.dirname(dst)));
      await copyRedacted(src, dst);
      budget -= st.size;
      out.saved.push(name);
    } catch (e) {
      out.notSaved.push({ path: redact.redact(rel), reason: (e as Error).message });
    }
  }
  await mkdir(destDir, { recursive: true });
  // Compact: read by skill-up (regrade, behaviour), not by hand; the same data as indented.
  await writeJson(path.join(destDir, CHANGES_FILE), out, { indent: 0 });
  return out;
}

/** Reads a save folder's `changes.json`; undefined when there is none or it is unreadable. */
export async function readSavedChanges(destDir: string): Promise<SavedChanges | undefined> {
  try {
    const doc = JSON.parse(await readFile(path.join(destDir, CHANGES_FILE), 'utf8')) as SavedChanges;
    return Array.isArray(doc.added) && Array.isArray(doc.saved) ? doc : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Applies saved changes to a freshly prepared workspace: deleted files removed, saved files
 * copied in, links recreated when their target stays inside the workspace. Every path is
 * checked to stay inside `workspaceDir` (a hand-edited changes.json cannot write elsewhere).
 * Returns the paths that could not be restored (not saved, or refused), with the reason.
 */
export async function restoreChanges(savedDir: string, saved: SavedChanges, workspaceDir: string): Promise<{ path: string; reason: string }[]> {
  const root = await realpath(workspaceDir);
  const missing = [...saved.notSaved];
  const inside = (rel: string) => {
    const abs = path.resolve(root, rel);
    return isInside(root, abs) && abs !== root ? abs : undefined;
  };
  for (const rel of saved.deleted) {
    const abs = inside(rel);
    if (abs) await rm(abs, { force: true, recursive: true }).catch(() => undefined);
  }
  const filesRoot = path.join(savedDir, 'files');
  for (const rel of saved.saved) {
    const abs = inside(rel);
    const src = path.resolve(filesRoot, rel);
    if (!abs || !isInside(filesRoot, src)) {
      missing.push({ path: rel, reason: 'path outside the workspace' });
      continue;
    }
    try {
      const st = await lstat(src);
      if (!st.isFile()) throw new Error('saved copy is not a regular file');
      await mkdirNoFollow(root, path.relative(root, path.dirname(abs)));
      await rm(abs, { force: true });
      await copyRedacted(src, abs);
    } catch (e) {
      missing.push({ path: rel, reason: (e as Error).message });
    }
  }
  for (const l of saved.links) {
    const abs = inside(l.path);
    if (!abs || !isInside(root, path.resolve(path.dirname(abs), l.target))) {
      missing.push({ path: l.path, reason: 'symbolic link pointing outside the workspace' });
      continue;
    }
    try {
      await mkdirNoFollow(root, path.relative(root, path.dirname(abs)));
      await rm(abs, { force: true });
      await symlink(l.target, abs);
    } catch (e) {
      missing.push({ path: l.path, reason: (e as Error).message });
    }
  }
  return missing;
}
