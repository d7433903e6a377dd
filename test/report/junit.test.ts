import junitModule, { type Builder } from 'junit-report-builder';
import { describe, expect, it } from 'vitest';
import { buildJunit, junitSuites } from '../../src/report/junit.js';
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

describe('buildJunit and the decision', () => {
  it('puts the exit code, every gate and the uplift verdict in each suite’s properties, with reasons', () => {
    const doc = makeDoc(
      ['claude_code', 'codex'].flatMap((engine) => [
        makeResult({ id: `${engine}/a/with_skill/run-1`, engine, caseId: 'a' }),
        makeResult({ id: `${engine}/a/without_skill/run-1`, engine, caseId: 'a', variant: 'without_skill', status: 'fail', assertions: [{ text: 't', passed: false, evidence: 'e' }] }),
      ]),
      { exitCode: 0 },
    );
    doc.gates.push({ name: 'min_pass_rate', engine: 'codex', threshold: 0.8, figure: 1, interval: { low: 0.2, high: 1 }, state: 'inconclusive', reason: 'may or may not reach 80% <here>' });
    const xml = buildJunit(doc);
    const suites = xml.split('<testsuite ').slice(1);
    expect(suites).toHaveLength(4);
    for (const suite of suites) {
      expect(suite).toContain('<property name="exit_code" value="0"/>');
      expect(suite).toContain('<property name="gate.max_error_rate" value="pass"/>');
      expect(suite).toContain('<property name="gate.all_trials_passed" value="pass"/>');
      expect(suite).toContain('<property name="gate.all_trials_passed.reason" value="2 of 2 graded with_skill trial(s) passed');
    }
    const codex = suites.filter((s) => s.startsWith('name="my-skill [codex/'));
    const claude = suites.filter((s) => s.startsWith('name="my-skill [claude_code/'));
    expect(codex).toHaveLength(2);
    for (const s of codex) {
      expect(s).toContain('<property name="gate.min_pass_rate.codex" value="inconclusive"/>');
      expect(s).toContain('<property name="gate.min_pass_rate.codex.reason" value="may or may not reach 80% &lt;here>"/>');
      expect(s).toContain('<property name="verdict.codex" value="inconclusive"/>');
      expect(s).not.toContain('verdict.claude_code');
    }
    for (const s of claude) {
      expect(s).not.toContain('gate.min_pass_rate');
      expect(s).toMatch(/<property name="verdict\.claude_code\.reason" value="only 1 case\(s\) differ between the variants/);
    }
  });

  it('writes one suite with the decision when the run has no job', () => {
    const xml = buildJunit(makeDoc([], { exitCode: 4 }));
    expect(xml).toContain('<testsuite name="my-skill [run]" tests="0"');
    expect(xml).toContain('<property name="exit_code" value="4"/>');
    expect(xml).toContain('<property name="gate.all_trials_passed" value="inconclusive"/>');
  });

  it('written suite by suite, is byte for byte the document one builder makes of all the suites', () => {
    const results = ['claude_code', 'codex'].flatMap((engine) =>
      (['with_skill', 'without_skill'] as const).flatMap((variant) => [
        makeResult({ id: `${engine}/a/${variant}/run-1`, caseId: 'a', engine, variant }),
        makeResult({ id: `${engine}/b/${variant}/run-1`, caseId: 'b', engine, variant, status: 'fail', assertions: [{ text: 'x ]]> y', passed: false, evidence: 'no <x> & "y"' }] }),
        makeResult({ id: `${engine}/c/${variant}/run-1`, caseId: 'c', engine, variant, status: 'error', reason: 'boom', assertions: [] }),
        makeResult({ id: `${engine}/d/${variant}/run-1`, caseId: 'd', engine, variant, status: 'skipped' }),
      ]),
    );
    // More test cases in a suite than junitPieces builds at a time (200).
    const many = Array.from({ length: 450 }, (_, i) => makeResult({ id: `m${i}/with_skill/run-1`, caseId: `m${i}`, status: i % 7 ? 'pass' : 'fail', assertions: [{ text: 't', passed: i % 7 > 0, evidence: 'e' }] }));
    for (const doc of [makeDoc(results), makeDoc([]), makeDoc(many)]) {
      const one = (junitModule as unknown as Builder).newBuilder();
      for (const _ of junitSuites(doc, () => one)) void _;
      expect(buildJunit(doc)).toBe(one.build());
    }
  });
});
