/**
 * skill-up's per-user engine cache: pinned engine versions installed from npm, one folder each.
 *
 * Layout (design.md, "Engine adapters": "Engines are resolved from an explicit path, then PATH,
 * then skill-up's own cache"):
 *
 * ```
 * <cache>/engines/<pkg-sanitised>@<version>/node_modules/.bin/<bin>
 * e.g. ~/.cache/skill-up/engines/anthropic-ai+claude-code@2.1.332/node_modules/.bin/claude
 * ```
 *
 * `<cache>` is `$SKILL_UP_CACHE_DIR`, else `~/.cache/skill-up`. A folder is only ever created
 * complete: npm installs into a private temporary sibling which is then renamed into place, so
 * parallel jobs and parallel skill-up processes can install the same version at once without
 * seeing half an install (the loser of the rename race discards its copy).
 */
import { existsSync } from 'node:fs';
import { access, mkdir, readdir, readFile, realpath, rename, rm, stat, writeFile } from 'node:fs/promises';
import { constants as fsConstants } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { EngineUnavailable } from './types.js';

/** The cache root: `$SKILL_UP_CACHE_DIR` if set and non-empty, else `~/.cache/skill-up`. */
export function cacheRoot(env: Record<string, string | undefined> = process.env): string {
  const dir = env.SKILL_UP_CACHE_DIR;
  if (dir && dir.trim() !== '') return dir;
  return join(homedir(), '.cache', 'skill-up');
}

/** `<cache>/engines`, where every installed engine version gets its own folder. */
export function enginesDir(root: string): string {
  return join(root, 'engines');
}

/**
 * A package name as a single path segment: the leading `@` is dropped and `/` becomes `+`
 * (`@anthropic-ai/claude-code` → `anthropic-ai+claude-code`). npm names cannot hold `+`, so
 * the mapping is unambiguous.
 */
export function sanitisePackage(npmPackage: string): string {
  return npmPackage.replace(/^@/, '').replace(/\//g, '+');
}

/**
 * Absolute folder of one installed version: `<cache>/engines/<pkg-sanitised>@<version>`.
 * @throws EngineUnavailable when the name would not be one folder directly inside
 *   `<cache>/engines` (a version such as `../../evil` or `a/b`: config validation refuses
 *   those, this is the defence behind it).
 */
export function installDir(root: string, npmPackage: string, version: string): string {
  const name = `${sanitisePackage(npmPackage)}@${version}`;
  const parent = enginesDir(root);
  const dir = join(parent, name);
  if (/[\\/]/.test(name) || name.includes('\0') || version === '' || version.startsWith('.') || dirname(dir) !== parent) {
    throw new EngineUnavailable(`engine version \`${version}\` of ${npmPackage} is not a version: its cache folder would lie outside ${parent}; use an exact version such as 2.1.3`);
  }
  return dir;
}

/** Absolute path of the executable inside an installed version's folder. */
export function cachedBinPath(root: string, npmPackage: string, version: string, bin: string): string {
  return join(installDir(root, npmPackage, version), 'node_modules', '.bin', bin);
}

/** Whether `file` exists and is executable by this process. */
export async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/**
 * Orders version strings newest first: dot-separated numeric parts are compared as numbers,
 * a version with a pre-release suffix (`1.2.3-beta.1`) sorts before the same plain version.
 * Negative when `a` is newer than `b` (for `Array.prototype.sort`).
 */
export function compareVersionsDesc(a: string, b: string): number {
  const split = (v: string) => {
    const dash = v.indexOf('-');
    const core = dash < 0 ? v : v.slice(0, dash);
    const pre = dash < 0 ? '' : v.slice(dash + 1);
    return { nums: core.split('.').map((p) => Number.parseInt(p, 10) || 0), pre };
  };
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (y.nums[i] ?? 0) - (x.nums[i] ?? 0);
    if (d !== 0) return d;
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === '') return -1;
  if (y.pre === '') return 1;
  return y.pre.localeCompare(x.pre, 'en', { numeric: true });
}

/**
 * The versions of `npmPackage` installed in the cache whose `bin` is present, newest first.
 * A missing cache folder yields `[]`.
 */
export async function listCachedVersions(root: string, npmPackage: string, bin: string): Promise<string[]> {
  const prefix = `${sanitisePackage(npmPackage)}@`;
  let names: string[];
  try {
    names = await readdir(enginesDir(root));
  } catch {
    return [];
  }
  const versions: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const version = name.slice(prefix.length);
    if (version && !version.startsWith('.') && (await isExecutable(cachedBinPath(root, npmPackage, version, bin)))) versions.push(version);
  }
  return versions.sort(compareVersionsDesc);
}

/** Replaces the home folder prefix of a path with `~`, for messages. */
export function displayPath(p: string): string {
  const home = homedir();
  return home && (p === home || p.startsWith(home + '/')) ? '~' + p.slice(home.length) : p;
}

/** Options for `installToCache`. */
export interface InstallOptions {
  /** Cache root (see `cacheRoot`). */
  root: string;
  npmPackage: string;
  /** Exact version to install (a tag such as `latest` works but is cached under that name). */
  version: string;
  /** Executable the package must provide under `node_modules/.bin/`. */
  bin: string;
  /** Receives one line when an install actually ran, e.g.
   * `installing @anthropic-ai/claude-code@2.1.332 into ~/.cache/skill-up … done in 8.1 s`. */
  onProgress?: (line: string) => void;
  /** Milliseconds npm may take; default 10 minutes. */
  timeoutMs?: number;
  /** Environment for npm; default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** What `installToCache` returns. */
export interface InstallResult {
  /** Absolute path of the executable. */
  path: string;
  /** Absolute path of the version's folder. */
  dir: string;
  /** True when this call ran npm; false when the version was already cached. */
  installed: boolean;
}

const inFlight = new Map<string, Promise<InstallResult>>();

/**
 * Makes sure `npmPackage@version` is in the cache and returns its executable. Runs
 * `npm install --prefix <tmp> --no-audit --no-fund <pkg>@<version>` into a temporary sibling
 * folder, checks that `node_modules/.bin/<bin>` exists, then renames the folder into place.
 * Concurrent calls in one process share one install; concurrent processes race harmlessly.
 *
 * @throws EngineUnavailable when npm cannot run, fails (the message holds npm's last stderr
 *   lines), the package has no such executable, or the cache folder cannot be written.
 */
export function installToCache(opts: InstallOptions): Promise<InstallResult> {
  let dir: string;
  try {
    dir = installDir(opts.root, opts.npmPackage, opts.version);
  } catch (e) {
    return Promise.reject(e instanceof Error ? e : new Error(String(e)));
  }
  const pending = inFlight.get(dir);
  if (pending) return pending;
  // The cache folder unusable (a file, read-only, full): one clear line, never a stack trace.
  // Only a system error (it has an errno code); anything else is a bug and stays one.
  const p = doInstall(opts, dir)
    .catch((e: unknown) => {
      if (e instanceof EngineUnavailable || typeof (e as NodeJS.ErrnoException).code !== 'string') throw e;
      throw new EngineUnavailable(`could not install ${opts.npmPackage}@${opts.version} into ${displayPath(opts.root)}: ${(e as Error).message} (SKILL_UP_CACHE_DIR chooses another folder)`);
    })
    .finally(() => inFlight.delete(dir));
  inFlight.set(dir, p);
  return p;
}

async function doInstall(opts: InstallOptions, dir: string): Promise<InstallResult> {
  const binPath = join(dir, 'node_modules', '.bin', opts.bin);
  if (await isExecutable(binPath)) return { path: binPath, dir, installed: false };

  const spec = `${opts.npmPackage}@${opts.version}`;
  const parent = enginesDir(opts.root);
  await mkdir(parent, { recursive: true });
  await sweepStaleTemps(parent);
  const tmp = join(parent, `.tmp-${sanitisePackage(opts.npmPackage)}@${opts.version}-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(tmp, { recursive: true });
  const started = performance.now();
  const head = `installing ${spec} into ${displayPath(opts.root)} …`;
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  try {
    // Loaded on first use: only an engine install runs npm (execa is 100+ modules).
    const { execa } = await import('execa');
    const r = await execa('npm', ['install', '--prefix', tmp, '--no-audit', '--no-fund', spec], {
      env: opts.env ?? process.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: opts.timeoutMs ?? 600_000,
      cwd: tmp,
    });
    if (r.failed) {
      const why = r.timedOut
        ? `npm timed out after ${((opts.timeoutMs ?? 600_000) / 1000).toFixed(0)} s`
        : r.exitCode === undefined
          ? `could not run npm: ${r.shortMessage ?? r.message}`
          : `npm exited with code ${r.exitCode}`;
      const tail = summariseNpmErrors(String(r.stderr ?? ''));
      opts.onProgress?.(`${head} failed after ${elapsed()}`);
      throw new EngineUnavailable(`could not install ${spec}: ${why}${tail ? `\n${tail}` : ''}`);
    }
    const tmpBin = join(tmp, 'node_modules', '.bin', opts.bin);
    if (!(await isExecutable(tmpBin))) {
      opts.onProgress?.(`${head} failed after ${elapsed()}`);
      throw new EngineUnavailable(`could not install ${spec}: the package has no executable "${opts.bin}" in node_modules/.bin`);
    }
    try {
      await rename(tmp, dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Another process finished first: its copy is as good as ours.
      if ((code === 'ENOTEMPTY' || code === 'EEXIST') && (await isExecutable(binPath))) {
        await rm(tmp, { recursive: true, force: true });
        opts.onProgress?.(`${head} done in ${elapsed()}`);
        return { path: binPath, dir, installed: true };
      }
      throw new EngineUnavailable(`could not install ${spec}: cannot move it into ${dir}: ${(e as Error).message}`);
    }
    opts.onProgress?.(`${head} done in ${elapsed()}`);
    return { path: binPath, dir, installed: true };
  } finally {
    if (existsSync(tmp)) await rm(tmp, { recursive: true, force: true }).catch(() => {});
  }
}

/** Removes temporary install folders left by processes that died mid-install (older than a day). */
async function sweepStaleTemps(parent: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(parent);
  } catch {
    return;
  }
  const cutoff = Date.now() - 24 * 3600_000;
  for (const name of names) {
    if (!name.startsWith('.tmp-')) continue;
    const p = join(parent, name);
    try {
      if ((await stat(p)).mtimeMs < cutoff) await rm(p, { recursive: true, force: true });
    } catch {
      /* raced with another sweeper */
    }
  }
}

/**
 * npm's failure in a few lines: the `npm error` lines without stack frames, object dumps and
 * blank continuation lines (e.g. `npm error code ETARGET`, `npm error notarget No matching
 * version found for …`, the path of npm's debug log); warnings only when there is nothing else.
 * At most the last 10 lines.
 */
export function summariseNpmErrors(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '');
  const errors = lines.filter((l) => /^npm (error|ERR!)/.test(l) && !/^npm (error|ERR!)(\s{2,}|\s*$|\s*[{}])/.test(l));
  const others = lines.filter((l) => !/^npm (error|ERR!|warn|WARN)/.test(l));
  const picked = errors.length > 0 ? errors : others.length > 0 ? others : lines;
  return picked.slice(-10).join('\n');
}

/**
 * What identifies one executable for the version cache ({@link cachedVersion}): the absolute
 * path it is called by (a multi-call shim, one binary behind links named `claude` and `codex`,
 * answers by that name), its real path (symbolic links followed) and that file's device, inode, size, and modification and change
 * times in nanoseconds (as decimal strings), plus `env`, a digest of the environment that
 * decides what the probe runs (src/engine/resolve.ts). Any difference is another executable.
 */
export interface BinaryIdentity {
  /** The absolute path as called (links not followed). */
  called: string;
  /** The real path. */
  path: string;
  dev: string;
  ino: string;
  size: string;
  mtimeNs: string;
  ctimeNs: string;
  env: string;
}

/** The identity of `file` with `env` (see {@link BinaryIdentity}); undefined when it cannot be resolved or stat'ed. */
export async function binaryIdentity(file: string, env: string): Promise<BinaryIdentity | undefined> {
  try {
    const path = await realpath(file);
    const st = await stat(path, { bigint: true });
    return { called: resolve(file), path, dev: String(st.dev), ino: String(st.ino), size: String(st.size), mtimeNs: String(st.mtimeNs), ctimeNs: String(st.ctimeNs), env };
  } catch {
    return undefined;
  }
}

/** Layout version of a version-cache file: a file of another layout is never trusted. */
const VERSION_CACHE_FORMAT = 1;

/**
 * `<cache>/versions/<sha256 of the path as called and the real path, 32 hex>.json`: one small
 * file per executable and name, so processes probing different engines never write the same file.
 */
export function versionCacheFile(root: string, called: string, realPath: string = called): string {
  return join(root, 'versions', `${createHash('sha256').update(`${called}\0${realPath}`).digest('hex').slice(0, 32)}.json`);
}

/**
 * The version an earlier `--version` probe of the executable `id` reported, from skill-up's
 * per-user cache (`root`, {@link cacheRoot}), or undefined: no entry, an entry of another
 * identity (the executable was replaced, touched, or the environment differs), or a file that
 * is unreadable or not a cache entry (ignored, never an error).
 */
export async function cachedVersion(root: string, id: BinaryIdentity): Promise<string | undefined> {
  let entry: unknown;
  try {
    entry = JSON.parse(await readFile(versionCacheFile(root, id.called, id.path), 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof entry !== 'object' || entry === null) return undefined;
  const e = entry as Record<string, unknown>;
  if (e.format !== VERSION_CACHE_FORMAT || typeof e.version !== 'string' || !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(e.version)) return undefined;
  for (const [k, v] of Object.entries(id)) if (e[k] !== v) return undefined;
  return e.version;
}

/**
 * Records that the executable `id` reports `version`: written to a temporary sibling and
 * renamed into place, so a reader sees the old entry or the new one, never half. Best effort:
 * a cache that cannot be written (read-only home) only means the next run probes again.
 */
export async function storeVersion(root: string, id: BinaryIdentity, version: string): Promise<void> {
  const file = versionCacheFile(root, id.called, id.path);
  const tmp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(tmp, `${JSON.stringify({ format: VERSION_CACHE_FORMAT, ...id, version })}\n`);
    await rename(tmp, file);
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}
