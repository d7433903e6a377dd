/**
 * A YAML file read with source positions, so every problem can name the line and column of
 * the offending key or value.
 */
import { readFileSync } from 'node:fs';
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import type { DiagnosticBag } from './diagnostics.js';

/** One step of a path into a document: a map key or a list index. */
export type Segment = string | number;

/** A parsed YAML file. `data` is the plain JS value (undefined when the file is empty). */
export interface YamlSource {
  /** Absolute path. */
  file: string;
  doc: Document;
  lineCounter: LineCounter;
  data: unknown;
  /** False when the file could not be read or has YAML syntax errors (schema checks are then skipped). */
  ok: boolean;
}

/** 1-based position; 0/0 when unknown. */
export interface Position {
  line: number;
  col: number;
}

/**
 * Reads and parses `file`. Syntax errors, duplicate keys and an unreadable file go into `bag`
 * (with yaml's own line and column); YAML warnings become warnings. Never throws.
 */
export function readYamlSource(file: string, bag: DiagnosticBag): YamlSource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    bag.error(file, 0, 0, '', `cannot read file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return parseYaml(file, '', bag, false);
  }
  return parseYaml(file, text, bag, true);
}

/** Parses `text` as the contents of `file` (see {@link readYamlSource}). */
export function parseYaml(file: string, text: string, bag: DiagnosticBag, readable = true): YamlSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true, merge: true });
  const pos = (offset: number) => lineCounter.linePos(offset);
  for (const err of doc.errors) {
    // An unclosed quote is noticed at the end of the file; point at where the string starts.
    const start = err.code === 'MISSING_CHAR' && /quote/.test(err.message) ? unclosedQuoteStart(doc, err.pos[0]) : undefined;
    const { line, col } = pos(start ?? err.pos[0]);
    const tail = start !== undefined ? ': the string that starts here is never closed' : '';
    bag.error(file, line, col, '', `YAML syntax error: ${yamlMessage(err.message, err.code)}${tail}`);
  }
  for (const w of doc.warnings) {
    const { line, col } = pos(w.pos[0]);
    bag.warn(file, line, col, '', `YAML: ${yamlMessage(w.message, w.code)}`);
  }
  let data: unknown;
  let ok = readable && doc.errors.length === 0;
  try {
    data = doc.toJS({ maxAliasCount: 1000 }) ?? undefined;
  } catch (e) {
    bag.error(file, 1, 1, '', `YAML error: ${(e as Error).message}`);
    ok = false;
  }
  return { file, doc, lineCounter, data, ok };
}

function unclosedQuoteStart(doc: Document, errorOffset: number): number | undefined {
  let start: number | undefined;
  visit(doc, {
    Scalar(_key, node) {
      const r = node.range;
      if (r && (node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE') && r[0] < errorOffset && r[1] >= errorOffset) start = r[0];
    },
  });
  return start;
}

function yamlMessage(message: string, code: string): string {
  const first = message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '').trim();
  if (code === 'DUPLICATE_KEY') return `${first} (a key appears twice in the same map)`;
  if (code === 'TAB_AS_INDENT') return `${first} (indent with spaces, not tabs)`;
  return first;
}

/** `['input', 'turns', 0, 'content']` → `input.turns[0].content`; odd keys are quoted: `context.files["src/a.py"]`. */
export function formatPath(segments: readonly Segment[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else if (!/^[A-Za-z_$][\w$-]*$/.test(s)) out += `[${JSON.stringify(s)}]`;
    else out += out === '' ? s : `.${s}`;
  }
  return out;
}

/**
 * The position of the node at `segments`: its key (`at: 'key'`) or its value (`'value'`, the
 * default; an empty value points at its key). When the path does not exist in the file, the
 * deepest existing ancestor is used; the root of an empty file is line 1, column 1.
 */
export function positionOf(src: YamlSource, segments: readonly Segment[], at: 'key' | 'value' = 'value'): Position {
  let node: unknown = src.doc.contents;
  let keyNode: unknown;
  let found = true;
  for (const seg of segments) {
    node = deref(src, node);
    let next: unknown;
    let nextKey: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
      if (pair) {
        next = pair.value;
        nextKey = pair.key;
        if (next === null || next === undefined) next = pair.key;
      }
    } else if (isSeq(node) && typeof seg === 'number') {
      next = node.items[seg];
      nextKey = next;
    }
    if (next === undefined) {
      found = false;
      break;
    }
    node = next;
    keyNode = nextKey;
  }
  const target = (at === 'key' || !found) && keyNode !== undefined ? keyNode : isEmptyScalar(node) && keyNode ? keyNode : node;
  const offset = (target as Node | null)?.range?.[0];
  if (offset === undefined) return { line: 1, col: 1 };
  return src.lineCounter.linePos(offset);
}

function deref(src: YamlSource, node: unknown): unknown {
  return isAlias(node) ? node.resolve(src.doc) : node;
}

function isEmptyScalar(node: unknown): boolean {
  return isScalar(node) && node.value === null && (node.source === '' || node.source === undefined);
}

/**
 * A place in a YAML document: the path, the value found there, and shortcuts to report a
 * problem at it. Reading through a Field never throws, whatever the value's type.
 */
export class Field {
  constructor(
    readonly src: YamlSource,
    readonly bag: DiagnosticBag,
    readonly segments: readonly Segment[],
    readonly value: unknown,
  ) {}

  /** The root field of a document. */
  static root(src: YamlSource, bag: DiagnosticBag): Field {
    return new Field(src, bag, [], src.data);
  }

  /** Dotted path, e.g. `input.turns[0].content`. */
  get path(): string {
    return formatPath(this.segments);
  }

  /** The child at a key or index (value undefined when absent or when this is not a map/list). */
  get(key: Segment): Field {
    let v: unknown;
    if (typeof key === 'number') v = Array.isArray(this.value) ? this.value[key] : undefined;
    else if (isRecord(this.value) && Object.prototype.hasOwnProperty.call(this.value, key)) v = this.value[key];
    return new Field(this.src, this.bag, [...this.segments, key], v);
  }

  /** True when this is a map holding `key` (even with an empty value). */
  has(key: string): boolean {
    return isRecord(this.value) && Object.prototype.hasOwnProperty.call(this.value, key);
  }

  /** True when the value is absent or an empty YAML value. */
  get missing(): boolean {
    return this.value === undefined || this.value === null;
  }

  str(): string | undefined {
    return typeof this.value === 'string' ? this.value : undefined;
  }

  int(): number | undefined {
    return typeof this.value === 'number' && Number.isInteger(this.value) ? this.value : undefined;
  }

  num(): number | undefined {
    return typeof this.value === 'number' && Number.isFinite(this.value) ? this.value : undefined;
  }

  bool(): boolean | undefined {
    return typeof this.value === 'boolean' ? this.value : undefined;
  }

  isMap(): boolean {
    return isRecord(this.value);
  }

  /** The items of a list (empty when not a list). */
  items(): Field[] {
    return Array.isArray(this.value) ? this.value.map((_, i) => this.get(i)) : [];
  }

  /** The string items of a list, skipping anything else (the schema reports those). */
  strings(): string[] {
    return Array.isArray(this.value) ? this.value.filter((v): v is string => typeof v === 'string') : [];
  }

  /** The entries of a map (empty when not a map). */
  entries(): [string, Field][] {
    return isRecord(this.value) ? Object.keys(this.value).map((k) => [k, this.get(k)]) : [];
  }

  /** A map of scalars as strings (numbers and booleans stringified, anything else dropped). */
  scalarMap(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, f] of this.entries()) {
      const v = f.value;
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
    }
    return out;
  }

  position(at: 'key' | 'value' = 'value'): Position {
    return positionOf(this.src, this.segments, at);
  }

  /** Reports an error at this field's value (`at: 'key'` for its key). */
  error(message: string, at: 'key' | 'value' = 'value'): void {
    const { line, col } = this.position(at);
    this.bag.error(this.src.file, line, col, this.path, message);
  }

  warn(message: string, at: 'key' | 'value' = 'value'): void {
    const { line, col } = this.position(at);
    this.bag.warn(this.src.file, line, col, this.path, message);
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
