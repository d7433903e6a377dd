/**
 * The pieces every engine output parser (engines/<name>/parse.ts) shares, so that each parser
 * holds only its format's mapping: reading one JSON value per stdout line (blank lines skipped,
 * other text counted), narrowing parsed JSON, pairing tool calls with their results by id,
 * cutting long tool outputs, summing and subtracting token counts, and finding the skills a
 * turn activated from the tool calls that read `…/<name>/SKILL.md`. All pure: nothing here
 * touches the file system.
 */
import type { SkillActivation, TokenUsage, ToolCall } from './types.js';

/** A parsed JSON object. */
export type Json = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `v` when it is a string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** `v` when it is a finite number, else undefined. */
export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The string elements of `v` in order when it is an array, else undefined. */
export function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : undefined;
}

/** The first of `keys` whose value in `input` is a string. */
export function firstString(input: Json, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const v = str(input[k]);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** A USD amount rounded to 1e-10 (sums of per-call costs carry float noise). */
export function roundUsd(v: number): number {
  return Math.round(v * 1e10) / 1e10;
}

/** Longest tool output a parser keeps by default, characters. */
export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 100_000;

/** `text` cut to `max` characters, with a `… [truncated N characters]` line naming what was cut. */
export function truncateToolOutput(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}\n… [truncated ${text.length - max} characters]` : text;
}

/** A token count of zero (a fresh object each call). */
export function zeroUsage(): TokenUsage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
}

/** Adds `u` to `into`, field by field (tokens). */
export function addUsage(into: TokenUsage, u: TokenUsage): void {
  into.input += u.input;
  into.output += u.output;
  into.cacheRead += u.cacheRead;
  into.cacheWrite += u.cacheWrite;
}

/** `current − previous` per field, never below 0: one turn's share of counters cumulative over a session. */
export function usageDelta(current: TokenUsage, previous: TokenUsage): TokenUsage {
  return {
    input: Math.max(0, current.input - previous.input),
    output: Math.max(0, current.output - previous.output),
    cacheRead: Math.max(0, current.cacheRead - previous.cacheRead),
    cacheWrite: Math.max(0, current.cacheWrite - previous.cacheWrite),
  };
}

/**
 * An Anthropic-style usage object (`input_tokens`, `output_tokens`, `cache_read_input_tokens`,
 * `cache_creation_input_tokens`; Claude Code and Qwen Code print it) as a `TokenUsage`; a
 * missing or non-numeric field counts 0.
 */
export function anthropicUsage(u: Json): TokenUsage {
  return {
    input: num(u.input_tokens) ?? 0,
    output: num(u.output_tokens) ?? 0,
    cacheRead: num(u.cache_read_input_tokens) ?? 0,
    cacheWrite: num(u.cache_creation_input_tokens) ?? 0,
  };
}

/** What one output line holds: nothing (blank or whitespace), text that is not JSON, or a JSON value. */
export type JsonLine = { kind: 'blank' } | { kind: 'bad' } | { kind: 'json'; value: unknown };

/** Parses one output line (trimmed) as JSON. Never throws. */
export function parseJsonLine(line: string): JsonLine {
  const trimmed = line.trim();
  if (trimmed === '') return { kind: 'blank' };
  try {
    return { kind: 'json', value: JSON.parse(trimmed) };
  } catch {
    return { kind: 'bad' };
  }
}

/**
 * The base of a JSON Lines parser: `push` each stdout line, then `finish`. Blank lines are
 * skipped; a line that is not JSON, or JSON that is not an object, is counted in `badLines` and
 * skipped; every object goes to `onObject`. `O` is the format's parse options. A format whose lines may hold other values (Qwen
 * Code's array) overrides `pushValue`.
 */
export abstract class JsonLinesParser<S, O extends object = object> {
  /** Lines (or values) that were not JSON objects. */
  protected badLines = 0;
  /** The parser's options (`{}` when none were given). */
  protected readonly opts: O;

  constructor(opts?: O) {
    this.opts = opts ?? ({} as O);
  }

  /** Consumes one line. */
  push(line: string): void {
    const parsed = parseJsonLine(line);
    if (parsed.kind === 'blank') return;
    if (parsed.kind === 'bad') this.badLines++;
    else this.pushValue(parsed.value);
  }

  /** Consumes one parsed value: an object goes to `onObject`, anything else is counted in `badLines`. */
  pushValue(value: unknown): void {
    if (isObj(value)) this.onObject(value);
    else this.badLines++;
  }

  /** Handles one JSON object of the format. */
  protected abstract onObject(d: Json): void;

  /** Everything seen so far, summarised. */
  abstract finish(): S;
}

/** Feeds every line of a whole output `text` to `parser` and returns its summary. */
export function parseLines<S>(parser: { push(line: string): void; finish(): S }, text: string): S {
  for (const line of text.split('\n')) parser.push(line);
  return parser.finish();
}

/**
 * A turn's tool calls in order of appearance, each paired with its result by the call's id
 * (formats that print a call and its result on separate lines: Claude Code, Gemini CLI, Qwen Code).
 */
export class ToolCallLog {
  /** The calls in order (results filled in place). */
  readonly calls: ToolCall[] = [];
  private readonly byId = new Map<string, ToolCall>();

  /** Appends `call` unless a call with the same non-empty `id` is already in (a repeated block); true when appended. */
  add(id: string | undefined, call: ToolCall): boolean {
    if (id && this.byId.has(id)) return false;
    this.calls.push(call);
    if (id) this.byId.set(id, call);
    return true;
  }

  /**
   * Records the result of the call with `id`: `output` cut to `maxChars` (left unset when
   * undefined) and `isError`. False when no call has that id (the result is then dropped).
   */
  settle(id: string | undefined, output: string | undefined, isError: boolean, maxChars: number): boolean {
    const call = this.byId.get(id ?? '');
    if (!call) return false;
    if (output !== undefined) call.output = truncateToolOutput(output, maxChars);
    call.isError = isError;
    return true;
  }
}

/**
 * Records the `tool_result` blocks of an Anthropic-style `user` line (`message.content[]` items
 * `{type: 'tool_result', tool_use_id, content, is_error}`; Claude Code and Qwen Code print them)
 * as the results of their calls in `tools`, the text made by `textOf`, cut to `maxChars`.
 */
export function settleToolResults(tools: ToolCallLog, line: Json, textOf: (content: unknown) => string, maxChars: number): void {
  const msg = isObj(line.message) ? line.message : undefined;
  const content = msg && Array.isArray(msg.content) ? msg.content : [];
  for (const b of content) {
    if (isObj(b) && b.type === 'tool_result') tools.settle(str(b.tool_use_id), textOf(b.content), b.is_error === true, maxChars);
  }
}

/** A SKILL.md path: group 1 is the folder holding it. */
const SKILL_MD_IN_FOLDER = /(?:^|[\\/])([^\\/]+)[\\/]SKILL\.md$/;
/** A SKILL.md path inside a `skills` folder: group 1 is the skill's folder. */
const SKILL_MD_IN_SKILLS = /(?:^|[\\/])skills[\\/]([^\\/]+)[\\/]SKILL\.md$/;

/**
 * The skill whose SKILL.md `path` is (`…/<name>/SKILL.md` → `name`), or undefined; with
 * `underSkills`, only a SKILL.md whose folder is inside a folder named `skills`. Either path
 * separator is accepted.
 */
export function skillOfSkillMd(path: string, opts: { underSkills?: boolean } = {}): string | undefined {
  return (opts.underSkills ? SKILL_MD_IN_SKILLS : SKILL_MD_IN_FOLDER).exec(path)?.[1];
}

/**
 * The skill activations of a turn, in call order: `match` maps each call that did not fail
 * (`isError` not true) and its input (`{}` unless an object) to an activation, or undefined
 * for a call that activates none.
 */
export function skillActivationsOf(calls: readonly ToolCall[], match: (call: ToolCall, input: Json) => SkillActivation | undefined): SkillActivation[] {
  const out: SkillActivation[] = [];
  for (const c of calls) {
    if (c.isError) continue;
    const a = match(c, isObj(c.input) ? c.input : {});
    if (a) out.push(a);
  }
  return out;
}
