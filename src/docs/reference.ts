/**
 * The reference pages of skill-up's user files (docs/reference/*.md), generated from their JSON
 * Schemas: every field at every depth with its dotted path, type, whether it is required, its
 * default, its description and the schema's examples. Pure: schema documents in, markdown out;
 * scripts/gen-reference.mjs writes the pages and test/docs/reference.test.ts checks they are current.
 *
 * Paths: `a.b` is key `b` of map `a`, `a[]` an item of list `a`, `a.<name>` any key of map `a`.
 * A `$ref` is expanded where it is used, except a `$ref` back into a definition being expanded
 * (a recursive schema: linked to where it is documented) and a `$ref` to a map or list
 * definition of another page's schema (linked to that page).
 */
import { stringify } from 'yaml';
import { CASE_SCHEMA_ID, EVAL_SCHEMA_ID, MODEL_SCRIPT_SCHEMA_ID, type Schema } from '../config/schema.js';

/** The user files with a reference page. */
export type ReferenceKind = 'eval' | 'case' | 'model-script';

/** One reference page: which schema it documents and where it is written. */
export interface ReferencePage {
  kind: ReferenceKind;
  /** The schema's file name under `schemas/`. */
  schemaFile: string;
  /** The schema's `$id`: the key of its document in the map given to {@link renderReferencePage}. */
  schemaId: string;
  /** The page, relative to the repository root. */
  output: string;
  title: string;
  /** Markdown paragraph after the title. */
  intro: string;
}

/** The three pages, in the order they link to each other. */
export const REFERENCE_PAGES: readonly ReferencePage[] = [
  {
    kind: 'eval',
    schemaFile: 'eval.schema.json',
    schemaId: EVAL_SCHEMA_ID,
    output: 'docs/reference/eval-yaml.md',
    title: 'eval.yaml reference',
    intro: 'Every field of a suite\'s `evals/eval.yaml`. `skill-up validate <skill>` checks a file against this schema; editors with YAML language support can use it too (`# yaml-language-server: $schema=…`). Case files are described in [case-yaml.md](case-yaml.md), the scripted model\'s rule file in [model-script.md](model-script.md).',
  },
  {
    kind: 'case',
    schemaFile: 'case.schema.json',
    schemaId: CASE_SCHEMA_ID,
    output: 'docs/reference/case-yaml.md',
    title: 'Case file reference',
    intro: 'Every field of a case file (`evals/cases/*.yaml`, listed by eval.yaml `cases.files`) and of an item of eval.yaml `cases.inline`. The suite\'s settings are described in [eval-yaml.md](eval-yaml.md).',
  },
  {
    kind: 'model-script',
    schemaFile: 'model-script.schema.json',
    schemaId: MODEL_SCRIPT_SCHEMA_ID,
    output: 'docs/reference/model-script.md',
    title: 'Scripted model rules reference',
    intro: 'Every field of the scripted model\'s rule file: the file eval.yaml `engine.model.script` (with `provider: scripted`) or `--model-script` names. The scripted model answers the engine\'s model requests from these rules, so a suite runs without a model API.',
  },
];

/** One documented field. */
export interface ReferenceRow {
  /** Dotted path, e.g. `engines[].model.provider`, `expect.files_exist[]`, `context.files.<name>`. */
  path: string;
  /** The row's HTML anchor on its page. */
  anchor: string;
  /** Markdown: the type (enums listed, constants quoted) and its constraints. */
  type: string;
  /** `required`, `optional`, `required when …`, or empty for list items and map values (required by nothing). */
  required: string;
  /** Whether the schema gives a `default`, and which. */
  hasDefault: boolean;
  default?: unknown;
  /** Markdown; the schema's `description` (else its `x-expected`), plus a link when documented elsewhere. */
  description: string;
  /** The schema's `examples` of this field, where the page shows them (the first place the schema appears). */
  examples: unknown[];
}

/** The rows under one top-level field of a page. */
export interface ReferenceSection {
  /** The top-level key. */
  key: string;
  /** Its row first, then every field below it. */
  rows: ReferenceRow[];
}

type Docs = ReadonlyMap<string, Schema>;
type Seg = string | { items: true } | { map: string };

interface Resolved {
  schema: Schema;
  /** The base URI each merged keyword was read in (a `$ref` inside it resolves against it). */
  bases: Record<string, string>;
  /** Definitions passed through, as absolute URIs (`<doc id>#<pointer>`), outermost first. */
  refs: string[];
}

interface Walk {
  docs: Docs;
  page: ReferencePage;
  /** Definition URI → path of the row that first expanded it on this page. */
  expandedAt: Map<string, string>;
  /** Definitions being expanded (the ancestors of the current row). */
  stack: string[];
  /** Example lists already shown: a definition's examples appear once per page. */
  shown: Set<unknown>;
  /** Whether links to other pages get their anchor (false while computing those anchors). */
  crossAnchors: boolean;
}

/**
 * The rows of the page `kind`, by top-level field in schema order.
 * @param docs the schema documents by `$id`: all three of {@link REFERENCE_PAGES} (they refer to each other)
 * @throws Error when a document is missing or a `$ref` cannot be resolved
 */
export function referenceSections(kind: ReferenceKind, docs: Docs): ReferenceSection[] {
  return walkPage(pageOf(kind), docs, true).sections;
}

/**
 * The markdown of the page `kind`: a generated-file notice, the title and intro, a table of
 * contents of the top-level fields, then per top-level field a table of its fields and its
 * examples as YAML. Deterministic for the same schemas.
 * @param docs the schema documents by `$id` (see {@link referenceSections})
 * @throws Error when a document is missing or a `$ref` cannot be resolved
 */
export function renderReferencePage(kind: ReferenceKind, docs: Docs): string {
  const page = pageOf(kind);
  const root = docOf(docs, page.schemaId);
  const { sections } = walkPage(page, docs, true);
  const required = new Set(Array.isArray(root.required) ? (root.required as string[]) : []);
  const out: string[] = [
    `_Generated from [\`schemas/${page.schemaFile}\`](../../schemas/${page.schemaFile}) by \`npm run docs:reference\`; do not edit by hand._`,
    '',
    `# ${page.title}`,
    '',
    page.intro,
  ];
  if (typeof root.description === 'string') out.push('', root.description);
  out.push(
    '',
    'Paths: `a.b` is the key `b` of the map `a`, `a[]` an item of the list `a`, `a.<name>` any key of the map `a`. A field without a default is unset when left out (its description says what that means).',
    '',
    '## Contents',
    '',
    ...sections.map((s) => `- [\`${s.key}\`](#${anchorOf(s.key)})${required.has(s.key) ? ' (required)' : ''}`),
  );
  for (const s of sections) {
    const [top, ...rest] = s.rows;
    out.push('', `## \`${s.key}\``, '');
    out.push('| Field | Type | Required | Default | Description |', '| --- | --- | --- | --- | --- |');
    out.push(tableRow(top!, false), ...rest.map((r) => tableRow(r, true)));
    const withExamples = s.rows.filter((r) => r.examples.length > 0);
    for (const r of withExamples) {
      out.push('', r === top ? `Example${r.examples.length > 1 ? 's' : ''}:` : `Example${r.examples.length > 1 ? 's' : ''} of \`${r.path}\`:`);
      for (const block of exampleBlocks(r)) out.push('', '```yaml', block, '```');
    }
  }
  return `${out.join('\n')}\n`;
}

function pageOf(kind: ReferenceKind): ReferencePage {
  const page = REFERENCE_PAGES.find((p) => p.kind === kind);
  if (!page) throw new Error(`no reference page for \`${String(kind)}\``);
  return page;
}

function docOf(docs: Docs, id: string): Schema {
  const doc = docs.get(id);
  if (!doc) throw new Error(`reference: no schema document ${id}`);
  return doc;
}

function walkPage(page: ReferencePage, docs: Docs, crossAnchors: boolean): { sections: ReferenceSection[]; expandedAt: Map<string, string> } {
  const root = docOf(docs, page.schemaId);
  const w: Walk = { docs, page, expandedAt: new Map(), stack: [`${page.schemaId}#`], shown: new Set(), crossAnchors };
  const sections: ReferenceSection[] = [];
  const props = isSchema(root.properties) ? root.properties : {};
  for (const [key, sub] of Object.entries(props)) {
    const rows: ReferenceRow[] = [];
    if (isSchema(sub)) visit(w, sub, page.schemaId, [key], requiredText(root, key), rows);
    sections.push({ key, rows });
  }
  return { sections, expandedAt: w.expandedAt };
}

function visit(w: Walk, raw: Schema, base: string, path: Seg[], required: string, rows: ReferenceRow[]): void {
  const r = resolve(w.docs, raw, base);
  const s = r.schema;
  const pathText = pathString(path);
  const row: ReferenceRow = {
    path: pathText,
    anchor: anchorOf(pathText),
    type: typeText(w.docs, r),
    required,
    hasDefault: Object.prototype.hasOwnProperty.call(s, 'default'),
    description: descriptionOf(s, path.at(-1)!),
    examples: [],
  };
  if (row.hasDefault) row.default = s.default;
  rows.push(row);
  if (Array.isArray(s.examples) && !w.shown.has(s.examples)) {
    w.shown.add(s.examples);
    row.examples = [...(s.examples as unknown[])];
  }

  // A definition inside its own expansion: documented once, linked here.
  const loop = r.refs.find((ref) => w.stack.includes(ref));
  if (loop !== undefined) {
    const at = w.expandedAt.get(loop);
    row.description = appendSentence(row.description, at !== undefined ? `Its fields are those of [\`${at}\`](#${anchorOf(at)}).` : 'Its fields are those of the whole file.');
    return;
  }
  // A map or list definition of another page's schema: documented there.
  const foreign = r.refs.find((ref) => !ref.startsWith(`${w.page.schemaId}#`));
  if (foreign !== undefined && isStructured(w.docs, r)) {
    row.description = appendSentence(row.description, crossLink(w, foreign));
    return;
  }
  for (const ref of r.refs) if (!w.expandedAt.has(ref)) w.expandedAt.set(ref, pathText);
  w.stack.push(...r.refs);
  visitChildren(w, r, path, rows);
  w.stack.length -= r.refs.length;
}

function visitChildren(w: Walk, r: Resolved, path: Seg[], rows: ReferenceRow[]): void {
  const s = r.schema;
  if (isSchema(s.properties)) {
    for (const [key, sub] of Object.entries(s.properties)) if (isSchema(sub)) visit(w, sub, r.bases.properties!, [...path, key], requiredText(s, key), rows);
  }
  if (isSchema(s.patternProperties)) {
    for (const [re, sub] of Object.entries(s.patternProperties)) if (isSchema(sub)) visit(w, sub, r.bases.patternProperties!, [...path, { map: `key matching /${re}/` }], '', rows);
  }
  if (isSchema(s.additionalProperties)) visit(w, s.additionalProperties, r.bases.additionalProperties!, [...path, { map: 'name' }], '', rows);
  if (isSchema(s.items)) visit(w, s.items, r.bases.items!, [...path, { items: true }], '', rows);
  // Alternatives: their fields are documented at this same path.
  for (const kw of ['oneOf', 'anyOf'] as const) {
    const alts = s[kw];
    if (!Array.isArray(alts)) continue;
    for (const alt of alts) {
      if (!isSchema(alt)) continue;
      const ar = resolve(w.docs, alt, r.bases[kw]!);
      if (ar.refs.some((ref) => w.stack.includes(ref))) continue;
      w.stack.push(...ar.refs);
      visitChildren(w, ar, path, rows);
      w.stack.length -= ar.refs.length;
    }
  }
}

/** "Documented in [case files: `judge`](case-yaml.md#judge)." for a definition of another page. */
function crossLink(w: Walk, ref: string): string {
  const docId = ref.replace(/#.*$/, '');
  const other = REFERENCE_PAGES.find((p) => p.schemaId === docId);
  if (!other) return '';
  const file = other.output.replace(/^.*\//, '');
  if (ref === `${docId}#`) return `Its fields are those of a whole ${other.kind === 'case' ? 'case file' : other.schemaFile}: see [${file}](${file}).`;
  const at = w.crossAnchors ? walkPage(other, w.docs, false).expandedAt.get(ref) : undefined;
  return at !== undefined ? `Its fields are documented in [${file}: \`${at}\`](${file}#${anchorOf(at)}).` : `Its fields are documented in [${file}](${file}).`;
}

/** `schema` with its `$ref` chain merged in (own keywords win), as src/config/schema.ts merges it. */
function resolve(docs: Docs, schema: Schema, base: string): Resolved {
  const merged: Schema = {};
  const bases: Record<string, string> = {};
  const refs: string[] = [];
  let cur: Schema = schema;
  let curBase = base;
  for (let guard = 0; guard < 50; guard++) {
    for (const [k, v] of Object.entries(cur)) {
      if (k === '$ref' || k in merged) continue;
      merged[k] = v;
      bases[k] = curBase;
    }
    if (typeof cur.$ref !== 'string') break;
    const url = new URL(cur.$ref, curBase);
    const docId = url.href.replace(/#.*$/, '');
    const pointer = decodeURIComponent(url.hash.replace(/^#/, ''));
    let node: unknown = docOf(docs, docId);
    for (const part of pointer.split('/').filter(Boolean)) node = isSchema(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    if (!isSchema(node)) throw new Error(`reference: cannot resolve $ref ${cur.$ref} from ${curBase}`);
    const key = `${docId}#${pointer}`;
    if (refs.includes(key)) break;
    refs.push(key);
    cur = node;
    curBase = docId;
  }
  return { schema: merged, bases, refs };
}

/** A schema with fields of its own (a map with properties, or a list or map of such). */
function isStructured(docs: Docs, r: Resolved): boolean {
  const s = r.schema;
  if (isSchema(s.properties) && Object.keys(s.properties).length > 0) return true;
  for (const kw of ['items', 'additionalProperties'] as const) {
    const sub = s[kw];
    if (isSchema(sub) && isStructured(docs, resolve(docs, sub, r.bases[kw]!))) return true;
  }
  return false;
}

function typeText(docs: Docs, r: Resolved): string {
  const base = baseType(docs, r, 0);
  const c = constraints(r.schema);
  return c.length > 0 ? `${base}; ${c.join(', ')}` : base;
}

function baseType(docs: Docs, r: Resolved, depth: number): string {
  const s = r.schema;
  if (Object.prototype.hasOwnProperty.call(s, 'const')) return `\`${inline(s.const)}\``;
  if (Array.isArray(s.enum)) return `one of ${s.enum.map((v) => `\`${inline(v)}\``).join(', ')}`;
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  const parts = types.map((t) => {
    if (t === 'array') return isSchema(s.items) && depth < 2 ? `list of ${baseType(docs, resolve(docs, s.items, r.bases.items!), depth + 1)}` : 'list';
    if (t === 'object') return isSchema(s.additionalProperties) && depth < 2 ? `map of ${baseType(docs, resolve(docs, s.additionalProperties, r.bases.additionalProperties!), depth + 1)}` : 'map';
    return t;
  });
  for (const kw of ['oneOf', 'anyOf'] as const) {
    const alts = s[kw];
    if (Array.isArray(alts) && depth < 2) parts.push(...alts.filter(isSchema).map((a) => baseType(docs, resolve(docs, a, r.bases[kw]!), depth + 1)));
  }
  if (parts.length > 0) return parts.join(' or ');
  if (isSchema(s.properties)) return 'map';
  const name = r.refs.at(-1)?.replace(/^.*\//, '');
  return name ? `\`${name}\`` : 'any';
}

function constraints(s: Schema): string[] {
  const out: string[] = [];
  const num = (k: string) => (typeof s[k] === 'number' ? s[k] : undefined);
  const [min, max, xmin, xmax] = [num('minimum'), num('maximum'), num('exclusiveMinimum'), num('exclusiveMaximum')];
  if (min !== undefined && max !== undefined) out.push(`${min} to ${max}`);
  else if (min !== undefined) out.push(`at least ${min}`);
  else if (max !== undefined) out.push(`at most ${max}`);
  if (xmin !== undefined) out.push(`above ${xmin}`);
  if (xmax !== undefined) out.push(`below ${xmax}`);
  const minLength = num('minLength');
  if (minLength === 1) out.push('non-empty');
  else if (minLength !== undefined && minLength > 1) out.push(`at least ${minLength} characters`);
  const minItems = num('minItems');
  const maxItems = num('maxItems');
  if (minItems !== undefined && minItems > 0) out.push(`at least ${minItems} item${minItems === 1 ? '' : 's'}`);
  if (maxItems !== undefined) out.push(`at most ${maxItems} item${maxItems === 1 ? '' : 's'}`);
  if (s.uniqueItems === true) out.push('no duplicates');
  const minP = num('minProperties');
  const maxP = num('maxProperties');
  if (minP !== undefined && minP === maxP) out.push(`exactly ${minP} key${minP === 1 ? '' : 's'}`);
  else {
    if (minP !== undefined && minP > 0) out.push(`at least ${minP} key${minP === 1 ? '' : 's'}`);
    if (maxP !== undefined) out.push(`at most ${maxP} key${maxP === 1 ? '' : 's'}`);
  }
  if (typeof s.pattern === 'string') out.push(`matching \`${s.pattern}\``);
  return out;
}

/** `required`/`optional` of `key` in the map `parent`, or `required when \`type: script\`` from an `if`/`then`. */
function requiredText(parent: Schema, key: string): string {
  if (Array.isArray(parent.required) && parent.required.includes(key)) return 'required';
  const when: string[] = [];
  for (const sub of Array.isArray(parent.allOf) ? parent.allOf : []) {
    if (!isSchema(sub) || !isSchema(sub.if) || !isSchema(sub.then) || !Array.isArray(sub.then.required) || !sub.then.required.includes(key)) continue;
    const conds = isSchema(sub.if.properties) ? Object.entries(sub.if.properties) : [];
    const text = conds.map(([k, c]) => (isSchema(c) && Object.prototype.hasOwnProperty.call(c, 'const') ? `\`${k}: ${inline(c.const)}\`` : `\`${k}\` matches`)).join(' and ');
    if (text) when.push(text);
  }
  return when.length > 0 ? `required when ${when.join(' or ')}` : 'optional';
}

function tableRow(r: ReferenceRow, anchored: boolean): string {
  const field = `${anchored ? `<a id="${r.anchor}"></a>` : ''}\`${r.path}\``;
  const dflt = r.hasDefault ? `\`${inline(r.default)}\`` : '';
  return `| ${[field, r.type, r.required, dflt, r.description].map(cell).join(' | ')} |`;
}

function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

function pathString(path: Seg[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'string') out += out ? `.${seg}` : seg;
    else if ('items' in seg) out += '[]';
    else out += `.<${seg.map}>`;
  }
  return out;
}

/** A row's HTML anchor: its path with `[]` as `-items` and `<name>` as `-name-`; top-level keys are their heading's anchor. */
function anchorOf(path: string): string {
  return path
    .replace(/\[\]/g, '-items')
    .replace(/<([^>]*)>/g, '-$1-')
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .toLowerCase();
}

/** `value` in YAML flow style on one line, e.g. `[json, junit, html]`. */
function inline(value: unknown): string {
  return stringify(value, { collectionStyle: 'flow', lineWidth: 0 }).trim();
}

/**
 * The YAML blocks showing a row's examples in place: one per example, except that the examples
 * of a list item are shown as one list, and several scalar examples in one block (`# or`).
 */
function exampleBlocks(r: ReferenceRow): string[] {
  if (r.examples.length > 1 && r.path.endsWith('[]')) return [inPlace(r.path.slice(0, -2), r.examples).trimEnd()];
  if (r.examples.length > 1 && r.examples.every((e) => e === null || typeof e !== 'object')) return [r.examples.map((e) => inPlace(r.path, e).trimEnd()).join('\n# or\n')];
  return r.examples.map((e) => inPlace(r.path, e).trimEnd());
}

/** An example of the field at `path` as YAML, nested in its parents (`trials: 5`, `judge:\n  success:\n    - …`). */
function inPlace(path: string, value: unknown): string {
  const segs = path.match(/\[\]|<[^>]*>|[^.[\]<>]+/g) ?? [];
  let v: unknown = value;
  for (const seg of [...segs].reverse()) {
    if (seg === '[]') v = [v];
    else if (seg.startsWith('<')) v = { [seg.slice(1, -1)]: v };
    else v = { [seg]: v };
  }
  return stringify(v, { lineWidth: 0 });
}

/** The schema's `description`, else its `x-expected` as a sentence, else what a list item or map value is. */
function descriptionOf(s: Schema, last: Seg): string {
  if (typeof s.description === 'string') return s.description;
  if (typeof s['x-expected'] === 'string') return `${capitalise(s['x-expected'])}.`;
  if (typeof last === 'string') return '';
  return 'items' in last ? 'An item of the list.' : 'The value of each key.';
}

function appendSentence(text: string, sentence: string): string {
  if (!sentence) return text;
  return text ? `${text} ${sentence}` : sentence;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
