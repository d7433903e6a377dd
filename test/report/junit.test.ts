import { describe, expect, it } from 'vitest';
import { buildJunit } from '../../src/report/junit.js';
import { makeDoc, makeResult } from './helpers.js';

describe('buildJunit', () => {
  it('writes one testcase per job: failures with evidence, errors as <error>, skips as <skipped>', () => {
    const xml = buildJunit(
      makeDoc([
        makeResult({ id: 'a/with_skill/run-1', caseId: 'a' }),
        makeResult({ id: 'b/with_skill/run-1', caseId: 'b', status: 'fail', assertions: [{ text: 'files_exist: out.md', passed: false, evidence: 'out.md does not exist <here>' }] }),
        makeResult({ id: 'c/with_skill/run-1', caseId: 'c', status: 'error', reason: 'engine error in turn 1: exited with code 2', assertions: [] }),
        makeResult({ id: 'd/without_skill/run-1', caseId: 'd', variant: 'without_skill', status: 'skipped' }),
      ], { skill: { name: 'my-skill', path: '/s' } }),
    );
    expect(xml.match(/<testcase /g)).toHaveLength(4);
    expect(xml).toContain('<testsuite name="my-skill [custom/with_skill]" tests="3" failures="1" errors="1" skipped="0"');
    expect(xml).toContain('<failure message="files_exist: out.md: out.md does not exist &lt;here>" type="AssertionFailure">');
    expect(xml).toContain('<error message="engine error in turn 1: exited with code 2" type="ExecutionError"/>');
    expect(xml).toContain('FAIL files_exist: out.md\n  evidence: out.md does not exist <here>');
    expect(xml).toMatch(/name="d #1"[^>]*>\s*<skipped\/>/);
  });

  it('takes names, times and turn states from the document (so a saved result.json gives the same XML)', () => {
    const doc = makeDoc([
      makeResult({ id: 'x/with_skill/run-2', caseId: 'x', trial: 2, durationMs: 2500 }),
      makeResult({
        id: 'y/with_skill/run-1',
        caseId: 'y',
        status: 'error',
        reason: 'case timed out',
        turns: [{ index: 1, prompt: 'p', status: 'error', finalText: '', reason: 'killed', durationMs: 1, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, toolCalls: [], skillActivations: [] }],
      }),
    ]);
    const xml = buildJunit(doc);
    expect(xml).toContain('classname="my-skill.custom.with_skill" name="x #2" time="2.5"');
    expect(xml).toContain('turn 1: error (killed)');
    expect(buildJunit(JSON.parse(JSON.stringify(doc)))).toBe(xml);
  });
});

describe('buildJunit and the baseline', () => {
  it('reports a failing or erroring without_skill job as skipped (measured, not gated), with why', () => {
    const xml = buildJunit(
      makeDoc([
        makeResult({ id: 'a/with_skill/run-1', caseId: 'a' }),
        makeResult({ id: 'a/without_skill/run-1', caseId: 'a', variant: 'without_skill', status: 'fail', assertions: [{ text: 'skill_invoked: s', passed: false, evidence: 's was not activated' }] }),
        makeResult({ id: 'b/without_skill/run-1', caseId: 'b', variant: 'without_skill', status: 'error', reason: 'engine error', assertions: [] }),
      ]),
    );
    expect(xml).toContain('<testsuite name="my-skill [custom/without_skill]" tests="2" failures="0" errors="0" skipped="2"');
    expect(xml).toContain('without_skill baseline: fail (not gated): skill_invoked: s: s was not activated');
    expect(xml).toContain('without_skill baseline: error (not gated): engine error');
    expect(xml).not.toContain('<failure');
  });
});
