/**
 * Every JSON Schema skill-up validates user files against (`schemas/*.schema.json` at the
 * package root: eval.yaml, case files, the scripted model's rule file, SKILL.md frontmatter),
 * compiled once with one ajv instance (draft 2020-12), and a small walker that answers "what
 * does the schema allow at this path?" for error messages (src/config/schema-errors.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020Module, { type ErrorObject, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
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

interface Compiled {
  validators: Map<SchemaKind, ValidateFunction>;
  docs: Map<string, Schema>;
}

let compiled: Compiled | undefined;

/** Absolute path of `schemas/<name>` in the installed package. */
export function schemaPath(name: (typeof SCHEMAS)[SchemaKind]['file'] | 'result.schema.json' | 'events.schema.json'): string {
  return path.join(packageRoot(), 'schemas', name);
}

/** The ajv 2020 class. ajv ships CommonJS: under NodeNext the class may sit on `.default`. */
type AjvInstance = InstanceType<typeof Ajv2020Module.default>;

/**
 * A new ajv (draft 2020-12) with `options`: the one place that works around ajv's CommonJS
 * default export. Also used for result.json (src/report/load.ts).
 */
export function createAjv(options: Options): AjvInstance {
  const Ajv = (Ajv2020Module as unknown as { default?: typeof Ajv2020Module }).default ?? Ajv2020Module;
  return new (Ajv as unknown as new (opts: Options) => AjvInstance)(options);
}

function compile(): Compiled {
  if (compiled) return compiled;
  const ajv = createAjv({
    allErrors: true,
    verbose: true,
    strictSchema: true,
    strictTypes: false,
    strictRequired: false,
    allowUnionTypes: true,
  });
  ajv.addKeyword('x-expected');
  // `x-messages: {<keyword>: message}`: a schema's own wording of one keyword's failure (src/config/schema-errors.ts).
  ajv.addKeyword('x-messages');
  const docs = new Map<string, Schema>();
  for (const { file, id } of Object.values(SCHEMAS)) {
    const schema = JSON.parse(readFileSync(schemaPath(file), 'utf8')) as Schema;
    ajv.addSchema(schema);
    docs.set(id, schema);
  }
  const validators = new Map<SchemaKind, ValidateFunction>();
  for (const [kind, { id }] of Object.entries(SCHEMAS) as [SchemaKind, (typeof SCHEMAS)[SchemaKind]][]) validators.set(kind, ajv.getSchema(id)!);
  compiled = { validators, docs };
  return compiled;
}

/** Validates `data` against the schema `kind`; returns ajv's raw errors (empty when valid). */
export function validateAgainst(kind: SchemaKind, data: unknown): ErrorObject[] {
  const validate = compile().validators.get(kind)!;
  return validate(data) ? [] : [...(validate.errors ?? [])];
}

/** The root schema document of `kind` with its `$id`. */
export function rootSchema(kind: SchemaKind): { schema: Schema; base: string } {
  const id = SCHEMAS[kind].id;
  return { schema: compile().docs.get(id)!, base: id };
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
  const doc = compile().docs.get(docId);
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
