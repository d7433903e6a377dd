/**
 * Loads the executable's bundle (dist/src/cli/skill-up.bundle.cjs, written by
 * scripts/bundle.mjs: all of skill-up's own modules in one CommonJS file) with a V8 code cache,
 * so a command pays neither the ES module loader's per-module work (about 290 modules) nor
 * their compilation (issue 13: 80–130 ms of every start on these machines). Node 22 has
 * `module.enableCompileCache()` for this; Node 20 has only `vm.Script`'s `cachedData`, which
 * is what this uses.
 *
 * The cache is `<cache>/code-cache/skill-up.<command>.<key>.bin` (`<cache>`: `$SKILL_UP_CACHE_DIR`, else
 * `~/.cache/skill-up`, as for engines), keyed on Node's version, the architecture, Node's flags
 * and the bundle's size and mtime, with a header of CRC-32s of the data and of the bundle it was
 * made from ({@link readCache}: V8 itself checks only the data's header, the source's length
 * and its flags). A damaged, stale or rejected cache, or none, is compiled as usual and written when the
 * process exits (what ran by then is in it), replacing older ones, unless it exits with 2. The
 * report packages a run loads while its first engine works come from a second bundle with a
 * cache of its own, `skill-up.@vendor.<key>.bin` ({@link vendorLoader}). `SKILL_UP_CODE_CACHE=0`
 * turns both off. Nothing here may fail a command: every cache error is ignored.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAscii } from 'node:buffer';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import type * as Zlib from 'node:zlib';

/** What the bundle exports (src/cli/entry.ts). */
interface BundleExports {
  start(): Promise<void>;
}

/**
 * Runs the CLI from `bundleFile`; `importer` is the caller's own `import()` (packages resolve
 * from beside the bundle, as the caller sits in the same folder). Returns false, having run
 * nothing, when the bundle cannot be read; the caller then loads the ES module entry instead.
 */
export function runBundle(bundleFile: string, importer: (specifier: string) => Promise<unknown>): boolean {
  let source: Source;
  let stat: { size: number; mtimeMs: number };
  try {
    stat = statSync(bundleFile);
    source = readSource(bundleFile);
  } catch {
    return false;
  }
  const cacheFile = process.env.SKILL_UP_CODE_CACHE === '0' ? undefined : cachePath(stat, commandKey(process.argv.slice(2)));
  // CommonJS's own wrapper, plus the importer the bundle's package import()s go through and the
  // loader of the vendor bundle (scripts/bundle.mjs). A command that stopped at a usage or config
  // error (exit 2) ran little of the code: its cache would leave every later run compiling the
  // rest, so the next command that gets further writes it.
  const script = compile(source, bundleFile, cacheFile, ['__skillUpImport', '__skillUpVendor'], (code) => code !== 2);
  const wrapper = script.runInThisContext() as (
    exports: object,
    require: NodeJS.Require,
    module: { exports: object },
    filename: string,
    dirname: string,
    importer: (specifier: string) => Promise<unknown>,
    vendor: (specifier: string) => unknown,
  ) => void;
  const mod = { exports: {} as BundleExports };
  const require = createRequire(bundleFile);
  wrapper.call(mod.exports, mod.exports, require, mod, bundleFile, dirname(bundleFile), importer, vendorLoader(join(dirname(bundleFile), VENDOR_FILE), require));
  mod.exports.start().catch((e: unknown) => {
    process.stderr.write(`skill-up: internal error: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 3;
  });
  return true;
}

/**
 * `source` as a CommonJS module's function (its wrapper's parameters, then `extra` ones) from
 * `file`, with the code cache `cacheFile` when it holds one V8 accepts. A missing, damaged,
 * stale or rejected cache is written when the process exits, if `writeAtExit(exitCode)` says
 * so: the cache then holds every function the process ran.
 */
function compile(source: Source, file: string, cacheFile: string | undefined, extra: string[], writeAtExit: (code: number) => boolean): Script {
  const cachedData = cacheFile ? readCache(cacheFile, source) : undefined;
  const script = new Script(`(function (${['exports', 'require', 'module', '__filename', '__dirname', ...extra].join(', ')}) {${source.text}\n})`, { filename: file, cachedData });
  if (cacheFile && (cachedData === undefined || script.cachedDataRejected)) process.once('exit', (code) => writeAtExit(code) && writeCache(cacheFile, script, source));
  return script;
}

/**
 * A cache file: {@link CACHE_MAGIC}, the CRC-32 of the V8 data, the CRC-32 of the bundle's bytes
 * it was made from (4 bytes each, big-endian), then the data. V8 checks only the data's header
 * and the source's length: a file damaged further in made Node 20 abort in its deserialiser
 * (`unreachable code`, exit 133) or crash (exit 139) on every later start, and a bundle
 * rewritten with the same length and mtime was run with the old one's code. Both are checked here.
 */
const CACHE_MAGIC = 0x53554331; // "SUC1"
const CACHE_HEADER = 12;

/**
 * CRC-32 (ISO-HDLC, zlib's): `zlib.crc32` where Node has it (20.15 and later; node:zlib required
 * at first use, about 1.4 ms, by a command with a cache to check or write), else computed here
 * (Node 20.5–20.14, which skill-up also runs on).
 */
function crc32(data: Buffer): number {
  const native = (requireHere('node:zlib') as Partial<typeof Zlib>).crc32;
  return typeof native === 'function' ? native(data) : crc32Here(data);
}

/** {@link crc32} computed here, byte by byte with a table. @internal exported for tests (test/cli/code-cache.test.ts). */
export function crc32Here(data: Buffer): number {
  crcTable ??= Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i++) crc = crcTable[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
let crcTable: number[] | undefined;
/** This module's `require`, for a built-in wanted only sometimes. */
const requireHere = createRequire(__filename);

/** The V8 data of `cacheFile` when its header vouches for it and for `source`; undefined when missing, damaged or another bundle's. */
function readCache(cacheFile: string, source: Source): Buffer | undefined {
  let raw: Buffer;
  try {
    raw = readFileSync(cacheFile);
  } catch {
    return undefined; // none yet
  }
  if (raw.length <= CACHE_HEADER || raw.readUInt32BE(0) !== CACHE_MAGIC) return undefined;
  const data = raw.subarray(CACHE_HEADER);
  return raw.readUInt32BE(4) === crc32(data) && raw.readUInt32BE(8) === crc32(source.bytes) ? data : undefined;
}

/** The vendor bundle's file name, beside the bundle (scripts/bundle.mjs). */
const VENDOR_FILE = 'skill-up.vendor.cjs';

/**
 * The bundle's `__skillUpVendor(specifier)`: what a run loads only once its first engine works
 * (junit-report-builder, handlebars/runtime, the HTML report's precompiled templates; `specifier`
 * as the bundle's folder requires it) comes from the vendor bundle, loaded at the first call with
 * a code cache of its own (`skill-up.@vendor.<key>.bin`, beside the commands'): measured
 * on these machines, 10 ms against 32 ms from node_modules, CPU an engine starting on the same
 * two cores does not lose. A package the vendor bundle does not hold, or a vendor bundle that
 * cannot be read, comes from node_modules as before (`require`: the bundle's folder's).
 * @internal exported for tests (test/cli/code-cache.test.ts).
 */
export function vendorLoader(file: string, require: NodeJS.Require): (specifier: string) => unknown {
  let packages: Record<string, () => unknown> | null | undefined;
  return (specifier) => {
    packages ??= loadVendor(file);
    const get = packages?.[specifier];
    return get ? get() : require(specifier);
  };
}

/** The vendor bundle's table (package → its exports, made at the first call); null when it cannot be read or run. */
function loadVendor(file: string): Record<string, () => unknown> | null {
  try {
    const stat = statSync(file);
    const source = readSource(file);
    const cacheFile = process.env.SKILL_UP_CODE_CACHE === '0' ? undefined : cachePath(stat, '@vendor');
    const run = compile(source, file, cacheFile, [], () => true).runInThisContext() as (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string) => void;
    const mod = { exports: {} as Record<string, () => unknown> };
    run.call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
    return mod.exports;
  } catch {
    return null;
  }
}

/**
 * The bundle's text. scripts/bundle.mjs writes it as pure ASCII, which Latin-1 decodes to the
 * same one-byte string that V8 keeps as it is (measured on the 2.6 MB bundle: 3 ms, against
 * 21 ms for a UTF-8 decode, which builds a two-byte string when any byte is not ASCII); a
 * bundle holding other bytes is decoded as UTF-8.
 */
function readSource(file: string): Source {
  const bytes = readFileSync(file);
  return { text: isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8'), bytes };
}

/** A bundle as read: its text, and its bytes (which a cache's header names by their CRC-32). */
interface Source {
  text: string;
  bytes: Buffer;
}

/** The cache file of `key` (a command, or `@vendor`) for a bundle of this size and mtime, on this Node with these flags. */
function cachePath(stat: { size: number; mtimeMs: number }, key: string): string {
  const root = process.env.SKILL_UP_CACHE_DIR?.trim() ? process.env.SKILL_UP_CACHE_DIR : join(homedir(), '.cache', 'skill-up');
  const flags = fnv1a([...process.execArgv, process.env.NODE_OPTIONS ?? ''].join('\0'));
  return join(root, 'code-cache', `skill-up.${key}.${process.version}-${process.arch}-${flags}-${stat.size}-${Math.trunc(stat.mtimeMs)}.bin`);
}

/**
 * Which command a cache is for (`run`, `run+dry`, `validate`, …): a cache holds the functions
 * its first process ran, so each command gets its own rather than `--version`'s serving `run`.
 */
function commandKey(argv: string[]): string {
  const command = argv.find((a) => !a.startsWith('-')) ?? 'none';
  const word = /^[a-z][a-z-]{0,19}$/.test(command) ? command : 'other';
  return argv.includes('--dry-run') ? `${word}+dry` : word;
}

/** Writes the script's code cache, with its header ({@link readCache}), atomically (temp file, rename) and removes older caches beside it; errors ignored. */
function writeCache(file: string, script: Script, source: Source): void {
  try {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.tmp-${process.pid}`;
    const data = script.createCachedData();
    const header = Buffer.alloc(CACHE_HEADER);
    header.writeUInt32BE(CACHE_MAGIC, 0);
    header.writeUInt32BE(crc32(data), 4);
    header.writeUInt32BE(crc32(source.bytes), 8);
    writeFileSync(tmp, Buffer.concat([header, data]), { mode: 0o600 });
    renameSync(tmp, file);
    // The same command's caches for other bundles or Node versions are stale now.
    const prefix = `${basename(file).split('.').slice(0, 2).join('.')}.`;
    for (const name of readdirSync(dir)) {
      if (name.startsWith(prefix) && name !== basename(file) && !name.includes('.tmp-')) unlinkSync(join(dir, name));
    }
  } catch {
    /* a read-only or full cache costs only speed */
  }
}

/** 32-bit FNV-1a of `s`, as 8 hex digits (a short, stable key; not a security measure). */
function fnv1a(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}
