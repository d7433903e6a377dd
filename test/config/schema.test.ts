/** The JSON Schemas themselves: draft 2020-12, closed objects, documented fields. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CASE_SCHEMA_ID, EVAL_SCHEMA_ID, schemaAt, schemaPath, validateAgainst } from '../../src/config/schema.js';
import { packageRoot } from '../../src/util/package-root.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const load = (name: 'eval.schema.json' | 'case.schema.json') => JSON.parse(readFileSync(schemaPath(name), 'utf8')) as Record<string, unknown>;

/** Objects that are free-form on purpose: ignored alibaba sections and tool-call arguments. */
const OPEN_ON_PURPOSE = new Set(['/properties/mcp', '/$defs/mcp', '/$defs/toolArgs']);

function* subschemas(node: unknown, at: string): Generator<[string, Record<string, unknown>]> {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return;
  const s = node as Record<string, unknown>;
  yield [at, s];
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' || k === '$defs') {
      for (const [name, child] of Object.entries(v as object)) yield* subschemas(child, `${at}/${k}/${name}`);
    } else if (k === 'items' || k === 'additionalProperties' || k === 'then' || k === 'if') {
      yield* subschemas(v, `${at}/${k}`);
    } else if (k === 'allOf') {
      for (const [i, child] of (v as unknown[]).entries()) yield* subschemas(child, `${at}/allOf/${i}`);
    }
  }
}

describe.each(['eval.schema.json', 'case.schema.json'] as const)('%s', (name) => {
  const schema = load(name);

  it('is draft 2020-12 with a skill-up.dev $id', () => {
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.$id).toBe(`https://skill-up.dev/schemas/${name}`);
  });

  it('closes every object (additionalProperties: false), so unknown keys are caught', () => {
    const open: string[] = [];
    for (const [at, s] of subschemas(schema, '')) {
      if (at.includes('/if')) continue;
      const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || 'properties' in s;
      if (!isObject || OPEN_ON_PURPOSE.has(at)) continue;
      // A map with arbitrary keys declares the schema of its values instead.
      if (typeof s.additionalProperties === 'object') continue;
      if (s.additionalProperties !== false) open.push(at);
    }
    expect(open).toEqual([]);
  });

  it('describes every field', () => {
    const defs = { ...(load('case.schema.json').$defs as object), ...(schema.$defs as object) } as Record<string, Record<string, unknown>>;
    const missing: string[] = [];
    for (const [at, s] of subschemas(schema, '')) {
      if (at.includes('/if') || !s.properties) continue;
      for (const [key, prop] of Object.entries(s.properties as Record<string, Record<string, unknown>>)) {
        const ref = typeof prop.$ref === 'string' ? defs[prop.$ref.split('/').pop()!] : undefined;
        if (typeof prop.description !== 'string' && typeof ref?.description !== 'string') missing.push(`${at}/properties/${key}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('uses no oneOf/anyOf (their error cascades cannot be explained in one message)', () => {
    expect(JSON.stringify(schema)).not.toMatch(/"(oneOf|anyOf)"/);
  });
});

describe('validation', () => {
  it('the valid fixture passes both schemas', () => {
    const dir = path.join(here, 'fixtures', 'valid', 'hello-skill', 'evals');
    expect(validateAgainst('eval', parse(readFileSync(path.join(dir, 'eval.yaml'), 'utf8')))).toEqual([]);
    for (const f of ['python.yaml', 'multi-turn.yaml']) {
      expect(validateAgainst('case', parse(readFileSync(path.join(dir, 'cases', f), 'utf8')))).toEqual([]);
    }
  });

  it('an alibaba-style eval.yaml with every documented field passes', () => {
    const doc = parse(`
schema_version: v1alpha1
environment: {type: none, image: node:22, workspace_mount: /workspace, env: {A: "1"}, setup_steps: [{run: "npm ci"}], sandbox_template: t, network_policy: deny_all, allowed_egress: [example.com]}
mcp: {servers: [{name: fs, mode: mocked, transport: stdio}]}
skills: [{source: local_path, path: ., include: [SKILL.md], exclude: ["*.tmp"], target: x}]
engine:
  name: agent
  version: 2.1.0
  model: {provider: anthropic, name: claude-sonnet-4-6, base_url: ""}
  kwargs: {bypass_sandbox: true}
  custom:
    transport: http
    conversation_mode: stateful
    response_format: session_result
    timeout_seconds: 300
    env: {MY_TOKEN: "\${MY_TOKEN}"}
    kwargs: {profile: production}
    local: {command: ./agent.sh, args: ["--input", "\${input_file}"], cwd: ., input_file: in.json, output_file: out.json}
    http: {url: "http://127.0.0.1:8080/run", method: POST, headers: {Authorization: "Bearer \${MY_TOKEN}"}, request_body: {}, files: []}
cases:
  files: [evals/cases/*.yaml]
  defaults: {timeout_seconds: 300, max_turns: 10, collect_artifacts: ["**/*.json"], expect: {must_contain: [x]}, trials: 1}
  parallelism: 1
  retry_policy: {max_retries: 1, retry_on: [timeout, error]}
judge: {type: agent_judge, model: anthropic/claude-sonnet-4-6, criteria: [a], pass_threshold: 0.7, timeout_seconds: 60, skills: [], context: {profile: minimal}}
benchmark: {enabled: true}
report: {formats: [json, junit, html, markdown, benchmark], artifacts: [transcript, logs]}
user_simulator: {provider: openai}
`);
    expect(validateAgainst('eval', doc)).toEqual([]);
  });

  it('offers only the runtimes that run: `none`, `local` and `docker`; `opensandbox` is not in the environment types', () => {
    const env = (type: string) => validateAgainst('eval', { schema_version: 'v1alpha1', environment: { type } });
    for (const ok of ['none', 'local', 'docker']) expect(env(ok)).toEqual([]);
    expect(env('opensandbox').map((e) => [e.instancePath, e.keyword])).toEqual([['/environment/type', 'enum']]);
    const type = (load('eval.schema.json').$defs as Record<string, { properties: Record<string, { description: string }> }>).environment!.properties.type!;
    expect(type.description).toMatch(/`docker`: the same workspace/);
    expect(type.description).toMatch(/`opensandbox` is not supported/);
  });

  it('the schemas are found from the package root', () => {
    expect(packageRoot()).toBe(path.resolve(here, '..', '..'));
    expect(EVAL_SCHEMA_ID).toBe(load('eval.schema.json').$id);
    expect(CASE_SCHEMA_ID).toBe(load('case.schema.json').$id);
  });

  it('schemaAt follows $refs across the two files and keeps the referring field’s hints', () => {
    expect(schemaAt('eval', ['cases', 'defaults', 'expect', 'must_contain'])).toMatchObject({ type: 'array' });
    expect(schemaAt('eval', ['cases', 'inline', 0, 'input'])).toMatchObject({ 'x-expected': 'a map with `prompt` or `turns`' });
    expect(schemaAt('case', ['judge', 'success', 0])).toMatchObject({ maxProperties: 1 });
    expect(schemaAt('case', ['nope', 'deeper'])).toBeUndefined();
  });
});
