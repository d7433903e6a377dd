/** Cost totals per arm and their one wording (src/cost/totals.ts). */
import { describe, expect, it } from 'vitest';
import { armCost, costByArm, costTotal, formatCost } from '../../src/cost/totals.js';

const jobs = [
  { engine: 'a', variant: 'without_skill', cost_usd: 0.1 },
  { engine: 'a', variant: 'with_skill', cost_usd: 0.2, cost_estimated: true },
  { engine: 'a', variant: 'with_skill', cost_usd: 0.3 },
  { engine: 'b', variant: 'with_skill' },
  { engine: 'a', variant: 'with_skill' },
];

describe('cost totals', () => {
  it('sums per engine and variant, marks an arm estimated when any part is, and counts the priced jobs', () => {
    const arms = costByArm(jobs);
    expect(arms.map((a) => [a.engine, a.variant])).toEqual([['a', 'with_skill'], ['a', 'without_skill'], ['b', 'with_skill']]);
    expect(armCost(arms, 'a', 'with_skill')).toMatchObject({ estimated: true, priced: 2, jobs: 3 });
    expect(armCost(arms, 'a', 'with_skill').usd).toBeCloseTo(0.5, 12);
    expect(armCost(arms, 'a', 'without_skill')).toMatchObject({ usd: 0.1, estimated: false, priced: 1, jobs: 1 });
    expect(armCost(arms, 'b', 'with_skill')).toMatchObject({ usd: null, priced: 0, jobs: 1 });
    expect(armCost(arms, 'c', 'with_skill')).toMatchObject({ usd: null, jobs: 0 });
    expect(costTotal(jobs)).toMatchObject({ estimated: true, priced: 3, jobs: 5 });
  });

  it('writes a reported cost plainly and an estimated one as "~$x (estimated)"', () => {
    expect(formatCost({ usd: 0.42, estimated: false })).toBe('$0.42');
    expect(formatCost({ usd: 0.42, estimated: true })).toBe('~$0.42 (estimated)');
    expect(formatCost({ usd: 0.0031, estimated: true })).toBe('~$0.0031 (estimated)');
    expect(formatCost({ usd: null, estimated: false })).toBe('—');
    expect(formatCost({ usd: 1, estimated: false, priced: 3, jobs: 5 }, { coverage: true })).toBe('$1.00 (3 of 5 jobs priced)');
    expect(formatCost({ usd: 1, estimated: false, priced: 5, jobs: 5 }, { coverage: true })).toBe('$1.00');
  });
});
