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
  const dest = path.resolve(opts.destDir);
  if (isInside(root, dest) || isInside(given, dest)) {
    throw new SkillInstallError(`cannot install skill ${given} into ${dest}: the destination lies inside the skill folder`);
  }

  // Check every link first, so a rejected skill leaves nothing half-installed.
  const links = new Map<string, string>();
  for (const rel of files) {
    const abs = path.join(root, rel);
    const st = await lstat(abs);
    if (!st.isSymbolicLink()) continue;
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
    links.set(rel, path.relative(path.dirname(path.join(dest, rel)), path.join(dest, inSkill)) || '.');
  }

  try {
    await mkdir(dest, { recursive: true });
    for (const rel of files) {
      const src = path.join(root, rel);
      const dst = path.join(dest, rel);
      await mkdir(path.dirname(dst), { recursive: true });
      await rm(dst, { force: true });
      const linkTarget = links.get(rel);
      if (linkTarget !== undefined) {
        await symlink(linkTarget, dst);
      } else {
        const st = await lstat(src);
        await copyFile(src, dst);
        await chmod(dst, st.mode & 0o7777);
      }
    }
  } catch (e) {
    throw new SkillInstallError(`cannot install skill ${given} into ${dest}: ${(e as Error).message}`);
  }
  return { files };
}
