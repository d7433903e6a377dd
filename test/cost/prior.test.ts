/** The previous iteration's cost per job (src/cost/prior.ts): what --dry-run estimates and --max-cost starts from. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dryRunCostText, previousCosts, priorMean } from '../../src/cost/prior.js';
import type { EngineConfig } from '../../src/config/types.js';
import type { Job } from '../../src/plan/plan.js';
import { job, makeDoc } from '../report/helpers.js';
import { makeCase } from '../run/helpers.js';

function outputRoot(iterations: Record<number, ReturnType<typeof makeDoc> | string>): string {
  const root = mkdtempSync(join(tmpdir(), 'su-prior-'));
  for (const [n, doc] of Object.entries(iterations)) {
    mkdirSync(join(root, `iteration-${n}`));
    writeFileSync(join(root, `iteration-${n}`, 'result.json'), typeof doc === 'string' ? doc : JSON.stringify(doc));
  }
  return root;
}

const costed = (w: number[], wo: number[], estimated = false) =>
  makeDoc([
    ...w.map((c, k) => job(`c${k}`, 'with_skill', 1, [['x', true]], { costUsd: c, costEstimated: estimated })),
    ...wo.map((c, k) => job(`c${k}`, 'without_skill', 1, [['x', false]], { costUsd: c, costEstimated: estimated })),
  ]);

const plan = (n: number, variant: 'with_skill' | 'without_skill', engine = 'custom'): Job[] =>
  Array.from({ length: n }, (_, k) => ({ id: `c${k}/${variant}/run-1`, index: k, case: makeCase(`c${k}`), engine, variant, trial: 1 }));
const custom: EngineConfig = { name: 'custom', displayName: 'agent', model: {}, kwargs: {} };
const names = new Map([['custom', 'agent']]);

describe('previousCosts', () => {
  it('takes the newest iteration that has a cost, passing over newer ones without cost and unreadable ones', async () => {
    const noCost = makeDoc([job('a', 'with_skill', 1, [['x', true]])]);
    const root = outputRoot({ 1: costed([9], [9]), 2: costed([0.2, 0.4], [0.1]), 3: noCost, 4: '{ not json' });
    const p = (await previousCosts(root))!;
    expect(p.file).toBe(join(root, 'iteration-2', 'result.json'));
    expect(priorMean(p, 'custom', 'with_skill')).toBeCloseTo(0.3, 12);
    expect(priorMean(p, 'custom', 'without_skill')).toBeCloseTo(0.1, 12);
    expect(priorMean(p, 'other', 'with_skill')).toBeCloseTo(0.7 / 3, 12); // an arm it did not have: the mean over all jobs
    expect(priorMean(null, 'custom', 'with_skill')).toBeNull();
    expect(await previousCosts(join(root, 'missing'))).toBeNull();
  });
});

describe('dryRunCostText', () => {
  it('multiplies each arm’s planned jobs by that arm’s mean cost per job, and says whether --max-cost fits', async () => {
    const prior = await previousCosts(outputRoot({ 3: costed([0.2, 0.4], [0.1, 0.1]) }));
    const jobs = [...plan(4, 'with_skill'), ...plan(4, 'without_skill')];
    const text = dryRunCostText(jobs, [custom], prior, names, 1);
    expect(text).toContain('Cost: ≈ $1.60 for 8 job(s) (from iteration-3 of this suite: mean $0.30 per job for agent with_skill, $0.10 for agent without_skill)');
    expect(text).toContain('  above --max-cost $1.00: about 5 of 8 job(s) would run before scheduling stops');
    expect(dryRunCostText(jobs, [custom], prior, names, 2)).toContain('  within --max-cost $2.00');
    const est = await previousCosts(outputRoot({ 1: costed([1], [1], true) }));
    expect(dryRunCostText(plan(2, 'with_skill'), [custom], est, names)).toContain("that run's costs were themselves estimated from tokens");
  });

  it('says why there is no estimate: no earlier iteration with costs, or the scripted model', () => {
    expect(dryRunCostText(plan(2, 'with_skill'), [custom], null, names, 5)).toContain(
      "Cost: no estimate: no earlier iteration of this suite recorded a cost (each run's cost is in its result.json and summary); --max-cost $5.00 learns the cost per job from this run's first job",
    );
    const scripted = { ...custom, model: { provider: 'scripted' } };
    expect(dryRunCostText(plan(2, 'with_skill'), [scripted], null, names, 5)).toContain('Cost: none: the engine uses the scripted model (no cost); --max-cost $5.00 cannot bind');
  });
});
