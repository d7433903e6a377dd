/**
 * A YAML file read with source positions, so every problem can name the line and column of
 * the offending key or value. The one YAML reader of skill-up's user files: eval.yaml and
 * case files (src/config/load.ts), the scripted model's rule file (src/model/script.ts) and
 * SKILL.md frontmatter (src/skill/lint.ts, parsed with a line offset). {@link parseYaml} →
 * {@link YamlSource}; {@link Field} walks it and reports at positions; schema checks are in
 * src/config/schema-errors.ts.
 */
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import type { Document, LineCounter, Node, Pair, YAMLMap } from 'yaml';
import type * as YamlLib from 'yaml';
import { requireCjs } from '../util/cjs.js';

const { isAlias, isMap, isPair, isScalar, isSeq, LineCounter: LineCounterClass, parseDocument, visit } = requireCjs('yaml') as typeof YamlLib;
import type { DiagnosticBag } from './diagnostics.js';
import { fileKind, fileKindProblem } from './paths.js';
import { processYamlCache, yamlCacheEnabled, yamlCacheKey, type YamlCache } from './yaml-cache.js';

/**
 * Options every YAML file of skill-up is parsed with. The YAML 1.2 core schema only (even
 * under a `%YAML 1.1` directive), with `resolveKnownTags: false`: the `yaml` package would
 * otherwise turn YAML 1.1 tags into values no field expects (`!!binary` a byte array, `!!set`
 * a Set, `!!omap` a Map, `!!timestamp` a Date). Such a tag is left unresolved and
 * {@link parseYaml} refuses it ({@link tagMessage}). `uniqueKeys: false` switches off the
 * `yaml` package's own duplicate-key check, which compares every key with every earlier key
 * of its map (quadratic: a 64k-key map took 23 s); {@link duplicateKeys} does the same check
 * in linear time. Options from the `yaml` documentation (Parse and Schema options).
 */
export const YAML_PARSE_OPTIONS = { prettyErrors: false, uniqueKeys: false, schema: 'core', resolveKnownTags: false } as const;

/** The explicit tags skill-up reads: those of the YAML 1.2 core schema (`!!str`, `!!int`, …). */
export const CORE_TAGS: ReadonlySet<string> = new Set(['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`));

/** A resolved tag as written: `tag:yaml.org,2002:binary` → `!!binary`; a local `!foo` stays; any other URI `!<uri>`. */
export function shortTag(tag: string): string {
  if (tag.startsWith('tag:yaml.org,2002:')) return `!!${tag.slice('tag:yaml.org,2002:'.length)}`;
  return tag.startsWith('!') ? tag : `!<${tag}>`;
}

/**
 * The message for an explicit tag the core schema does not resolve (the `yaml` package's
 * `TAG_RESOLVE_FAILED` warning): a tag outside the core schema ("YAML tag `!!binary` is not
 * supported here; write a plain string"), or a core tag that does not fit its value
 * (`!!int abc`). `where` replaces "here" (e.g. `in frontmatter`).
 */
export function tagMessage(tag: string, where = 'here'): string {
  const short = shortTag(tag);
  if (CORE_TAGS.has(tag)) return `YAML tag \`${short}\` does not fit this value; remove the tag`;
  const plain: Record<string, string> = { '!!omap': 'a plain map', '!!set': 'a plain list', '!!pairs': 'a plain list of maps' };
  return `YAML tag \`${short}\` is not supported ${where}; write ${plain[short] ?? 'a plain string'}`;
}

/** Deepest nesting of maps and lists skill-up reads in a YAML file; deeper is an error (a recursion would overflow the stack). */
export const MAX_YAML_DEPTH = 256;

/**
 * How deeply the maps and lists of `doc` nest, counted without recursion, stopping once past
 * `limit` (so a 3000-level file costs no more than a 257-level one), with the offset of the
 * deepest map or list found. Aliases are not followed.
 */
export function yamlDepth(doc: Document, limit = MAX_YAML_DEPTH): { depth: number; offset: number } {
  let max = 0;
  let offset = 0;
  const stack: [unknown, number][] = [[doc.contents, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth > max) [max, offset] = [depth, node.range?.[0] ?? 0];
    if (max > limit) return { depth: max, offset };
    for (const item of node.items as unknown[]) {
      if (isPair(item)) {
        stack.push([item.key, depth + 1], [item.value, depth + 1]);
      } else stack.push([item, depth + 1]);
    }
  }
  return { depth: max, offset };
}

/** The message for a document nested past {@link MAX_YAML_DEPTH}: `depth` as measured, undefined when the parser itself ran out of stack. */
export function yamlDepthMessage(depth?: number): string {
  const levels = depth !== undefined ? `${depth}${depth > MAX_YAML_DEPTH ? '+' : ''} levels` : `more than ${MAX_YAML_DEPTH} levels`;
  return `maps and lists nested deeper than skill-up reads (${levels}; at most ${MAX_YAML_DEPTH}); flatten the structure`;
}

/** True for the error a recursion past the stack's end throws (`RangeError: Maximum call stack size exceeded`). */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && /call stack/i.test(e.message);
}

/**
 * The first map key of `doc` that is a map or a list (`? [a, b]`), or undefined. Plain JS
 * objects only have string keys: `yaml` would stringify it and print a process warning.
 */
export function collectionKey(doc: Document): Node | undefined {
  let found: Node | undefined;
  visit(doc, {
    Pair(_key, pair) {
      if (isMap(pair.key) || isSeq(pair.key)) {
        found = pair.key;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

/**
 * What makes a parsed `doc` unreadable for skill-up beyond YAML syntax, or undefined: nesting
 * past {@link MAX_YAML_DEPTH} (or so deep the parser ran out of stack), or a map or list used
 * as a map key. Check it before walking the document recursively or calling `toJS`.
 */
export function structureProblem(doc: Document): { offset: number; message: string } | undefined {
  const overflow = doc.errors.find((err) => /call stack/i.test(err.message));
  if (overflow) return { offset: overflow.pos[0], message: yamlDepthMessage() };
  const deep = yamlDepth(doc);
  if (deep.depth > MAX_YAML_DEPTH) return { offset: deep.offset, message: yamlDepthMessage(deep.depth) };
  const key = collectionKey(doc);
  if (key) return { offset: key.range?.[0] ?? 0, message: `a map key is a ${isMap(key) ? 'map' : 'list'} (\`? […]\`); keys must be strings` };
  return undefined;
}

/** Most duplicate keys {@link duplicateKeys} lists one by one; the rest are counted. */
export const MAX_DUPLICATE_KEYS_LISTED = 20;

/** A key written a second time in the same map. */
export interface DuplicateKey {
  /** The key as a string. */
  key: string;
  /** Offset of the repeated key in the text. */
  offset: number;
  /** Offset of the first occurrence. */
  firstOffset: number;
}

/**
 * Every key written twice in one map of `doc`, in document order, found in linear time (one
 * Set per map). Keys compare as the plain-JS object keys they become (`1` and `"1"` are the
 * same key); merge keys (`<<`) and non-scalar keys are not compared. At most `limit` are
 * returned; `more` counts the rest.
 */
export function duplicateKeys(doc: Document, limit = MAX_DUPLICATE_KEYS_LISTED): { found: DuplicateKey[]; more: number } {
  const found: DuplicateKey[] = [];
  let more = 0;
  visit(doc, {
    Map(_key, map) {
      const seen = new Map<string, number>();
      for (const pair of map.items) {
        const k = pair.key;
        if (!isScalar(k) || typeof k.value === 'symbol') continue;
        const name = String(k.value);
        const offset = k.range?.[0] ?? 0;
        const first = seen.get(name);
        if (first === undefined) {
          seen.set(name, offset);
          continue;
        }
        if (found.length < limit) found.push({ key: name, offset, firstOffset: first });
        else more++;
      }
    },
  });
  return { found, more };
}

/**
 * The message for a repeated key: "Map keys must be unique: `a` appears twice in the same map
 * (first at line 2)". `lineShift` is added to line numbers (text parsed out of a larger file).
 */
export function duplicateKeyMessage(d: DuplicateKey, lineCounter: LineCounter, lineShift = 0): string {
  const shown = d.key.length > 60 ? `${d.key.slice(0, 57)}...` : d.key;
  return `Map keys must be unique: \`${shown}\` appears twice in the same map (first at line ${lineCounter.linePos(d.firstOffset).line + lineShift})`;
}

/**
 * Where `buf` stops being valid UTF-8: the byte offset of the first byte that does not start or
 * continue a well-formed character (overlong forms, surrogates and code points above U+10FFFF
 * included), or undefined when all of it is valid. Linear; a truncated character at the very
 * end counts as invalid at its first byte.
 */
export function firstInvalidUtf8(buf: Uint8Array): number | undefined {
  if (isUtf8(buf)) return undefined;
  let i = 0;
  const n = buf.length;
  while (i < n) {
    const b = buf[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let len: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) [len, min] = [2, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [len, min] = [3, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [len, min] = [4, 0x10000];
    else return i;
    if (i + len > n) return i;
    let cp = b & (0xff >> (len + 1));
    for (let k = 1; k < len; k++) {
      const c = buf[i + k]!;
      if ((c & 0xc0) !== 0x80) return i;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return undefined;
}

/** 1-based line and column (in characters) of byte `offset` of `buf`. */
function bytePosition(buf: Uint8Array, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (buf[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: Buffer.from(buf.subarray(lineStart, offset)).toString('utf8').length + 1 };
}

/** One step of a path into a document: a map key or a list index. */
export type Segment = string | number;

/**
 * A parsed YAML file. `data` is the plain JS value (undefined when the file is empty). For a
 * text answered from the parse cache (src/config/yaml-cache.ts) `doc` and `lineCounter` are
 * getters that parse the text on first use: read them only to locate a problem, never on the
 * way of a valid file, or the cache saves nothing.
 */
export interface YamlSource {
  /** Absolute path. */
  file: string;
  readonly doc: Document;
  readonly lineCounter: LineCounter;
  data: unknown;
  /** False when the file could not be read or has YAML syntax errors (schema checks are then skipped). */
  ok: boolean;
  /** Lines of the file before the parsed text (SKILL.md's `---` line): added to every reported line. */
  lineOffset?: number;
}

/** How {@link parseYaml} reads a text. */
export interface ParseYamlOptions {
  /** False when the file could not be read: the source is then never `ok`. Default true. */
  readable?: boolean;
  /** Lines of the file before `text` (the text is part of a larger file); default 0. */
  lineOffset?: number;
  /** Words after "YAML syntax error" / "YAML error", e.g. ` in frontmatter`; default none. */
  label?: string;
  /** The parse cache to answer from and fill (a suite load's, with its disk file); default the in-process one. */
  cache?: YamlCache;
}

/** 1-based position; 0/0 when unknown. */
export interface Position {
  line: number;
  col: number;
}

/**
 * Reads and parses `file`. Syntax errors, duplicate keys and an unreadable file go into `bag`
 * (with yaml's own line and column); YAML warnings become warnings. `cache`: see
 * {@link ParseYamlOptions.cache}. Never throws.
 */
export function readYamlSource(file: string, bag: DiagnosticBag, cache?: YamlCache): YamlSource {
  let buf: Buffer;
  // stat, never open first: opening a FIFO blocks until something writes to it.
  const kind = fileKind(file);
  if (kind !== 'file' && kind !== 'missing' && kind !== 'unreadable') {
    bag.error(file, 0, 0, '', `cannot read file: it ${fileKindProblem(kind)}`);
    return parseYaml(file, '', bag, false);
  }
  try {
    buf = readFileSync(file);
  } catch (e) {
    bag.error(file, 0, 0, '', `cannot read file: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return parseYaml(file, '', bag, false);
  }
  // Reading as 'utf8' would turn every invalid byte into U+FFFD silently (a Latin-1 "é" would
  // reach the agent as "�"): the file must be UTF-8, as YAML requires.
  const bad = firstInvalidUtf8(buf);
  if (bad !== undefined) {
    const { line, col } = bytePosition(buf, bad);
    const hex = buf[bad]!.toString(16).toUpperCase().padStart(2, '0');
    bag.error(
      file,
      line,
      col,
      '',
      `the file is not valid UTF-8: byte 0x${hex} at byte offset ${bad} (line ${line}, column ${col}) is not part of a UTF-8 character; YAML files must be UTF-8 (it looks like Latin-1 or another legacy encoding: convert it, e.g. \`iconv -f latin1 -t utf-8\`)`,
    );
    return parseYaml(file, '', bag, false);
  }
  return parseYaml(file, buf.toString('utf8'), bag, { readable: true, cache });
}

/** Parses `text` into a document with positions, as every YAML file of skill-up is parsed. */
function parseText(text: string): { doc: Document; lineCounter: LineCounter } {
  const lineCounter = new LineCounterClass();
  return { doc: parseDocument(text, { lineCounter, ...YAML_PARSE_OPTIONS, merge: true }), lineCounter };
}

/** The source of a text answered from the parse cache: `doc` and `lineCounter` parsed on first use. */
function cachedSource(file: string, text: string, data: unknown, lineOffset: number): YamlSource {
  let parsed: { doc: Document; lineCounter: LineCounter } | undefined;
  return {
    file,
    get doc() {
      return (parsed ??= parseText(text)).doc;
    },
    get lineCounter() {
      return (parsed ??= parseText(text)).lineCounter;
    },
    data,
    ok: true,
    lineOffset,
  };
}

/**
 * Parses `text` as the contents of `file` (see {@link readYamlSource}); `readable` false (or
 * `options.readable` false) marks a file that could not be read. Syntax errors, duplicate
 * keys, nesting past {@link MAX_YAML_DEPTH}, maps as keys and explicit tags outside the core
 * schema ({@link tagMessage}) go into `bag` as errors, other YAML warnings as warnings. A
 * readable text that parsed before with no diagnostic at all is answered from the parse cache
 * (`options.cache`, src/config/yaml-cache.ts) without running the parser. Never throws for bad
 * input.
 */
export function parseYaml(file: string, text: string, bag: DiagnosticBag, readable: boolean | ParseYamlOptions = true): YamlSource {
  const options: ParseYamlOptions = typeof readable === 'boolean' ? { readable } : readable;
  const lineOffset = options.lineOffset ?? 0;
  const label = options.label ?? '';
  const cache = options.cache ?? processYamlCache;
  const key = options.readable !== false && yamlCacheEnabled() ? yamlCacheKey(text) : undefined;
  if (key !== undefined) {
    const hit = cache.get(key);
    if (hit) return cachedSource(file, text, hit.data, lineOffset);
  }
  let doc: Document;
  let lineCounter: LineCounter;
  try {
    ({ doc, lineCounter } = parseText(text));
  } catch (e) {
    if (!isStackOverflow(e)) throw e;
    bag.error(file, 1 + lineOffset, 1, '', `YAML error${label}: ${yamlDepthMessage()}`);
    return { file, doc: parseDocument(''), lineCounter: new LineCounterClass(), data: undefined, ok: false, lineOffset };
  }
  const pos = (offset: number) => {
    const p = lineCounter.linePos(offset);
    return { line: p.line + lineOffset, col: p.col };
  };
  // Past this depth the recursive walks below (and the schema check after) would overflow the stack.
  const structure = structureProblem(doc);
  if (structure) {
    const { line, col } = pos(structure.offset);
    bag.error(file, line, col, '', `YAML error${label}: ${structure.message}`);
    return { file, doc, lineCounter, data: undefined, ok: false, lineOffset };
  }
  for (const err of doc.errors) {
    // An unclosed quote is noticed at the end of the file; point at where the string starts.
    const start = err.code === 'MISSING_CHAR' && /quote/.test(err.message) ? unclosedQuoteStart(doc, err.pos[0]) : undefined;
    const { line, col } = pos(start ?? err.pos[0]);
    const tail = start !== undefined ? ': the string that starts here is never closed' : '';
    bag.error(file, line, col, '', `YAML syntax error${label}: ${yamlMessage(err.message, err.code)}${tail}`);
  }
  const dups = duplicateKeys(doc);
  for (const d of dups.found) {
    const { line, col } = pos(d.offset);
    bag.error(file, line, col, '', `YAML syntax error${label}: ${duplicateKeyMessage(d, lineCounter, lineOffset)}`);
  }
  if (dups.more > 0) {
    const { line, col } = pos(dups.found[dups.found.length - 1]!.offset);
    bag.error(file, line, col, '', `YAML syntax error${label}: … and ${dups.more.toLocaleString('en-US')} more keys written twice in the same map (not listed)`);
  }
  // An explicit tag the core schema does not resolve: `yaml` warns (at the tag) and falls back
  // to the untagged value, which would then be checked as if the tag were not there.
  let tagErrors = 0;
  for (const w of doc.warnings) {
    const { line, col } = pos(w.pos[0]);
    if (w.code === 'TAG_RESOLVE_FAILED') {
      tagErrors++;
      const tag = /^Unresolved tag: (\S+)/.exec(w.message)?.[1] ?? '?';
      bag.error(file, line, col, '', tagMessage(tag, label ? label.trim() : 'here'));
    } else bag.warn(file, line, col, '', `YAML: ${yamlMessage(w.message, w.code)}`);
  }
  let data: unknown;
  let ok = options.readable !== false && doc.errors.length === 0 && dups.found.length === 0 && tagErrors === 0;
  try {
    data = doc.toJS({ maxAliasCount: 1000 }) ?? undefined;
  } catch (e) {
    bag.error(file, 1 + lineOffset, 1, '', `YAML error${label}: ${(e as Error).message}`);
    ok = false;
  }
  // Only a text with no diagnostic at all: a cached answer reports nothing.
  if (key !== undefined && ok && doc.warnings.length === 0) cache.put(key, data);
  return { file, doc, lineCounter, data, ok, lineOffset };
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
      const pair = pairIndex(node).get(String(seg));
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
  const shift = src.lineOffset ?? 0;
  if (offset === undefined) return { line: 1 + shift, col: 1 };
  const p = src.lineCounter.linePos(offset);
  return { line: p.line + shift, col: p.col };
}

const pairIndexes = new WeakMap<YAMLMap, Map<string, Pair>>();

/** The pairs of `map` by key (the first of a repeated key), built once per map: a lookup per diagnostic stays O(1) in a map of 400k keys. */
function pairIndex(map: YAMLMap): Map<string, Pair> {
  let index = pairIndexes.get(map);
  if (index) return index;
  index = new Map();
  for (const p of map.items) {
    if (!isPair(p) || !isScalar(p.key)) continue;
    const k = String(p.key.value);
    if (!index.has(k)) index.set(k, p);
  }
  pairIndexes.set(map, index);
  return index;
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
    // Past the file's maximum the diagnostic is only counted: no need to locate it.
    const { line, col } = this.bag.accepts(this.src.file, 'error') ? this.position(at) : { line: 0, col: 0 };
    this.bag.error(this.src.file, line, col, this.path, message);
  }

  /** Reports a warning at this field's value (`at: 'key'` for its key). */
  warn(message: string, at: 'key' | 'value' = 'value'): void {
    const { line, col } = this.bag.accepts(this.src.file, 'warning') ? this.position(at) : { line: 0, col: 0 };
    this.bag.warn(this.src.file, line, col, this.path, message);
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
