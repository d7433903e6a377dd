/**
 * `--max-cost` (src/cost/budget.ts) driving the real scheduler (src/run/run.ts executeJobs)
 * through its hooks, with jobs whose cost is known in advance, and the gates of a run it cut
 * short (src/cost/partial.ts).
 */
import { describe, expect, it } from 'vitest';
import { CostBudget } from '../../src/cost/budget.js';
import { partialDecision } from '../../src/cost/partial.js';
import { decide } from '../../src/gate/index.js';
import type { Job } from '../../src/plan/plan.js';
import type { JobResult } from '../../src/run/types.js';
import { trialsOf } from '../../src/report/result-json.js';
import { makeCase, makeResult } from '../run/helpers.js';

function jobs(n: number, variant: 'with_skill' | 'without_skill' = 'with_skill', engine = 'custom', from = 0): Job[] {
  return Array.from({ length: n }, (_, k) => {
    const id = `c${from + k + 1}`;
    return { id: `${engine}/${id}/${variant}/run-1`, index: from + k, case: makeCase(id), engine, variant, trial: 1 };
  });
}

/** Runs `plan` through the budget as executeJobs would, at `parallelism`, each job costing `cost(job)` (undefined: none) after `ms`. */
async function simulate(budget: CostBudget, plan: Job[], parallelism: number, cost: (j: Job) => number | undefined, ms = 5): Promise<{ ran: Job[]; maxRunning: number }> {
  const signal = new AbortController().signal;
  const ran: Job[] = [];
  let running = 0;
  let maxRunning = 0;
  const queue = [...plan];
  const worker = async () => {
    for (let j = queue.shift(); j; j = queue.shift()) {
      if (!(await budget.admit(j, signal))) continue;
      running++;
      maxRunning = Math.max(maxRunning, running);
      await new Promise((r) => setTimeout(r, ms));
      const c = cost(j);
      budget.attempted(j, makeResult({ id: j.id, caseId: j.case.id, engine: j.engine, variant: j.variant, ...(c !== undefined ? { costUsd: c } : {}), turns: [{ index: 1, prompt: 'p', status: 'completed', finalText: '', durationMs: 1, usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }, toolCalls: [], skillActivations: [] }] }));
      running--;
      ran.push(j);
      budget.released(j);
    }
  };
  await Promise.all(Array.from({ length: parallelism }, worker));
  return { ran, maxRunning };
}

describe('CostBudget', () => {
  it('lets one job run alone to learn the cost, then stops before spent + running + next would pass the budget', async () => {
    const log: string[] = [];
    const b = new CostBudget(1, { log: (l) => log.push(l) });
    const { ran, maxRunning } = await simulate(b, jobs(10), 4, () => 0.3);
    // 0.3 learned; then 0.3 + 0.3 + 0.3 = 0.9 fits, a fourth would make 1.2.
    expect(ran).toHaveLength(3);
    expect(b.notRun).toHaveLength(7);
    expect(b.stopped).toBe(true);
    expect(b.spent).toBeCloseTo(0.9, 12);
    expect(maxRunning).toBeLessThanOrEqual(3);
    expect(log.filter((l) => l.startsWith('--max-cost $1.00 reached'))).toHaveLength(1);
    expect(log[0]).toMatch(/would pass it; no new job starts/);
  });

  it('counts the running jobs at their estimate (parallel jobs cannot overrun by a full slot each)', async () => {
    const b = new CostBudget(1, { log: () => undefined, prior: { iteration: 1, file: '/x/iteration-1/result.json', arms: [{ engine: 'custom', variant: 'with_skill', meanUsd: 0.25, jobs: 4, estimated: false }], overall: { meanUsd: 0.25, jobs: 4, estimated: false } } });
    const { ran, maxRunning } = await simulate(b, jobs(10), 8, () => 0.25);
    // With a prior no job runs alone to learn: four start at once (4 × 0.25 = 1.00 fits).
    expect(maxRunning).toBe(4);
    expect(ran).toHaveLength(4);
    expect(b.spent).toBeLessThanOrEqual(1 + 1e-9);
  });

  it('estimates by engine and variant first, then by any finished job', () => {
    const b = new CostBudget(10, { log: () => undefined });
    const [w] = jobs(1, 'with_skill');
    const [wo] = jobs(1, 'without_skill');
    expect(b.estimate(w!)).toBeNull();
    b.attempted(w!, makeResult({ costUsd: 2, turns: [] }));
    expect(b.estimate(wo!)).toBe(2); // only the with_skill mean is known
    b.attempted(wo!, makeResult({ variant: 'without_skill', costUsd: 1, turns: [] }));
    b.attempted(wo!, makeResult({ variant: 'without_skill', costUsd: 0.5, turns: [] }));
    expect(b.estimate(wo!)).toBeCloseTo(0.75, 12);
    expect(b.estimate(w!)).toBe(2);
    expect(b.spent).toBeCloseTo(3.5, 12);
  });

  it('never counts the scripted model and says once that the budget cannot bind', async () => {
    const log: string[] = [];
    const b = new CostBudget(0.01, { scriptedEngines: ['claude_code'], engines: ['claude_code'], log: (l) => log.push(l) });
    const { ran } = await simulate(b, jobs(6, 'with_skill', 'claude_code'), 3, () => undefined);
    expect(ran).toHaveLength(6);
    expect(b.notRun).toHaveLength(0);
    expect(log).toEqual(['--max-cost $0.01: the scripted model has no cost, so the budget cannot bind']);
  });

  it('stops counting an engine whose jobs report no cost and whose model has no price, and says so once', async () => {
    const log: string[] = [];
    const b = new CostBudget(0.5, { log: (l) => log.push(l) });
    const { ran } = await simulate(b, jobs(5), 2, () => undefined);
    expect(ran).toHaveLength(5);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/custom reported no cost and its model has no price in skill-up's table: its jobs are not counted/);
  });

  it('counts every attempt, retries included, and wakes a waiting job on abort', async () => {
    const b = new CostBudget(1, { log: () => undefined });
    const [a, c] = jobs(2);
    const ctl = new AbortController();
    expect(await b.admit(a!, ctl.signal)).toBe(true); // the learner
    const waiting = b.admit(c!, ctl.signal); // nothing known yet: waits for the learner
    ctl.abort();
    expect(await waiting).toBe(false);
    expect(b.notRun).toHaveLength(0); // an interrupt is not the budget
    b.attempted(a!, makeResult({ costUsd: 0.2, turns: [] }));
    b.attempted(a!, makeResult({ costUsd: 0.2, attempts: 2, turns: [] }));
    expect(b.spent).toBeCloseTo(0.4, 12);
  });
});

describe('partialDecision (gates of a run --max-cost cut short)', () => {
  const results = (statuses: ('pass' | 'fail')[], variant: 'with_skill' | 'without_skill' = 'with_skill', from = 0): JobResult[] =>
    statuses.map((s, k) => makeResult({ id: `c${from + k + 1}/${variant}/run-1`, caseId: `c${from + k + 1}`, variant, status: s }));

  it('all_trials_passed: every trial that ran passed but with_skill jobs did not run → INCONCLUSIVE, exit 4', () => {
    const d = decide(trialsOf(results(['pass', 'pass', 'pass'])));
    expect(d.exitCode).toBe(0);
    const p = partialDecision(d, jobs(2, 'with_skill', 'custom', 3), '--max-cost $1.00 reached');
    const g = p.gates.find((x) => x.name === 'all_trials_passed')!;
    expect(g.state).toBe('inconclusive');
    expect(g.reason).toContain('but 2 with_skill job(s) did not run (--max-cost $1.00 reached), so not every planned trial passed');
    expect(p.exitCode).toBe(4);
    expect(partialDecision(d, jobs(2, 'with_skill', 'custom', 3), 'x').exitCode).toBe(4);
    expect(partialDecision({ ...d, config: { ...d.config, onInconclusive: 'pass' } }, jobs(1, 'with_skill', 'custom', 3), 'x').exitCode).toBe(0);
  });

  it('a failed trial still fails; only without_skill jobs not run leaves all_trials_passed as it was', () => {
    const failed = decide(trialsOf(results(['pass', 'fail'])));
    expect(partialDecision(failed, jobs(1, 'with_skill', 'custom', 2), 'x').exitCode).toBe(1);
    const ok = decide(trialsOf(results(['pass', 'pass'])));
    expect(partialDecision(ok, jobs(2, 'without_skill'), 'x').exitCode).toBe(0);
    expect(partialDecision(ok, [], 'x')).toBe(ok);
  });

  it('min_pass_rate: decided as usual when every case ran at least once; INCONCLUSIVE when a planned case never ran', () => {
    const d = decide(trialsOf(results(Array(20).fill('pass'))), { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0, minPassRate: 0.5 });
    expect(d.gates.find((g) => g.name === 'min_pass_rate')!.state).toBe('pass');
    // A second trial of c1 did not run: c1 has a trial, so the gate stands.
    const secondTrial = [{ ...jobs(1)[0]!, trial: 2, id: 'c1/with_skill/run-2' }];
    expect(partialDecision(d, secondTrial, 'x').gates.find((g) => g.name === 'min_pass_rate')!.state).toBe('pass');
    const p = partialDecision(d, jobs(3, 'with_skill', 'custom', 20), '--max-cost $1.00 reached');
    const g = p.gates.find((x) => x.name === 'min_pass_rate')!;
    expect(g.state).toBe('inconclusive');
    expect(g.reason).toContain('3 planned case(s) did not run at all (--max-cost $1.00 reached)');
    expect(p.exitCode).toBe(4);
  });
});
