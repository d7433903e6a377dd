/**
 * Cost totals per engine and variant (arm) and for the whole run, from result.json's jobs
 * (`cost_usd`, `cost_estimated`), with the one wording every report uses: `$0.42` for a cost
 * the engines reported, `~$0.42 (estimated)` when any part of the sum was estimated from
 * tokens and the price table. Pure.
 */

/** The cost fields of one job as result.json writes them. */
export interface CostedJob {
  engine: string;
  variant: string;
  cost_usd?: number;
  cost_estimated?: boolean;
}

/** The cost of a set of jobs. */
export interface CostSum {
  /** Sum of the jobs' costs; null when no job has one. */
  usd: number | null;
  /** Some part of `usd` is an estimate. */
  estimated: boolean;
  /** Jobs with a cost (reported or estimated) / all jobs. */
  priced: number;
  jobs: number;
}

/** One engine × variant. */
export interface ArmCost extends CostSum {
  engine: string;
  variant: string;
}

function sum(jobs: readonly CostedJob[]): CostSum {
  let usd = 0;
  let priced = 0;
  let estimated = false;
  for (const j of jobs) {
    if (typeof j.cost_usd !== 'number' || !Number.isFinite(j.cost_usd)) continue;
    usd += j.cost_usd;
    priced++;
    if (j.cost_estimated) estimated = true;
  }
  return { usd: priced ? usd : null, estimated, priced, jobs: jobs.length };
}

/** The whole run's cost. */
export function costTotal(jobs: readonly CostedJob[]): CostSum {
  return sum(jobs);
}

/** Per engine and variant, in first-appearance order (with_skill before without_skill within an engine). */
export function costByArm(jobs: readonly CostedJob[]): ArmCost[] {
  const groups = new Map<string, CostedJob[]>();
  for (const j of jobs) {
    const k = `${j.engine}\u0000${j.variant}`;
    const g = groups.get(k);
    if (g) g.push(j);
    else groups.set(k, [j]);
  }
  const out = [...groups.entries()].map(([k, g]) => {
    const [engine, variant] = k.split('\u0000') as [string, string];
    return { engine, variant, ...sum(g) };
  });
  const engines = [...new Set(out.map((a) => a.engine))];
  return out.sort((a, b) => engines.indexOf(a.engine) - engines.indexOf(b.engine) || (a.variant === 'with_skill' ? -1 : b.variant === 'with_skill' ? 1 : 0));
}

/** One arm's cost, or an empty sum when the arm has no job. */
export function armCost(arms: readonly ArmCost[], engine: string, variant: string): CostSum {
  return arms.find((a) => a.engine === engine && a.variant === variant) ?? { usd: null, estimated: false, priced: 0, jobs: 0 };
}

/** `$0.42`; under a cent two significant digits (`$0.0031`). */
export function usd(x: number): string {
  return x !== 0 && Math.abs(x) < 0.01 ? `$${x.toPrecision(2)}` : `$${x.toFixed(2)}`;
}

/**
 * A cost as every report shows it: `$0.42`, `~$0.42 (estimated)`, `—` when unknown; with
 * `coverage`, `(3 of 5 jobs priced)` when not every job had a cost.
 */
export function formatCost(c: Pick<CostSum, 'usd' | 'estimated'> & Partial<Pick<CostSum, 'priced' | 'jobs'>>, opts: { coverage?: boolean } = {}): string {
  if (c.usd === null) return '—';
  const base = c.estimated ? `~${usd(c.usd)} (estimated)` : usd(c.usd);
  const partial = opts.coverage && c.priced !== undefined && c.jobs !== undefined && c.priced < c.jobs ? ` (${c.priced} of ${c.jobs} jobs priced)` : '';
  return `${base}${partial}`;
}
