/**
 * Every JSON Schema skill-up validates user files against (`schemas/*.schema.json` at the
 * package root: eval.yaml, case files, the scripted model's rule file, SKILL.md frontmatter),
 * compiled once with one ajv instance (draft 2020-12), and a small walker that answers "what
 * does the schema allow at this path?" for error messages (src/config/schema-errors.ts).
 *
 * Compiling these schemas costs 100–250 ms, on every run. `npm run build` therefore writes
 * them as ajv standalone code (https://ajv.js.org/standalone.html, scripts/build-validators.mjs
 * → {@link GENERATED_VALIDATORS}, beside this module in dist/) with a fingerprint of the
 * schemas, ajv's version and the options; that file is used only while its fingerprint is the
 * current one, else (and always under vitest, which runs src/) the schemas are compiled here.
 * ajv itself is loaded on first use only (`createRequire`: it is CommonJS), never at import.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInThisContext } from 'node:vm';
import type Ajv2020Module from 'ajv/dist/2020.js';
import type { ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { packageRoot } from '../util/package-root.js';
import type { Segment } from './yaml-source.js';

export const EVAL_SCHEMA_ID = 'https://skill-up.dev/schemas/eval.schema.json';
export const CASE_SCHEMA_ID = 'https://skill-up.dev/schemas/case.schema.json';
export const MODEL_SCRIPT_SCHEMA_ID = 'https://skill-up.dev/schemas/model-script.schema.json';
export const SKILL_FRONTMATTER_SCHEMA_ID = 'https://skill-up.dev/schemas/skill-frontmatter.schema.json';

/** The schemas user files are checked against, by the name diagnostics code passes around. */
export const SCHEMAS = {
  eval: { file: 'eval.schema.json', id: EVAL_SCHEMA_ID },
  case: { file: 'case.schema.json', id: CASE_SCHEMA_ID },
  'model-script': { file: 'model-script.schema.json', id: MODEL_SCRIPT_SCHEMA_ID },
  'skill-frontmatter': { file: 'skill-frontmatter.schema.json', id: SKILL_FRONTMATTER_SCHEMA_ID },
} as const;

/** Which schema: `eval` (eval.yaml), `case` (a case file), `model-script`, `skill-frontmatter`. */
export type SchemaKind = keyof typeof SCHEMAS;

/** A JSON Schema object (loosely typed: we only read it). */
export type Schema = Record<string, unknown>;

const require = createRequire(import.meta.url);

/**
 * The file the build writes the standalone validators to: beside this module, so dist/ has it
 * and src/ (vitest) does not. CommonJS, as ajv's standalone code `require`s its runtime helpers.
 */
export const GENERATED_VALIDATORS = fileURLToPath(new URL('./validators.generated.cjs', import.meta.url));

/**
 * The generated module, when this module runs from the executable's bundle: scripts/bundle.mjs
 * replaces this line by a `require` of it, which esbuild bundles. Undefined elsewhere.
 */
const bundledValidators: (() => Record<string, unknown>) | undefined = undefined;

/** Bump when the generated file's layout changes: an older file's fingerprint no longer matches. */
const GENERATOR_VERSION = 1;

/** The options of the user-file schemas' ajv: part of the fingerprint, so a change here refuses an older generated file. */
const AJV_OPTIONS = {
  allErrors: true,
  verbose: true,
  strictSchema: true,
  strictTypes: false,
  strictRequired: false,
  allowUnionTypes: true,
} as const satisfies Options;

/** Annotation keywords the schemas carry (no validation of their own). */
const KEYWORDS = [
  'x-expected',
  // `x-messages: {<keyword>: message}`: a schema's own wording of one keyword's failure (src/config/schema-errors.ts).
  'x-messages',
] as const;

let texts: Map<SchemaKind, string> | undefined;
let docs: Map<string, Schema> | undefined;
let validators: Map<SchemaKind, ValidateFunction> | undefined;

/** Absolute path of `schemas/<name>` in the installed package. */
export function schemaPath(name: (typeof SCHEMAS)[SchemaKind]['file'] | 'result.schema.json' | 'events.schema.json'): string {
  return path.join(packageRoot(), 'schemas', name);
}

/** The ajv 2020 class. ajv ships CommonJS: under NodeNext the class may sit on `.default`. */
type AjvInstance = InstanceType<typeof Ajv2020Module.default>;

/**
 * A new ajv (draft 2020-12) with `options`: the one place that works around ajv's CommonJS
 * default export, and that loads ajv (on the first call). Also used for result.json (src/report/load.ts).
 */
export function createAjv(options: Options): AjvInstance {
  const mod = require('ajv/dist/2020.js') as { default?: unknown };
  const Ajv = (mod.default ?? mod) as new (opts: Options) => AjvInstance;
  return new Ajv(options);
}

/** The text of each schema file, read once. */
function schemaTexts(): Map<SchemaKind, string> {
  if (texts) return texts;
  texts = new Map((Object.entries(SCHEMAS) as [SchemaKind, (typeof SCHEMAS)[SchemaKind]][]).map(([kind, { file }]) => [kind, readFileSync(schemaPath(file), 'utf8')]));
  return texts;
}

/** The schema documents by `$id`. */
function schemaDocs(): Map<string, Schema> {
  if (docs) return docs;
  docs = new Map([...schemaTexts()].map(([kind, text]) => [SCHEMAS[kind].id, JSON.parse(text) as Schema]));
  return docs;
}

/**
 * What the generated validators must have been built from: a sha256 (hex) over the generator's
 * version, ajv's version, the options, the keywords and every schema file's text.
 */
export function schemasFingerprint(): string {
  const ajvVersion = (JSON.parse(readFileSync(require.resolve('ajv/package.json'), 'utf8')) as { version: string }).version;
  const h = createHash('sha256').update(JSON.stringify({ generator: GENERATOR_VERSION, ajv: ajvVersion, options: AJV_OPTIONS, keywords: KEYWORDS }));
  for (const [kind, text] of schemaTexts()) h.update(`\0${kind}\0${text}`);
  return h.digest('hex');
}

/** The user-file schemas compiled at run time (the slow path: ajv's code generator). */
export function compileValidators(): Map<SchemaKind, ValidateFunction> {
  return compileWith(AJV_OPTIONS).validators;
}

function compileWith(options: Options): { ajv: AjvInstance; validators: Map<SchemaKind, ValidateFunction> } {
  const ajv = createAjv(options);
  for (const k of KEYWORDS) ajv.addKeyword(k);
  for (const schema of schemaDocs().values()) ajv.addSchema(structuredClone(schema));
  const out = new Map<SchemaKind, ValidateFunction>();
  for (const [kind, { id }] of Object.entries(SCHEMAS) as [SchemaKind, (typeof SCHEMAS)[SchemaKind]][]) out.set(kind, ajv.getSchema(id)!);
  return { ajv, validators: out };
}

/**
 * The source of {@link GENERATED_VALIDATORS}: ajv standalone code (CommonJS) exporting one
 * validator per {@link SchemaKind}, and `fingerprint` ({@link schemasFingerprint}). Written by
 * scripts/build-validators.mjs; deterministic for the same schemas, ajv and options.
 */
export function standaloneValidatorsCode(): string {
  const { ajv } = compileWith({ ...AJV_OPTIONS, code: { source: true } });
  const standalone = require('ajv/dist/standalone/index.js') as { default: (ajv: AjvInstance, refs: Record<string, string>) => string };
  const refs = Object.fromEntries(Object.entries(SCHEMAS).map(([kind, { id }]) => [kind, id]));
  return `// Generated by scripts/build-validators.mjs from schemas/*.schema.json (ajv standalone code): do not edit.\n${standalone.default(ajv, refs)}\nexports.fingerprint = ${JSON.stringify(schemasFingerprint())};\n`;
}

/**
 * The validators of a generated file (`file`, default {@link GENERATED_VALIDATORS}), or
 * undefined when there is none, it cannot be read or run, or its fingerprint is not the
 * current schemas' (a stale file is never used).
 */
export function loadGeneratedValidators(file: string = GENERATED_VALIDATORS): Map<SchemaKind, ValidateFunction> | undefined {
  // Inside the executable's bundle the generated module is bundled too (scripts/bundle.mjs), so
  // the bundle's code cache covers it: about 6 ms less than compiling its text at each start.
  if (file === GENERATED_VALIDATORS && bundledValidators) {
    const mod = bundledValidators();
    if (mod.fingerprint === schemasFingerprint()) return validatorsFromExports(mod);
  }
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  // Checked before the code runs: a stale file is not even compiled.
  if (/^exports\.fingerprint = "([0-9a-f]{64})";$/m.exec(code)?.[1] !== schemasFingerprint()) return undefined;
  try {
    return validatorsFromCode(code, file);
  } catch {
    return undefined;
  }
}

/**
 * Runs standalone validator code (as {@link standaloneValidatorsCode} writes it) as a CommonJS
 * module whose `require` resolves from this module (ajv's runtime helpers are skill-up's
 * dependency wherever the code sits). @throws Error when a validator is missing or the code fails
 */
export function validatorsFromCode(code: string, filename = GENERATED_VALIDATORS): Map<SchemaKind, ValidateFunction> {
  const module = { exports: {} as Record<string, unknown> };
  const fn = runInThisContext(`(function (exports, require, module) {${code}\n})`, { filename }) as (e: unknown, r: NodeJS.Require, m: unknown) => void;
  fn(module.exports, require, module);
  return validatorsFromExports(module.exports);
}

/** The validators a generated module exports. @throws Error when one is missing */
function validatorsFromExports(exports: Record<string, unknown>): Map<SchemaKind, ValidateFunction> {
  const out = new Map<SchemaKind, ValidateFunction>();
  for (const kind of Object.keys(SCHEMAS) as SchemaKind[]) {
    const v = exports[kind];
    if (typeof v !== 'function') throw new Error(`generated validators: no validator for \`${kind}\``);
    out.set(kind, v as ValidateFunction);
  }
  return out;
}

function validatorsInForce(): Map<SchemaKind, ValidateFunction> {
  validators ??= loadGeneratedValidators() ?? compileValidators();
  return validators;
}

/** Validates `data` against the schema `kind`; returns ajv's raw errors (empty when valid). */
export function validateAgainst(kind: SchemaKind, data: unknown): ErrorObject[] {
  const validate = validatorsInForce().get(kind)!;
  return validate(data) ? [] : [...(validate.errors ?? [])];
}

/** The root schema document of `kind` with its `$id`. */
export function rootSchema(kind: SchemaKind): { schema: Schema; base: string } {
  const id = SCHEMAS[kind].id;
  return { schema: schemaDocs().get(id)!, base: id };
}

/**
 * The schema in force at an instance path, with `$ref`s followed and merged (the referring
 * schema's own keywords win, so a property's `x-expected` beats its target's). Undefined when
 * the path leaves the schema (e.g. inside an unknown key).
 */
export function schemaAt(kind: SchemaKind, segments: readonly Segment[]): Schema | undefined {
  const root = rootSchema(kind);
  let cur: { schema: Schema; base: string } | undefined = effective(root.schema, root.base);
  for (const seg of segments) {
    if (!cur) return undefined;
    const s: Schema = cur.schema;
    let next: unknown;
    if (typeof seg === 'number') next = s.items;
    else {
      const props = s.properties as Record<string, unknown> | undefined;
      next = props && Object.prototype.hasOwnProperty.call(props, seg) ? props[seg] : s.additionalProperties;
    }
    cur = isSchema(next) ? effective(next, cur.base) : undefined;
  }
  return cur?.schema;
}

/** `schema` with its `$ref` chain merged in (own keywords first) and the base URI it lives in. */
function effective(schema: Schema, base: string): { schema: Schema; base: string } {
  let merged: Schema = { ...schema };
  let ref = schema.$ref;
  let refBase = base;
  let guard = 0;
  while (typeof ref === 'string' && guard++ < 20) {
    const target = resolveRef(ref, refBase);
    if (!target) break;
    const { $ref: nextRef, ...rest } = target.schema;
    merged = { ...rest, ...merged };
    ref = nextRef;
    refBase = target.base;
  }
  delete merged.$ref;
  return { schema: merged, base: refBase };
}

function resolveRef(ref: string, base: string): { schema: Schema; base: string } | undefined {
  const url = new URL(ref, base);
  const docId = url.href.replace(/#.*$/, '');
  const doc = schemaDocs().get(docId);
  if (!doc) return undefined;
  let node: unknown = doc;
  const pointer = decodeURIComponent(url.hash.replace(/^#/, ''));
  for (const part of pointer.split('/').filter(Boolean)) {
    node = isSchema(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  }
  return isSchema(node) ? { schema: node, base: docId } : undefined;
}

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
