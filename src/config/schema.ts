/**
 * The JSON Schemas of eval.yaml and case files (`schemas/*.schema.json` at the package root),
 * compiled once with ajv (draft 2020-12), and a small walker that answers "what does the
 * schema allow at this path?" for error messages.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020Module, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { packageRoot } from '../util/package-root.js';
import type { Segment } from './yaml-source.js';

export const EVAL_SCHEMA_ID = 'https://skill-up.dev/schemas/eval.schema.json';
export const CASE_SCHEMA_ID = 'https://skill-up.dev/schemas/case.schema.json';

/** A JSON Schema object (loosely typed: we only read it). */
export type Schema = Record<string, unknown>;

interface Compiled {
  validateEval: ValidateFunction;
  validateCase: ValidateFunction;
  docs: Map<string, Schema>;
}

let compiled: Compiled | undefined;

/** Absolute path of `schemas/<name>` in the installed package. */
export function schemaPath(name: 'eval.schema.json' | 'case.schema.json'): string {
  return path.join(packageRoot(), 'schemas', name);
}

function compile(): Compiled {
  if (compiled) return compiled;
  const evalSchema = JSON.parse(readFileSync(schemaPath('eval.schema.json'), 'utf8')) as Schema;
  const caseSchema = JSON.parse(readFileSync(schemaPath('case.schema.json'), 'utf8')) as Schema;
  const Ajv = (Ajv2020Module as unknown as { default?: typeof Ajv2020Module }).default ?? Ajv2020Module;
  const ajv = new (Ajv as unknown as new (opts: object) => import('ajv/dist/2020.js').default)({
    allErrors: true,
    verbose: true,
    strictSchema: true,
    strictTypes: false,
    strictRequired: false,
    allowUnionTypes: true,
  });
  ajv.addKeyword('x-expected');
  ajv.addSchema(caseSchema);
  ajv.addSchema(evalSchema);
  compiled = {
    validateEval: ajv.getSchema(EVAL_SCHEMA_ID)!,
    validateCase: ajv.getSchema(CASE_SCHEMA_ID)!,
    docs: new Map([
      [EVAL_SCHEMA_ID, evalSchema],
      [CASE_SCHEMA_ID, caseSchema],
    ]),
  };
  return compiled;
}

/** Validates `data` against the eval or case schema; returns ajv's raw errors (empty when valid). */
export function validateAgainst(kind: 'eval' | 'case', data: unknown): ErrorObject[] {
  const c = compile();
  const validate = kind === 'eval' ? c.validateEval : c.validateCase;
  return validate(data) ? [] : [...(validate.errors ?? [])];
}

/** The root schema document of `kind` with its `$id`. */
export function rootSchema(kind: 'eval' | 'case'): { schema: Schema; base: string } {
  const id = kind === 'eval' ? EVAL_SCHEMA_ID : CASE_SCHEMA_ID;
  return { schema: compile().docs.get(id)!, base: id };
}

/**
 * The schema in force at an instance path, with `$ref`s followed and merged (the referring
 * schema's own keywords win, so a property's `x-expected` beats its target's). Undefined when
 * the path leaves the schema (e.g. inside an unknown key).
 */
export function schemaAt(kind: 'eval' | 'case', segments: readonly Segment[]): Schema | undefined {
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
