/**
 * `--shard i/n` assignment (src/plan/shard.ts): whole cases, deterministic, balanced, the same
 * whatever the engine list, every case in exactly one shard; bad forms are usage errors.
 */
import { describe, expect, it } from 'vitest';
import { planJobs, PlanError, selectCases } from '../../src/plan/plan.js';
import { assignShards, caseWeight, parseShard, shardJobs, type WeightedCase } from '../../src/plan/shard.js';
import type { CaseSpec, EngineConfig } from '../../src/config/types.js';
import { makeCase, makeSuite } from '../run/helpers.js';
import { seededRandom } from '../../src/stats/distributions.js';

/** The stats stage's seeded generator (mulberry32), so the "random" suites are the same every run. */
const rng = seededRandom;

function randomCases(n: number, seed: number): WeightedCase[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, i) => ({ id: `case-${String(i).padStart(3, '0')}-${Math.floor(r() * 1000)}`, weight: 1 + Math.floor(r() * 12) }));
}

const loads = (parts: string[][], cases: WeightedCase[]) => {
  const w = new Map(cases.map((c) => [c.id, c.weight]));
  return parts.map((p) => p.reduce((s, id) => s + w.get(id)!, 0));
};

const turns = (k: number): CaseSpec['turns'] => Array.from({ length: k }, (_, i) => ({ content: `turn ${i + 1}`, capture: [] }));

describe('parseShard', () => {
  it('reads i/n', () => {
    expect(parseShard('1/3')).toEqual({ index: 1, count: 3 });
    expect(parseShard(' 1000/1000 ')).toEqual({ index: 1000, count: 1000 });
    expect(parseShard('1/1')).toEqual({ index: 1, count: 1 });
  });

  it.each(['0/3', '4/3', '1/0', '3', 'a/b', '1.5/3', '-1/3', '1/1001', '', '1/3/5', '1//3'])('refuses %j with one message naming the form', (v) => {
    expect(() => parseShard(v)).toThrow(PlanError);
    expect(() => parseShard(v)).toThrow(new RegExp(`^--shard must be i/n with 1 ≤ i ≤ n ≤ 1000 .*, got \`${v.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\``));
  });
});

describe('assignShards', () => {
  it('puts every case in exactly one shard, keeping the input order within a shard', () => {
    const cases = randomCases(97, 1);
    for (const n of [1, 2, 3, 7, 50, 97]) {
      const parts = assignShards(cases, n);
      expect(parts).toHaveLength(n);
      const all = parts.flat();
      expect(all.sort()).toEqual(cases.map((c) => c.id).sort());
      for (const p of parts) {
        expect(p.length).toBeGreaterThan(0);
        const pos = p.map((id) => cases.findIndex((c) => c.id === id));
        expect(pos).toEqual([...pos].sort((a, b) => a - b));
      }
    }
  });

  it('is deterministic and does not depend on the order of the cases', () => {
    const cases = randomCases(60, 2);
    const a = assignShards(cases, 4);
    expect(assignShards(cases, 4)).toEqual(a);
    const shuffled = [...cases].reverse();
    const b = assignShards(shuffled, 4);
    expect(b.map((p) => [...p].sort())).toEqual(a.map((p) => [...p].sort()));
  });

  it('balances the load: any two shards differ by at most the heaviest case', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const cases = randomCases(20 + seed * 7, seed);
      const heaviest = Math.max(...cases.map((c) => c.weight));
      const total = cases.reduce((s, c) => s + c.weight, 0);
      for (const n of [2, 3, 5, 8]) {
        const l = loads(assignShards(cases, n), cases);
        expect(Math.max(...l) - Math.min(...l), `seed ${seed}, n ${n}: ${l.join(' ')}`).toBeLessThanOrEqual(heaviest);
        expect(Math.max(...l)).toBeLessThanOrEqual(Math.ceil(total / n) + heaviest);
      }
    }
  });

  it('deals equal cases out in id order, round robin', () => {
    const cases = ['c03', 'c01', 'c05', 'c02', 'c04', 'c06', 'c07'].map((id) => ({ id, weight: 2 }));
    // c01 → 1, c02 → 2, c03 → 3, c04 → 1, …; each shard lists its cases in the input's order.
    expect(assignShards(cases, 3)).toEqual([['c01', 'c04', 'c07'], ['c05', 'c02'], ['c03', 'c06']]);
  });

  it('puts the heaviest cases first, one per shard', () => {
    const cases = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 9 },
      { id: 'c', weight: 5 },
      { id: 'd', weight: 4 },
    ];
    // b (9) → 1, c (5) → 2, d (4) → 2, then a (1) to the tie at 9: the lower shard number.
    expect(assignShards(cases, 2)).toEqual([['a', 'b'], ['c', 'd']]);
  });

  it('refuses a duplicate id or a bad weight', () => {
    expect(() => assignShards([{ id: 'a', weight: 1 }, { id: 'a', weight: 1 }], 2)).toThrow(/appears twice/);
    expect(() => assignShards([{ id: 'a', weight: 0 }], 1)).toThrow(/weight/);
  });
});

describe('shardJobs', () => {
  const cases = [
    makeCase('alpha', { trials: 3 }),
    makeCase('beta', { turns: turns(3) }),
    makeCase('gamma', { trials: 2, turns: turns(2) }),
    makeCase('delta'),
    makeCase('epsilon', { trials: 4 }),
    makeCase('zeta', { engines: ['codex'] }),
    makeCase('eta', { trials: 2 }),
  ];
  const custom = makeSuite([]).engine;
  const codex: EngineConfig = { name: 'codex', displayName: 'codex', model: {}, kwargs: {} };
  const claude: EngineConfig = { name: 'claude_code', displayName: 'claude_code', model: {}, kwargs: {} };

  const split = (engines: EngineConfig[], n: number, baseline = true, trials?: number) => {
    const suite = makeSuite(cases, { engines, engine: engines[0]! });
    const opts = { baseline, ...(trials ? { trials } : {}) };
    const full = planJobs(suite, opts);
    return { full, parts: Array.from({ length: n }, (_, i) => shardJobs(selectCases(suite, opts), full, { index: i + 1, count: n }, { trials, variants: baseline ? 2 : 1 })) };
  };

  it('weighs a case as turns × trials × variants', () => {
    expect(caseWeight(makeCase('x', { trials: 3, turns: turns(2) }), undefined, 2)).toBe(12);
    expect(caseWeight(makeCase('x', { trials: 3, turns: turns(2) }), 5, 1)).toBe(10);
  });

  it('keeps whole cases: every engine, variant and trial of a case in one shard; the shards together are the plan', () => {
    const { full, parts } = split([custom, codex], 3);
    const ids = parts.flatMap((p) => p.jobs.map((j) => j.id));
    expect([...ids].sort()).toEqual(full.map((j) => j.id).sort());
    for (const p of parts) {
      expect(p.jobs.map((j) => j.index)).toEqual(p.jobs.map((_, i) => i));
      const mine = new Set(p.record.cases);
      expect(p.jobs.every((j) => mine.has(j.case.id))).toBe(true);
      expect(full.filter((j) => mine.has(j.case.id)).map((j) => j.id)).toEqual(p.jobs.map((j) => j.id));
      expect(p.record.plan_cases).toEqual(cases.map((c) => c.id));
    }
    expect(parts.flatMap((p) => p.record.cases).sort()).toEqual(cases.map((c) => c.id).sort());
  });

  it('assigns the same cases whatever the engine list', () => {
    const byEngines = [[custom], [custom, codex], [codex, claude, custom]].map((e) => split(e, 3).parts.map((p) => p.record.cases));
    expect(byEngines[1]).toEqual(byEngines[0]);
    expect(byEngines[2]).toEqual(byEngines[0]);
  });

  it('follows --trials and the variants, as every shard of one run shares them', () => {
    // Weights with --trials 2 and both variants: beta 12, gamma 8, the others 4.
    expect(split([custom], 3, true, 2).parts.map((p) => p.record.cases)).toEqual([['beta', 'zeta'], ['gamma', 'epsilon'], ['alpha', 'delta', 'eta']]);
  });

  it('refuses more shards than cases, and a shard whose cases run on none of the engines', () => {
    const suite = makeSuite(cases);
    const full = planJobs(suite);
    expect(() => shardJobs(selectCases(suite, {}), full, { index: 8, count: 8 }, { variants: 1 })).toThrow(
      new PlanError('--shard 8/8: the plan has 7 case(s), fewer than 8 shards, and a shard is one or more whole cases; use at most --shard i/7'),
    );
    const only = makeSuite([makeCase('a'), makeCase('b', { engines: ['codex'] })]);
    expect(() => shardJobs(selectCases(only, {}), planJobs(only), { index: 2, count: 2 }, { variants: 1 })).toThrow(/--shard 2\/2: its case\(s\) b run on none of this run's engine\(s\) \(custom\)/);
  });
});
