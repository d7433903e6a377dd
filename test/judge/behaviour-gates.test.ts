/**
 * The behaviour gates (src/gate/behaviour.ts) through the decision stage: decided on the Wilson
 * interval over graded with_skill jobs, errors never counted, one gate per engine; and, by
 * seeded simulation, their error rates: a rate exactly at the threshold FAILs a
 * `max_*_rate` gate at most about 2.5% of the time (one side of a 95% interval), and a rate far
 * below it PASSes with enough jobs.
 */
import { describe, expect, it } from 'vitest';
import { decide, DEFAULT_DECISION } from '../../src/gate/index.js';
import { behaviourConfigOf, behaviourGates, maxRateState } from '../../src/gate/behaviour.js';
import { seededRandom } from '../../src/stats/distributions.js';
import type { TrialResult } from '../../src/stats/summarise.js';

function trial(i: number, over: Partial<TrialResult> & { loop?: boolean; silent?: boolean | null; claims?: number; verified?: number } = {}): TrialResult {
  const { loop = false, silent = false, claims = 0, verified = 0, ...rest } = over;
  return {
    caseId: `c${i % 5}`,
    engine: 'claude_code',
    variant: 'with_skill',
    trial: Math.floor(i / 5) + 1,
    status: 'pass',
    durationMs: 1,
    tokens: 1,
    behaviour: { toolLoop: loop, silentFailure: silent, claims, claimsVerified: verified },
    ...rest,
  };
}

describe('behaviour gates', () => {
  it('decide() adds them after the other gates, per engine, over graded with_skill jobs only', () => {
    const trials = [
      ...Array.from({ length: 40 }, (_, i) => trial(i, { claims: 1, verified: 1 })),
      trial(40, { status: 'error', loop: true, silent: true, claims: 1 }), // errors are never counted
      trial(41, { variant: 'without_skill', loop: true }),
      ...Array.from({ length: 40 }, (_, i) => trial(i, { engine: 'codex', loop: true, silent: i < 30, claims: 2, verified: 0 })),
    ];
    const d = decide(trials, { ...DEFAULT_DECISION, maxErrorRate: 0.5, maxToolLoopRate: 0.2, maxSilentFailureRate: 0.2, minClaimsVerifiedRate: 0.8 });
    const g = d.gates.filter((x) => x.name.endsWith('_rate') && x.name !== 'max_error_rate').map((x) => [x.name, x.engine, x.state]);
    expect(g).toEqual([
      ['max_tool_loop_rate', 'claude_code', 'pass'],
      ['max_silent_failure_rate', 'claude_code', 'pass'],
      ['min_claims_verified_rate', 'claude_code', 'pass'],
      ['max_tool_loop_rate', 'codex', 'fail'],
      ['max_silent_failure_rate', 'codex', 'fail'],
      ['min_claims_verified_rate', 'codex', 'fail'],
    ]);
    const loop = d.gates.find((x) => x.name === 'max_tool_loop_rate' && x.engine === 'claude_code')!;
    expect(loop.reason).toBe('0 of 40 graded with_skill job(s) had a tool loop: 0% [0%, 9%] (95% Wilson interval over jobs) is at most 20%');
    expect(d.exitCode).toBe(1);
  });

  it('counts a job whose silent failure cannot be known (null) neither way', () => {
    const trials = [...Array.from({ length: 30 }, (_, i) => trial(i, { silent: null })), trial(30, { silent: true })];
    const g = behaviourGates(trials, { maxSilentFailureRate: 0.2 })[0]!;
    expect(g.reason).toMatch(/^1 of 1 graded with_skill job\(s\) had a silent failure/);
    expect(behaviourGates(Array.from({ length: 5 }, (_, i) => trial(i, { silent: null })), { maxSilentFailureRate: 0.2 })[0]!.state).toBe('inconclusive');
  });

  it('is INCONCLUSIVE with no job to count or an interval straddling the threshold; absent when not configured', () => {
    expect(behaviourGates([trial(1)], {})).toEqual([]);
    const none = behaviourGates([trial(1, { claims: 0 })], { minClaimsVerifiedRate: 0.9 })[0]!;
    expect(none).toMatchObject({ state: 'inconclusive', figure: null, reason: 'no graded with_skill job(s) with claims on claude_code: no job made a claim that could be checked' });
    const few = behaviourGates([trial(1, { loop: true }), trial(2), trial(3)], { maxToolLoopRate: 0.3 })[0]!;
    expect(few.state).toBe('inconclusive');
    // 0 loops can never prove a rate of 0: the interval's upper bound is always above it.
    expect(behaviourGates(Array.from({ length: 500 }, (_, i) => trial(i)), { maxToolLoopRate: 0 })[0]!.state).toBe('inconclusive');
    expect(maxRateState({ low: 0.1, high: 0.2 }, 0.2)).toBe('pass');
    expect(maxRateState({ low: 0.21, high: 0.4 }, 0.2)).toBe('fail');
  });

  it('reads its settings back from result.json decision.config', () => {
    expect(behaviourConfigOf({ max_tool_loop_rate: 0.1, max_silent_failure_rate: null, min_claims_verified_rate: 0.9 })).toEqual({ maxToolLoopRate: 0.1, minClaimsVerifiedRate: 0.9 });
    expect(behaviourConfigOf(undefined)).toEqual({});
  });

  it('seeded simulation: at the threshold a max gate FAILs at most ~2.5% of runs; far below it, it PASSes', () => {
    const r = seededRandom(20260112);
    const runs = 2000;
    const simulate = (p: number, n: number, threshold: number) => {
      const states = { pass: 0, fail: 0, inconclusive: 0 };
      for (let k = 0; k < runs; k++) {
        const trials = Array.from({ length: n }, (_, i) => trial(i, { loop: r() < p }));
        states[behaviourGates(trials, { maxToolLoopRate: threshold })[0]!.state]++;
      }
      return states;
    };
    const atThreshold = simulate(0.2, 60, 0.2);
    expect(atThreshold.fail / runs).toBeLessThanOrEqual(0.035);
    expect(atThreshold.pass / runs).toBeLessThanOrEqual(0.035);
    const clean = simulate(0.01, 100, 0.2);
    expect(clean.pass / runs).toBeGreaterThan(0.95);
    expect(clean.fail).toBe(0);
    const bad = simulate(0.5, 100, 0.2);
    expect(bad.fail / runs).toBeGreaterThan(0.95);
  });
});
