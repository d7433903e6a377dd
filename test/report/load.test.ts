import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadResultDoc, parseResultDoc, ResultFileError } from '../../src/report/load.js';
import { job, makeDoc, makeResult } from './helpers.js';

const text = (v: unknown) => JSON.stringify(v, null, 2);
const fails = (t: string) => {
  try {
    parseResultDoc(t, 'x.json');
  } catch (e) {
    expect(e).toBeInstanceOf(ResultFileError);
    return (e as Error).message;
  }
  throw new Error('parseResultDoc accepted the input');
};

describe('parseResultDoc', () => {
  it('accepts what buildResultJson writes, unchanged', () => {
    const doc = makeDoc([job('a', 'with_skill', 1, [['x', true]]), job('a', 'without_skill', 1, [['x', false]]), makeResult({ id: 'e/with_skill/run-1', caseId: 'e', status: 'error', reason: 'boom', costUsd: 0.1 })]);
    expect(parseResultDoc(text(doc), 'result.json')).toEqual(JSON.parse(text(doc)));
  });

  it('names the position of a JSON syntax error and what was expected', () => {
    expect(fails('{\n  "schema_version": "1",\n  oops\n}')).toMatch(/^x\.json:3:3: not valid JSON; expected a skill-up result\.json/);
    expect(fails('<?xml version="1.0"?><testsuites/>')).toContain('it looks like XML or HTML: report.xml and report.html are outputs, not inputs');
  });

  it('recognises the other files a user may pass by mistake', () => {
    expect(fails(text({ metadata: {}, runs: [], run_summary: {} }))).toBe('x.json: is a skill-creator benchmark.json (the summary of a run); expected a skill-up result.json (written by `skill-up run` into its iteration folder), found in the same iteration folder');
    expect(fails(text({ expectations: [], summary: {} }))).toMatch(/is a grading\.json of one run/);
    expect(fails(text({ skill_name: 's', evals: [] }))).toMatch(/is an Anthropic evals\.json .*`skill-up import`.*`skill-up run --auto`/);
    expect(fails(text({ skill_name: 's', engine_name: 'claude_code', case_results: [] }))).toMatch(/is an alibaba\/skill-up result\.json .*schema_version "2", with `jobs`/);
    expect(fails(text([{ query: 'q', should_trigger: true }]))).toMatch(/trigger eval set/);
    expect(fails(text({ reviews: [] }))).toMatch(/feedback\.json/);
    expect(fails('42')).toMatch(/is a single JSON value \(number\)/);
    expect(fails(text({ name: 'pkg', version: '1.0.0' }))).toBe('x.json: is a JSON object with `name`, `version`, not a skill-up result.json; expected a skill-up result.json (written by `skill-up run` into its iteration folder)');
  });

  it('names the schema version of a result.json from another skill-up version, and what to do', () => {
    const newer = { ...makeDoc([makeResult()]), schema_version: '7', tool: { name: 'skill-up', version: '9.0.0' } };
    expect(fails(text(newer))).toBe('x.json: is a result.json of schema_version "7" (written by skill-up 9.0.0); this skill-up reads schema_version "2" only: read it with the skill-up version that wrote it, or a newer one');
    const v1 = { ...makeDoc([makeResult()]), schema_version: '1', tool: { name: 'skill-up', version: '0.1.0' } };
    expect(fails(text(v1))).toBe(
      'x.json: is a result.json of schema_version "1" (written by skill-up 0.1.0); this skill-up reads schema_version "2" only (its statistics changed: case-clustered intervals, a three-state verdict, gates): run the suite again with `skill-up run` to get a result.json it can report on',
    );
  });

  it('reports schema violations with their paths', () => {
    const doc = JSON.parse(text(makeDoc([makeResult()])));
    doc.jobs[0].status = 'passed';
    delete doc.totals;
    doc.started_at = 'yesterday';
    const m = fails(text(doc));
    expect(m).toMatch(/^x\.json: does not match schemas\/result\.schema\.json: /);
    expect(m).toContain('missing `totals`');
    expect(m).toContain('jobs.0.status: must be one of "pass", "fail", "error", "skipped"');
    expect(m).toContain('started_at: must match format "date-time"');
  });

  it('rejects a summary without its lists, or not of the shape the reports read', () => {
    const doc = JSON.parse(text(makeDoc([job('a', 'with_skill', 1, [['x', true]]), job('a', 'without_skill', 1, [['x', false]])])));
    const broken = (edit: (s: Record<string, any>) => void) => {
      const d = JSON.parse(JSON.stringify(doc));
      edit(d.summary);
      return fails(text(d));
    };
    const tail = ' (the stats block of result.json is incomplete or was edited)';
    expect(broken((s) => delete s.variants)).toBe(`x.json: summary.variants must be a list${tail}`);
    expect(broken((s) => delete s.options)).toBe(`x.json: summary.options must be {alpha, errors_as_failures, max_error_rate}${tail}`);
    // A version-1 shaped variant (a pooled `wilson` and no clustered `interval`) is named.
    expect(
      broken((s) => {
        s.variants[0].wilson = s.variants[0].interval;
        delete s.variants[0].interval;
      }),
    ).toBe(`x.json: summary.variants.0.interval must be a case-clustered interval {low, high, …} or null${tail}`);
    expect(broken((s) => (s.uplift[0].verdict = 'underpowered'))).toBe(`x.json: summary.uplift.0.verdict must be one of "improves", "regresses", "inconclusive"${tail}`);
    expect(broken((s) => (s.uplift[0].errors = { with: 1 }))).toBe(`x.json: summary.uplift.0.errors must be {with: {errors, trials}, without: {errors, trials}}${tail}`);
    expect(broken((s) => (s.cases[1] = 'x'))).toBe(`x.json: summary.cases.1 must be an object${tail}`);
  });
});

describe('loadResultDoc', () => {
  it('reads ASCII and UTF-8 files alike (non-ASCII text, a byte order mark refused as before)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-load-enc-'));
    for (const reason of ['plain ascii', 'café ✓ – 日本語 😀']) {
      const doc = makeDoc([makeResult({ id: 'e/with_skill/run-1', caseId: 'e', status: 'error', reason })]);
      writeFileSync(join(dir, 'result.json'), text(doc));
      expect((await loadResultDoc(dir)).doc).toEqual(JSON.parse(text(doc)));
    }
    writeFileSync(join(dir, 'result.json'), `\uFEFF${text(makeDoc([]))}`);
    await expect(loadResultDoc(dir)).rejects.toThrow(/not valid JSON/);
  });

  it('reads a file, or the result.json of a folder, and says when neither exists', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-load-'));
    writeFileSync(join(dir, 'result.json'), text(makeDoc([makeResult()])));
    expect((await loadResultDoc(join(dir, 'result.json'))).doc.skill.name).toBe('my-skill');
    expect((await loadResultDoc(dir)).file).toBe(join(dir, 'result.json'));
    mkdirSync(join(dir, 'empty'));
    await expect(loadResultDoc(join(dir, 'empty'))).rejects.toThrow(/is a folder without result\.json; expected a skill-up result\.json/);
    await expect(loadResultDoc(join(dir, 'nope.json'))).rejects.toThrow(/nope\.json: not found; expected a skill-up result\.json/);
  });
});
