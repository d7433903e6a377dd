/**
 * The suite hash: one fingerprint of everything a run's results depend on in the skill
 * folder (SKILL.md and the skill's files, eval.yaml, case files, fixtures, scripts), so that
 * shards of different suites are never merged and a changed suite is never resumed.
 * Paths enter relative to the skill folder, so the same suite hashes the same on any machine.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, lstat, readlink } from 'node:fs/promises';
import path from 'node:path';

/** Folders never part of a suite: version control, installed packages. */
const SKIP = new Set(['.git', 'node_modules', '.hg', '.svn']);
/** Bounds, so a huge folder cannot stall a run: past them the hash covers what was read and says so. */
const MAX_FILES = 20_000;
const MAX_BYTES = 256 * 1024 * 1024;

/**
 * The folders of `exclude` that lie strictly inside `root`. An output folder that holds the
 * skill folder (`--output-dir .` at a repository root) must not exclude the skill itself.
 */
export function excludedInside(root: string, exclude: string[]): string[] {
  return exclude.map((e) => path.resolve(e)).filter((e) => e.startsWith(`${root}${path.sep}`));
}

/**
 * `sha256:<hex>` over the sorted relative paths and contents of the files under `skillDir`
 * (symlinks by their target text, not followed), leaving out `exclude` (absolute folders,
 * e.g. an output folder inside the skill) and {@link SKIP}.
 * @throws what the file system throws for an unreadable skill folder.
 */
export async function suiteHash(skillDir: string, exclude: string[] = []): Promise<string> {
  const files = await suiteFiles(skillDir, exclude, MAX_FILES);
  const h = createHash('sha256');
  let bytes = 0;
  for (const { abs, rel } of files) {
    const st = await lstat(abs);
    h.update(`${rel}\0${st.mode & 0o111 ? 'x' : '-'}\0`);
    if (st.isSymbolicLink()) h.update(`link:${await readlink(abs)}`);
    else if (st.isFile() && bytes + st.size <= MAX_BYTES) {
      bytes += st.size;
      h.update(await readFile(abs));
    } else h.update(`size:${st.size}`);
    h.update('\0');
  }
  return `sha256:${h.digest('hex')}`;
}

/**
 * The files the suite hash covers, in its order: under `skillDir`, sorted by name at each
 * level, leaving out {@link SKIP} and the `exclude` folders inside it; at most `limit` files
 * (then the list is cut there). `rel` uses `/` whatever the platform.
 */
export async function suiteFiles(skillDir: string, exclude: string[], limit: number): Promise<{ abs: string; rel: string }[]> {
  const root = path.resolve(skillDir);
  const skip = excludedInside(root, exclude);
  const files: { abs: string; rel: string }[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (files.length >= limit) return;
      const abs = path.join(dir, e.name);
      if (SKIP.has(e.name) || skip.some((s) => abs === s || abs.startsWith(`${s}${path.sep}`))) continue;
      if (e.isDirectory()) await walk(abs);
      else files.push({ abs, rel: path.relative(root, abs).split(path.sep).join('/') });
    }
  };
  await walk(root);
  return files;
}
