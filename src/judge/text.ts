/**
 * The texts judges read, whole, at bounded memory (README "What a run writes").
 *
 * A final text larger than INLINE_TEXT_BYTES (src/engine/final-text.ts) lives in a file of the
 * job folder; the transcript and the JudgeInput then hold a preview and the reference. Judges
 * still see the whole text:
 *
 * - substring checks (`output_contains`, `turn_response_contains`, `expect.must_contain`,
 *   `post_condition`, …) stream the file in 64 KiB pieces with an overlap as long as the longest
 *   needle ({@link searchText}): memory is one piece, whatever the size, and the offsets and
 *   evidence are exactly those of `String.prototype.indexOf` on the whole text;
 * - checks that need the text in memory (`output_matches`, `golden_file`, `capture`) load it
 *   through {@link withFullText}: a process-wide gate lets ONE such text be in memory at a
 *   time (parallel jobs wait their turn), and a text over {@link MAX_LOADED_TEXT_BYTES} is
 *   refused with a message (the judge errs, it does not fail).
 *
 * Inline texts (the usual case) take neither path: they are used as they are.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import pLimit from 'p-limit';
import type { TranscriptTurn } from '../engine/types.js';
import { q } from './evidence.js';
import type { JudgeInput } from './types.js';

/**
 * Largest spilled text loaded into memory for a check that needs it whole (64 MiB): loading
 * takes about twice its size for a moment (the bytes, then the string), so this bounds what
 * such a check can add to the process's memory. Substring checks have no limit.
 */
export const MAX_LOADED_TEXT_BYTES = 64 * 1024 * 1024;

/**
 * Bytes read from a spilled text's file at a time (64 KiB, into one reused buffer): pieces and
 * the strings decoded from them stay small enough for V8's young generation, so scanning
 * 50 MB leaves no large garbage behind and the process's memory does not grow.
 */
const PIECE_BYTES = 64 * 1024;

/** A text that lives in a file: `preview` (head … tail), the absolute `path`, and its first `bytes` bytes are the text. */
export interface SpilledText {
  preview: string;
  path: string;
  bytes: number;
}

/** What a judge reads: the text itself, or a reference to the file holding it. */
export type JudgedText = string | SpilledText;

/** The final message of a job as judges read it. */
export function finalMessageText(input: Pick<JudgeInput, 'finalMessage' | 'finalMessageFile'>): JudgedText {
  const f = input.finalMessageFile;
  return f ? { preview: input.finalMessage, path: f.path, bytes: f.bytes } : input.finalMessage;
}

/** A turn's answer as judges read it (`jobDir`: the folder its `finalTextFile` is relative to). */
export function turnText(turn: Pick<TranscriptTurn, 'finalText' | 'finalTextFile' | 'finalTextBytes'>, jobDir: string | undefined): JudgedText {
  if (!turn.finalTextFile || jobDir === undefined) return turn.finalText;
  return { preview: turn.finalText, path: join(jobDir, turn.finalTextFile), bytes: turn.finalTextBytes ?? 0 };
}

/** One needle's first occurrence. */
export interface Found {
  /** Offset in UTF-16 code units, as `indexOf` gives it. */
  at: number;
  /** `around(text, at, needle.length, radius)` of src/judge/evidence.ts. */
  context: string;
}

/** The result of searching a text for a set of needles. */
export interface Searched {
  /** Length of the whole text in UTF-16 code units (`text.length`). */
  length: number;
  /** The text's first characters (at least 1,000 when the text has them), for evidence. */
  head: string;
  /** The first occurrence of `needle` (one of those searched for), or undefined. */
  find(needle: string): Found | undefined;
}

/** JSON-quoted context like src/judge/evidence.ts `around`. */
function context(body: string, cutLeft: boolean, cutRight: boolean): string {
  return JSON.stringify(`${cutLeft ? '…' : ''}${body}${cutRight ? '…' : ''}`);
}

/** A {@link Searched} over a string in memory (searches lazily). */
export function searchString(text: string, radius = 40): Searched {
  const cache = new Map<string, Found | undefined>();
  return {
    length: text.length,
    head: text.slice(0, 1000),
    find(needle) {
      if (cache.has(needle)) return cache.get(needle);
      const at = text.indexOf(needle);
      let f: Found | undefined;
      if (at >= 0) {
        const start = Math.max(0, at - radius);
        const end = Math.min(text.length, at + needle.length + radius);
        f = { at, context: context(text.slice(start, end), start > 0, end < text.length) };
      }
      cache.set(needle, f);
      return f;
    },
  };
}

/**
 * Searches `text` for every needle. A spilled text is streamed from its file: memory holds one
 * piece plus an overlap of the longest needle and twice `radius`, however long the text is.
 * The offsets and contexts equal `indexOf` and `around` on the whole text.
 */
export async function searchText(text: JudgedText, needles: readonly string[], radius = 40): Promise<Searched> {
  if (typeof text === 'string') return searchString(text, radius);
  const pending = new Set(needles.filter((n) => n !== ''));
  const found = new Map<string, { at: number; body: string; cutLeft: boolean; end: number }>();
  const maxLen = Math.max(0, ...[...pending].map((n) => n.length));
  const carryLen = maxLen + 2 * radius;
  let window = '';
  let base = 0; // offset of window[0] in the whole text
  let head = '';
  let total = 0;
  const scan = (final: boolean) => {
    for (const n of [...pending]) {
      const i = window.indexOf(n);
      if (i < 0) continue;
      // Decided once the right-hand context is in the window (or the text has ended).
      if (!final && i + n.length + radius > window.length) continue;
      const start = Math.max(0, i - radius);
      const end = Math.min(window.length, i + n.length + radius);
      found.set(n, { at: base + i, body: window.slice(start, end), cutLeft: base + start > 0, end: base + end });
      pending.delete(n);
    }
  };
  const decoder = new StringDecoder('utf8');
  const buf = Buffer.alloc(PIECE_BYTES);
  let fh;
  try {
    fh = await open(text.path, 'r');
    for (let pos = 0; pos < text.bytes; ) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(PIECE_BYTES, text.bytes - pos), pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      const s = decoder.write(buf.subarray(0, bytesRead));
      total += s.length;
      if (head.length < 1000) head += s.slice(0, 1000 - head.length);
      window += s;
      if (pending.size) scan(false);
      if (window.length > carryLen) {
        base += window.length - carryLen;
        window = window.slice(window.length - carryLen);
      }
    }
  } catch (e) {
    throw new Error(`cannot read the final text from ${text.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  } finally {
    await fh?.close();
  }
  const rest = decoder.end();
  total += rest.length;
  window += rest;
  if (head.length < 1000) head += rest.slice(0, 1000 - head.length);
  if (pending.size) scan(true);
  return {
    length: total,
    head,
    find(needle) {
      const f = found.get(needle);
      return f && { at: f.at, context: context(f.body, f.cutLeft, f.end < total) };
    },
  };
}

/**
 * Evidence for a substring search: `found at offset N: "…context…"` or
 * `not found in <where> (N chars): "…"`.
 */
export function searchedEvidence(text: Searched, needle: string, where = 'final message'): { found: boolean; evidence: string } {
  const f = text.find(needle);
  if (f) return { found: true, evidence: `found at offset ${f.at}: ${f.context}` };
  return { found: false, evidence: `not found in ${where} (${text.length} chars): ${q(text.head, 200)}` };
}

/** One spilled text in memory at a time, process-wide. */
const gate = pLimit(1);

/**
 * Runs `use` with the whole text. An inline text is passed as it is; a spilled one is read
 * from its file inside a process-wide gate (one spilled text in memory at a time) and let go
 * when `use` returns.
 *
 * @throws Error when a spilled text is larger than {@link MAX_LOADED_TEXT_BYTES} or unreadable.
 */
export async function withFullText<T>(text: JudgedText, use: (whole: string) => T | Promise<T>): Promise<T> {
  if (typeof text === 'string') return use(text);
  if (text.bytes > MAX_LOADED_TEXT_BYTES) {
    throw new Error(
      `the text is ${text.bytes} bytes, more than the ${MAX_LOADED_TEXT_BYTES} bytes a check that needs it in memory may load (substring checks have no such limit); it is whole in ${text.path}`,
    );
  }
  return gate(async () => use(await loadText(text)));
}

/** Reads a spilled text whole (callers go through {@link withFullText}). */
async function loadText(text: SpilledText): Promise<string> {
  let fh;
  try {
    fh = await open(text.path, 'r');
  } catch (e) {
    throw new Error(`cannot read the final text from ${text.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { cause: e });
  }
  try {
    const buf = Buffer.alloc(text.bytes);
    let got = 0;
    while (got < text.bytes) {
      const { bytesRead } = await fh.read(buf, got, text.bytes - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got).toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * The first `maxBytes` bytes of a text, cut at a character (for `EVAL_FINAL_MESSAGE`): the
 * text itself when inline, else read from the head of its file.
 */
export async function textHead(text: JudgedText, maxBytes: number): Promise<string> {
  if (typeof text === 'string') return text;
  const fh = await open(text.path, 'r');
  try {
    const n = Math.min(text.bytes, maxBytes + 4);
    const buf = Buffer.alloc(n);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await fh.read(buf, got, n - got, got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    let end = Math.min(got, maxBytes);
    // Back to the start of a character cut by the limit.
    while (end > 0 && end < got && (buf[end]! & 0xc0) === 0x80) end--;
    return buf.subarray(0, end).toString('utf8');
  } finally {
    await fh.close();
  }
}
