/**
 * The YAML parse cache (src/config/yaml-cache.ts): a cached load gives the same data and the
 * same diagnostics (lines and columns too) as a parse; only clean texts whose data JSON holds
 * exactly are cached; a changed, corrupt or foreign cache is never trusted; SKILL_UP_YAML_CACHE=0
 * turns it off. Every test has its own SKILL_UP_CACHE_DIR.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DiagnosticBag } from '../../src/config/diagnostics.js';
import { forgetYamlMemory, jsonExact, openYamlCache, YamlCache, yamlCacheFile, yamlCacheKey } from '../../src/config/yaml-cache.js';
import { Field, parseYaml, readYamlSource, type YamlSource } from '../../src/config/yaml-source.js';
import { loadErrors, loadOk, MINIMAL_EVAL, show, writeSkill } from './helpers.js';

const CASE_A = 'input:\n  prompt: "Say hello"\nexpect:\n  must_contain: [hello]\n';
const CASE_B = 'id: second\ninput:\n  turns:\n    - content: "one"\n    - content: "two"\ntags: [x, y]\n';
// Valid YAML, wrong schema: an unknown key at line 3 and a wrong type at line 5.
const CASE_BAD = 'input:\n  prompt: "hi"\nexpectt:\n  must_contain: [x]\ntrials: many\n';

let cacheDir: string;

beforeEach(() => {
  cacheDir = mkdtempSync(path.join(tmpdir(), 'skill-up-yaml-cache-'));
  vi.stubEnv('SKILL_UP_CACHE_DIR', cacheDir);
  vi.stubEnv('SKILL_UP_YAML_CACHE', '');
  forgetYamlMemory();
});

afterEach(() => {
  vi.unstubAllEnvs();
  forgetYamlMemory();
});

/** True when `src` came from the cache: its document is a getter, parsed only on use. */
const fromCache = (src: YamlSource) => typeof Object.getOwnPropertyDescriptor(src, 'doc')?.get === 'function';

/** The entries of the suite's cache file (key → JSON text). */
function entries(skill: string): Record<string, string> {
  return (JSON.parse(readFileSync(yamlCacheFile(skill), 'utf8')) as { entries: Record<string, string> }).entries;
}

/** Loads `skill` with the cache off, then twice with it on (a new process each time: memory forgotten). */
async function threeLoads<T>(load: () => Promise<T>): Promise<{ uncached: T; first: T; cached: T }> {
  vi.stubEnv('SKILL_UP_YAML_CACHE', '0');
  const uncached = await load();
  vi.stubEnv('SKILL_UP_YAML_CACHE', '');
  forgetYamlMemory();
  const first = await load();
  forgetYamlMemory();
  const cached = await load();
  return { uncached, first, cached };
}

describe('a suite loaded from the YAML cache', () => {
  it('gives the same suite and warnings as a parse, and the case files come from the cache', async () => {
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': CASE_A, 'evals/cases/b.yaml': CASE_B });
    const { uncached, first, cached } = await threeLoads(() => loadOk(skill));
    expect(first).toEqual(uncached);
    expect(cached).toEqual(uncached);
    expect(cached.suite.cases.map((c) => c.id).sort()).toEqual(['a', 'second']);
    // The file holds the eval file and the two case files, nothing else.
    expect(Object.keys(entries(skill)).sort()).toEqual([MINIMAL_EVAL, CASE_A, CASE_B].map(yamlCacheKey).sort());
    forgetYamlMemory();
    const cache = openYamlCache(skill);
    const src = readYamlSource(path.join(skill, 'evals/cases/b.yaml'), new DiagnosticBag(), cache);
    expect(fromCache(src)).toBe(true);
    expect(src.data).toEqual({ id: 'second', input: { turns: [{ content: 'one' }, { content: 'two' }] }, tags: ['x', 'y'] });
    // Positions parse the text on first use, as a parse would have found them.
    expect(Field.root(src, new DiagnosticBag()).get('input').get('turns').get(1).get('content').position()).toEqual({ line: 5, col: 16 });
  });

  it('reports schema errors of a cached file at the same lines and columns', async () => {
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/bad.yaml': CASE_BAD, 'evals/cases/a.yaml': CASE_A });
    const { uncached, first, cached } = await threeLoads(async () => show(await loadErrors(skill), skill));
    expect(uncached.length).toBeGreaterThanOrEqual(2);
    expect(uncached.some((l) => l.startsWith('evals/cases/bad.yaml:3:1'))).toBe(true);
    expect(first).toEqual(uncached);
    expect(cached).toEqual(uncached);
    // The schema errors did not keep the file out of the cache: it is valid YAML.
    expect(entries(skill)[yamlCacheKey(CASE_BAD)]).toBeDefined();
  });

  it('never caches a file with a YAML error or warning, and repeats its diagnostics', async () => {
    const dup = 'input:\n  prompt: "a"\ninput:\n  prompt: "b"\n';
    const warned = '%FOO bar\n---\ninput:\n  prompt: "hi"\n';
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/dup.yaml': dup, 'evals/cases/w.yaml': warned, 'evals/cases/a.yaml': CASE_A });
    const { uncached, first, cached } = await threeLoads(async () => show(await loadErrors(skill), skill));
    expect(uncached.some((l) => /dup\.yaml:3:1: YAML syntax error: Map keys must be unique/.test(l))).toBe(true);
    expect(first).toEqual(uncached);
    expect(cached).toEqual(uncached);
    const keys = Object.keys(entries(skill));
    expect(keys).toContain(yamlCacheKey(CASE_A));
    expect(keys).not.toContain(yamlCacheKey(dup));
    expect(keys).not.toContain(yamlCacheKey(warned));
    // The warning is reported on every parse.
    for (let i = 0; i < 2; i++) {
      const bag = new DiagnosticBag();
      const src = parseYaml('/s/w.yaml', warned, bag, { cache: openYamlCache(skill) });
      expect(fromCache(src)).toBe(false);
      expect(bag.sorted().map((d) => `${d.line}:${d.col} ${d.severity} ${d.message}`)).toEqual(['1:1 warning YAML: Unknown directive %FOO']);
    }
  });

  it('parses a changed file again and keeps only the entries the load used', async () => {
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': CASE_A });
    await loadOk(skill);
    const changed = CASE_A.replace('Say hello', 'Say goodbye');
    writeFileSync(path.join(skill, 'evals/cases/a.yaml'), changed);
    forgetYamlMemory();
    const { suite } = await loadOk(skill);
    expect(suite.cases[0]!.turns[0]!.content).toBe('Say goodbye');
    expect(Object.keys(entries(skill)).sort()).toEqual([MINIMAL_EVAL, changed].map(yamlCacheKey).sort());
  });

  it('writes the file atomically, private to the user', async () => {
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': CASE_A });
    await loadOk(skill);
    const file = yamlCacheFile(skill);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readdirSync(path.dirname(file)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // Nothing new parsed: the file is not written again.
    const before = statSync(file).mtimeMs;
    writeFileSync(file, readFileSync(file, 'utf8'));
    const rewritten = statSync(file).mtimeMs;
    forgetYamlMemory();
    await loadOk(skill);
    expect(statSync(file).mtimeMs).toBe(rewritten);
    expect(rewritten).toBeGreaterThanOrEqual(before);
  });

  it('ignores a corrupt, foreign or old cache file and replaces it', async () => {
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': CASE_A });
    const want = await threeLoads(() => loadOk(skill)).then((r) => r.uncached);
    const file = yamlCacheFile(skill);
    const lie = JSON.stringify({ input: { prompt: 'not what the file says' } });
    for (const body of [
      '{not json',
      '[]',
      JSON.stringify({ format: 999, yaml: 'x', entries: { [yamlCacheKey(CASE_A)]: lie } }),
      JSON.stringify({ format: 1, yaml: '0.0.1', entries: { [yamlCacheKey(CASE_A)]: lie } }),
      JSON.stringify({ format: 1, entries: 'x' }),
    ]) {
      writeFileSync(file, body);
      forgetYamlMemory();
      expect(await loadOk(skill)).toEqual(want);
      expect(entries(skill)[yamlCacheKey(CASE_A)]).toBe(JSON.stringify({ input: { prompt: 'Say hello' }, expect: { must_contain: ['hello'] } }));
    }
  });

  it('loads as usual when the cache folder cannot be written', async () => {
    const blocker = path.join(cacheDir, 'file');
    writeFileSync(blocker, 'x');
    vi.stubEnv('SKILL_UP_CACHE_DIR', blocker);
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': CASE_A });
    expect((await loadOk(skill)).suite.cases).toHaveLength(1);
    expect(existsSync(yamlCacheFile(skill))).toBe(false);
  });

  it('is off with SKILL_UP_YAML_CACHE=0: nothing written, nothing answered from memory', async () => {
    vi.stubEnv('SKILL_UP_YAML_CACHE', '0');
    const skill = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': CASE_A });
    await loadOk(skill);
    await loadOk(skill);
    expect(existsSync(path.join(cacheDir, 'yaml'))).toBe(false);
    const src = readYamlSource(path.join(skill, 'evals/cases/a.yaml'), new DiagnosticBag(), openYamlCache(skill));
    expect(fromCache(src)).toBe(false);
  });
});

describe('what the cache holds', () => {
  it('gives identical text in one process one parse, a fresh copy each time', () => {
    const text = 'name: a\nmetadata:\n  v: "1"\n';
    const first = parseYaml('/s/SKILL.md', text, new DiagnosticBag(), { lineOffset: 1 });
    const second = parseYaml('/s/SKILL.md', text, new DiagnosticBag(), { lineOffset: 1 });
    expect(fromCache(first)).toBe(false);
    expect(fromCache(second)).toBe(true);
    expect(second.data).toEqual(first.data);
    expect(second.data).not.toBe(first.data);
    // The line offset still shifts positions of the lazily parsed document.
    expect(Field.root(second, new DiagnosticBag()).get('metadata').get('v').position()).toEqual({ line: 4, col: 6 });
    expect(second.doc.contents).toBeTruthy();
  });

  it('does not cache values JSON cannot hold exactly', () => {
    const cache = new YamlCache(undefined);
    for (const text of ['a: .inf\n', 'a: -.inf\n', 'a: .nan\n', 'a: -0\n', 'a: &x [1]\nb: *x\n', 'a: [1, 2]\nb: 0x10\nc: -0.0\n']) {
      parseYaml('/s/x.yaml', text, new DiagnosticBag(), { cache });
      const again = parseYaml('/s/x.yaml', text, new DiagnosticBag(), { cache });
      expect(fromCache(again), text).toBe(false);
    }
    expect(jsonExact({ a: [1, 'x', true, null, { b: 2.5 }] })).toBe(true);
    expect(jsonExact([1, undefined])).toBe(false);
    // eslint-disable-next-line no-sparse-arrays
    expect(jsonExact([1, , 2])).toBe(false);
    expect(jsonExact({ a: undefined })).toBe(false);
    expect(jsonExact({ a: new Date(0) })).toBe(false);
    expect(jsonExact({ a: new Map() })).toBe(false);
    expect(jsonExact({ a: 1n })).toBe(false);
    expect(jsonExact(Number.NaN)).toBe(false);
    expect(jsonExact(-0)).toBe(false);
    const shared = { x: 1 };
    expect(jsonExact({ a: shared, b: shared })).toBe(false);
  });

  it('does not cache an unreadable or empty file', () => {
    const cache = new YamlCache(undefined);
    for (const text of ['', '# only a comment\n', '~\n']) {
      parseYaml('/s/x.yaml', text, new DiagnosticBag(), { cache });
      expect(fromCache(parseYaml('/s/x.yaml', text, new DiagnosticBag(), { cache }))).toBe(false);
    }
    parseYaml('/s/x.yaml', 'a: 1\n', new DiagnosticBag(), { readable: false, cache });
    expect(fromCache(parseYaml('/s/x.yaml', 'a: 1\n', new DiagnosticBag(), { readable: false, cache }))).toBe(false);
  });
});
