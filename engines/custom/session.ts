/**
 * The custom engine's wire contract, after alibaba/skill-up's `SessionInput` / `SessionResult`
 * (docs/design/custom-engine.md), so agents written for it work unchanged.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileBytes, INLINE_TEXT_BYTES, spillText, textFromFile, type StoredText } from '../../src/engine/final-text.js';
import type { SkillActivation, ToolCall, TokenUsage } from '../../src/engine/types.js';
import { droppedToolCalls, MAX_TOOL_CALLS_PER_TURN, MAX_TOOL_IO_CHARS_PER_TURN, TOOL_PREVIEW_CHARS } from '../../src/run/types.js';
import { createRawWriteStream } from '../../src/util/out.js';
import { oneLine } from '../../src/util/cut.js';
import type { WriteStream } from 'node:fs';

/** What skill-up sends: written to `${input_file}` (local) or POSTed (http). */
export interface SessionInput {
  case_id: string;
  variant: string;
  trial: number;
  workspace: string;
  model: { provider?: string; name?: string; base_url?: string };
  /** Every user message so far, oldest first. */
  messages: { role: 'user'; content: string }[];
  max_turns: number;
  /** Seconds this call may take. */
  timeout_seconds: number;
  /** The previous call's session id in `conversation_mode: stateful`; absent on the first call. */
  session_id?: string;
}

/** The part of a SessionResult skill-up reads, normalised. */
export interface ParsedSessionResult {
  exitCode: number;
  finalMessage: string;
  sessionId?: string;
  usage: TokenUsage;
  costUsd?: number;
  toolCalls: ToolCall[];
  skillActivations: SkillActivation[];
  skillsListed?: string[];
}

/** Raised when an agent's output is not a usable SessionResult. The message says what is wrong, not where it was read from (the adapter adds that). */
export class SessionResultError extends Error {}

/** Characters of an unusable SessionResult quoted in its error. */
const QUOTED_CHARS = 120;

/**
 * `; it starts with: <the first characters>` (white space runs made one space, cut with `…`),
 * or `; it is empty`: what an agent actually answered, for an error about its SessionResult.
 */
export function quoteStart(text: string): string {
  const head = oneLine(text, QUOTED_CHARS);
  return head ? `; it starts with: ${head}` : '; it is empty';
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * Parses a SessionResult JSON text. Required: `exit_code` (integer) and `final_message` (string).
 * Optional: `session_id`, `input_tokens`, `output_tokens`, `cache_read_tokens`,
 * `cache_write_tokens`, `cost_usd`, `tool_calls[{name, input|arguments, output, is_error}]`,
 * `transcript[]` (entries with `type: tool_call` or `tool_calls` are read as tool calls),
 * `skills_used[]` (names, recorded as activations), `skills_listed[]`.
 *
 * @throws SessionResultError naming what is missing or malformed.
 */
export function parseSessionResult(text: string): ParsedSessionResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new SessionResultError(`not a SessionResult JSON (${(e as Error).message})${quoteStart(text)}`);
  }
  return sessionResultOf(data);
}

/** Most characters of a tool call's output kept (as the CLI engines' parsers do); longer ones are cut with a marker. */
export const MAX_TOOL_OUTPUT_CHARS = 100_000;

/**
 * Checks and normalises a parsed SessionResult value. Tool calls are bounded as they are read:
 * at most MAX_TOOL_CALLS_PER_TURN are built (the rest, and `dropped` ones the streamed reader
 * never parsed, are counted in `droppedToolCalls`), and once the inputs and outputs kept reach
 * MAX_TOOL_IO_CHARS_PER_TURN characters, later calls keep a short preview of each (src/run/types.ts).
 * @throws SessionResultError
 */
function sessionResultOf(data: unknown, dropped = 0): ParsedSessionResult {
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new SessionResultError('SessionResult must be a JSON object');
  const r = data as Record<string, unknown>;
  if (!Number.isInteger(r.exit_code)) throw new SessionResultError('SessionResult.exit_code must be an integer');
  if (typeof r.final_message !== 'string') throw new SessionResultError('SessionResult.final_message must be a string');
  if (r.cost_usd !== undefined && r.cost_usd !== null && !(typeof r.cost_usd === 'number' && Number.isFinite(r.cost_usd) && r.cost_usd >= 0)) {
    throw new SessionResultError(`SessionResult.cost_usd must be a number ≥ 0 (USD), got ${JSON.stringify(r.cost_usd)}`);
  }
  const toolCalls: ToolCall[] = [];
  let ioChars = 0;
  const addCall = (c: unknown) => {
    if (!c || typeof c !== 'object') return;
    const o = c as Record<string, unknown>;
    const name = typeof o.name === 'string' ? o.name : typeof o.tool === 'string' ? o.tool : undefined;
    if (!name) return;
    // Past the per-turn count nothing is built: the call is only counted.
    if (toolCalls.length >= MAX_TOOL_CALLS_PER_TURN) {
      dropped++;
      return;
    }
    let output = typeof o.output === 'string' ? o.output : o.output === undefined ? undefined : JSON.stringify(o.output);
    let input: unknown = o.input ?? o.arguments ?? o.args ?? {};
    if (output !== undefined && output.length > MAX_TOOL_OUTPUT_CHARS) {
      output = `${output.slice(0, MAX_TOOL_OUTPUT_CHARS)}\n[skill-up: tool output cut at ${MAX_TOOL_OUTPUT_CHARS} of ${output.length} characters; the raw output file holds it whole]`;
    }
    const inputText = typeof input === 'string' ? input : (JSON.stringify(input) ?? '');
    const chars = inputText.length + (output?.length ?? 0);
    if (ioChars + chars > MAX_TOOL_IO_CHARS_PER_TURN) {
      const cut = (s: string) => `${s.slice(0, TOOL_PREVIEW_CHARS)}… [skill-up: cut, this turn's tool inputs and outputs exceed ${MAX_TOOL_IO_CHARS_PER_TURN} characters; the raw output file holds them whole]`;
      input = cut(inputText);
      output = output === undefined ? undefined : cut(output);
      ioChars += TOOL_PREVIEW_CHARS * 2;
    } else ioChars += chars;
    toolCalls.push({ name, input, output, isError: o.is_error === true });
  };
  if (Array.isArray(r.tool_calls)) r.tool_calls.forEach(addCall);
  if (Array.isArray(r.transcript)) {
    for (const entry of r.transcript) {
      if (!entry || typeof entry !== 'object') continue;
      const e = entry as Record<string, unknown>;
      if (e.type === 'tool_call') addCall(e);
      if (Array.isArray(e.tool_calls)) e.tool_calls.forEach(addCall);
    }
  }
  const names = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  if (dropped > 0) droppedToolCalls.set(toolCalls, dropped);
  return {
    exitCode: r.exit_code as number,
    finalMessage: r.final_message,
    sessionId: typeof r.session_id === 'string' && r.session_id ? r.session_id : undefined,
    usage: {
      input: num(r.input_tokens),
      output: num(r.output_tokens),
      cacheRead: num(r.cache_read_tokens),
      cacheWrite: num(r.cache_write_tokens),
    },
    costUsd: typeof r.cost_usd === 'number' ? r.cost_usd : undefined,
    toolCalls,
    skillActivations: (names(r.skills_used) ?? []).map((skill) => ({ skill, via: 'reported by agent' })),
    skillsListed: names(r.skills_listed),
  };
}

/** SessionResults up to this many bytes are read whole and parsed with `JSON.parse` (1 MiB); larger ones are streamed. */
export const WHOLE_PARSE_BYTES = 1024 * 1024;
/** Most bytes all fields but `final_message` may take together in a streamed SessionResult (64 MiB). */
export const MAX_OTHER_FIELDS_BYTES = 64 * 1024 * 1024;

/** A SessionResult read from a file: `finalMessage` is whole, or the preview of `finalMessageFile`. */
export interface FileSessionResult extends ParsedSessionResult {
  /** Job-folder-relative file holding the whole final message, when it is larger than INLINE_TEXT_BYTES. */
  finalMessageFile?: string;
  /** UTF-8 bytes of the whole final message. */
  finalMessageBytes: number;
}

/**
 * Reads the SessionResult in `file` at bounded memory. A file up to {@link WHOLE_PARSE_BYTES}
 * is parsed whole ({@link parseSessionResult}); a larger one is streamed: `final_message` is
 * decoded as it is read, straight into `jobDir/spillRel` once it is longer than
 * INLINE_TEXT_BYTES (src/engine/final-text.ts), and only the other fields (at most
 * {@link MAX_OTHER_FIELDS_BYTES} together) are held and parsed. Memory is then one read piece
 * plus those fields, whatever the size of the final message. A final message of more than
 * `maxBytes` bytes is refused.
 *
 * @param maxBytes the largest final message accepted, bytes (the stream cap).
 * @throws SessionResultError naming what is missing or malformed (`JSON` errors with the byte offset).
 */
export async function readSessionResultFile(file: string, jobDir: string, spillRel: string, maxBytes: number): Promise<FileSessionResult> {
  const size = await fileBytes(file);
  if (size <= WHOLE_PARSE_BYTES) {
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch {
      /* a missing file reads as empty: the parse says so */
    }
    const parsed = parseSessionResult(text);
    const stored = await spillText(jobDir, spillRel, parsed.finalMessage);
    return { ...parsed, finalMessage: stored.text, finalMessageBytes: stored.bytes, ...(stored.file ? { finalMessageFile: stored.file } : {}) };
  }
  const scanner = new SessionScanner(jobDir, spillRel, maxBytes);
  const stream = createReadStream(file, { highWaterMark: 1024 * 1024 });
  try {
    for await (const chunk of stream) {
      scanner.push(chunk as Buffer);
      await scanner.drained();
    }
  } catch (e) {
    scanner.abandon();
    if (e instanceof SessionResultError) throw e;
    throw new SessionResultError(`cannot read the SessionResult: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  } finally {
    stream.destroy();
  }
  return scanner.finish();
}

/** Where {@link SessionScanner} is in the top-level object. */
const enum At {
  BeforeObject,
  BeforeKeyOrEnd,
  BeforeKey,
  Key,
  Colon,
  ValueStart,
  FinalString,
  Raw,
  AfterValue,
  End,
}

const isWs = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** JSON's one-character escapes: the byte after `\` → the code unit it stands for. */
const SIMPLE_ESCAPES: ReadonlyMap<number, number> = new Map([
  [0x22, 0x22],
  [0x5c, 0x5c],
  [0x2f, 0x2f],
  [0x62, 0x08],
  [0x66, 0x0c],
  [0x6e, 0x0a],
  [0x72, 0x0d],
  [0x74, 0x09],
]);

/**
 * Receives the decoded bytes of `final_message`: kept in memory up to INLINE_TEXT_BYTES, then
 * written on to a RAW file stream (judges read the answer as the agent gave it; the file is
 * redacted in place when the job ends, after grading: src/run/job.ts).
 */
class FinalSink {
  private chunks: Buffer[] = [];
  private size = 0;
  private out?: WriteStream;
  private waiting = false;

  constructor(
    readonly jobDir: string,
    readonly rel: string,
    private readonly maxBytes: number,
  ) {}

  /** Takes the next decoded bytes (owned by the sink from now on). @throws SessionResultError over `maxBytes` */
  write(buf: Buffer): void {
    if (buf.length === 0) return;
    this.size += buf.length;
    if (this.size > this.maxBytes) {
      throw new SessionResultError(`SessionResult.final_message larger than ${this.maxBytes} bytes (raise SKILL_UP_MAX_OUTPUT_BYTES to keep more)`);
    }
    if (!this.out && this.size <= INLINE_TEXT_BYTES) {
      this.chunks.push(buf);
      return;
    }
    if (!this.out) {
      this.out = createRawWriteStream(join(this.jobDir, this.rel));
      this.out.on('error', () => undefined);
      for (const c of this.chunks) this.out.write(c);
      this.chunks = [];
    }
    if (!this.out.write(buf)) this.waiting = true;
  }

  /** Resolves once the file stream has room again. */
  async drained(): Promise<void> {
    if (!this.waiting || !this.out) return;
    this.waiting = false;
    const out = this.out;
    // Both listeners go when either fires: one wait per backpressure, so leaving the other would
    // add a listener per wait (MaxListenersExceededWarning on a large final message).
    await new Promise<void>((res) => {
      const done = () => {
        out.off('drain', done);
        out.off('error', done);
        res();
      };
      out.on('drain', done);
      out.on('error', done);
    });
  }

  /** Stops writing (a failed parse). */
  abandon(): void {
    this.out?.destroy();
  }

  /** The message: whole when it stayed in memory, else its preview and the file. */
  async finish(): Promise<StoredText> {
    const out = this.out;
    if (!out) {
      const text = Buffer.concat(this.chunks).toString('utf8');
      return { text, bytes: Buffer.byteLength(text) };
    }
    await new Promise<void>((res, rej) => {
      out.once('error', rej);
      out.end(() => res());
    });
    return textFromFile(this.jobDir, this.rel, 'none');
  }
}

/**
 * A streaming reader of one SessionResult JSON object: the top-level keys, `final_message`
 * decoded into a {@link FinalSink}, every other value kept as raw JSON bytes for `JSON.parse`.
 */
class SessionScanner {
  private at = At.BeforeObject;
  /** File offset of the current piece's first byte. */
  private pos = 0;
  private head = '';
  private key: Buffer[] = [];
  private keyBytes = 0;
  private keyEsc = false;
  private currentKey = '';
  private readonly others = new Map<string, { raw: Buffer[]; at: number }>();
  private otherBytes = 0;
  private raw: Buffer[] = [];
  private rawStart = 0;
  private rawScalar = false;
  private rawInString = false;
  private rawEsc = false;
  private rawDepth = 0;
  /** In a `tool_calls` array: its elements are counted, and those past MAX_TOOL_CALLS_PER_TURN are not kept. */
  private rawCounting = false;
  /** Elements of the `tool_calls` array seen so far (separating commas). */
  private rawElems = 0;
  /** Past the kept elements: the bytes read are counted, not stored. */
  private rawCut = false;
  /** `tool_calls` elements skipped without being stored or parsed. */
  private droppedCalls = 0;
  /** A string `final_message` was read (into the sink). */
  private sawFinal = false;
  /** Inside `final_message`: the escape being read (`''` after a backslash, then `u` and its digits). */
  private esc: string | undefined;
  private pendingHigh = -1;
  /** Decoded bytes of the current piece, written to the sink once per piece. */
  private decoded: Buffer[] = [];
  private readonly sink: FinalSink;

  constructor(jobDir: string, rel: string, maxBytes: number) {
    this.sink = new FinalSink(jobDir, rel, maxBytes);
  }

  private fail(why: string, at: number): never {
    this.sink.abandon();
    throw new SessionResultError(`not a SessionResult JSON (${why} at byte ${at})${quoteStart(this.head)}`);
  }

  /** Resolves when the final message's file can take more. */
  drained(): Promise<void> {
    return this.sink.drained();
  }

  /** Stops writing the final message's file. */
  abandon(): void {
    this.sink.abandon();
  }

  /** Consumes the next piece of the file. @throws SessionResultError */
  push(buf: Buffer): void {
    if (this.head.length < 200) this.head += buf.subarray(0, 200).toString('utf8');
    let i = 0;
    const n = buf.length;
    while (i < n) {
      const b = buf[i]!;
      switch (this.at) {
        case At.BeforeObject:
          if (isWs(b)) break;
          if (b !== 0x7b) this.fail(`expected "{" but found ${JSON.stringify(String.fromCharCode(b))}`, this.pos + i);
          this.at = At.BeforeKeyOrEnd;
          break;
        case At.BeforeKeyOrEnd:
        case At.BeforeKey:
          if (isWs(b)) break;
          if (b === 0x7d && this.at === At.BeforeKeyOrEnd) {
            this.at = At.End;
            break;
          }
          if (b !== 0x22) this.fail('expected a property name in double quotes', this.pos + i);
          this.at = At.Key;
          this.key = [];
          this.keyBytes = 0;
          this.keyEsc = false;
          break;
        case At.Key: {
          const start = i;
          while (i < n) {
            const c = buf[i]!;
            if (this.keyEsc) this.keyEsc = false;
            else if (c === 0x5c) this.keyEsc = true;
            else if (c === 0x22) break;
            i++;
          }
          this.key.push(Buffer.from(buf.subarray(start, i)));
          this.keyBytes += i - start;
          if (this.keyBytes > 64 * 1024) this.fail('a property name longer than 64 KiB', this.pos + i);
          if (i === n) continue;
          try {
            this.currentKey = JSON.parse(`"${Buffer.concat(this.key).toString('utf8')}"`) as string;
          } catch (e) {
            this.fail(`bad property name: ${(e as Error).message}`, this.pos + i);
          }
          this.at = At.Colon;
          break;
        }
        case At.Colon:
          if (isWs(b)) break;
          if (b !== 0x3a) this.fail('expected ":" after a property name', this.pos + i);
          this.at = At.ValueStart;
          break;
        case At.ValueStart:
          if (isWs(b)) break;
          if (this.currentKey === 'final_message' && b === 0x22) {
            // JSON.parse would keep the last of two; a streamed one is written once, so refuse.
            if (this.sawFinal) this.fail('final_message given twice', this.pos + i);
            this.sawFinal = true;
            this.others.delete('final_message');
            this.at = At.FinalString;
            this.esc = undefined;
            this.pendingHigh = -1;
            break;
          }
          if (this.currentKey === 'final_message') this.sawFinal = false;
          this.at = At.Raw;
          this.raw = [];
          this.rawStart = this.pos + i;
          this.rawScalar = b !== 0x22 && b !== 0x7b && b !== 0x5b;
          this.rawInString = false;
          this.rawEsc = false;
          this.rawDepth = 0;
          this.rawCounting = this.currentKey === 'tool_calls' && b === 0x5b;
          this.rawElems = 0;
          this.rawCut = false;
          continue; // the byte belongs to the value
        case At.FinalString:
          i = this.finalString(buf, i);
          continue;
        case At.Raw:
          i = this.rawValue(buf, i);
          continue;
        case At.AfterValue:
          if (isWs(b)) break;
          if (b === 0x2c) this.at = At.BeforeKey;
          else if (b === 0x7d) this.at = At.End;
          else this.fail('expected "," or "}" after a value', this.pos + i);
          break;
        case At.End:
          if (!isWs(b)) this.fail('unexpected data after the JSON object', this.pos + i);
          break;
      }
      i++;
    }
    this.pos += n;
  }

  /** Adds one UTF-16 code unit to the decoded bytes (a lone surrogate becomes U+FFFD). */
  private unit(u: number): void {
    if (this.pendingHigh >= 0) {
      const high = this.pendingHigh;
      this.pendingHigh = -1;
      if (u >= 0xdc00 && u <= 0xdfff) {
        this.decoded.push(Buffer.from(String.fromCharCode(high, u), 'utf8'));
        return;
      }
      this.decoded.push(Buffer.from('\ufffd', 'utf8'));
    }
    if (u >= 0xd800 && u <= 0xdbff) this.pendingHigh = u;
    else this.decoded.push(Buffer.from(String.fromCharCode(u), 'utf8'));
  }

  private flushHigh(): void {
    if (this.pendingHigh >= 0) {
      this.pendingHigh = -1;
      this.decoded.push(Buffer.from('\ufffd', 'utf8'));
    }
  }

  /** Decodes `final_message` from `buf[i..]` into the sink; returns where it stopped. */
  private finalString(buf: Buffer, i: number): number {
    const n = buf.length;
    let closed = false;
    while (i < n) {
      const c = buf[i]!;
      if (this.esc !== undefined) {
        if (this.esc === '') {
          const simple = SIMPLE_ESCAPES.get(c);
          if (c === 0x75) this.esc = 'u';
          else if (simple !== undefined) {
            this.esc = undefined;
            this.unit(simple);
          } else this.fail(`bad escape "\\${String.fromCharCode(c)}" in final_message`, this.pos + i);
        } else {
          if (!isHex(c)) this.fail('bad \\u escape in final_message', this.pos + i);
          this.esc += String.fromCharCode(c);
          if (this.esc.length === 5) {
            const u = parseInt(this.esc.slice(1), 16);
            this.esc = undefined;
            this.unit(u);
          }
        }
        i++;
        continue;
      }
      const start = i;
      while (i < n) {
        const d = buf[i]!;
        if (d === 0x22 || d === 0x5c || d < 0x20) break;
        i++;
      }
      if (i > start) {
        this.flushHigh();
        this.decoded.push(buf.subarray(start, i));
      }
      if (i === n) break;
      const d = buf[i]!;
      if (d < 0x20) this.fail('a control character inside final_message (it must be escaped)', this.pos + i);
      i++;
      if (d === 0x5c) {
        this.esc = '';
        continue;
      }
      // The closing quote.
      this.flushHigh();
      closed = true;
      break;
    }
    if (this.decoded.length) {
      this.sink.write(Buffer.concat(this.decoded));
      this.decoded = [];
    }
    if (closed) this.at = At.AfterValue;
    return i;
  }

  /** Gathers another value's raw bytes from `buf[i..]`; returns where it stopped. */
  private rawValue(buf: Buffer, i: number): number {
    const n = buf.length;
    const start = i;
    let done = false;
    let end = n;
    const cutBefore = this.rawCut;
    let keepEnd = -1;
    while (i < n) {
      const c = buf[i]!;
      if (this.rawScalar) {
        if (isWs(c) || c === 0x2c || c === 0x7d) {
          done = true;
          end = i;
          break;
        }
      } else if (this.rawInString) {
        if (this.rawEsc) this.rawEsc = false;
        else if (c === 0x5c) this.rawEsc = true;
        else if (c === 0x22) {
          this.rawInString = false;
          if (this.rawDepth === 0) {
            done = true;
            end = i + 1;
            break;
          }
        }
      } else if (c === 0x22) this.rawInString = true;
      else if (c === 0x7b || c === 0x5b) this.rawDepth++;
      else if (c === 0x7d || c === 0x5d) {
        this.rawDepth--;
        if (this.rawDepth === 0) {
          done = true;
          end = i + 1;
          break;
        }
      } else if (c === 0x2c && this.rawCounting && this.rawDepth === 1) {
        // A comma of the tool_calls array: the element after the last kept one is not stored.
        if (this.rawCut) this.droppedCalls++;
        else if (++this.rawElems >= MAX_TOOL_CALLS_PER_TURN) {
          this.rawCut = true;
          this.droppedCalls++;
          keepEnd = i;
        }
      }
      i++;
    }
    const piece = buf.subarray(start, end);
    this.otherBytes += piece.length;
    if (this.otherBytes > MAX_OTHER_FIELDS_BYTES) {
      this.sink.abandon();
      throw new SessionResultError(`SessionResult fields other than final_message are larger than ${MAX_OTHER_FIELDS_BYTES} bytes together`);
    }
    if (!cutBefore) this.raw.push(Buffer.from(keepEnd >= 0 ? buf.subarray(start, keepEnd) : piece));
    if (done && this.rawCut) this.raw.push(Buffer.from(']'));
    if (!done) return n;
    this.others.set(this.currentKey, { raw: this.raw, at: this.rawStart });
    this.raw = [];
    this.at = At.AfterValue;
    return end;
  }

  /** Ends the stream and checks the result. @throws SessionResultError */
  async finish(): Promise<FileSessionResult> {
    if (this.at === At.Raw && this.rawScalar) {
      this.others.set(this.currentKey, { raw: this.raw, at: this.rawStart });
      this.at = At.AfterValue;
    }
    if (this.at !== At.End) this.fail(this.at === At.BeforeObject ? 'no JSON object' : 'unexpected end of the JSON object', this.pos);
    const data: Record<string, unknown> = {};
    let dropped = this.droppedCalls;
    for (const [k, v] of this.others) {
      try {
        if ((k === 'tool_calls' || k === 'transcript') && firstByte(v.raw) === 0x5b) {
          // Element by element, never the whole array: only the calls that will be kept are built.
          const kept: unknown[] = [];
          let calls = 0;
          for (const el of jsonArrayElements(v.raw)) {
            if (calls >= MAX_TOOL_CALLS_PER_TURN && k === 'tool_calls') {
              dropped++;
              continue;
            }
            const value: unknown = JSON.parse(el.toString('utf8'));
            const n = k === 'tool_calls' ? 1 : toolCallsIn(value);
            if (n === 0) continue;
            if (calls >= MAX_TOOL_CALLS_PER_TURN) dropped += n;
            else kept.push(value);
            calls += n;
          }
          data[k] = kept;
          continue;
        }
        data[k] = JSON.parse(Buffer.concat(v.raw).toString('utf8'));
      } catch (e) {
        this.fail(`the value of ${JSON.stringify(k)}: ${(e as Error).message}`, v.at);
      }
    }
    if (this.sawFinal) data.final_message = '';
    let parsed: ParsedSessionResult;
    try {
      parsed = sessionResultOf(data, dropped);
    } catch (e) {
      this.sink.abandon();
      throw e;
    }
    const stored = this.sawFinal ? await this.sink.finish() : await spillText(this.sink.jobDir, this.sink.rel, parsed.finalMessage);
    return { ...parsed, finalMessage: stored.text, finalMessageBytes: stored.bytes, ...(stored.file ? { finalMessageFile: stored.file } : {}) };
  }
}

/** The first non-blank byte of a raw JSON value held in pieces. */
function firstByte(pieces: Buffer[]): number | undefined {
  for (const p of pieces) for (const b of p) if (!isWs(b)) return b;
  return undefined;
}

/** How many tool calls a `transcript` entry holds (as {@link sessionResultOf} reads them). */
function toolCallsIn(entry: unknown): number {
  if (!entry || typeof entry !== 'object') return 0;
  const e = entry as Record<string, unknown>;
  return (e.type === 'tool_call' ? 1 : 0) + (Array.isArray(e.tool_calls) ? e.tool_calls.length : 0);
}

/**
 * The top-level elements of a JSON array held in pieces (its raw bytes, already checked to be
 * one well-formed value by the scanner), each as its own bytes. Each piece is released once
 * read, so memory is the pieces not yet read plus one element.
 */
function* jsonArrayElements(pieces: Buffer[]): Generator<Buffer> {
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: Buffer[] = [];
  let start = -1;
  for (let p = 0; p < pieces.length; p++) {
    const buf = pieces[p]!;
    pieces[p] = EMPTY;
    for (let i = 0; i < buf.length; i++) {
      const c = buf[i]!;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 0x5c) escaped = true;
        else if (c === 0x22) inString = false;
        continue;
      }
      if (depth === 1 && start < 0 && !isWs(c) && c !== 0x2c && c !== 0x5d) start = i;
      if (c === 0x22) inString = true;
      else if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) depth--;
      if (depth === 1 && start >= 0 && (c === 0x2c || ((c === 0x7d || c === 0x5d) && depth === 1))) {
        // An element ends at a comma (a scalar's end), or at the `}`/`]` closing it.
        const end = c === 0x2c ? i : i + 1;
        parts.push(buf.subarray(start, end));
        yield parts.length === 1 ? parts[0]! : Buffer.concat(parts);
        parts = [];
        start = -1;
      } else if (depth === 0 && start >= 0) {
        // The array's `]` ends its last scalar element.
        parts.push(buf.subarray(start, i));
        yield parts.length === 1 ? parts[0]! : Buffer.concat(parts);
        parts = [];
        start = -1;
      }
    }
    if (start >= 0) {
      parts.push(buf.subarray(start));
      start = 0;
    }
  }
}

const EMPTY = Buffer.alloc(0);
