/**
 * The result schema's build-time validator (ajv standalone code, scripts/build-validators.mjs
 * → dist/src/report/result-validator.generated.cjs) against the schema compiled at run time:
 * the same verdict and the same raw errors on a rich document and its mutants (so
 * src/report/load.ts words every problem as before); a generated file whose fingerprint is not
 * the current one is never used; and the built CLI reading a result.json through the
 * generated code never loads ajv's compiler and prints the same messages as the compiled path.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  checkResultData,
  compileResultValidator,
  loadGeneratedResultValidator,
  ResultFileError,
  resultSchemaFingerprint,
  resultValidatorCode,
  resultValidatorFromCode,
} from '../../src/report/load.js';
import { runCli } from '../cli/helpers.js';
import { syntheticRun } from './fixtures/synthetic-run.js';

const GENERATED = fileURLToPath(new URL('../../dist/src/report/result-validator.generated.cjs', import.meta.url));
const REGISTER = fileURLToPath(new URL('../fixtures/load-recorder/register.mjs', import.meta.url));
const ESM_ENTRY = fileURLToPath(new URL('../../dist/src/cli/bin.js', import.meta.url));
/** ajv's schema compiler: what the generated code exists to avoid loading. */
const COMPILER = /\/node_modules\/ajv\/dist\/(core|ajv|2020)\.js$|\/node_modules\/ajv\/dist\/compile\//;

type Obj = Record<string, unknown>;
const WRONG: unknown[] = [7, 'text', [], null, true, {}, { unknown_key: 1 }, -1.5];

/** A valid document (every optional field the synthetic run sets), as plain JSON data. */
function validDoc(): Obj {
  return JSON.parse(JSON.stringify(syntheticRun({ cases: 3, trials: 2 }).doc)) as Obj;
}

/** `doc` and its mutants: at the top level, in the first job and its first assertion, each key dropped or given wrong values; bad date-times. */
function* mutants(doc: Obj): Generator<unknown> {
  yield doc;
  const at = (o: Obj, set: (copy: Obj) => void): Obj => {
    const copy = structuredClone(o);
    set(copy);
    return copy;
  };
  const jobs = () => (doc.jobs as Obj[]).map((j) => ({ ...j }));
  const variants = (get: (d: Obj) => Obj) => {
    const out: Obj[] = [];
    const target = get(doc);
    out.push(at(doc, (d) => (get(d).no_such_field = 1)));
    for (const key of Object.keys(target)) {
      out.push(at(doc, (d) => delete get(d)[key]));
      for (const w of WRONG) out.push(at(doc, (d) => (get(d)[key] = w)));
    }
    return out;
  };
  yield* variants((d) => d);
  yield* variants((d) => (d.jobs as Obj[])[0]!);
  const firstWithAssertions = (doc.jobs as Obj[]).findIndex((j) => Array.isArray(j.assertions) && j.assertions.length > 0);
  if (firstWithAssertions >= 0) yield* variants((d) => ((d.jobs as Obj[])[firstWithAssertions]!.assertions as Obj[])[0]!);
  // The date-time format, which the generated code takes from src/report/load.ts.
  for (const bad of ['2026-01-01', '2026-13-45T99:99:99Z', 'yesterday', '2026-01-01T00:00:00.000Z ']) {
    yield { ...doc, started_at: bad };
    yield { ...doc, jobs: jobs().map((j, i) => (i === 0 ? { ...j, started_at: bad } : j)) };
  }
  yield { ...doc, started_at: '2026-01-01T00:00:00+02:00' };
}

describe('the generated result.json validator (ajv standalone code)', () => {
  const compiled = compileResultValidator();
  const generated = resultValidatorFromCode(resultValidatorCode());

  it('gives the same verdict and the same errors as the schema compiled at run time', () => {
    let valid = 0;
    let invalid = 0;
    let i = 0;
    for (const m of mutants(validDoc())) {
      const okA = compiled(m);
      const okB = generated(m);
      expect(okB, `mutant ${i}`).toBe(okA);
      expect(generated.errors ?? null, `mutant ${i}`).toEqual(compiled.errors ?? null);
      if (okA) valid++;
      else invalid++;
      i++;
    }
    // Both sides of the comparison are exercised in earnest.
    expect(valid).toBeGreaterThan(5);
    expect(invalid).toBeGreaterThan(150);
  });

  it('is deterministic: generating twice gives the same code', () => {
    expect(resultValidatorCode()).toBe(resultValidatorCode());
  });

  it('is used only while the file carries the current fingerprint', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'result-validator-'));
    const code = resultValidatorCode();
    expect(code).toContain(`exports.fingerprint = "${resultSchemaFingerprint()}";`);
    const current = path.join(dir, 'current.cjs');
    writeFileSync(current, code);
    const loaded = loadGeneratedResultValidator(current);
    expect(typeof loaded).toBe('function');
    expect(loaded!(validDoc())).toBe(true);
    expect(loaded!({ ...validDoc(), started_at: 'yesterday' })).toBe(false);

    writeFileSync(path.join(dir, 'stale.cjs'), code.replace(resultSchemaFingerprint(), '0'.repeat(64)));
    expect(loadGeneratedResultValidator(path.join(dir, 'stale.cjs'))).toBeUndefined();
    // A file without a fingerprint, a broken one, one without the validator and a missing one are ignored alike.
    writeFileSync(path.join(dir, 'none.cjs'), code.replace(/^exports\.fingerprint = .*$/m, ''));
    expect(loadGeneratedResultValidator(path.join(dir, 'none.cjs'))).toBeUndefined();
    const fp = `exports.fingerprint = "${resultSchemaFingerprint()}";\n`;
    writeFileSync(path.join(dir, 'broken.cjs'), `throw new Error('x');\n${fp}`);
    expect(loadGeneratedResultValidator(path.join(dir, 'broken.cjs'))).toBeUndefined();
    writeFileSync(path.join(dir, 'empty.cjs'), fp);
    expect(loadGeneratedResultValidator(path.join(dir, 'empty.cjs'))).toBeUndefined();
    expect(loadGeneratedResultValidator(path.join(dir, 'missing.cjs'))).toBeUndefined();
  });
});

/** The message checkResultData gives `data` in this process, where src/ has no generated file: the compiled path. */
function compiledMessage(data: unknown, name: string): string {
  try {
    checkResultData(data, name);
  } catch (e) {
    expect(e).toBeInstanceOf(ResultFileError);
    return (e as Error).message;
  }
  throw new Error(`${name} was accepted`);
}

describe('skill-up report through the generated validator (built CLI)', () => {
  it('the build wrote it, with the current fingerprint', () => {
    expect(existsSync(GENERATED), `${GENERATED} is missing: run \`npm run build\``).toBe(true);
    expect(readFileSync(GENERATED, 'utf8')).toContain(`exports.fingerprint = "${resultSchemaFingerprint()}";`);
  });

  // The ES module entry shows each module separately; the executable runs from its bundle.
  for (const [label, bin] of [['ES module entry', ESM_ENTRY], ['the executable, from its bundle', undefined]] as const) {
    it(`reads a valid result.json without loading ajv's compiler, and words invalid ones as the compiled path does (${label})`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'su-report-gen-'));
      const file = path.join(dir, 'result.json');
      writeFileSync(file, JSON.stringify(validDoc()));
      const out = path.join(dir, 'loads.json');
      const ok = await runCli(['report', file, '--format', 'markdown'], { bin, env: { NODE_OPTIONS: `--import="${REGISTER}"`, SKILL_UP_LOADS_OUT: out } });
      // 0 or 1 as the synthetic run's gates decide; 2 would be a usage error (a refused file).
      expect([0, 1], ok.stderr).toContain(ok.code);
      expect(existsSync(path.join(dir, 'summary.md')), ok.stdout + ok.stderr).toBe(true);
      const rec = JSON.parse(readFileSync(out, 'utf8')) as { esm: string[]; cjs: string[] };
      const modules = [...rec.esm.map((u) => (u.startsWith('file://') ? fileURLToPath(u) : u)), ...rec.cjs];
      // The recorder works: the module that read result.json, or the bundle holding it, was seen.
      expect(modules.some((m) => m.endsWith(bin ? '/dist/src/report/load.js' : '/dist/src/cli/bundle-loader.cjs'))).toBe(true);
      expect(modules.filter((m) => COMPILER.test(m))).toEqual([]);

      // Invalid documents: the first five errors and the count of the rest, a wrong format, a wrong type deep inside.
      const base = validDoc();
      const jobs = base.jobs as Obj[];
      const bad: [string, unknown][] = [
        ['many', { ...base, iteration: 'one', started_at: 'yesterday', tool: 5, extra: true, jobs: [{ ...jobs[0], status: 'maybe' }, ...jobs.slice(1)] }],
        ['date', { ...base, jobs: [{ ...jobs[0], started_at: '2026-01-01' }, ...jobs.slice(1)] }],
        ['missing', (({ skill: _s, ...rest }) => rest)(base)],
        ['deep', { ...base, jobs: [{ ...jobs[0], usage: { input: 'x' } }, ...jobs.slice(1)] }],
      ];
      for (const [name, data] of bad) {
        const f = path.join(dir, `${name}.json`);
        writeFileSync(f, JSON.stringify(data));
        const r = await runCli(['report', f, '--format', 'markdown'], { bin });
        expect(r.code, name).toBe(2);
        const expected = compiledMessage(data, f);
        expect(expected, name).toMatch(/does not match schemas\/result\.schema\.json/);
        expect(r.stderr, name).toContain(expected);
      }
    });
  }
});
