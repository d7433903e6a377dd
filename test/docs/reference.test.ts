/**
 * The reference pages docs/reference/*.md are generated from the user-file schemas
 * (src/docs/reference.ts): they must be current, every field of the schemas must be described,
 * every schema example must be valid where it stands, and the rows must read right.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAjv, schemaPath, type Schema } from '../../src/config/schema.js';
import { REFERENCE_PAGES, referenceSections, renderReferencePage, type ReferenceRow } from '../../src/docs/reference.js';

const repo = path.resolve(import.meta.dirname, '../..');
const docs = new Map<string, Schema>(REFERENCE_PAGES.map((p) => [p.schemaId, JSON.parse(readFileSync(schemaPath(p.schemaFile as 'eval.schema.json'), 'utf8')) as Schema]));

function isSchema(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every subschema of `doc` with its JSON pointer, and whether it is a property (a field). `if`/`then`/`else`/`not` hold conditions, not fields. */
function subschemas(node: Schema, pointer = '', isProperty = false, out: { pointer: string; schema: Schema; isProperty: boolean }[] = []) {
  out.push({ pointer, schema: node, isProperty });
  const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
  for (const kw of ['properties', 'patternProperties', '$defs'] as const) {
    const m = node[kw];
    if (isSchema(m)) for (const [k, v] of Object.entries(m)) if (isSchema(v)) subschemas(v, `${pointer}/${kw}/${esc(k)}`, kw !== '$defs', out);
  }
  for (const kw of ['items', 'additionalProperties'] as const) if (isSchema(node[kw])) subschemas(node[kw], `${pointer}/${kw}`, false, out);
  for (const kw of ['oneOf', 'anyOf', 'allOf'] as const) {
    const list = node[kw];
    if (Array.isArray(list)) list.forEach((v, i) => isSchema(v) && subschemas(v, `${pointer}/${kw}/${i}`, false, out));
  }
  return out;
}

/** The node a `$ref` points at (the schemas' refs are `#/…` or `<file>#/…`). */
function target(ref: string, docId: string): Schema | undefined {
  const url = new URL(ref, docId);
  let node: unknown = docs.get(url.href.replace(/#.*$/, ''));
  for (const part of url.hash.replace(/^#/, '').split('/').filter(Boolean)) node = isSchema(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isSchema(node) ? node : undefined;
}

function rowsOf(kind: (typeof REFERENCE_PAGES)[number]['kind']): ReferenceRow[] {
  return referenceSections(kind, docs).flatMap((s) => s.rows);
}

describe('docs/reference', () => {
  it.each(REFERENCE_PAGES.map((p) => [p.output, p] as const))('%s is current', (_, page) => {
    const want = renderReferencePage(page.kind, docs);
    let have = '';
    try {
      have = readFileSync(path.join(repo, page.output), 'utf8');
    } catch {
      // missing: reported below
    }
    if (have !== want) expect.fail(`${page.output} is not what schemas/${page.schemaFile} generates: run \`npm run docs:reference\` and commit the result`);
  });

  it.each(REFERENCE_PAGES.map((p) => [p.schemaFile, p] as const))('every field of %s has a description', (_, page) => {
    const doc = docs.get(page.schemaId)!;
    const undescribed = subschemas(doc)
      .filter(({ schema, isProperty }) => {
        if (!isProperty) return false;
        // A description on the field, or on the definition it refers to.
        const described = (s: Schema | undefined): boolean => typeof s?.description === 'string' ? s.description.trim() !== '' : typeof s?.$ref === 'string' && described(target(s.$ref, page.schemaId));
        return !described(schema);
      })
      .map(({ pointer }) => pointer);
    expect(undescribed).toEqual([]);
  });

  it('a field without a description is found', () => {
    // The check above must not pass vacuously: a schema with an undescribed field fails it.
    const found = subschemas({ type: 'object', properties: { a: { type: 'string' }, b: { description: 'x' } } }).filter((s) => s.isProperty && !s.schema.description);
    expect(found.map((s) => s.pointer)).toEqual(['/properties/a']);
  });

  it('every example is valid against its own field', () => {
    const ajv = createAjv({ strict: true, allowUnionTypes: true, strictTypes: false, strictRequired: false });
    ajv.addKeyword('x-expected');
    ajv.addKeyword('x-messages');
    for (const doc of docs.values()) ajv.addSchema(structuredClone(doc));
    const bad: string[] = [];
    let checked = 0;
    for (const page of REFERENCE_PAGES) {
      for (const { pointer, schema } of subschemas(docs.get(page.schemaId)!)) {
        if (!Array.isArray(schema.examples)) continue;
        const validate = ajv.getSchema(`${page.schemaId}#${pointer}`)!;
        schema.examples.forEach((ex, i) => {
          checked++;
          if (!validate(ex)) bad.push(`${page.schemaFile}#${pointer} examples[${i}]: ${ajv.errorsText(validate.errors)}`);
        });
      }
    }
    expect(bad).toEqual([]);
    // The three schemas carry examples on every top-level field but the unsupported ones, and the rule kinds.
    expect(checked).toBeGreaterThan(60);
  });

  it('every top-level field but the unsupported ones has an example', () => {
    const missing = REFERENCE_PAGES.flatMap((p) => {
      const props = docs.get(p.schemaId)!.properties as Record<string, Schema>;
      return Object.entries(props)
        .filter(([k, s]) => !['mcp', 'user_simulator'].includes(k) && !Array.isArray(s.examples))
        .map(([k]) => `${p.schemaFile} ${k}`);
    });
    expect(missing).toEqual([]);
  });

  it('renders nested paths, enums, defaults and requirements', () => {
    const evalRows = new Map(rowsOf('eval').map((r) => [r.path, r]));
    const provider = evalRows.get('engines[].model.provider');
    expect(provider?.type).toBe('string; non-empty');
    expect(provider?.required).toBe('optional');
    const type = evalRows.get('environment.type')!;
    expect(type.type).toBe('one of `none`, `local`, `docker`');
    expect(type.default).toBe('none');
    expect(evalRows.get('cases.defaults.timeout_seconds')?.default).toBe(300);
    expect(evalRows.get('report.formats')?.default).toEqual(['json', 'junit', 'html']);
    expect(evalRows.get('environment.env.<name>')?.type).toBe('string or number or boolean');
    // A map definition of the case schema is linked, not repeated.
    expect(evalRows.get('cases.defaults.expect')?.description).toContain('(case-yaml.md#expect)');
    expect([...evalRows.keys()].some((p) => p.startsWith('cases.defaults.expect.'))).toBe(false);

    const caseRows = new Map(rowsOf('case').map((r) => [r.path, r]));
    expect(caseRows.get('expect.files_exist[]')?.type).toBe('string; non-empty');
    expect(caseRows.get('judge.script_path')?.required).toBe('required when `type: script`');
    expect(caseRows.get('input')?.examples).toHaveLength(2);

    const page = renderReferencePage('eval', docs);
    expect(page.split('\n')[0]).toBe('_Generated from [`schemas/eval.schema.json`](../../schemas/eval.schema.json) by `npm run docs:reference`; do not edit by hand._');
    expect(page).toContain('| <a id="environment.type"></a>`environment.type` | one of `none`, `local`, `docker` | optional | `none` |');
    expect(page).toContain('| `trials` | integer; 1 to 1000 | optional | `1` |');
    expect(page).toContain('- [`schema_version`](#schema_version) (required)');
    expect(page).toContain('```yaml\ntrials: 5\n```');
  });

  it('a recursive definition is documented once and linked', () => {
    const id = 'https://skill-up.dev/schemas/eval.schema.json';
    const tree: Schema = {
      $id: id,
      type: 'object',
      properties: { root: { $ref: '#/$defs/node' } },
      $defs: { node: { description: 'A node.', type: 'object', properties: { name: { type: 'string', description: 'Its name.' }, children: { type: 'array', description: 'Sub-nodes.', items: { $ref: '#/$defs/node' } } } } },
    };
    const rows = referenceSections('eval', new Map([...docs, [id, tree]])).flatMap((s) => s.rows);
    expect(rows.map((r) => r.path)).toEqual(['root', 'root.name', 'root.children', 'root.children[]']);
    expect(rows.at(-1)!.description).toContain('[`root`](#root)');
  });
});
