/**
 * Turns ajv's raw errors into one readable diagnostic per problem, each at the line and
 * column of the offending key or value: "unknown key `must_contian`; did you mean
 * `must_contain`?", "expected a list of strings, got a string `"x"`", … The one translator
 * of every schema-checked file (eval.yaml, case files, the model script, SKILL.md
 * frontmatter); a file family with its own established wording passes a {@link Phraser}.
 */
import type { ErrorObject } from 'ajv';
import { nearest as nearestName } from '../util/did-you-mean.js';
import { schemaAt, validateAgainst, type Schema, type SchemaKind } from './schema.js';
import type { Field, Segment } from './yaml-source.js';

/** One schema problem as {@link reportSchemaErrors} found it, handed to a {@link Phraser}. */
export interface SchemaProblem {
  /** ajv's error (keyword, params, schemaPath, data). */
  error: ErrorObject;
  /** Instance path of the error, relative to the validated field. */
  segments: Segment[];
  /** The field at `segments`. */
  field: Field;
  /** The schema in force at `segments` (`$ref`s merged), `{}` when unknown. */
  schema: Schema;
  /** How skill-up's config phrases it by default. */
  described: Phrasing;
}

/** A diagnostic's wording and place: at the field's key or value, or at one of its children. */
export interface Phrasing {
  message: string;
  at: 'key' | 'value';
  /** Report at this child of the instance path (an unknown key, a repeated item). */
  child?: Segment;
}

/**
 * Rewords a problem: a phrasing (or several), `[]` to drop it (the caller reports it better
 * itself), or undefined to keep the default.
 */
export type Phraser = (problem: SchemaProblem) => Phrasing | Phrasing[] | undefined;

/**
 * Validates `field.value` against the schema `kind` and reports every problem at its
 * place in `field`'s document (paths are relative to `field`, so an inline case inside
 * eval.yaml is reported at `cases.inline[0]...`). `phrase` may reword problems. Returns the
 * number of problems found.
 */
export function reportSchemaErrors(kind: SchemaKind, field: Field, phrase?: Phraser): number {
  const errors = collapse(validateAgainst(kind, field.value));
  // A generated file may hold 400k unknown keys: a map with many gets one message listing a
  // few and counting the rest, so the report stays readable and describing it stays fast.
  const unknownPerMap = new Map<string, string[]>();
  for (const e of errors) {
    if (e.keyword !== 'additionalProperties') continue;
    const keys = unknownPerMap.get(e.instancePath) ?? [];
    keys.push(String((e.params as Record<string, unknown>).additionalProperty));
    unknownPerMap.set(e.instancePath, keys);
  }
  let described = 0;
  let undescribed = 0;
  for (const e of errors) {
    const segments = parsePointer(e.instancePath);
    const unknown = e.keyword === 'additionalProperties' ? unknownPerMap.get(e.instancePath)! : undefined;
    if (unknown && unknown.length > MAX_UNKNOWN_KEYS_LISTED) {
      // Reported once, at the first unknown key of the map.
      if (String((e.params as Record<string, unknown>).additionalProperty) !== unknown[0]) continue;
    }
    if (described >= MAX_SCHEMA_ERRORS_DESCRIBED) {
      undescribed++;
      continue;
    }
    described++;
    let target = field;
    for (const s of segments) target = target.get(s);
    if (unknown && unknown.length > MAX_UNKNOWN_KEYS_LISTED) {
      target.get(unknown[0]!).error(manyUnknownKeysMessage(unknown, Object.keys((schemaAt(kind, segments)?.properties as object | undefined) ?? {})), 'key');
      continue;
    }
    const phrased = describeError(kind, segments, e);
    const custom = phrase?.({ error: e, segments, field: target, schema: schemaAt(kind, segments) ?? {}, described: phrased });
    for (const { message, at, child } of custom === undefined ? [phrased] : Array.isArray(custom) ? custom : [custom]) {
      (child !== undefined ? target.get(child) : target).error(message, at);
    }
  }
  if (undescribed > 0) field.error(`… and ${undescribed.toLocaleString('en-US')} more schema problems in this file, not listed (fix the ones above first)`, 'key');
  return errors.length;
}

/**
 * One message for a map with more than {@link MAX_UNKNOWN_KEYS_LISTED} unknown keys:
 * "350,000 unknown keys in this map: `a`, `b` … and 349,990 more; expected only `x`, `y`".
 */
export function manyUnknownKeysMessage(unknown: readonly string[], allowed: readonly string[]): string {
  const shown = unknown.slice(0, MAX_UNKNOWN_KEYS_LISTED).map((k) => `\`${k.length > 40 ? `${k.slice(0, 37)}...` : k}\``);
  const more = unknown.length - shown.length;
  const expected = allowed.length ? `; expected only ${allowed.map((k) => `\`${k}\``).join(', ')}` : '; nothing is allowed here';
  return `${unknown.length.toLocaleString('en-US')} unknown keys in this map: ${shown.join(', ')} … and ${more.toLocaleString('en-US')} more${expected}`;
}

/** Unknown keys of one map reported one by one; the rest are counted in one line. */
export const MAX_UNKNOWN_KEYS_LISTED = 10;

/** Schema problems of one document described one by one; the rest are counted in one line. */
export const MAX_SCHEMA_ERRORS_DESCRIBED = 100;

/** Drops ajv's bookkeeping errors (`if`), merges `required` errors per object, removes duplicates. */
function collapse(errors: ErrorObject[]): ErrorObject[] {
  const out: ErrorObject[] = [];
  const seen = new Set<string>();
  const typeFailed = new Set(errors.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  for (const e of errors) {
    if (e.keyword === 'if') continue;
    // A value of the wrong type gets one message; other keywords at the same place are noise.
    if (e.keyword !== 'type' && typeFailed.has(e.instancePath)) continue;
    const key = `${e.instancePath}|${e.keyword}|${JSON.stringify(e.params)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  // When an anyOf/oneOf failed, keep only its own summary (branch errors are guesses).
  const composite = out.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf').map((e) => e.instancePath);
  return out.filter(
    (e) => e.keyword === 'anyOf' || e.keyword === 'oneOf' || !composite.some((p) => e.instancePath === p || e.instancePath.startsWith(p + '/')),
  );
}

function parsePointer(pointer: string): Segment[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^(0|[1-9]\d*)$/.test(p) ? Number(p) : p));
}

function describeError(kind: SchemaKind, segments: Segment[], e: ErrorObject): Phrasing {
  const here = schemaAt(kind, segments) ?? (e.parentSchema) ?? {};
  const p = e.params as Record<string, unknown>;
  // A constraint a generic sentence would explain badly (an empty list that checks nothing)
  // carries its own wording: `x-messages: {minItems: "…"}`.
  const own = (here['x-messages'] as Record<string, unknown> | undefined)?.[e.keyword];
  if (typeof own === 'string') return { message: own, at: 'value' };
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(p.additionalProperty);
      const allowed = Object.keys((here.properties as object | undefined) ?? {});
      return { message: unknownKeyMessage(key, allowed, misplacedKey(kind, segments, key, allowed)), at: 'key', child: key };
    }
    case 'required': {
      const key = String(p.missingProperty);
      const what = schemaAt(kind, [...segments, key]);
      const hint =
        what && 'const' in what ? ` (write \`${key}: ${String(what.const)}\`)` : typeof what?.['x-expected'] === 'string' ? ` (${what['x-expected']})` : '';
      return { message: `missing required key \`${key}\`${hint}`, at: 'key' };
    }
    case 'type':
      return { message: `expected ${expected(here)}, got ${describeValue(e.data)}${quoteHint(here, e.data)}`, at: 'value' };
    case 'enum':
    case 'const': {
      const allowed = (e.keyword === 'const' ? [p.allowedValue] : (p.allowedValues as unknown[])) ?? [];
      return { message: enumMessage(e.data, allowed), at: 'value' };
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { message: `expected ${expected(here)}${rangeText(here)}, got ${describeValue(e.data)}`, at: 'value' };
    case 'minLength':
      return { message: `expected ${Number(p.limit) <= 1 ? 'a non-empty string' : `at least ${String(p.limit)} characters`}, got ${describeValue(e.data)}`, at: 'value' };
    case 'maxLength':
      return { message: `expected at most ${String(p.limit)} characters, got ${String((e.data as string).length)}`, at: 'value' };
    case 'minItems':
      return { message: `expected ${Number(p.limit) <= 1 ? 'a non-empty list' : `at least ${String(p.limit)} items`}${forWhat(here)}, got an empty list`, at: 'value' };
    case 'maxItems':
      return { message: `expected at most ${String(p.limit)} items, got ${String((e.data as unknown[]).length)}`, at: 'value' };
    case 'uniqueItems': {
      const [first, second] = [Number(p.i), Number(p.j)].sort((a, b) => a - b) as [number, number];
      const item = (e.data as unknown[])[second];
      const shown = typeof item === 'string' ? `\`${item}\`` : describeValue(item);
      return { message: `${shown} is listed twice (items [${first}] and [${second}]); list each value once`, at: 'value', child: second };
    }
    case 'pattern':
      return { message: `expected ${expected(here)}, got ${describeValue(e.data)}`, at: 'value' };
    case 'minProperties':
    case 'maxProperties': {
      const keys = Object.keys((e.data as object) ?? {});
      const got = keys.length === 0 ? 'an empty map' : `${keys.length} keys (${keys.map((k) => `\`${k}\``).join(', ')})`;
      return { message: `expected ${expected(here)}, got ${got}`, at: 'value' };
    }
    case 'anyOf':
    case 'oneOf':
      return { message: `expected ${expected(here)}, got ${describeValue(e.data)}`, at: 'value' };
    default:
      return { message: e.message ?? `is not valid here (${e.keyword})`, at: 'value' };
  }
}

/**
 * "unknown key `must_contian`; did you mean `must_contain`?"; else, for a key that is valid one
 * level down, "unknown key `prompt` here; did you mean `input.prompt`?"; else the allowed keys.
 */
export function unknownKeyMessage(key: string, allowed: string[], elsewhere: string[] = []): string {
  const suggestion = nearest(key, allowed);
  if (suggestion) return `unknown key \`${key}\`; did you mean \`${suggestion}\`?`;
  if (elsewhere.length > 0) {
    const list = elsewhere.map((k) => `\`${k}\``);
    const alternatives = list.length === 1 ? list[0]! : `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]!}`;
    return `unknown key \`${key}\` here; did you mean ${alternatives}?`;
  }
  if (allowed.length === 0) return `unknown key \`${key}\`; nothing is allowed here`;
  return `unknown key \`${key}\`; expected one of ${allowed.map((k) => `\`${k}\``).join(', ')}`;
}

/**
 * Where `key` would be valid one or two map levels below this one, nearest first:
 * `['input.prompt']`, `['judge.timeout_seconds', 'cases.defaults.timeout_seconds']`.
 */
function misplacedKey(kind: SchemaKind, segments: Segment[], key: string, allowed: string[]): string[] {
  const out: string[] = [];
  let level: string[][] = allowed.map((k) => [k]);
  for (let depth = 0; depth < 2 && out.length < 3; depth++) {
    const next: string[][] = [];
    for (const rel of level) {
      const props = schemaAt(kind, [...segments, ...rel])?.properties as Record<string, unknown> | undefined;
      if (!props) continue;
      if (Object.prototype.hasOwnProperty.call(props, key)) out.push([...rel, key].join('.'));
      for (const k of Object.keys(props)) next.push([...rel, k]);
    }
    level = next;
  }
  return out.slice(0, 3);
}

/** The closest of `candidates` to `word` when it is plausibly a typo of it (src/util/did-you-mean.ts). */
export const nearest = nearestName;

function enumMessage(value: unknown, allowed: unknown[]): string {
  const list = allowed.map((a) => `\`${String(a)}\``);
  const choices = list.length === 1 ? list[0]! : `one of ${list.join(', ')}`;
  if (typeof value === 'string') {
    const guess = nearest(
      value,
      allowed.filter((a): a is string => typeof a === 'string'),
    );
    if (guess && list.length > 1) return `unknown value \`${value}\`; did you mean \`${guess}\`? (expected ${choices})`;
    return `expected ${choices}, got \`${value}\``;
  }
  return `expected ${choices}, got ${describeValue(value)}`;
}

/** A phrase for what the schema wants: "a list of strings", "a map", "one of `a`, `b`". */
export function expected(s: Schema): string {
  if (typeof s['x-expected'] === 'string') return s['x-expected'];
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
  if ('const' in s) return `\`${String(s.const)}\``;
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  if (types.length === 0) return 'a different value';
  const words = types.map((t) => typeWord(t, s));
  return words.length === 1 ? words[0]! : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]!}`;
}

function typeWord(t: string, s: Schema): string {
  switch (t) {
    case 'string':
      return 'a string';
    case 'integer':
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return '`true` or `false`';
    case 'object':
      return 'a map';
    case 'null':
      return 'an empty value';
    case 'array': {
      const items = s.items as Schema | undefined;
      const it = items && (Array.isArray(items.type) ? undefined : (items.type as string | undefined));
      if (it === 'string') return 'a list of strings';
      if (it === 'object') return 'a list of maps';
      if (it === 'integer' || it === 'number') return 'a list of numbers';
      if (items && Array.isArray(items.enum)) return `a list of ${items.enum.map((v) => `\`${String(v)}\``).join(', ')}`;
      return 'a list';
    }
    default:
      return t;
  }
}

/** "a string `\"x\"`", "a number `3`", "a list", "a map", "an empty value". */
export function describeValue(v: unknown): string {
  if (v === null || v === undefined) return 'an empty value';
  if (typeof v === 'string') return `a string \`${JSON.stringify(v.length > 60 ? v.slice(0, 57) + '...' : v)}\``;
  if (typeof v === 'number') return `a number \`${v}\``;
  if (typeof v === 'boolean') return `a boolean \`${v}\``;
  if (Array.isArray(v)) return v.length === 0 ? 'an empty list' : 'a list';
  if (typeof v === 'object') return Object.keys(v).length === 0 ? 'an empty map' : 'a map';
  return typeof v;
}

/** A number or boolean where a string is wanted is usually a missing pair of quotes. */
function quoteHint(s: Schema, v: unknown): string {
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string') && (typeof v === 'number' || typeof v === 'boolean')) return ` (quote it: "${String(v)}")`;
  if (v === null && types.some((t) => t === 'object' || t === 'array')) return ' (remove the key or give it a value)';
  return '';
}

function rangeText(s: Schema): string {
  const min = s.minimum as number | undefined;
  const max = s.maximum as number | undefined;
  // A phrase such as "a whole number of trials, at least 1" gets the bound it leaves out.
  if (typeof s['x-expected'] === 'string') return max !== undefined && !s['x-expected'].includes(String(max)) ? ` and at most ${max}` : '';
  if (min !== undefined && max !== undefined) return ` from ${min} to ${max}`;
  if (min !== undefined) return ` of at least ${min}`;
  if (max !== undefined) return ` of at most ${max}`;
  return '';
}

function forWhat(s: Schema): string {
  const x = s['x-expected'];
  return typeof x === 'string' && !x.startsWith('a non-empty') ? ` (${x})` : '';
}
