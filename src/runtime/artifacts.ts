/**
 * Copies files a case asked for (`collect_artifacts`) out of a workspace into the job's
 * output folder.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type Picomatch from 'picomatch';
import { requireCjs } from '../util/cjs.js';

const picomatch = requireCjs('picomatch') as typeof Picomatch;
import { globMatcher, walkTree } from '../skill/files.js';
import { ContainmentError, isInside, mkdirNoFollow } from '../util/contain.js';
import { copyRedacted } from '../util/out.js';
import { redactor } from '../util/redact.js';

/** Files larger than this (bytes) are skipped: 50 MB. */
export const MAX_ARTIFACT_BYTES = 50 * 1024 * 1024;

export interface CollectOptions {
  /** Size limit in bytes; larger files are skipped. Default {@link MAX_ARTIFACT_BYTES}. */
  maxBytes?: number;
  /** Told about every file that matched but was not copied, with the reason. */
  onSkip?: (rel: string, reason: string) => void;
  /**
   * The trusted folder `destDir` lies in (default `destDir` itself): every folder from here
   * down to a copy's destination is created component by component and must be a real folder,
   * never a symbolic link (an agent given the job folder could plant one).
   */
  destRoot?: string;
}

/**
 * Copies the workspace files matching `globs` to `destDir/<relative path>` and returns the
 * copied relative POSIX paths (sorted), secrets in the path redacted (`[REDACTED]`) in both
 * the destination and the returned list.
 *
 * Globs are picomatch syntax with `dot: true`, relative to the workspace; a glob naming a
 * folder selects everything under it. `.git/` (at any depth) and `.skill-up/` are never
 * collected. A symbolic link is collected as the file it points to when that is a regular
 * file inside the workspace, and skipped otherwise. Files over `maxBytes` (default 50 MB)
 * and files that vanish or cannot be read are skipped (reported through `onSkip`), never
 * thrown. A file with more than one hard link is skipped too (its content may be a file from
 * outside the workspace, linked in with `ln`). A destination folder that is a symbolic link
 * (planted in the job folder) is never written through: that file is skipped. A missing
 * workspace yields `[]`.
 *
 * @throws when `destDir` cannot be created or written, and GlobError (src/skill/files.ts) for a
 * glob that is refused (extglob, groups, too many `*`: they would compile to a slow regex).
 */
export async function collectArtifacts(
  workspaceDir: string,
  globs: string[],
  destDir: string,
  options: CollectOptions = {},
): Promise<string[]> {
  const maxBytes = options.maxBytes ?? MAX_ARTIFACT_BYTES;
  const skip = options.onSkip ?? (() => undefined);
  const destRoot = path.resolve(options.destRoot ?? destDir);
  if (!isInside(destRoot, path.resolve(destDir))) throw new Error(`collect: ${destDir} is outside ${destRoot}`);
  const cleaned = globs.map((g) => g.trim().replace(/^(\.\/)+/, '')).filter((g) => g !== '');
  if (cleaned.length === 0) return [];

  let root: string;
  try {
    root = await realpath(path.resolve(workspaceDir));
  } catch {
    return [];
  }
  const matches = globMatcher(cleaned);
  const mayContain = folderFilter(cleaned);
  const entries = await walkTree(root, (rel) => {
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    if (name === '.git' || rel === '.skill-up') return true;
    return !mayContain(rel);
  }).catch(() => []);

  const copied: string[] = [];
  for (const entry of entries) {
    if (!matches(entry.rel)) continue;
    const src = path.join(root, entry.rel);
    let from = src;
    try {
      if (entry.kind === 'symlink') {
        from = await realpath(src);
        if (!isInside(root, from)) {
          skip(entry.rel, 'symbolic link pointing outside the workspace');
          continue;
        }
      }
      const st = await stat(from);
      if (!st.isFile()) {
        skip(entry.rel, 'not a regular file');
        continue;
      }
      if (st.nlink > 1) {
        skip(entry.rel, `hard link (${st.nlink} links; its content may come from outside the workspace)`);
        continue;
      }
      if (st.size > maxBytes) {
        skip(entry.rel, `larger than ${formatBytes(maxBytes)} (${st.size} bytes)`);
        continue;
      }
    } catch (e) {
      skip(entry.rel, `cannot read: ${(e as Error).message}`);
      continue;
    }
    // A secret in a file or folder NAME is redacted too (`name-<secret>.txt` → `name-[REDACTED].txt`).
    const rel = redactor().redact(entry.rel);
    if (rel !== entry.rel && copied.includes(rel)) {
      skip(entry.rel, 'its name with secrets redacted is that of another collected file');
      continue;
    }
    const dst = path.join(destDir, rel);
    try {
      await mkdirNoFollow(destRoot, path.relative(destRoot, path.dirname(dst)));
    } catch (e) {
      if (!(e instanceof ContainmentError)) throw e;
      skip(entry.rel, `destination ${e.message}`);
      continue;
    }
    const existing = await lstat(dst).catch(() => undefined);
    if (existing?.isSymbolicLink()) {
      skip(entry.rel, 'destination is a symbolic link');
      continue;
    }
    if (existing && existing.nlink > 1) {
      skip(entry.rel, 'destination is a hard link (writing it would change another file)');
      continue;
    }
    try {
      await copyRedacted(from, dst); // a copy in the job's outputs: secrets redacted
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT' && (await lstat(from).catch(() => undefined)) === undefined) {
        skip(entry.rel, 'vanished while collecting');
        continue;
      }
      throw e;
    }
    copied.push(rel);
  }
  return copied.sort();
}

/**
 * A cheap pruning test: may folder `rel` contain a path matched by one of the globs?
 * Uses each glob's literal base (`src` of `src/**\/*.ts`); a glob without a base
 * (`**\/*.py`) can match anywhere.
 */
function folderFilter(globs: string[]): (rel: string) => boolean {
  const bases = globs.map((g) => picomatch.scan(g).base.replace(/\/+$/, ''));
  if (bases.some((b) => b === '')) return () => true;
  return (rel) => bases.some((b) => b === rel || b.startsWith(`${rel}/`) || rel.startsWith(`${b}/`));
}

function formatBytes(n: number): string {
  const mb = n / 1024 / 1024;
  if (mb < 1) return `${n} bytes`;
  return Number.isInteger(mb) ? `${mb} MB` : `${mb.toFixed(1)} MB`;
}
