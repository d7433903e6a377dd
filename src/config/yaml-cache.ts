/**
 * A parse cache for skill-up's YAML files, keyed by a hash of the text, so a suite loaded again
 * (`validate`, `run --dry-run`, every `run`) skips the `yaml` parser for the files that did not
 * change: on a 200-case suite parsing was the largest part of start-up (issue 13).
 *
 * Only a text that parsed with no diagnostic at all (no error, no warning) is cached, and only
 * when its data survives JSON exactly ({@link jsonExact}); such a file's {@link YamlSource} is
 * then built from the cached data, its `doc` and `lineCounter` parsed only when a position is
 * asked for (src/config/yaml-source.ts). Two layers:
 * - in the process, every text (any caller of parseYaml): identical text gets one parse;
 * - on disk, per suite folder, for the files one {@link loadSuite} reads:
 *   `<cache>/yaml/<sha256 of the folder path, 32 hex>.json`, `<cache>` being
 *   `$SKILL_UP_CACHE_DIR`, else `~/.cache/skill-up`. Read once per process, written (temp
 *   file + rename, folder 0700, file 0600) at the end of a load only when something new was
 *   parsed, holding only the entries that load used, so it stays the size of the suite.
 * Every cache error (missing, corrupt, foreign or old file, unwritable folder) is ignored: the
 * file is then parsed as usual. `SKILL_UP_YAML_CACHE=0` turns both layers off.
 */
import * as crypto from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { requireCjs } from '../util/cjs.js';

/**
 * Bumped whenever what a cached entry means changes (the parse options of
 * src/config/yaml-source.ts YAML_PARSE_OPTIONS, `merge`, `toJS` options, what counts as clean):
 * an entry of another format is never used.
 */
export const YAML_CACHE_FORMAT = 1;

/** The `yaml` package's version: part of every key, so an upgrade never reuses an old answer. */
const YAML_VERSION: string = (() => {
  try {
    return String((requireCjs('yaml/package.json') as { version?: unknown }).version);
  } catch {
    return 'unknown';
  }
})();

const KEY_PREFIX = `skill-up yaml cache ${YAML_CACHE_FORMAT}\u0000yaml ${YAML_VERSION}\u0000`;

/** False when `SKILL_UP_YAML_CACHE=0` (read at each use, so a test can switch it). */
export function yamlCacheEnabled(env: Record<string, string | undefined> = process.env): boolean {
  return env.SKILL_UP_YAML_CACHE?.trim() !== '0';
}

/** The key of `text`: sha256 (hex) over the format, the `yaml` version and the text. */
export function yamlCacheKey(text: string): string {
  // The one-shot crypto.hash (Node ≥ 20.12) costs a third of a Hash object for small texts.
  const oneShot = (crypto as { hash?: (algorithm: string, data: string) => string }).hash;
  return oneShot ? oneShot('sha256', KEY_PREFIX + text) : createHash('sha256').update(KEY_PREFIX).update(text).digest('hex');
}

/**
 * True when `JSON.parse(JSON.stringify(v))` gives back exactly `v`: only plain objects, arrays
 * (no holes, no `undefined`), strings, booleans, null and finite numbers other than `-0`, no
 * object value `undefined`, and no object reached twice (a YAML alias: JSON would copy it).
 * Anything else (`.inf`, `.nan`, a Date, a Map) is not cached.
 */
export function jsonExact(v: unknown): boolean {
  const seen = new Set<object>();
  const stack: unknown[] = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || typeof x === 'string' || typeof x === 'boolean') continue;
    if (typeof x === 'number') {
      if (!Number.isFinite(x) || Object.is(x, -0)) return false;
      continue;
    }
    if (typeof x !== 'object') return false;
    if (seen.has(x)) return false;
    seen.add(x);
    if (Array.isArray(x)) {
      if (Object.getPrototypeOf(x) !== Array.prototype) return false;
      for (let i = 0; i < x.length; i++) {
        if (!(i in x) || x[i] === undefined) return false;
        stack.push(x[i]);
      }
      continue;
    }
    if (Object.getPrototypeOf(x) !== Object.prototype || Object.getOwnPropertySymbols(x).length > 0) return false;
    for (const k of Object.keys(x)) {
      const val = (x as Record<string, unknown>)[k];
      if (val === undefined) return false;
      stack.push(val);
    }
  }
  return true;
}

/** Most characters of cached JSON the process keeps in memory; past it the oldest entries go. */
const MEMORY_MAX_CHARS = 32 * 1024 * 1024;
/** key → the data as JSON text (parsed again at each use, so no two sources share an object). */
const memory = new Map<string, string>();
let memoryChars = 0;

function remember(key: string, json: string): void {
  if (memory.has(key) || json.length > MEMORY_MAX_CHARS) return;
  memory.set(key, json);
  memoryChars += json.length;
  for (const [k, v] of memory) {
    if (memoryChars <= MEMORY_MAX_CHARS) break;
    memory.delete(k);
    memoryChars -= v.length;
  }
}

/** Forgets the in-process layer (what a new process starts with): for tests of the disk layer. */
export function forgetYamlMemory(): void {
  memory.clear();
  memoryChars = 0;
}

/** A cache hit: the data of a text parsed before, a fresh copy. */
export interface YamlCacheHit {
  data: unknown;
}

/**
 * The cache one suite load uses: the in-process layer plus, for a suite folder, its file on
 * disk. Create it with {@link openYamlCache}, pass it to readYamlSource, call {@link save} at
 * the end of the load.
 */
export class YamlCache {
  /** Entries of the disk file as read (key → JSON text); empty when there is none or it is unusable. */
  private readonly stored: Map<string, string>;
  /** Entries this load used (hits and new parses): what {@link save} writes. */
  private readonly used = new Map<string, string>();
  private added = false;

  /** `file`: the disk file, or undefined for the in-process layer only. */
  constructor(readonly file: string | undefined) {
    this.stored = file ? readCacheFile(file) : new Map();
  }

  /** The cached data of the text with key `key`, or undefined (a miss, or the cache is off). */
  get(key: string): YamlCacheHit | undefined {
    if (!yamlCacheEnabled()) return undefined;
    const json = memory.get(key) ?? this.stored.get(key);
    if (json === undefined) return undefined;
    let data: unknown;
    try {
      data = JSON.parse(json);
    } catch {
      return undefined;
    }
    if (this.file) this.used.set(key, json);
    remember(key, json);
    return { data };
  }

  /** Records the data of a text that parsed with no diagnostic; values JSON cannot hold exactly are skipped. */
  put(key: string, data: unknown): void {
    if (!yamlCacheEnabled() || data === undefined || !jsonExact(data)) return;
    const json = JSON.stringify(data);
    remember(key, json);
    if (!this.file) return;
    this.used.set(key, json);
    if (!this.stored.has(key)) this.added = true;
  }

  /**
   * Writes the disk file when this load parsed something new: the entries it used, atomically
   * (temp file + rename). Never throws; errors leave the old file (or none).
   */
  save(): void {
    if (!this.file || !this.added || !yamlCacheEnabled()) return;
    this.added = false;
    const body = JSON.stringify({ format: YAML_CACHE_FORMAT, yaml: YAML_VERSION, entries: Object.fromEntries(this.used) });
    const tmp = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
      writeFileSync(tmp, body, { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch {
      try {
        rmSync(tmp, { force: true });
      } catch {
        /* nothing more to do */
      }
    }
  }
}

/** The in-process layer alone, for parses outside a suite load (the model script, SKILL.md, …). */
export const processYamlCache = new YamlCache(undefined);

/** The cache root: `$SKILL_UP_CACHE_DIR` if set and non-empty, else `~/.cache/skill-up` (as src/engine/cache.ts). */
function cacheRoot(env: Record<string, string | undefined> = process.env): string {
  const dir = env.SKILL_UP_CACHE_DIR;
  if (dir && dir.trim() !== '') return dir;
  return path.join(homedir(), '.cache', 'skill-up');
}

/** `<cache>/yaml/<sha256 of the absolute suite folder, 32 hex>.json`. */
export function yamlCacheFile(suiteDir: string, env: Record<string, string | undefined> = process.env): string {
  const id = createHash('sha256').update(path.resolve(suiteDir)).digest('hex').slice(0, 32);
  return path.join(cacheRoot(env), 'yaml', `${id}.json`);
}

/** The cache for one load of the suite in `suiteDir`; the in-process layer alone when the cache is off. */
export function openYamlCache(suiteDir: string): YamlCache {
  return yamlCacheEnabled() ? new YamlCache(yamlCacheFile(suiteDir)) : processYamlCache;
}

/** The entries of a cache file; empty when it is missing, unreadable, corrupt, or of another format or `yaml` version. */
function readCacheFile(file: string): Map<string, string> {
  const out = new Map<string, string>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return out;
  }
  if (typeof parsed !== 'object' || parsed === null) return out;
  const { format, yaml, entries } = parsed as { format?: unknown; yaml?: unknown; entries?: unknown };
  if (format !== YAML_CACHE_FORMAT || yaml !== YAML_VERSION || typeof entries !== 'object' || entries === null || Array.isArray(entries)) return out;
  for (const [k, v] of Object.entries(entries)) if (/^[0-9a-f]{64}$/.test(k) && typeof v === 'string') out.set(k, v);
  return out;
}
