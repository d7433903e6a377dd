/**
 * Planning a run (the plan stage as `skill-up run` calls it): apart from the driver
 * (src/run/suite.ts) so that `run --dry-run` plans without loading the driver's modules.
 */
import type { EngineConfig, Suite } from '../config/types.js';
import { planJobs, selectCases, type Job, type PlanOptions } from '../plan/plan.js';
import { shardJobs, type ShardRecord, type ShardSpec } from '../plan/shard.js';

/** What {@link planRun} decided: the jobs of this run and of the whole plan. */
export interface RunPlan {
  /** Every planned job (the whole plan, also of a shard). */
  fullPlan: Job[];
  /** The jobs this run runs (a shard's part of `fullPlan`, else all of it). */
  jobs: Job[];
  /** `--shard i/n`: which part this run is. */
  shard?: ShardRecord;
}

/**
 * Plans the run: the selected cases × `engines` (given to the plan stage as
 * `PlanOptions.engines`) × variants × trials, then `--shard`'s part of it (whole cases, the
 * same split on every machine). `baseline` is whether the run has the without_skill arm (its
 * `--baseline`/`--no-baseline` over eval.yaml's `benchmark.enabled`); `suite` is left as it is.
 * Notes each case that runs only on engines this run leaves out.
 * @throws PlanError when no case runs on these engines.
 */
export function planRun(suite: Suite, engines: EngineConfig[], options: PlanOptions, run: { baseline: boolean; shard?: ShardSpec }, notice: (line: string) => void = (line) => process.stderr.write(`${line}\n`)): RunPlan {
  const planOptions: PlanOptions = { ...options, engines: engines.map((e) => e.name) };
  // The plan stage reads the arms from `benchmark.enabled`: plan a view of the suite with this run's.
  const view: Suite = suite.benchmark.enabled === run.baseline ? suite : { ...suite, benchmark: { ...suite.benchmark, enabled: run.baseline } };
  const fullPlan = planJobs(view, planOptions);
  const sharded = run.shard ? shardJobs(selectCases(view, planOptions), fullPlan, run.shard, { trials: options.trials, variants: run.baseline ? 2 : 1 }) : undefined;
  const jobs = sharded?.jobs ?? fullPlan;
  const planned = new Set(jobs.map((j) => j.case.id));
  for (const c of suite.cases) {
    if (c.engines && !planned.has(c.id) && c.engines.every((e) => !engines.some((x) => x.name === e))) {
      notice(`note: case \`${c.id}\` runs only on ${c.engines.join(', ')}, which this run does not include`);
    }
  }
  return { fullPlan, jobs, ...(sharded ? { shard: sharded.record } : {}) };
}
