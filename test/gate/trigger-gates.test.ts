/**
 * Every gate asked for is listed (src/gate/decide.ts, gates.ts, trigger.ts, behaviour.ts): with
 * nothing to decide on it is INCONCLUSIVE with the reason (exit 4), never absent; and a trigger
 * misfire is always judged by some gate, so it never exits 0 unseen.
 */
import { describe, expect, it } from 'vitest';
import { configJson, decide, type DecisionConfig, type GateResult } from '../../src/gate/index.js';
import { triggerConfigOf } from '../../src/gate/trigger.js';
import type { TrialResult, TrialStatus } from '../../src/stats/index.js';

const base: DecisionConfig = { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0 };

/** `n` trigger trials of one query on `engine`; `activated` per trial. */
function triggerTrials(caseId: string, shouldTrigger: boolean, activated: boolean[], engine = 'claude_code'): TrialResult[] {
  return activated.map((a, i) => ({ caseId, engine, variant: 'with_skill', trial: i + 1, status: a === shouldTrigger ? 'pass' : 'fail', durationMs: 1, tokens: 1, trigger: { query: `q ${caseId}`, shouldTrigger, activated: a } }));
}
function task(caseId: string, variant: 'with_skill' | 'without_skill', statuses: TrialStatus[], engine = 'claude_code'): TrialResult[] {
  return statuses.map((status, i) => ({ caseId, engine, variant, trial: i + 1, status, durationMs: 1, tokens: 1 }));
}
const line = (g: GateResult) => `${g.name}:${g.engine}:${g.state}`;

/** 14 trigger trials, 4 misfired (2 missed, 2 false triggers). */
const MISFIRING = [
  ...triggerTrials('t1', true, [true, true]),
  ...triggerTrials('t2', true, [false, false]),
  ...triggerTrials('t3', true, [true, true]),
  ...triggerTrials('t4', false, [true, true]),
  ...triggerTrials('t5', false, [false, false]),
  ...triggerTrials('t6', false, [false, false]),
  ...triggerTrials('t7', true, [true, true]),
];

describe('a gate asked for never vanishes', () => {
  it('trigger-only + min_pass_rate: the pass-rate gate is INCONCLUSIVE saying only trigger cases ran, and all_trials_passed judges the misfires', () => {
    const d = decide(MISFIRING, { ...base, minPassRate: 0.8 });
    expect(d.gates.map(line)).toEqual(['max_error_rate:null:pass', 'all_trials_passed:null:fail', 'min_pass_rate:claude_code:inconclusive']);
    const pr = d.gates.find((g) => g.name === 'min_pass_rate')!;
    expect(pr.reason).toMatch(/no with_skill trial of a task case was graded \(none ran\).*only trigger cases ran on claude_code/);
    expect(d.gates[1]!.reason).toMatch(/^10 of 14 graded trigger trial\(s\) right \(4 misfired\)/);
    expect(d.exitCode).toBe(1);
    // Mapping the inconclusive gate to pass does not hide the misfires.
    expect(decide(MISFIRING, { ...base, minPassRate: 0.8, onInconclusive: 'pass' }).exitCode).toBe(1);
    // No misfire: only the undecidable pass-rate gate is left, exit 4 (mappable).
    const clean = [...triggerTrials('t1', true, [true, true]), ...triggerTrials('t2', false, [false, false])];
    const c = decide(clean, { ...base, minPassRate: 0.8 });
    expect(c.gates.map(line)).toEqual(['max_error_rate:null:pass', 'all_trials_passed:null:pass', 'min_pass_rate:claude_code:inconclusive']);
    expect(c.exitCode).toBe(4);
    expect(decide(clean, { ...base, minPassRate: 0.8, onInconclusive: 'pass' }).exitCode).toBe(0);
    expect(decide(clean, { ...base, minPassRate: 0.8, onInconclusive: 'fail' }).exitCode).toBe(1);
  });

  it('trigger-only + min_uplift / no_regression / behaviour gates: each listed INCONCLUSIVE with the reason', () => {
    const previous = { source: 'old/result.json', cases: [{ engine: 'claude_code', caseId: 'x', passed: 3, failed: 0 }] };
    const d = decide(MISFIRING, { ...base, minUplift: 0.1, noRegression: { previous, margin: 0.1 }, maxToolLoopRate: 0.2 });
    const by = (n: GateResult['name']) => d.gates.find((g) => g.name === n)!;
    expect(by('min_uplift')).toMatchObject({ state: 'inconclusive', engine: 'claude_code', reason: expect.stringMatching(/no task case ran on this engine.*only trigger cases ran on claude_code/) });
    expect(by('no_regression')).toMatchObject({ state: 'inconclusive', reason: expect.stringMatching(/only trigger cases ran/) });
    expect(by('max_tool_loop_rate')).toMatchObject({ state: 'inconclusive', reason: 'no graded with_skill job(s) on claude_code: only trigger cases ran, and behaviour gates judge task cases' });
    expect(by('all_trials_passed').state).toBe('fail');
  });

  it('a trigger gate on a run without trigger cases is INCONCLUSIVE per engine, saying why (exit 4)', () => {
    const rs = [...task('a', 'with_skill', ['pass', 'pass'], 'claude_code'), ...task('a', 'with_skill', ['pass', 'pass'], 'codex')];
    const d = decide(rs, { ...base, minTriggerPrecision: 0.5, minTriggerRecall: 0.9 });
    expect(d.gates.map(line)).toEqual([
      'max_error_rate:null:pass',
      'all_trials_passed:null:pass',
      'min_trigger_precision:claude_code:inconclusive',
      'min_trigger_recall:claude_code:inconclusive',
      'min_trigger_precision:codex:inconclusive',
      'min_trigger_recall:codex:inconclusive',
    ]);
    expect(d.gates[2]!.reason).toMatch(/^no trigger case ran: no case sets `should_trigger` and eval\.yaml has no `triggers\.file`, or the case selection/);
    expect(d.exitCode).toBe(4);
    expect(decide(rs, { ...base, minTriggerPrecision: 0.5, onInconclusive: 'fail' }).exitCode).toBe(1);
  });

  it('an engine with no trigger trial beside one with them gets its own INCONCLUSIVE trigger gate', () => {
    const rs = [...MISFIRING, ...task('a', 'with_skill', ['pass'], 'codex')];
    const d = decide(rs, { ...base, minTriggerRecall: 0.1 });
    expect(d.gates.filter((g) => g.name === 'min_trigger_recall').map(line)).toEqual(['min_trigger_recall:claude_code:pass', 'min_trigger_recall:codex:inconclusive']);
    expect(d.gates.find((g) => g.engine === 'codex')!.reason).toBe('no trigger trial ran on codex, so there is no trigger recall to gate');
  });

  it('no trial at all: every gate asked for is listed with engine null', () => {
    const d = decide([], { ...base, minPassRate: 0.8, minUplift: 0.1, minTriggerPrecision: 0.5, maxSilentFailureRate: 0.1 });
    expect(d.gates.map(line)).toEqual([
      'max_error_rate:null:pass',
      'min_pass_rate:null:inconclusive',
      'min_uplift:null:inconclusive',
      'min_trigger_precision:null:inconclusive',
      'max_silent_failure_rate:null:inconclusive',
    ]);
    expect(d.exitCode).toBe(4);
  });

  it('task and trigger cases with a pass-rate gate and no trigger gate: all_trials_passed is kept on the trigger trials alone', () => {
    const rs = [...MISFIRING, ...task('a', 'with_skill', ['pass', 'fail', 'pass'])];
    const d = decide(rs, { ...base, minPassRate: 0.1 });
    expect(d.gates.map(line)).toEqual(['max_error_rate:null:pass', 'all_trials_passed:null:fail', 'min_pass_rate:claude_code:inconclusive']);
    // The task failure is the pass-rate gate's to judge; only the trigger trials are counted here.
    expect(d.gates[1]!.reason).toMatch(/^10 of 14 graded trigger trial\(s\) right/);
    // With a trigger gate set, the trigger gates decide instead and all_trials_passed is not added.
    const t = decide(rs, { ...base, minPassRate: 0.1, minTriggerPrecision: 0.1 });
    expect(t.gates.some((g) => g.name === 'all_trials_passed')).toBe(false);
  });

  it('the trigger gate settings survive result.json decision.config (what merge and regrade decide with)', () => {
    const c: DecisionConfig = { ...base, minTriggerPrecision: 0.7, minTriggerRecall: 0.9 };
    expect(triggerConfigOf(configJson(c))).toEqual({ minTriggerPrecision: 0.7, minTriggerRecall: 0.9 });
    expect(triggerConfigOf(configJson(base))).toEqual({});
  });
});
