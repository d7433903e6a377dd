/**
 * `capture` of a turn: takes a value from the agent's answer into a `{{variable}}` of later
 * turns. Either a regular expression (RE2/Go syntax, matched in linear time: see util/regex.ts)
 * or a small JSONPath.
 */
import { compileRegex } from '../util/regex.js';

/** A capture declaration as in `TurnSpec.capture`. */
export interface CaptureSpec {
  variable: string;
  pattern?: string;
  jsonpath?: string;
}

/** The captured value, or why there is none. */
export type CaptureResult = { ok: true; value: string } | { ok: false; reason: string };

/** One step of a parsed JSONPath: an object key or an array index (negative counts from the end). */
export type PathStep = { key: string } | { index: number };

/**
 * Parses the supported JSONPath subset: `$`, then any of `.key`, `['key']`, `["key"]`, `[n]`
 * (n may be negative: `[-1]` is the last element). Keys after `.` are `[A-Za-z0-9_$-]+`.
 *
 * @throws SyntaxError naming the position of the first unsupported construct.
 */
export function parseJsonPath(expr: string): PathStep[] {
  const s = expr.trim();
  if (!s.startsWith('$')) throw new SyntaxError(`JSONPath must start with "$": ${expr}`);
  const steps: PathStep[] = [];
  let i = 1;
  while (i < s.length) {
    const rest = s.slice(i);
    let m: RegExpExecArray | null;
    if ((m = /^\.([A-Za-z0-9_$-]+)/.exec(rest))) {
      steps.push({ key: m[1]! });
    } else if ((m = /^\[\s*(-?\d+)\s*\]/.exec(rest))) {
      steps.push({ index: Number(m[1]) });
    } else if ((m = /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest)) || (m = /^\[\s*"((?:[^"\\]|\\.)*)"\s*\]/.exec(rest))) {
      steps.push({ key: m[1]!.replace(/\\(.)/g, '$1') });
    } else {
      throw new SyntaxError(`unsupported JSONPath at position ${i}: ${JSON.stringify(rest)} (supported: $.a.b, ['a'], [0], [-1])`);
    }
    i += m[0].length;
  }
  return steps;
}

/** Applies parsed steps; undefined when any step is missing. */
export function applyJsonPath(doc: unknown, steps: PathStep[]): unknown {
  let cur: unknown = doc;
  for (const step of steps) {
    if ('key' in step) {
      if (typeof cur !== 'object' || cur === null || Array.isArray(cur) || !(step.key in cur)) return undefined;
      cur = (cur as Record<string, unknown>)[step.key];
    } else {
      if (!Array.isArray(cur)) return undefined;
      const i = step.index < 0 ? cur.length + step.index : step.index;
      if (i < 0 || i >= cur.length) return undefined;
      cur = cur[i];
    }
  }
  return cur;
}

/**
 * Finds the JSON document in an answer: the whole text when it parses as JSON, else the
 * first fenced ```json block that parses, else the first fenced block of any language that
 * parses. Undefined when there is none.
 */
export function extractJson(text: string): unknown {
  const tryParse = (s: string): { ok: boolean; v?: unknown } => {
    try {
      return { ok: true, v: JSON.parse(s) as unknown };
    } catch {
      return { ok: false };
    }
  };
  const whole = tryParse(text.trim());
  if (whole.ok) return whole.v;
  const fences = [...text.matchAll(/(^|\n)[ \t]*```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)\n[ \t]*```/g)];
  const ordered = [
    ...fences.filter((f) => f[2]!.toLowerCase() === 'json'),
    ...fences.filter((f) => f[2]!.toLowerCase() !== 'json'),
  ];
  for (const f of ordered) {
    const r = tryParse(f[3]!.trim());
    if (r.ok) return r.v;
  }
  return undefined;
}

function stringify(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function byPattern(text: string, pattern: string): CaptureResult {
  let re: RegExp;
  try {
    re = compileRegex(pattern);
  } catch (e) {
    return { ok: false, reason: `invalid pattern /${pattern}/: ${(e as Error).message}` };
  }
  const m = re.exec(text);
  if (!m) return { ok: false, reason: `pattern /${pattern}/ did not match` };
  let value: string | undefined;
  if (m.groups && 'value' in m.groups) value = m.groups.value;
  else if (m.length === 2) value = m[1];
  else if (m.length === 1) value = m[0];
  else return { ok: false, reason: `pattern /${pattern}/ has ${m.length - 1} groups; name the wanted one (?P<value>…)` };
  if (value === undefined || value === '') return { ok: false, reason: `pattern /${pattern}/ captured an empty value` };
  return { ok: true, value };
}

/**
 * Captures a value from `text`, explaining a miss.
 *
 * - `pattern`: the named group `value` when the pattern has one, else its only group, else
 *   (no groups at all) the whole match. A pattern with several unnamed groups is refused.
 * - `jsonpath`: applied to the text parsed as JSON, or to the first fenced ```json block;
 *   strings are returned as is, numbers and booleans as text, objects and arrays as JSON.
 * - both: the pattern is applied to the JSONPath result.
 * An empty value counts as a miss.
 */
export function captureDetail(text: string, cap: CaptureSpec): CaptureResult {
  if (cap.jsonpath === undefined && cap.pattern === undefined) return { ok: false, reason: 'capture has neither pattern nor jsonpath' };
  let source = text;
  if (cap.jsonpath !== undefined) {
    let steps: PathStep[];
    try {
      steps = parseJsonPath(cap.jsonpath);
    } catch (e) {
      return { ok: false, reason: (e as Error).message };
    }
    const doc = extractJson(text);
    if (doc === undefined) return { ok: false, reason: 'the answer holds no JSON (neither as a whole nor in a ```json block)' };
    const v = stringify(applyJsonPath(doc, steps));
    if (v === undefined || v === '') return { ok: false, reason: `JSONPath ${cap.jsonpath} found no value` };
    if (cap.pattern === undefined) return { ok: true, value: v };
    source = v;
  }
  return byPattern(source, cap.pattern!);
}

/** The captured value, or undefined when nothing (or only an empty string) was captured. See `captureDetail`. */
export function captureValue(text: string, cap: CaptureSpec): string | undefined {
  const r = captureDetail(text, cap);
  return r.ok ? r.value : undefined;
}
