import { describe, expect, it } from 'vitest';
import { incompleteDecision, partialDecision } from '../../src/cost/partial.js';
import { decide, DEFAULT_DECISION } from '../../src/gate/index.js';
import type { TrialResult } from '../../src/stats/index.js';

const pass = (caseId: string, trial: number): TrialResult => ({ caseId, engine: 'e', variant: 'with_skill', trial, status: 'pass', durationMs: 1, tokens: 1 });

describe('gates of a run that did not finish', () => {
  it('a killed run rebuilt from its journal cannot PASS a gate on the jobs it never ran', () => {
    const d = decide([pass('a', 1), pass('b', 1)], DEFAULT_DECISION);
    expect(d.exitCode).toBe(0);
    const k = incompleteDecision(d, 3, 'the run was killed');
    expect(k.gates.find((g) => g.name === 'all_trials_passed')).toMatchObject({ state: 'inconclusive', reason: expect.stringContaining('3 planned job(s) did not run (the run was killed)') });
    expect(k.gates.find((g) => g.name === 'max_error_rate')!.state).toBe('pass');
    expect(k.exitCode).toBe(4);
    expect(incompleteDecision(d, 0, 'x')).toBe(d);
  });
  it('an interrupted run: a with_skill job not run makes the all-trials gate inconclusive', () => {
    const d = decide([pass('a', 1)], DEFAULT_DECISION);
    const notRun = [{ engine: 'e', variant: 'with_skill' as const, case: { id: 'a' } }] as Parameters<typeof partialDecision>[1];
    expect(partialDecision(d, notRun, 'the run was interrupted').exitCode).toBe(4);
  });
});
