import { describe, expect, it } from 'vitest';
import { armsFromEngines, armsFromRuns, armsFromVariants, compareArms, CompareInputError, type CompareOptions } from '../../src/compare/index.js';
import { summarise } from '../../src/stats/summarise.js';
import { trialsOf } from '../../src/report/result-json.js';
import { doc, jobs, uniform } from './helpers.js';

const OPTS: CompareOptions = { alpha: 0.05, margin: 0.1, maxErrorRate: 0 };
const runs = (before: Record<string, string>, after: Record<string, string>, opts: Partial<CompareOptions> = {}) =>
  compareArms(armsFromRuns(doc(jobs(before), 'old/result.json'), doc(jobs(after), 'new/result.json', 2)), { ...OPTS, ...opts });

describe('compare two runs', () => {
  it('a deterministic 6 × 3 suite where one case goes 3/3 → 0/3 is a proven regression (exit 1) naming that case', () => {
    const before = { ...uniform(5, 'PPP'), broken: 'PPP' };
    const c = runs(before, { ...uniform(5, 'PPP'), broken: 'FFF' });
    expect(c.exitCode).toBe(1);
    expect(c.verdict).toBe('regression');
    const gate = c.gates.find((g) => g.name === 'no_regression')!;
    expect(gate.state).toBe('fail');
    expect(gate.p).toBeCloseTo(1 / 20, 10);
    expect(gate.regressions).toEqual([{ caseId: 'broken', before: 1, after: 0 }]);
    expect(gate.reason).toContain('broken 100%→0%');
    expect(c.cases[0]).toMatchObject({ caseId: 'broken', change: 'regressed', delta: -1, before: { passed: 3, failed: 0 }, after: { passed: 0, failed: 3 } });
    expect(c.cases.filter((x) => x.change === 'unchanged')).toHaveLength(5);
    const g = c.groups[0]!;
    expect(g).toMatchObject({ name: 'custom', pairedCases: 6, counts: { regressed: 1, improved: 0, unchanged: 5, new: 0, removed: 0, not_graded: 0 } });
    expect(g.delta).toBeCloseTo(-1 / 6, 12);
    expect(g.p).toBe(1); // one differing case: the two-sided sign-flip test cannot be significant
    expect(g.minimumP).toBe(1);
  });

  it('an unchanged deterministic 20 × 3 suite passes (exit 0)', () => {
    const suite = uniform(20, 'PPP');
    const c = runs(suite, suite);
    expect(c.gates.map((g) => [g.name, g.state])).toEqual([['max_error_rate', 'pass'], ['no_regression', 'pass']]);
    expect(c.exitCode).toBe(0);
    expect(c.verdict).toBe('no_regression');
    expect(c.groups[0]).toMatchObject({ pairedCases: 20, delta: 0, p: 1, counts: { unchanged: 20 } });
    expect(c.groups[0]!.interval!.low).toBeLessThanOrEqual(0);
    expect(c.groups[0]!.interval!.high).toBeGreaterThanOrEqual(0);
  });

  it('identical flaky runs never FAIL', () => {
    const patterns = ['PPF', 'PFF', 'PFP', 'FPP', 'PPP', 'FFF', 'FPF'];
    for (let n = 6; n <= 30; n += 8) {
      const suite = Object.fromEntries(Array.from({ length: n }, (_, i) => [`c${i}`, patterns[(i * 5) % patterns.length]!]));
      const c = runs(suite, suite);
      expect(c.verdict, `n = ${n}`).not.toBe('regression');
      expect([0, 4]).toContain(c.exitCode);
      expect(c.groups[0]!.p).toBe(1);
    }
  });

  it('lists new, removed and not-graded cases and pairs only what both runs graded', () => {
    const c = runs({ kept: 'PPP', gone: 'PPP', broken: 'PPP' }, { kept: 'PPP', added: 'PFP', broken: 'EEE' });
    const by = Object.fromEntries(c.cases.map((x) => [x.caseId, x]));
    expect(by.added).toMatchObject({ change: 'new', before: null, after: { passed: 2, failed: 1 } });
    expect(by.gone).toMatchObject({ change: 'removed', after: null });
    expect(by.broken).toMatchObject({ change: 'not_graded', after: { errors: 3, passRate: null } });
    expect(c.cases.map((x) => x.change)).toEqual(['new', 'removed', 'not_graded', 'unchanged']);
    expect(c.groups[0]).toMatchObject({ pairedCases: 1, counts: { new: 1, removed: 1, not_graded: 1, unchanged: 1 } });
    // 3 errors among 6 non-skipped trials of the new run: exit 3 (errors first).
    expect(c.gates[0]).toMatchObject({ name: 'max_error_rate', state: 'fail' });
    expect(c.exitCode).toBe(3);
    expect(runs({ kept: 'PPP' }, { kept: 'PPP', broken: 'EEE' }, { maxErrorRate: 0.5 }).gates[0]!.state).toBe('pass');
  });

  it('sorts regressions worst first, then improvements', () => {
    const c = runs({ a: 'PPP', b: 'PPP', c: 'FFF', d: 'PFF', e: 'PPP' }, { a: 'PPF', b: 'FFF', c: 'PPP', d: 'PPF', e: 'PPP' });
    expect(c.cases.map((x) => `${x.caseId}:${x.change}`)).toEqual(['b:regressed', 'a:regressed', 'c:improved', 'd:improved', 'e:unchanged']);
  });

  it('an engine only in the old run is listed as removed; one only in the new run is inconclusive', () => {
    const c = compareArms(armsFromRuns(doc(jobs(uniform(3, 'PPP'), 'with_skill', 'a')), doc(jobs(uniform(3, 'PPP'), 'with_skill', 'b'))), OPTS);
    expect(c.groups.map((g) => g.name)).toEqual(['b', 'a']);
    expect(c.gates.map((g) => [g.name, g.engine, g.state])).toEqual([['max_error_rate', null, 'pass'], ['no_regression', 'b', 'inconclusive'], ['no_regression', 'a', 'inconclusive']]);
    expect(c.exitCode).toBe(4);
    expect(compareArms(armsFromRuns(doc(jobs(uniform(3, 'PPP'))), doc([])), { ...OPTS, onInconclusive: 'pass' }).exitCode).toBe(0);
  });

  it('maps an inconclusive verdict with onInconclusive and honours the margin', () => {
    const before = uniform(8, 'PPP');
    const after = { ...uniform(7, 'PPP'), 'case-8': 'PPF' };
    expect(runs(before, after).exitCode).toBe(4);
    expect(runs(before, after, { onInconclusive: 'fail' }).exitCode).toBe(1);
    expect(runs(before, after, { onInconclusive: 'pass' }).exitCode).toBe(0);
    expect(runs(before, after, { margin: 0.5 }).exitCode).toBe(0);
    expect(() => runs(before, after, { margin: 2 })).toThrow(RangeError);
  });

  it('re-summarises from the jobs, not from the stored summary', () => {
    const old = doc(jobs(uniform(6, 'PPP')));
    (old.doc.summary as { cases: unknown[] }).cases = [];
    const c = compareArms(armsFromRuns(old, doc(jobs(uniform(6, 'PPP')))), OPTS);
    expect(c.groups[0]!.pairedCases).toBe(6);
  });
});

describe('compare inside one run', () => {
  it('--variants mirrors the run’s own uplift: same mean change, interval and paired p', () => {
    const results = [...jobs({ a: 'PPP', b: 'PPF', c: 'PPP', d: 'PFF', e: 'PPP', f: 'PPP', g: 'FFF' }), ...jobs({ a: 'FFF', b: 'PFF', c: 'FFP', d: 'PFF', e: 'FFF', f: 'FFF', g: 'FFF' }, 'without_skill')];
    const c = compareArms(armsFromVariants(doc(results)), OPTS);
    const u = summarise(trialsOf(results)).uplift[0]!;
    const g = c.groups[0]!;
    expect(g.delta).toBeCloseTo(u.passRateDelta!, 12);
    expect(g.interval!.low).toBeCloseTo(u.interval!.low, 12);
    expect(g.interval!.high).toBeCloseTo(u.interval!.high, 12);
    expect(g.p).toBeCloseTo(u.p, 12);
    expect(c.old.source).toBe('without_skill in run/result.json');
    expect(c.verdict).toBe('no_regression');
  });

  it('--variants on a run without a baseline is an input error', () => {
    expect(() => armsFromVariants(doc(jobs(uniform(2, 'PPP'))))).toThrow(CompareInputError);
    expect(() => armsFromVariants(doc(jobs(uniform(2, 'PPP'))))).toThrow(/has no without_skill job: the run had no baseline/);
  });

  it('--engines pairs two engines by case id (a old, b new)', () => {
    const results = [...jobs({ ...uniform(5, 'PPP'), hard: 'PPP' }, 'with_skill', 'alpha'), ...jobs({ ...uniform(5, 'PPP'), hard: 'FFF' }, 'with_skill', 'beta')];
    const c = compareArms(armsFromEngines(doc(results), 'alpha', 'beta'), OPTS);
    expect(c.groups).toHaveLength(1);
    expect(c.groups[0]).toMatchObject({ name: 'alpha → beta', oldEngine: 'alpha', newEngine: 'beta', pairedCases: 6 });
    expect(c.exitCode).toBe(1);
    expect(c.gates[1]!.reason).toContain('vs alpha in run/result.json');
    expect(c.cases[0]).toMatchObject({ caseId: 'hard', change: 'regressed' });
    expect(compareArms(armsFromEngines(doc(results), 'beta', 'alpha'), OPTS).verdict).not.toBe('regression');
    expect(() => armsFromEngines(doc(results), 'alpha', 'gamma')).toThrow('engine `gamma` has no with_skill job in run/result.json (its engines: alpha, beta)');
    expect(() => armsFromEngines(doc(results), 'alpha', 'alpha')).toThrow(/two different engines/);
  });
});
