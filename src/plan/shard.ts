/**
 * Shards (`skill-up run --shard i/n`): the plan's cases split into n parts, so that n machines
 * each run one part and `skill-up merge` puts the results back together.
 *
 * Whole cases go to a shard: every engine, variant and trial of a case lands in the same
 * shard, so paired statistics (with vs without, case by case) stay valid within a shard and
 * the merge is a plain union. The assignment is a pure function of the selected cases (their
 * ids, turns and trials) and of the run's trial and variant settings: it never depends on the
 * engine list, the machine or the order of the case files on disk.
 *
 * Method: each case weighs turns × trials × variants (a trigger case runs one variant; the work one engine does on it, the same
 * factor for every engine, so engines leave the balance unchanged). Cases sorted by weight,
 * heaviest first, ties by case id (code-unit order), go one by one to the least-loaded shard,
 * ties to the lowest shard number (greedy longest-processing-time). With cases of equal weight
 * this deals them out in id order: c01 → 1, c02 → 2, c03 → 3, c04 → 1, … The loads of any two
 * shards then differ by at most the heaviest case's weight.
 */
import type { CaseSpec } from '../config/types.js';
import { PlanError, type Job } from './plan.js';

/** The largest shard count `--shard` accepts. */
export const MAX_SHARDS = 1000;

/** `--shard i/n`: shard `index` (1-based) of `count`. */
export interface ShardSpec {
  index: number;
  count: number;
}

/** A case as the assignment sees it. */
export interface WeightedCase {
  id: string;
  /** turns × trials × variants; ≥ 1. */
  weight: number;
}

/** result.json's `shard` block (snake_case, as written). */
export interface ShardRecord {
  /** 1-based. */
  index: number;
  count: number;
  /** The case ids of this shard, in suite order. */
  cases: string[];
  /** Every case of the sharded plan (all shards together), in suite order: what `merge` checks completeness against. */
  plan_cases: string[];
}

const FORM = `--shard must be i/n with 1 ≤ i ≤ n ≤ ${MAX_SHARDS} (e.g. --shard 2/4 runs the second of four parts)`;

/** Parses `i/n`. @throws PlanError (a usage error, exit code 2) naming the value given. */
export function parseShard(value: string): ShardSpec {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  if (!m) throw new PlanError(`${FORM}, got \`${value}\``);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || count > MAX_SHARDS) throw new PlanError(`${FORM}, got \`${value}\` (n = ${count})`);
  if (index < 1 || index > count) throw new PlanError(`${FORM}, got \`${value}\` (i = ${index} is not within 1..${count})`);
  return { index, count };
}

/** A case's weight: turns × trials × variants (engines deliberately left out). */
export function caseWeight(c: Pick<CaseSpec, 'turns' | 'trials'>, trials: number | undefined, variants: number): number {
  return Math.max(1, c.turns.length) * Math.max(1, trials ?? c.trials) * Math.max(1, variants);
}

const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Assigns every case to one of `count` shards. Returns, per shard (index 0 = shard 1), its
 * case ids in the order of `cases`. Deterministic: which shard a case gets depends on the ids
 * and weights only, not on the order of `cases`.
 * @throws RangeError for a duplicate id, a weight below 1 or a count below 1.
 */
export function assignShards(cases: readonly WeightedCase[], count: number): string[][] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`shard count must be an integer ≥ 1, got ${count}`);
  const ids = new Set<string>();
  for (const c of cases) {
    if (ids.has(c.id)) throw new RangeError(`case id \`${c.id}\` appears twice`);
    if (!(c.weight >= 1)) throw new RangeError(`case \`${c.id}\`: weight must be ≥ 1, got ${c.weight}`);
    ids.add(c.id);
  }
  const order = [...cases].sort((a, b) => b.weight - a.weight || byId(a.id, b.id));
  const load = new Array<number>(count).fill(0);
  const shardOf = new Map<string, number>();
  for (const c of order) {
    let best = 0;
    for (let s = 1; s < count; s++) if (load[s]! < load[best]!) best = s;
    load[best]! += c.weight;
    shardOf.set(c.id, best);
  }
  const out: string[][] = Array.from({ length: count }, () => []);
  for (const c of cases) out[shardOf.get(c.id)!]!.push(c.id);
  return out;
}

/**
 * Keeps the jobs of shard `shard` of the plan: `cases` are the selected cases in suite order
 * (plan.ts `selectCases`), `jobs` the full plan. The kept jobs are renumbered 0..k−1 in plan
 * order. @throws PlanError when the shard would hold no case or no job.
 */
export function shardJobs(cases: readonly CaseSpec[], jobs: readonly Job[], shard: ShardSpec, opts: { trials?: number; variants: number }): { jobs: Job[]; record: ShardRecord } {
  const planCases = cases.map((c) => c.id);
  if (shard.count > cases.length) {
    throw new PlanError(
      `--shard ${shard.index}/${shard.count}: the plan has ${cases.length} case(s), fewer than ${shard.count} shards, and a shard is one or more whole cases; use at most --shard i/${cases.length}`,
    );
  }
  const parts = assignShards(cases.map((c) => ({ id: c.id, weight: caseWeight(c, opts.trials, c.shouldTrigger !== undefined ? 1 : opts.variants) })), shard.count);
  const mine = parts[shard.index - 1]!;
  const keep = new Set(mine);
  const kept = jobs.filter((j) => keep.has(j.case.id)).map((j, index) => ({ ...j, index }));
  if (kept.length === 0) {
    const engines = [...new Set(jobs.map((j) => j.engine))].join(', ');
    throw new PlanError(`--shard ${shard.index}/${shard.count}: its case(s) ${mine.join(', ')} run on none of this run's engine(s) (${engines}): the shard has no job`);
  }
  return { jobs: kept, record: { index: shard.index, count: shard.count, cases: mine, plan_cases: planCases } };
}
