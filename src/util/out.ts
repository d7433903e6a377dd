/**
 * skill-up's output layer: every file skill-up writes goes through these functions, and each
 * redacts secrets (src/util/redact.ts, the process-wide redactor) at write time, so a new
 * output cannot forget to. Reports, result.json, journal.jsonl, the event log, transcripts,
 * grading.json, response.md, raw engine output (stdout/stderr streams), collected artifacts
 * and model-requests.jsonl all pass here.
 *
 * Not routed here, on purpose: files that are an agent's INPUT rather than skill-up's output
 * (the suite's `context.files` in the workspace, engine config files in the job's private home,
 * the custom agent's SessionInput), since their content comes from the suite itself.
 *
 * Files an engine writes into a job's `outputs/` folder by itself (codex's `-o` last-message
 * file, a custom agent writing into `${output_dir}`), and the engine output skill-up captures
 * RAW so that parsers and judges see the answer as the agent gave it (stdout/stderr, an HTTP
 * answer, a spilled final text: {@link createRawWriteStream}), are redacted in place by
 * {@link redactUntracked} when the job ends, after grading.
 */
import { constants, createReadStream, createWriteStream, fstatSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync, writeSync, type WriteStream } from 'node:fs';
import { appendFile, copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { redactor, type ByteStreamRedactor } from './redact.js';
import { tempFileDone, tempFileFor } from './temp-files.js';

/**
 * Absolute paths under some `outputs/` folder written through this module and not yet swept
 * by {@link redactUntracked} (only those: nothing else is ever swept, so the set stays small).
 */
const tracked = new Set<string>();

/** Remembers `file` as written here (only under an `outputs/` folder). */
function track(file: string): void {
  const abs = resolve(file);
  if (abs.includes(`${sep}outputs${sep}`)) tracked.add(abs);
}

/** `text` (or bytes) redacted. */
function clean(data: string | Buffer): string | Buffer {
  return typeof data === 'string' ? redactor().redact(data) : redactor().redactBytes(data);
}

/**
 * Open flags for every file this module writes: create or truncate, never through a symbolic
 * link in the last path component (an agent given `${output_dir}` could plant `response.md →
 * /etc/passwd`; the write then fails with ELOOP and the job is an `error`), and never waiting
 * on a FIFO planted there (O_NONBLOCK: the open fails with ENXIO when nothing reads it, and a
 * full pipe fails the write with EAGAIN, instead of blocking skill-up; regular files ignore it).
 */
// Node accepts numeric open flags everywhere (fs.open's stringToFlags); @types/node types them as strings.
const WRITE_FLAGS = (constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)) as unknown as string;
/** As {@link WRITE_FLAGS}, appending. */
const APPEND_FLAGS = (constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0)) as unknown as string;

/** Options of {@link writeText} and {@link writeJson}. */
export interface WriteOptions {
  /** Write a temporary file and rename it over `file`, so a reader never sees half of it. */
  atomic?: boolean;
  /** Create the parent folder first. */
  mkdir?: boolean;
  /** File mode for a new file. */
  mode?: number;
}

/** Writes `data` to `file`, secrets redacted. */
export async function writeText(file: string, data: string | Buffer, opts: WriteOptions = {}): Promise<void> {
  await writeClean(file, clean(data), opts);
}

/** Writes already-redacted `body`. */
async function writeClean(file: string, body: string | Buffer, opts: WriteOptions): Promise<void> {
  // A small file (a job's transcript, answer, grading) is written with direct system calls: through
  // the thread pool each of its open/write/close costs a thread hand-off on both sides (measured on
  // 200 no-op jobs: the hand-offs were a third of skill-up's per-job system time, issue 13).
  if (body.length <= SYNC_WRITE_MAX) return writeCleanNow(file, body, opts);
  if (opts.mkdir) await mkdir(dirname(file), { recursive: true });
  const mode = opts.mode === undefined ? {} : { mode: opts.mode };
  if (opts.atomic) {
    const tmp = tempFileFor(file);
    try {
      await writeFile(tmp, body, { ...mode, flag: WRITE_FLAGS });
      await rename(tmp, file);
    } catch (e) {
      await rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    } finally {
      tempFileDone(tmp);
    }
  } else {
    await writeFile(file, body, { ...mode, flag: WRITE_FLAGS });
  }
  track(file);
}

/** Largest body {@link writeClean} writes synchronously: 64 KiB (UTF-16 units or bytes) is well under a millisecond of blocking. */
const SYNC_WRITE_MAX = 64 * 1024;

/** {@link writeClean} with synchronous calls (same flags, mode, atomic rename and clean-up). */
function writeCleanNow(file: string, body: string | Buffer, opts: WriteOptions): void {
  if (opts.mkdir) mkdirSync(dirname(file), { recursive: true });
  const mode = opts.mode === undefined ? {} : { mode: opts.mode };
  if (opts.atomic) {
    const tmp = tempFileFor(file);
    try {
      writeFileSync(tmp, body, { ...mode, flag: WRITE_FLAGS });
      renameSync(tmp, file);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw e;
    } finally {
      tempFileDone(tmp);
    }
  } else {
    writeFileSync(file, body, { ...mode, flag: WRITE_FLAGS });
  }
  track(file);
}

/**
 * Synchronous {@link writeText} (for many small files, direct system calls beat the thread
 * pool). With `mkdir`, a missing parent folder is created (only when the first write fails).
 */
export function writeTextSync(file: string, data: string | Buffer, opts: Pick<WriteOptions, 'mkdir'> = {}): void {
  writeCleanSync(file, clean(data), opts);
}

/** Synchronous {@link writeJson}. */
export function writeJsonSync(file: string, value: unknown, opts: Pick<WriteOptions, 'mkdir'> & { indent?: number; newline?: boolean } = {}): void {
  writeCleanSync(file, jsonText(value, opts.indent ?? 2, opts.newline), opts);
}

/** Writes already-redacted `body` synchronously (the parent folder made on ENOENT with `mkdir`). */
function writeCleanSync(file: string, body: string | Buffer, opts: Pick<WriteOptions, 'mkdir'>): void {
  try {
    writeFileSync(file, body, { flag: WRITE_FLAGS });
  } catch (e) {
    if (!opts.mkdir || (e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, body, { flag: WRITE_FLAGS });
  }
  track(file);
}

/** `value` as JSON text (`indent` spaces, default 2; a final newline with `newline`), secrets redacted with JSON escapes kept whole. */
export function jsonText(value: unknown, indent = 2, newline = false): string {
  return redactor().jsonText(value, indent || undefined) + (newline ? '\n' : '');
}

/** Writes `value` as JSON (see {@link jsonText}). */
export async function writeJson(file: string, value: unknown, opts: WriteOptions & { indent?: number; newline?: boolean } = {}): Promise<void> {
  await writeClean(file, jsonText(value, opts.indent ?? 2, opts.newline), opts);
}

/** Appends `data` to `file`, secrets redacted. */
export async function appendText(file: string, data: string | Buffer): Promise<void> {
  await appendFile(file, clean(data), { flag: APPEND_FLAGS });
  track(file);
}

/** Writes all of `data` (redacted) to an open file descriptor, looping over short writes. */
export function writeFdSync(fd: number, data: string | Buffer): void {
  const c = clean(data);
  const buf = typeof c === 'string' ? Buffer.from(c) : c;
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/**
 * A writable file stream that redacts as it writes. A secret split across chunks is still
 * caught (the last `maxBytes - 1` bytes are held back until the next chunk or the end).
 * `end(cb)` calls back once the file is complete and closed.
 */
export class RedactingWriteStream extends Writable {
  private readonly dest: WriteStream;
  private readonly redacting: ByteStreamRedactor = redactor().byteStream();

  /** Opens (creates or truncates) `file`; `flags`/`mode` as for `fs.createWriteStream`. */
  constructor(
    readonly path: string,
    opts: { flags?: string; mode?: number } = {},
  ) {
    super();
    const flags = opts.flags === undefined || opts.flags === 'w' ? WRITE_FLAGS : opts.flags === 'a' ? APPEND_FLAGS : opts.flags;
    this.dest = createWriteStream(path, { ...opts, flags });
    this.dest.on('error', (e) => this.destroy(e));
    track(path);
  }

  /** Redacts the decided part of `chunk` and passes it on (Writable protocol). */
  override _write(chunk: Buffer | string, encoding: BufferEncoding, cb: (error?: Error | null) => void): void {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    const out = this.redacting.push(buf);
    // The file stream buffers (and batches writes); wait only when it asks to.
    if (out.length === 0 || this.dest.write(out)) cb();
    else this.dest.once('drain', () => cb());
  }

  /** Flushes the held-back bytes, then ends and closes the file (Writable protocol). */
  override _final(cb: (error?: Error | null) => void): void {
    const rest = this.redacting.end();
    let called = false;
    const done = (e?: Error | null) => {
      if (called) return;
      called = true;
      cb(e ?? null);
    };
    this.dest.once('error', done);
    this.dest.once('close', () => done());
    this.dest.end(rest.length ? rest : undefined);
  }

  /** Closes the file on destroy (Writable protocol). */
  override _destroy(error: Error | null, cb: (error?: Error | null) => void): void {
    if (!this.dest.destroyed) this.dest.destroy();
    cb(error);
  }
}

/** Opens a {@link RedactingWriteStream} on `file`. */
export function createRedactingWriteStream(file: string, opts: { flags?: string; mode?: number } = {}): RedactingWriteStream {
  return new RedactingWriteStream(file, opts);
}

/**
 * Opens a plain (NOT redacting, not tracked) write stream on `file`, never through a symbolic
 * link: for an engine's raw output (stdout, stderr, an HTTP answer, a spilled final text) that
 * skill-up must parse and grade as the agent wrote it. Such files must live under the job's
 * `outputs/` folder: {@link redactUntracked} redacts them in place when the job ends, after
 * grading.
 */
export function createRawWriteStream(file: string, opts: { flags?: string; mode?: number } = {}): WriteStream {
  const flags = opts.flags === undefined || opts.flags === 'w' ? WRITE_FLAGS : opts.flags === 'a' ? APPEND_FLAGS : opts.flags;
  // Opened now, not on the next tick: a caller that opens before it starts an agent knows the
  // file is not created through a link the agent plants meanwhile (src/engine/proc.ts).
  let fd: number;
  try {
    fd = openSync(file, flags, opts.mode);
  } catch {
    return createWriteStream(file, { ...opts, flags }); // fails again, as an 'error' event
  }
  const stream = createWriteStream(file, { fd });
  // Only a regular file: a FIFO (or device) an agent put there could block or swallow the output.
  if (!fstatSync(fd).isFile()) stream.destroy(Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' }));
  return stream;
}

/**
 * Redacts in place a final-text file whose first `bytes` bytes are an answer (the rest, if any,
 * trailing white space the answer leaves out), and returns the byte length of the redacted
 * answer (so a recorded `finalTextBytes` can follow). The answer and the rest are redacted
 * apart; a file over 64 MiB is streamed whole and the rest is taken as unchanged. A missing
 * file, or no secret known: `bytes` unchanged.
 */
export async function redactTextFileInPlace(file: string, bytes: number): Promise<number> {
  const r = redactor();
  if (r.empty) return bytes;
  const st = await stat(file).catch(() => undefined);
  if (!st?.isFile()) return bytes;
  const tmp = `${file}.redact-${process.pid}`;
  if (st.size <= IN_MEMORY_BYTES) {
    const data = await readFile(file);
    const n = Math.min(bytes, data.length);
    const [h0, r0] = [data.subarray(0, n), data.subarray(n)];
    const head = r.redactBytes(h0);
    const rest = r.redactBytes(r0);
    if (head === h0 && rest === r0) return bytes;
    await writeFile(tmp, Buffer.concat([head, rest]), { flag: WRITE_FLAGS });
    await rename(tmp, file);
    return head.length;
  }
  await pipeline(createReadStream(file), createRedactingWriteStream(tmp));
  await rename(tmp, file);
  tracked.delete(resolve(tmp));
  return Math.max(0, bytes + ((await stat(file)).size - st.size));
}

/** Copies `from` to `to` with secrets redacted (a plain copy when no secret is known). */
export async function copyRedacted(from: string, to: string): Promise<void> {
  if (redactor().empty) {
    await copyFile(from, to);
  } else {
    try {
      await pipeline(createReadStream(from), createRedactingWriteStream(to));
    } catch (e) {
      await rm(to, { force: true }).catch(() => undefined);
      throw e;
    }
  }
  track(to);
}

/** Files up to this size are redacted in memory by {@link redactFileInPlace}; larger ones are streamed. */
const IN_MEMORY_BYTES = 64 * 1024 * 1024;

/** Redacts a file someone else wrote, in place; rewrites it only when it held a secret. Missing file: nothing. */
export async function redactFileInPlace(file: string): Promise<void> {
  const r = redactor();
  if (r.empty) return;
  const st = await stat(file).catch(() => undefined);
  if (!st?.isFile()) return;
  const tmp = `${file}.redact-${process.pid}`;
  if (st.size <= IN_MEMORY_BYTES) {
    const data = await readFile(file);
    const out = r.redactBytes(data);
    if (out === data) return;
    await writeFile(tmp, out, { flag: WRITE_FLAGS });
  } else {
    await pipeline(createReadStream(file), createRedactingWriteStream(tmp));
  }
  await rename(tmp, file);
}

/**
 * Redacts in place every file under `dir` that was not written through this module (files an
 * engine or agent wrote there itself), and forgets the tracked files under `dir`. Called on a
 * job's `outputs/` folder when the job ends. A missing folder is nothing to do.
 */
export async function redactUntracked(dir: string): Promise<void> {
  const root = resolve(dir);
  const walk = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && !tracked.has(p)) await redactFileInPlace(p);
    }
  };
  if (!redactor().empty) await walk(root);
  for (const f of tracked) if (f.startsWith(`${root}${sep}`)) tracked.delete(f);
}
