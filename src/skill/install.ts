/**
 * Copies a skill's selected files into an engine's skill folder inside a workspace.
 *
 * A run plans each skill once ({@link planSkillInstall} with `snapshot`: the selection walked,
 * checked and read into memory) and installs that snapshot into every with_skill job's
 * workspace ({@link applySkillInstall}): no walk of the skill folder per job, and every job gets
 * the same bytes, even when the skill folder is edited during the run or an earlier job's
 * agent changed its own installed copy.
 */
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, rmSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { chmod, copyFile, lstat, mkdir, open, readFile, readlink, realpath, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from './files.js';
import { selectSkillFiles } from './select.js';

/** The skill cannot be installed (unreadable folder, no SKILL.md selected, a link leaving the skill). */
export class SkillInstallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SkillInstallError';
  }
}

export interface InstallSkillOptions {
  /** The skill folder (holding SKILL.md). */
  skillDir: string;
  /** Globs selecting files (empty = all); see {@link selectSkillFiles}. */
  include: string[];
  /** Globs removing files after `include`; `evals/**` and `.git/**` are always removed. */
  exclude: string[];
  /** Where the skill is installed, e.g. `<workspace>/.claude/skills/<name>`; created when missing. */
  destDir: string;
}

/** A checked, ready-to-copy file selection of a skill: computed once per run, applied per job. */
export interface SkillInstallPlan {
  /** The skill folder as given, and its real path. */
  given: string;
  root: string;
  /** Relative paths, each with its mode or, for a link, the link text to recreate. */
  entries: { rel: string; mode: number; link?: string }[];
  /** The folders holding the entries (relative POSIX paths), parents first. */
  dirs?: string[];
  /**
   * Each regular file's bytes, read once when planned with `snapshot` (when the selection fits
   * {@link MAX_SNAPSHOT_BYTES} and {@link MAX_SNAPSHOT_FILES}). Undefined: each install copies
   * from the skill folder.
   */
  content?: Map<string, Buffer>;
}

/** Largest selection (bytes of regular files) a plan keeps in memory: 8 MiB. */
export const MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024;
/** Most entries a plan keeps in memory (and installs with direct system calls). */
export const MAX_SNAPSHOT_FILES = 512;

/**
 * Selects and checks a skill's files without copying anything. With `snapshot`, the selected
 * regular files are also read now into {@link SkillInstallPlan.content} (when they fit).
 * @throws SkillInstallError when the folder cannot be read, the selection lacks SKILL.md, or a
 *   symbolic link points outside the skill folder.
 */
export async function planSkillInstall(opts: Omit<InstallSkillOptions, 'destDir'> & { snapshot?: boolean }): Promise<SkillInstallPlan> {
  const given = path.resolve(opts.skillDir);
  let root: string;
  let files: string[];
  try {
    root = await realpath(given);
    files = await selectSkillFiles(root, opts.include, opts.exclude);
  } catch (e) {
    throw new SkillInstallError(`cannot read skill folder ${given}: ${(e as Error).message}`);
  }
  if (!files.includes('SKILL.md')) {
    throw new SkillInstallError(
      `the file selection of ${given} does not include SKILL.md (check skills[].include/exclude); an installed skill needs it`,
    );
  }
  const entries: SkillInstallPlan['entries'] = [];
  let bytes = 0;
  for (const rel of files) {
    const abs = path.join(root, rel);
    const st = await lstat(abs);
    if (!st.isSymbolicLink()) {
      entries.push({ rel, mode: st.mode & 0o7777 });
      bytes += st.size;
      continue;
    }
    const target = await readlink(abs);
    const resolved = path.resolve(path.dirname(abs), target);
    const lexicalInside = isInside(root, resolved) || isInside(given, resolved);
    let realInside = true;
    try {
      realInside = isInside(root, await realpath(resolved));
    } catch {
      // Dangling link: only the lexical check applies.
    }
    if (!lexicalInside || !realInside) {
      throw new SkillInstallError(
        `symbolic link \`${rel}\` in skill ${given} points to \`${target}\`, outside the skill folder; ` +
          'copy the file into the skill or exclude the link',
      );
    }
    const inSkill = isInside(root, resolved) ? path.relative(root, resolved) : path.relative(given, resolved);
    // Both ends lie under the destination, so the relative link text does not depend on it.
    entries.push({ rel, mode: st.mode & 0o7777, link: path.relative(path.dirname(rel), inSkill) || '.' });
  }
  const dirs = new Set<string>();
  for (const { rel } of entries) for (let d = path.posix.dirname(rel); d !== '.' && !dirs.has(d); d = path.posix.dirname(d)) dirs.add(d);
  const plan: SkillInstallPlan = { given, root, entries, dirs: [...dirs].sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : 1)) };
  if (opts.snapshot && bytes <= MAX_SNAPSHOT_BYTES && entries.length <= MAX_SNAPSHOT_FILES) {
    const content = new Map<string, Buffer>();
    let total = 0;
    try {
      for (const e of entries) {
        if (e.link !== undefined) continue;
        const data = await readFile(path.join(root, e.rel));
        content.set(e.rel, data);
        total += data.length;
      }
    } catch (e) {
      throw new SkillInstallError(`cannot read skill folder ${given}: ${(e as Error).message}`);
    }
    // A file that grew between the lstat and the read: the bound still holds.
    if (total <= MAX_SNAPSHOT_BYTES) plan.content = content;
  }
  return plan;
}

/** An installed entry as {@link applySkillInstall} left it (the new file's fstat): what src/runtime/changes.ts snapshots. */
export interface InstalledState {
  /** Bytes. */
  size: number;
  /** Modification time, ms since the epoch. */
  mtimeMs: number;
  /** `st_mode` (type and permission bits). */
  mode: number;
  /** A link's text. */
  link?: string;
}

/** What {@link applySkillInstall} did. */
export interface AppliedInstall {
  /** The installed relative POSIX paths, in plan order. */
  files: string[];
  /** True when this install created the destination folder (it holds nothing else). */
  fresh: boolean;
  /** Installed path (relative to the destination) → its state; set for a fresh install from a snapshot. */
  states?: Map<string, InstalledState>;
}

/** Options of {@link applySkillInstall}. */
export interface ApplyOptions {
  /**
   * A folder known to exist that holds the destination (the workspace): the folders between
   * them are made one by one, parents first, instead of `mkdir -p` trying the deepest first.
   */
  within?: string;
}

/**
 * Copies a planned skill into `destDir`, keeping file modes and recreating inner links. A plan
 * with {@link SkillInstallPlan.content} is written from memory (one `open`, `write`, `fstat`,
 * `close` per file; `fchmod` only for bits the umask would strip), and the new files' states
 * are returned; otherwise each file is copied from the skill folder (a reflink where the file
 * system can).
 * @throws SkillInstallError when the destination lies inside the skill or a copy fails.
 */
export async function applySkillInstall(plan: SkillInstallPlan, destDir: string, opts: ApplyOptions = {}): Promise<AppliedInstall> {
  const dest = path.resolve(destDir);
  if (isInside(plan.root, dest) || isInside(plan.given, dest)) {
    throw new SkillInstallError(`cannot install skill ${plan.given} into ${dest}: the destination lies inside the skill folder`);
  }
  try {
    if (plan.content) return await installFromSnapshot(plan, plan.content, dest, opts.within);
    // A fresh destination (the usual case: a new workspace) needs no clearing of old files.
    const fresh = (await mkdir(dest, { recursive: true })) !== undefined;
    const made = new Set<string>([dest]);
    for (const { rel, mode, link } of plan.entries) {
      const dst = path.join(dest, rel);
      const parent = path.dirname(dst);
      if (!made.has(parent)) {
        await mkdir(parent, { recursive: true });
        made.add(parent);
      }
      if (!fresh) await rm(dst, { force: true });
      if (link !== undefined) {
        await symlink(link, dst);
      } else {
        await copyFile(path.join(plan.root, rel), dst, constants.COPYFILE_FICLONE);
        await chmod(dst, mode);
      }
    }
    return { files: plan.entries.map((e) => e.rel), fresh };
  } catch (e) {
    throw new SkillInstallError(`cannot install skill ${plan.given} into ${dest}: ${(e as Error).message}`);
  }
}

/** The process umask, read once (skill-up never changes it). */
let umaskBits: number | undefined;

/** Files written at once by one install (each takes a libuv thread while it is written). */
const WRITES_AT_ONCE = 4;

/** The largest snapshot written with direct system calls: {@link SYNC_INSTALL_FILES} files, {@link SYNC_INSTALL_BYTES} bytes. */
const SYNC_INSTALL_FILES = 32;
const SYNC_INSTALL_BYTES = 256 * 1024;

/** The file-system calls an install makes, direct or through the thread pool (see {@link installFromSnapshot}). */
interface InstallCalls {
  mkdir(p: string): unknown;
  /** `mkdir -p`: the first folder created, undefined when it all existed. */
  mkdirp(p: string): string | undefined | Promise<string | undefined>;
  remove(p: string): unknown;
  symlink(target: string, p: string): unknown;
  lstat(p: string): Stats | Promise<Stats>;
  /** Creates `p` (`flags`, `mode`), writes `data`, sets `mode` exactly when `chmod`; the new file's stat. */
  create(p: string, flags: number, mode: number, data: Buffer, chmod: boolean): Stats | Promise<Stats>;
}

const directCalls: InstallCalls = {
  mkdir: (p) => mkdirSync(p),
  mkdirp: (p) => mkdirSync(p, { recursive: true }),
  remove: (p) => rmSync(p, { force: true }),
  symlink: (t, p) => symlinkSync(t, p),
  lstat: (p) => lstatSync(p),
  create(p, flags, mode, data, chmod) {
    const fd = openSync(p, flags, mode);
    try {
      if (data.length) writeFileSync(fd, data);
      if (chmod) fchmodSync(fd, mode);
      return fstatSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};

const pooledCalls: InstallCalls = {
  mkdir: (p) => mkdir(p),
  mkdirp: (p) => mkdir(p, { recursive: true }),
  remove: (p) => rm(p, { force: true }),
  symlink: (t, p) => symlink(t, p),
  lstat: (p) => lstat(p),
  async create(p, flags, mode, data, chmod) {
    const fh = await open(p, flags, mode);
    try {
      if (data.length) await fh.writeFile(data);
      if (chmod) await fh.chmod(mode);
      return await fh.stat();
    } finally {
      await fh.close();
    }
  },
};

/**
 * Writes the snapshot into `dest`: its folders parents first, then its files, each opened with
 * O_EXCL and O_NOFOLLOW (nothing is ever written through a link already there). A small skill
 * (most: a SKILL.md and a few files) is written with direct system calls, which cost less CPU
 * than a thread-pool hand-off per call (issue 13); a large one through the thread pool, a few
 * files at a time, so that its writes do not stall every other job's event loop.
 */
async function installFromSnapshot(plan: SkillInstallPlan, content: Map<string, Buffer>, dest: string, within?: string): Promise<AppliedInstall> {
  let bytes = 0;
  for (const data of content.values()) bytes += data.length;
  const direct = plan.entries.length <= SYNC_INSTALL_FILES && bytes <= SYNC_INSTALL_BYTES;
  const fs = direct ? directCalls : pooledCalls;
  const fresh = await makeDest(fs, dest, within);
  for (const d of plan.dirs ?? []) {
    try {
      await fs.mkdir(path.join(dest, d));
    } catch (e) {
      if (fresh || (e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  umaskBits ??= process.umask();
  const umask = umaskBits;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  const states = new Map<string, InstalledState>();
  const put = async ({ rel, mode, link }: SkillInstallPlan['entries'][number]): Promise<void> => {
    const dst = path.join(dest, rel);
    if (!fresh) await fs.remove(dst);
    if (link !== undefined) {
      await fs.symlink(link, dst);
      const st = await fs.lstat(dst);
      states.set(rel, { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode, link });
      return;
    }
    const data = content.get(rel);
    if (!data) throw new Error(`${rel} is missing from the skill's snapshot`);
    // open() applied the umask; the skill's own mode is kept exactly (as a copy would).
    const st = await fs.create(dst, flags, mode, data, (mode & ~umask) !== mode);
    states.set(rel, { size: st.size, mtimeMs: st.mtimeMs, mode: st.mode });
  };
  const atOnce = direct ? 1 : WRITES_AT_ONCE;
  for (let i = 0; i < plan.entries.length; i += atOnce) await Promise.all(plan.entries.slice(i, i + atOnce).map(put));
  return { files: plan.entries.map((e) => e.rel), fresh, ...(fresh ? { states } : {}) };
}

/**
 * Makes `dest`, and the folders from `within` down to it one by one, parents first (an
 * existing one is fine), or with `mkdir -p` when `within` is not given or does not hold
 * `dest`. True when `dest` itself was created now.
 */
async function makeDest(fs: InstallCalls, dest: string, within?: string): Promise<boolean> {
  const rel = within ? path.relative(within, dest) : '';
  if (!within || !rel || rel.startsWith('..') || path.isAbsolute(rel)) return (await fs.mkdirp(dest)) !== undefined;
  let cur = within;
  let created = false;
  for (const part of rel.split(path.sep)) {
    cur = path.join(cur, part);
    try {
      await fs.mkdir(cur);
      created = true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      created = false;
    }
  }
  return created;
}

/**
 * Copies the selected files of a skill into `destDir` and returns their relative POSIX
 * paths (sorted).
 *
 * File modes are preserved (scripts stay executable). A symbolic link is recreated (with
 * a relative target) when its target lies inside the skill folder; a link pointing outside
 * the skill is rejected before anything is copied. Existing files at the destination are
 * replaced; other files already there are left alone.
 *
 * @throws SkillInstallError when the skill folder is unreadable, the selection lacks
 *   SKILL.md, `destDir` lies inside the skill folder, a symbolic link points outside the
 *   skill folder, or a copy fails.
 */
export async function installSkill(opts: InstallSkillOptions): Promise<{ files: string[] }> {
  const { files } = await applySkillInstall(await planSkillInstall(opts), opts.destDir);
  return { files };
}

/**
 * The workspace-relative folder (posix separators) a skill is installed into for an engine whose
 * first skill folder is `engineSkillDir` (`EngineAdapter.skillDirs[0]`, posix or native separators): `skills[].target` when it
 * is a path, else `<engineSkillDir>/<name>` (schemas/eval.schema.json `skills.items.target`).
 */
export function skillInstallDir(skill: { name: string; dir?: string | undefined }, engineSkillDir: string): string {
  return skill.dir ?? `${engineSkillDir.split('\\').join('/')}/${skill.name}`;
}
