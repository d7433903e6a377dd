/**
 * Finding (and, for pinned versions, installing) an engine's executable, plus the functions
 * behind `skill-up engines list | install | check`.
 *
 * Resolution order (design.md, "Engine adapters"):
 * 1. `SKILL_UP_<ENGINE>_BIN` (e.g. `SKILL_UP_CLAUDE_CODE_BIN`): an explicit path, or a bare
 *    command name looked up on PATH. Set but unusable = an error, never a silent fallback.
 * 2. With a pinned `engine.version`: the cache folder for that exact version, installed with
 *    npm on first use (see `cache.ts`). PATH is NOT consulted, so a pin is always honoured.
 * 3. Without a pin: the executable on PATH, else the newest version already in the cache.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { minimalEnv } from './env.js';
import { binaryIdentity, cachedVersion, cacheRoot, cachedBinPath, displayPath, installToCache, isExecutable, listCachedVersions, storeVersion } from './cache.js';
import { binOverrideVar, findKnownEngine, findKnownEngineByPackage, knownEngines } from './known.js';
import { EngineUnavailable } from './types.js';

/** Options for `resolveEngineBinary`. */
export interface ResolveOptions {
  /** npm package that ships the engine, e.g. `@anthropic-ai/claude-code`. */
  npmPackage: string;
  /** Executable name, e.g. `claude`. */
  bin: string;
  /** Exact version pin (`engine.version`); installs into the cache on first use. */
  version?: string;
  /** Receives the one-line install report when an install actually runs. */
  onProgress?: (line: string) => void;
  /** Canonical engine name for the `SKILL_UP_<ENGINE>_BIN` override; default: looked up from
   * `npmPackage` in the known-engine table, else derived from `bin`. */
  engine?: string;
  /** Environment to read PATH, the override and SKILL_UP_CACHE_DIR from; default `process.env`. */
  env?: Record<string, string | undefined>;
}

/** Where an engine's executable was found. `version` is set when known without running it
 * (cache installs); use `probeVersion` for the others. */
export interface ResolvedEngine {
  /** Absolute path of the executable. */
  path: string;
  version?: string;
  source: 'env' | 'path' | 'cache';
}

/**
 * Resolves an engine's executable (order in the module comment).
 *
 * @throws EngineUnavailable when the override points at nothing executable, a pinned install
 *   fails, or (without a pin) the engine is neither on PATH nor cached; the message says how to
 *   fix it (`engine.version` or `skill-up engines install <engine>`).
 */
export async function resolveEngineBinary(opts: ResolveOptions): Promise<ResolvedEngine> {
  const env = opts.env ?? process.env;
  const engineName = opts.engine ?? findKnownEngineByPackage(opts.npmPackage)?.name ?? opts.bin;
  const overrideVar = binOverrideVar(engineName);
  const override = env[overrideVar];
  if (override !== undefined && override.trim() !== '') {
    const found = override.includes('/') ? resolvePath(override) : await findOnPath(override, env);
    if (!found || !(await isExecutable(found))) {
      throw new EngineUnavailable(`${overrideVar}=${override}: no such executable file`);
    }
    return { path: found, source: 'env' };
  }

  const root = cacheRoot(env);
  if (opts.version) {
    const r = await installToCache({
      root,
      npmPackage: opts.npmPackage,
      version: opts.version,
      bin: opts.bin,
      onProgress: opts.onProgress,
      env,
    });
    return { path: r.path, version: opts.version, source: 'cache' };
  }

  const onPath = await findOnPath(opts.bin, env);
  if (onPath) return { path: onPath, source: 'path' };

  const cached = await listCachedVersions(root, opts.npmPackage, opts.bin);
  if (cached.length > 0) {
    const version = cached[0]!;
    return { path: cachedBinPath(root, opts.npmPackage, version, opts.bin), version, source: 'cache' };
  }

  throw new EngineUnavailable(
    `${engineName}: "${opts.bin}" is not on PATH and no version of ${opts.npmPackage} is in ${displayPath(root)}. ` +
      `Pin engine.version in eval.yaml (e.g. \`version: 1.2.3\`) so skill-up installs it, ` +
      `run \`skill-up engines install ${engineName}\`, or set ${overrideVar} to the executable.`,
  );
}

/** The first executable called `bin` in the PATH of `env`, as an absolute path, or undefined. */
export async function findOnPath(bin: string, env: Record<string, string | undefined> = process.env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = isAbsolute(dir) ? join(dir, bin) : resolvePath(dir, bin);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/**
 * Runs `<path> --version` (30 s limit) and returns the first `x.y.z[-pre]` in its output
 * (`2.1.332 (Claude Code)` → `2.1.332`, `codex-cli 0.171.0` → `0.171.0`).
 *
 * The answer is cached per executable in skill-up's per-user cache (`<cache>/versions/`,
 * src/engine/cache.ts {@link cachedVersion}): an engine's `--version` takes 0.1–1 s, on every
 * run. The entry holds the executable's real path, device, inode, size, modification and
 * change times, and a digest of the `PATH` and `NODE_OPTIONS` the probe gets (they choose
 * the interpreter a script runs under); the entry is used only while all of these are
 * unchanged, so a replaced, upgraded or touched executable is probed again. Failures are
 * never cached. `SKILL_UP_CACHE_DIR` of `env` chooses the cache, as for installs.
 *
 * The probe never runs in the user's real home (issue 11): it gets only the common base of
 * `env` (src/engine/env.ts `minimalEnv`, so no engine's config-dir variable such as
 * `GEMINI_CLI_HOME` or `CODEX_HOME` leaks in) with `HOME`, `XDG_{CONFIG,CACHE,DATA,STATE}_HOME`
 * and `TMPDIR`/`TMP`/`TEMP` in a throwaway folder that is also its cwd and is removed
 * afterwards. A broken `~/.gemini/settings.json` therefore cannot fail it, and the engine's
 * start-up files (Gemini CLI writes two under `~/.gemini`) land in that folder.
 *
 * @throws EngineUnavailable when it does not start, fails, or prints no version; the message
 *   holds the output's last lines (e.g. Claude Code's "native binary not installed" stub).
 */
export async function probeVersion(path: string, env: Record<string, string | undefined> = process.env): Promise<string> {
  const root = cacheRoot(env);
  const envKey = probeEnvKey(env);
  const before = await binaryIdentity(path, envKey);
  const hit = before && (await cachedVersion(root, before));
  if (hit) return hit;
  const version = await runVersionProbe(path, env);
  // Stored only when the executable did not change while it ran (an install racing the probe).
  const after = before && (await binaryIdentity(path, envKey));
  if (before && after && JSON.stringify(after) === JSON.stringify(before)) await storeVersion(root, before, version);
  return version;
}

/** The digest of what, in the probe's environment, can change what `--version` runs: `PATH` and `NODE_OPTIONS`. */
function probeEnvKey(env: Record<string, string | undefined>): string {
  const base = minimalEnv(env);
  return createHash('sha256').update(JSON.stringify([base.PATH ?? null, base.NODE_OPTIONS ?? null])).digest('hex').slice(0, 32);
}

/** `<path> --version`, run as {@link probeVersion} says; the version it prints. @throws EngineUnavailable */
async function runVersionProbe(path: string, env: Record<string, string | undefined>): Promise<string> {
  // Loaded on first use: with the version cached, a run never starts a probe (execa is 100+ modules).
  const { execa } = await import('execa');
  const home = await mkdtemp(join(env.TMPDIR || tmpdir(), 'skill-up-probe-'));
  let r;
  try {
    const tmp = join(home, 'tmp');
    await mkdir(tmp);
    const probeEnv = {
      ...minimalEnv(env),
      HOME: home,
      USERPROFILE: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_CACHE_HOME: join(home, '.cache'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
      TMPDIR: tmp,
      TMP: tmp,
      TEMP: tmp,
    };
    r = await execa(path, ['--version'], { cwd: home, env: probeEnv, extendEnv: false, reject: false, stdin: 'ignore', timeout: 30_000 });
  } finally {
    await rm(home, { recursive: true, force: true, maxRetries: 3 });
  }
  const out = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
  const m = /\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(String(r.stdout ?? '')) ?? /\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(out);
  if (r.failed || !m) {
    const why = r.timedOut ? 'timed out' : r.exitCode === undefined ? (r.shortMessage ?? 'could not start') : `exit code ${r.exitCode}`;
    const tail = out.trim().split('\n').slice(-5).join('\n');
    throw new EngineUnavailable(`${path} --version failed (${why})${tail ? `: ${tail}` : ''}`);
  }
  return m[1]!;
}

/** One row of `skill-up engines list`. */
export interface EngineListing {
  name: string;
  npmPackage: string;
  bin: string;
  /** Versions in the cache, newest first. */
  cachedVersions: string[];
  /** Absolute path of the executable on PATH, if any. */
  onPath?: string;
  /** The `SKILL_UP_<ENGINE>_BIN` variable and its value, when set. */
  override?: { variable: string; value: string };
}

/** Every known engine with its cached versions, PATH executable and override. Never throws. */
export async function listEngines(env: Record<string, string | undefined> = process.env): Promise<EngineListing[]> {
  const root = cacheRoot(env);
  const rows: EngineListing[] = [];
  for (const e of knownEngines()) {
    const variable = binOverrideVar(e.name);
    const value = env[variable];
    rows.push({
      name: e.name,
      npmPackage: e.npmPackage,
      bin: e.bin,
      cachedVersions: await listCachedVersions(root, e.npmPackage, e.bin),
      onPath: await findOnPath(e.bin, env),
      override: value ? { variable, value } : undefined,
    });
  }
  return rows;
}

/** What `installEngine` did. */
export interface InstalledEngine {
  name: string;
  npmPackage: string;
  version: string;
  path: string;
  /** False when that version was already in the cache. */
  installed: boolean;
}

/**
 * Installs `name` (a known engine) at `version` into the cache; without a version, asks npm for
 * the package's `latest` version (`npm view <pkg> version`) and pins that.
 *
 * @throws EngineUnavailable for an unknown engine name, when npm cannot tell the latest version,
 *   or when the install fails.
 */
export async function installEngine(
  name: string,
  version?: string,
  opts: { onProgress?: (line: string) => void; env?: Record<string, string | undefined> } = {},
): Promise<InstalledEngine> {
  const env = opts.env ?? process.env;
  const known = requireKnown(name);
  const v = version ?? (await latestVersion(known.npmPackage, env));
  const r = await installToCache({ root: cacheRoot(env), npmPackage: known.npmPackage, version: v, bin: known.bin, onProgress: opts.onProgress, env });
  return { name: known.name, npmPackage: known.npmPackage, version: v, path: r.path, installed: r.installed };
}

/** The result of `checkEngine`. */
export interface EngineCheck {
  name: string;
  ok: boolean;
  path?: string;
  source?: ResolvedEngine['source'];
  /** Version the executable reports (`--version`). */
  version?: string;
  /** Why it is not usable, when `ok` is false. */
  message?: string;
}

/**
 * Resolves `name` as a run would (without installing anything: a pinned `version` must already
 * be in the cache) and runs `--version`. Never throws: problems are in `message`.
 */
export async function checkEngine(
  name: string,
  version?: string,
  opts: { env?: Record<string, string | undefined> } = {},
): Promise<EngineCheck> {
  const env = opts.env ?? process.env;
  const known = findKnownEngine(name);
  if (!known) return { name, ok: false, message: `unknown engine "${name}" (known: ${knownEngines().map((e) => e.name).join(', ')})` };
  try {
    let resolved: ResolvedEngine;
    if (version && !env[binOverrideVar(name)]) {
      const path = cachedBinPath(cacheRoot(env), known.npmPackage, version, known.bin);
      if (!(await isExecutable(path))) {
        return { name, ok: false, message: `${known.npmPackage}@${version} is not in ${displayPath(cacheRoot(env))}: run \`skill-up engines install ${name}@${version}\`` };
      }
      resolved = { path, version, source: 'cache' };
    } else {
      resolved = await resolveEngineBinary({ npmPackage: known.npmPackage, bin: known.bin, engine: name, env });
    }
    const reported = await probeVersion(resolved.path, env);
    return { name, ok: true, path: resolved.path, source: resolved.source, version: reported };
  } catch (e) {
    return { name, ok: false, message: (e as Error).message };
  }
}

function requireKnown(name: string) {
  const known = findKnownEngine(name);
  if (!known) throw new EngineUnavailable(`unknown engine "${name}" (known: ${knownEngines().map((e) => e.name).join(', ')})`);
  return known;
}

async function latestVersion(npmPackage: string, env: Record<string, string | undefined>): Promise<string> {
  const { execa } = await import('execa');
  const r = await execa('npm', ['view', npmPackage, 'version'], { env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000 });
  const v = String(r.stdout ?? '').trim().split('\n').pop()?.trim();
  if (r.failed || !v) {
    const tail = String(r.stderr ?? '').trim().split('\n').slice(-5).join('\n');
    throw new EngineUnavailable(`could not ask npm for the latest version of ${npmPackage}${tail ? `: ${tail}` : ''}`);
  }
  return v;
}
