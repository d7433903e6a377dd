/**
 * Large answers, stored once and never held whole in memory.
 *
 * A turn's final text of at most {@link INLINE_TEXT_BYTES} UTF-8 bytes is kept inline: in the
 * TranscriptTurn, the journal, result.json, transcript.json and the reports. A larger one lives
 * in ONE file of the job folder, often the engine's raw output file itself (the custom engine's
 * stdout in `response_format: text`, an HTTP answer, codex's `-o` file), otherwise
 * `outputs/turn-<n>.final.txt`. Everything else then holds a bounded preview (the first
 * {@link PREVIEW_HEAD_BYTES} and last {@link PREVIEW_TAIL_BYTES} bytes with a note between
 * them) and a reference: the job-folder-relative file and the byte length of the text, which
 * is the file's first `bytes` bytes (a raw stdout file may go on with trailing white space
 * the answer leaves out).
 *
 * Judges read the whole text from the file (src/judge/text.ts): substring checks stream it,
 * checks that need it in memory load it through a process-wide gate.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { createRawWriteStream } from '../util/out.js';
import type { TranscriptTurn } from './types.js';

/**
 * Final texts up to this many UTF-8 bytes stay inline (64 KiB); larger ones live in a file.
 * Small enough that a run's results in memory (and its journal and result.json) stay modest
 * even with thousands of jobs: at most this much per turn, whatever the engines print.
 */
export const INLINE_TEXT_BYTES = 64 * 1024;
/** Bytes of a large text's beginning kept in its preview (8 KiB). */
export const PREVIEW_HEAD_BYTES = 8 * 1024;
/** Bytes of a large text's end kept in its preview (4 KiB). */
export const PREVIEW_TAIL_BYTES = 4 * 1024;

/** A final text as a turn keeps it: whole (`file` absent), or a preview of the text in `file`. */
export interface StoredText {
  /** The whole text, or its preview when `file` is set. */
  text: string;
  /** Job-folder-relative path of the file whose first `bytes` bytes are the whole text. */
  file?: string;
  /** UTF-8 bytes of the whole text. */
  bytes: number;
}

/**
 * The note between a preview's head and tail.
 * @param bytes UTF-8 bytes of the whole text.
 * @param file where it is whole, relative to the job folder.
 */
export function previewNote(bytes: number, file: string): string {
  return `[skill-up: the whole text is ${bytes} bytes, too long to keep inline; this preview holds its first ${PREVIEW_HEAD_BYTES} and last ${PREVIEW_TAIL_BYTES} bytes; the whole text is in ${file}]`;
}

/** A preview: `head` (at most PREVIEW_HEAD_BYTES), the {@link previewNote}, `tail` (at most PREVIEW_TAIL_BYTES). */
export function previewText(head: string, tail: string, bytes: number, file: string): string {
  return `${head}\n\n… ${previewNote(bytes, file)} …\n\n${tail}`;
}

/** Start of the UTF-8 character holding byte `i` of `buf` (moves back over continuation bytes). */
function charStart(buf: Buffer, i: number): number {
  let k = i;
  while (k > 0 && k < buf.length && (buf[k]! & 0xc0) === 0x80) k--;
  return k;
}

/** Reads `length` bytes at `position`. */
async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got < length ? buf.subarray(0, got) : buf;
}

/** The preview of the first `bytes` bytes of an open file, cut at character boundaries. */
async function previewOfFile(fh: FileHandle, bytes: number, rel: string): Promise<string> {
  const headBuf = await readAt(fh, 0, Math.min(bytes, PREVIEW_HEAD_BYTES + 4));
  const head = headBuf.subarray(0, charStart(headBuf, Math.min(PREVIEW_HEAD_BYTES, headBuf.length))).toString('utf8');
  const tailStart = Math.max(0, bytes - PREVIEW_TAIL_BYTES);
  const tailBuf = await readAt(fh, tailStart, bytes - tailStart);
  let k = 0;
  while (k < tailBuf.length && (tailBuf[k]! & 0xc0) === 0x80) k++;
  return previewText(head, tailBuf.subarray(k).toString('utf8'), bytes, rel);
}

/**
 * Where the text of an open file ends once trailing white space (as `String.prototype.trimEnd`
 * sees it) is left out: read backwards 64 KiB at a time, each piece aligned to a character.
 */
async function trimmedEnd(fh: FileHandle, size: number): Promise<number> {
  const CHUNK = 64 * 1024;
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    const buf = await readAt(fh, start, end - start);
    let k = 0;
    if (start > 0) while (k < buf.length && (buf[k]! & 0xc0) === 0x80) k++;
    const s = buf.subarray(k).toString('utf8');
    const t = s.trimEnd();
    if (t.length > 0) return end - (Buffer.byteLength(s) - Buffer.byteLength(t));
    end = start + k;
  }
  return Math.max(0, end);
}

/**
 * The final text held by a file of the job folder, without reading it whole: small texts are
 * read and returned whole, larger ones give a preview and a reference to the file itself (one
 * copy on disk). `trim: 'end'` leaves trailing white space out (as `trimEnd()`), `'newline'`
 * one trailing `\n`, `'none'` nothing. A missing file is an empty text.
 *
 * @param jobDir absolute path of the job folder.
 * @param rel the file, relative to `jobDir`.
 */
export async function textFromFile(jobDir: string, rel: string, trim: 'end' | 'newline' | 'none' = 'none'): Promise<StoredText> {
  const file = join(jobDir, rel);
  let fd: number;
  try {
    // Never through a link, never waiting on a FIFO: an agent can replace its own output file
    // during its turn (the job becomes an `error`, the run goes on).
    fd = openSync(file, OUTPUT_READ_FLAGS);
  } catch (e) {
    // Only a file that was never written is an empty answer; EMFILE, EACCES, ELOOP … must
    // surface (the job becomes `error`), never grade as a `fail` on an empty message.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { text: '', bytes: 0 };
    if (code === 'ELOOP') throw Object.assign(new Error(`${rel} is a symbolic link (the agent replaced it); not read`), { code });
    throw e;
  }
  // Most answers are small: read whole with direct system calls (four thread-pool hand-offs
  // would cost more CPU than the reads, issue 13); a larger file through the pool below.
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(rel);
    if (st.size <= INLINE_TEXT_BYTES) return trimmed(readWholeSync(fd, st.size).toString('utf8'), trim);
  } finally {
    closeSync(fd);
  }
  const fh = await open(file, OUTPUT_READ_FLAGS);
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw notRegular(rel);
    const size = st.size;
    if (size <= INLINE_TEXT_BYTES + 64 * 1024) {
      // Small enough to read whole, trailing white space included.
      const whole = trimmed((await readAt(fh, 0, size)).toString('utf8'), trim);
      if (whole.bytes <= INLINE_TEXT_BYTES) return whole;
    }
    let bytes = size;
    if (trim === 'end') bytes = await trimmedEnd(fh, size);
    else if (trim === 'newline' && size > 0 && (await readAt(fh, size - 1, 1))[0] === 0x0a) bytes = size - 1;
    if (bytes <= INLINE_TEXT_BYTES) return { text: (await readAt(fh, 0, bytes)).toString('utf8'), bytes };
    return { text: await previewOfFile(fh, bytes, rel), file: rel, bytes };
  } finally {
    await fh.close();
  }
}

/** How an engine's output file is opened for reading: read-only, never through a symbolic link, never waiting (a FIFO). */
export const OUTPUT_READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** The error of an output file the agent replaced with something else than a regular file. */
function notRegular(rel: string): Error {
  return Object.assign(new Error(`${rel} is not a regular file (the agent replaced it)`), { code: 'EINVAL' });
}

/** `text` trimmed as {@link textFromFile}'s `trim` says, with its UTF-8 length. */
function trimmed(text: string, trim: 'end' | 'newline' | 'none'): { text: string; bytes: number } {
  if (trim === 'end') text = text.trimEnd();
  else if (trim === 'newline' && text.endsWith('\n')) text = text.slice(0, -1);
  return { text, bytes: Buffer.byteLength(text) };
}

/** The first `size` bytes of open file `fd` (fewer if it is shorter now). */
function readWholeSync(fd: number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let off = 0;
  while (off < size) {
    const n = readSync(fd, buf, off, size - off, off);
    if (n === 0) break;
    off += n;
  }
  return buf.subarray(0, off);
}

/** `s` without a lone high surrogate at its end (a pair cut by `slice`). */
function dropHighSurrogateEnd(s: string): string {
  const c = s.charCodeAt(s.length - 1);
  return c >= 0xd800 && c <= 0xdbff ? s.slice(0, -1) : s;
}

/**
 * Stores a text held in memory: returned whole when it is at most {@link INLINE_TEXT_BYTES}
 * bytes, else written to `jobDir/rel` (in 1 Mi-character pieces, so no second whole copy is
 * made) and returned as the preview and reference of what the file holds. The file is written
 * RAW, as the agent gave the answer, for the judges; it lies in the job's `outputs/` folder and
 * is redacted in place when the job ends, after grading (src/run/job.ts, src/util/out.ts
 * `redactTextFileInPlace`), when `bytes` follows the redacted length.
 */
export async function spillText(jobDir: string, rel: string, text: string): Promise<StoredText> {
  const bytes = Buffer.byteLength(text);
  if (bytes <= INLINE_TEXT_BYTES) return { text, bytes };
  const out = createRawWriteStream(join(jobDir, rel));
  const failed = new Promise<never>((_, rej) => out.once('error', rej));
  failed.catch(() => undefined);
  const PIECE = 1024 * 1024;
  for (let i = 0; i < text.length; ) {
    let end = Math.min(text.length, i + PIECE);
    if (end < text.length) end = i + dropHighSurrogateEnd(text.slice(i, end)).length;
    if (!out.write(text.slice(i, end))) await Promise.race([new Promise<void>((r) => out.once('drain', () => r())), failed]);
    i = end;
  }
  await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]);
  return textFromFile(jobDir, rel, 'none');
}

/**
 * Bounds a turn an adapter returned: a final text over {@link INLINE_TEXT_BYTES} that the
 * adapter kept in memory is written to `outputs/turn-<n>.final.txt` and replaced by its preview
 * and reference. A turn whose text is already in a file (`finalTextFile`) is left as is.
 */
export async function boundTurnText(turn: TranscriptTurn, jobDir: string): Promise<void> {
  if (turn.finalTextFile) return;
  const stored = await spillText(jobDir, `outputs/turn-${turn.index}.final.txt`, turn.finalText);
  if (!stored.file) return;
  turn.finalText = stored.text;
  turn.finalTextFile = stored.file;
  turn.finalTextBytes = stored.bytes;
}

/** The turn fields of a stored text: `finalText`, plus the reference when it lives in a file. */
export function turnTextFields(s: StoredText): Pick<TranscriptTurn, 'finalText' | 'finalTextFile' | 'finalTextBytes'> {
  return s.file ? { finalText: s.text, finalTextFile: s.file, finalTextBytes: s.bytes } : { finalText: s.text };
}

/** Size of a file in bytes; 0 when it is missing. */
export async function fileBytes(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}
