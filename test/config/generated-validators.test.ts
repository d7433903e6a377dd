/**
 * The build-time validators (ajv standalone code, scripts/build-validators.mjs) against the
 * schemas compiled at run time: the same verdict and the same raw errors on valid and invalid
 * documents, so src/config/schema-errors.ts words every problem as before; and a generated
 * file whose fingerprint is not the current schemas' is never used.
 */
import { readdirSync, readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { compileValidators, loadGeneratedValidators, SCHEMAS, schemasFingerprint, standaloneValidatorsCode, validatorsFromCode, type SchemaKind } from '../../src/config/schema.js';
import { packageRoot } from '../../src/util/package-root.js';

const root = packageRoot();

function* walk(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else yield p;
  }
}

/** The repository's own documents of each kind (examples and test fixtures, broken ones included). */
function corpus(): [SchemaKind, string, unknown][] {
  const out: [SchemaKind, string, unknown][] = [];
  for (const top of ['examples', 'test']) {
    for (const file of walk(path.join(root, top))) {
      const rel = path.relative(root, file);
      let kind: SchemaKind | undefined;
      let text: string | undefined;
      if (file.endsWith('SKILL.md')) {
        kind = 'skill-frontmatter';
        text = /^---\n([\s\S]*?)\n---/.exec(readFileSync(file, 'utf8'))?.[1];
      } else if (/\.ya?ml$/.test(file) && rel.includes(`evals${path.sep}`)) {
        text = readFileSync(file, 'utf8');
        const base = path.basename(file);
        kind = /^eval\.ya?ml$/.test(base) ? 'eval' : /model/.test(base) ? 'model-script' : rel.includes(`${path.sep}cases${path.sep}`) ? 'case' : undefined;
      }
      if (!kind || text === undefined) continue;
      try {
        out.push([kind, rel, parse(text, { logLevel: 'silent' })]);
      } catch {
        // Not YAML (a fixture of a syntax error): nothing to validate.
      }
    }
  }
  return out;
}

const WRONG: unknown[] = [7, 'text', [], [1, 'a'], null, true, {}, { unknown_key: 1 }, -1.5];

/** A document and its mutants: each top-level value swapped for values of other types, each key removed, an unknown key added. */
function* mutants(doc: unknown): Generator<unknown> {
  yield doc;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return;
  const rec = doc as Record<string, unknown>;
  yield { ...rec, no_such_field: 1 };
  for (const key of Object.keys(rec)) {
    const { [key]: _drop, ...rest } = rec;
    yield rest;
    for (const w of WRONG) yield { ...rec, [key]: w };
    const v = rec[key];
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      for (const inner of Object.keys(v)) for (const w of WRONG.slice(0, 4)) yield { ...rec, [key]: { ...v, [inner]: w } };
    }
  }
}

describe('generated validators (ajv standalone code)', () => {
  const runtime = compileValidators();
  const generated = validatorsFromCode(standaloneValidatorsCode());

  it('give the same verdict and the same errors as the runtime-compiled schemas', () => {
    const docs = corpus();
    // Every kind is covered by real files of the repository.
    expect(new Set(docs.map(([k]) => k))).toEqual(new Set(Object.keys(SCHEMAS)));
    let valid = 0;
    let invalid = 0;
    for (const [kind, rel, doc] of docs) {
      for (const m of mutants(doc)) {
        const a = runtime.get(kind)!;
        const b = generated.get(kind)!;
        const okA = a(m);
        const okB = b(m);
        expect(okB, `${rel} (${kind})`).toBe(okA);
        expect(b.errors ?? null, `${rel} (${kind})`).toEqual(a.errors ?? null);
        if (okA) valid++;
        else invalid++;
      }
    }
    // Both sides of the comparison are exercised in earnest.
    expect(valid).toBeGreaterThan(50);
    expect(invalid).toBeGreaterThan(1000);
  });

  it('are deterministic: generating twice gives the same code', () => {
    expect(standaloneValidatorsCode()).toBe(standaloneValidatorsCode());
  });

  it('are used only while the file carries the current schemas\' fingerprint', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'validators-'));
    const code = standaloneValidatorsCode();
    expect(code).toContain(`exports.fingerprint = "${schemasFingerprint()}";`);
    const current = path.join(dir, 'current.cjs');
    writeFileSync(current, code);
    const loaded = loadGeneratedValidators(current);
    expect(loaded && [...loaded.keys()]).toEqual(Object.keys(SCHEMAS));
    expect(loaded!.get('case')!({ input: { prompt: 'hi' } })).toBe(true);

    const stale = path.join(dir, 'stale.cjs');
    writeFileSync(stale, code.replace(schemasFingerprint(), '0'.repeat(64)));
    expect(loadGeneratedValidators(stale)).toBeUndefined();
    // A file without a fingerprint, a broken one and a missing one are ignored alike.
    writeFileSync(path.join(dir, 'none.cjs'), code.replace(/^exports\.fingerprint = .*$/m, ''));
    expect(loadGeneratedValidators(path.join(dir, 'none.cjs'))).toBeUndefined();
    writeFileSync(path.join(dir, 'broken.cjs'), `throw new Error('x');\nexports.fingerprint = "${schemasFingerprint()}";\n`);
    expect(loadGeneratedValidators(path.join(dir, 'broken.cjs'))).toBeUndefined();
    expect(loadGeneratedValidators(path.join(dir, 'missing.cjs'))).toBeUndefined();
  });
});
