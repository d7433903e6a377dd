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

/** Files past these bounds get no manifest (the suite hash still covers them): a changed suite is then reported by its hash alone. */
const MANIFEST_MAX_FILES = 2000;
const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;
/** Files read at once while hashing (their order in the hash is kept), and the size above which a file is read alone, so memory holds at most a window of small files or one large one. */
const READ_WINDOW = 16;
const READ_ALONE_BYTES = 4 * 1024 * 1024;

/** The suite hash and the manifest of one walk of the skill folder ({@link suiteDigest}). */
export interface SuiteDigest {
  /** `sha256:<hex>`, see {@link suiteHash}. */
  hash: string;
  /** Relative path → the first 16 hex digits of a sha256 of the file (executable bit, then content or link target); undefined past 2,000 files or 64 MB. */
  manifest?: Record<string, string>;
}

/**
 * {@link suiteHash} and the per-file manifest a refused resume names changed files with
 * (src/run/resume.ts `suiteManifest`), from ONE walk that reads each file once, several at a
 * time (a suite of 200 case files read one by one, twice, cost 0.2 s of a run's start).
 * @throws what the file system throws for an unreadable skill folder.
 */
export async function suiteDigest(skillDir: string, exclude: string[] = []): Promise<SuiteDigest> {
  const files = await suiteFiles(skillDir, exclude, MAX_FILES);
  const h = createHash('sha256');
  let manifest: Record<string, string> | undefined = files.length > MANIFEST_MAX_FILES ? undefined : {};
  let bytes = 0;
  let manifestBytes = 0;
  for (let i = 0; i < files.length; i += READ_WINDOW) {
    const win = files.slice(i, i + READ_WINDOW);
    const stats = await Promise.all(win.map((f) => lstat(f.abs)));
    // What each file contributes is decided in order (the byte budget), then the small ones are read at once.
    const plan = win.map((f, k) => {
      const st = stats[k]!;
      const content = st.isFile() && bytes + st.size <= MAX_BYTES;
      if (content) bytes += st.size;
      return { ...f, st, content };
    });
    const early = await Promise.all(
      plan.map((p) => (p.st.isSymbolicLink() ? readlink(p.abs) : p.content && p.st.size <= READ_ALONE_BYTES ? readFile(p.abs) : Promise.resolve(undefined))),
    );
    for (const [k, p] of plan.entries()) {
      const mode = p.st.mode & 0o111 ? 'x' : '-';
      h.update(`${p.rel}\0${mode}\0`);
      const m = manifest ? createHash('sha256').update(mode) : undefined;
      if (p.st.isSymbolicLink()) {
        const link = `link:${early[k] as string}`;
        h.update(link);
        m?.update(link);
      } else if (p.content) {
        const data = (early[k] as Buffer | undefined) ?? (await readFile(p.abs));
        h.update(data);
        m?.update(data);
      } else {
        h.update(`size:${p.st.size}`);
        m?.update(`size:${p.st.size}`);
      }
      h.update('\0');
      if (p.st.isFile()) manifestBytes += p.st.size;
      // The manifest needs every file's content: past its own budget (or the hash's) it is left out.
      if (manifest && (manifestBytes > MANIFEST_MAX_BYTES || (p.st.isFile() && !p.content))) manifest = undefined;
      if (manifest && m) manifest[p.rel] = m.digest('hex').slice(0, 16);
    }
  }
  return { hash: `sha256:${h.digest('hex')}`, ...(manifest ? { manifest } : {}) };
}

/**
 * `sha256:<hex>` over the sorted relative paths and contents of the files under `skillDir`
 * (symlinks by their target text, not followed), leaving out `exclude` (absolute folders,
 * e.g. an output folder inside the skill) and {@link SKIP}.
 * @throws what the file system throws for an unreadable skill folder.
 */
export async function suiteHash(skillDir: string, exclude: string[] = []): Promise<string> {
  return (await suiteDigest(skillDir, exclude)).hash;
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
