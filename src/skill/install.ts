/**
 * Copies a skill's selected files into an engine's skill folder inside a workspace.
 */
import { chmod, copyFile, lstat, mkdir, readlink, realpath, rm, symlink } from 'node:fs/promises';
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
}

/**
 * Selects and checks a skill's files without copying anything.
 * @throws SkillInstallError when the folder cannot be read, the selection lacks SKILL.md, or a
 *   symbolic link points outside the skill folder.
 */
export async function planSkillInstall(opts: Omit<InstallSkillOptions, 'destDir'>): Promise<SkillInstallPlan> {
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
  for (const rel of files) {
    const abs = path.join(root, rel);
    const st = await lstat(abs);
    if (!st.isSymbolicLink()) {
      entries.push({ rel, mode: st.mode & 0o7777 });
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
  return { given, root, entries };
}

/**
 * Copies a planned skill into `destDir`, keeping file modes and recreating inner links.
 * @throws SkillInstallError when the destination lies inside the skill or a copy fails.
 */
export async function applySkillInstall(plan: SkillInstallPlan, destDir: string): Promise<{ files: string[] }> {
  const dest = path.resolve(destDir);
  if (isInside(plan.root, dest) || isInside(plan.given, dest)) {
    throw new SkillInstallError(`cannot install skill ${plan.given} into ${dest}: the destination lies inside the skill folder`);
  }
  try {
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
        await copyFile(path.join(plan.root, rel), dst);
        await chmod(dst, mode);
      }
    }
  } catch (e) {
    throw new SkillInstallError(`cannot install skill ${plan.given} into ${dest}: ${(e as Error).message}`);
  }
  return { files: plan.entries.map((e) => e.rel) };
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
  return applySkillInstall(await planSkillInstall(opts), opts.destDir);
}
