/**
 * The per-run report files of the `benchmark` format (grading.json, eval_metadata.json: about
 * 11,500 small files for 10,000 jobs), written so that rewriting them into an existing folder
 * costs no more than writing them into a fresh one.
 *
 * Why not open with O_TRUNC: truncating a file whose blocks are already on disk makes ext4 free
 * them (a journal update per file) and, with its default `auto_da_alloc`, start the write-back
 * of the new data when the file is closed: one disk write per file, waited for. 10,000 such
 * rewrites took 10.8 s of wall time (1.4 s CPU) against 0.5 s for the same files overwritten
 * in place (bench/run.mjs, "reports", existing folder). So a file that already holds exactly
 * these bytes is left alone, and any other is overwritten in place from offset 0 and cut to
 * its new length only when it was longer (never to 0).
 *
 * Safety as with the plain write it replaces: never through a symbolic link in the last
 * component (O_NOFOLLOW: ELOOP), never into a FIFO, socket or device (O_NONBLOCK open, then
 * anything but a regular file is refused), the text redacted by the caller (src/util/out.ts
 * `jsonText`). Like that write, it is not atomic: these files are rewritten whole by every
 * report and read by no one while it runs (atomic files are the large reports, write.ts).
 */
import { closeSync, constants, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

// Node accepts numeric open flags; @types/node types them as strings.
const FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** For a file that must not exist yet (in a folder just made): O_EXCL, so no FIFO, device or link can be there. */
const NEW_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Reused for the comparison of an existing file (these files are a few KB). */
let scratch = Buffer.alloc(64 * 1024);

/**
 * What a series of writes learnt about its folders: `missing` once a parent folder had to be
 * made, so the next file's folder (a sibling job folder, in a fresh report folder) is made
 * first instead of after a failed open; cleared when such a folder turns out to exist.
 */
export interface FolderHint {
  missing: boolean;
}

/**
 * Writes `text` (already redacted) to `file` unless it already holds exactly these bytes; see
 * the module comment for how. With `mkdir`, a missing parent folder is created: after the
 * first open fails with ENOENT (an existing folder costs nothing), or first when `hint` says
 * folders are missing (a fresh folder then costs one mkdir and one open per file, not three
 * calls).
 * @returns true when the file was written, false when it already held `text`.
 * @throws the system error of the open, read, write or truncate (ELOOP for a symbolic link,
 * EISDIR for a folder, ENOSPC, …), or `EINVAL` "not a regular file" for a FIFO, socket or device.
 */
export function writeSmallFileSync(file: string, text: string, opts: { mkdir?: boolean; hint?: FolderHint } = {}): boolean {
  const body = Buffer.from(text, 'utf8');
  if (opts.mkdir && opts.hint?.missing) {
    try {
      mkdirSync(dirname(file));
      // A folder made just now holds nothing: the file is created without looking at one there.
      if (writeNewFile(file, body)) return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') opts.hint.missing = false;
      else if (code !== 'ENOENT') throw e; // its parent is missing too: made below
    }
  }
  let fd: number;
  try {
    fd = openSync(file, FLAGS, 0o666);
  } catch (e) {
    if (!opts.mkdir || (e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dirname(file), { recursive: true });
    if (opts.hint) opts.hint.missing = true;
    fd = openSync(file, FLAGS, 0o666);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' });
    if (st.size === body.length && sameBytes(fd, body)) return false;
    for (let off = 0; off < body.length; ) {
      const n = writeSync(fd, body, off, body.length - off, off);
      if (n <= 0) throw Object.assign(new Error(`short write to ${file}`), { code: 'EIO' });
      off += n;
    }
    if (st.size > body.length) ftruncateSync(fd, body.length);
    return true;
  } finally {
    closeSync(fd);
  }
}

/**
 * Creates `file` holding `body` (O_EXCL: never an existing file, nor through a link); false
 * when something is already there (another writer made it meanwhile: the caller then
 * overwrites it as usual). Saves a fresh folder's file the fstat and the size check.
 * @throws the system error of the open or write.
 */
function writeNewFile(file: string, body: Buffer): boolean {
  let fd: number;
  try {
    fd = openSync(file, NEW_FLAGS, 0o666);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    for (let off = 0; off < body.length; ) {
      const n = writeSync(fd, body, off, body.length - off, off);
      if (n <= 0) throw Object.assign(new Error(`short write to ${file}`), { code: 'EIO' });
      off += n;
    }
    return true;
  } finally {
    closeSync(fd);
  }
}

/** Whether the open file (of `body.length` bytes) holds `body`. */
function sameBytes(fd: number, body: Buffer): boolean {
  if (scratch.length < body.length) scratch = Buffer.alloc(body.length);
  let got = 0;
  while (got < body.length) {
    const n = readSync(fd, scratch, got, body.length - got, got);
    if (n <= 0) return false;
    got += n;
  }
  return scratch.subarray(0, body.length).equals(body);
}
