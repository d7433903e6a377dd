/**
 * The cost side of a run (issue 9: `--max-cost`, cost totals, the dry-run estimate) and its
 * verbosity (`-v`/`-vv`): the budget shared by every iteration, the executeJobs hooks it
 * needs, and what an iteration's record gets from it once its jobs are done. The flags that
 * set these are read in src/cli/run-extras.ts.
 */
import type { EngineConfig, ReportFormat } from '../config/types.js';
import { CostBudget } from '../cost/budget.js';
import { partialDecision } from '../cost/partial.js';
import { dryRunCostText, previousCosts } from '../cost/prior.js';
import { costConsoleLines, costNotes, type RunCostMeta } from '../cost/result.js';
import { usd } from '../cost/totals.js';
import type { Decision } from '../gate/index.js';
import type { Job } from '../plan/plan.js';
import type { JobHooks } from './run.js';
import type { JobResult } from './types.js';
import { createVerbose } from './verbose.js';

/** What `--format`, `--max-cost` and `-v` resolved to, for the whole run. */
export interface RunExtras {
  /** `--format`: exactly these formats besides result.json (undefined: eval.yaml's report.formats and the defaults). */
  formats?: ReportFormat[];
  /** `--max-cost`, shared by every iteration of the run. */
  budget?: CostBudget;
  verbose: ReturnType<typeof createVerbose> | null;
}

/** Engine id → the name the suite gives it (`displayName`). */
export function engineNames(engines: EngineConfig[]): Map<string, string> {
  return new Map(engines.map((e) => [e.name, e.displayName]));
}

/**
 * Resolves the extras before anything runs (the budget reads the previous iteration's costs
 * under `outputRoot`). `engines` are the run's engines; `verbose` is 0, 1 (-v) or 2 (-vv).
 */
export async function prepareExtras(engines: EngineConfig[], outputRoot: string, opts: { formats?: ReportFormat[]; maxCost?: number; verbose: number }): Promise<RunExtras> {
  const extras: RunExtras = { formats: opts.formats, verbose: opts.verbose > 0 ? createVerbose(opts.verbose) : null };
  if (opts.maxCost !== undefined) {
    extras.budget = new CostBudget(opts.maxCost, {
      prior: await previousCosts(outputRoot),
      scriptedEngines: engines.filter((e) => e.model.provider === 'scripted').map((e) => e.name),
      engines: engines.map((e) => e.name),
      names: engineNames(engines),
    });
  }
  return extras;
}

/** `--dry-run`'s cost estimate (from the newest earlier iteration with costs under `outputRoot`), as console text. */
export async function dryRunCost(engines: EngineConfig[], jobs: Job[], outputRoot: string, maxCost?: number): Promise<string> {
  return dryRunCostText(jobs, engines, await previousCosts(outputRoot), engineNames(engines), maxCost);
}

/**
 * The executeJobs hooks of `--max-cost`: the budget admits each job and counts every attempt
 * (each already priced by runJobOnce: reported, else estimated, never for the scripted model).
 */
export function jobHooks(extras: RunExtras): JobHooks {
  const budget = extras.budget;
  if (!budget) return {};
  return {
    admit: (job: Job, signal: AbortSignal) => budget.admit(job, signal),
    attempted: (job: Job, result: JobResult) => budget.attempted(job, result),
    released: (job: Job) => budget.released(job),
  };
}

/** What an iteration's record gets from the extras once its jobs are done. */
export interface IterationCost {
  decision: Decision;
  notRun: number;
  notRunReason?: string;
  cost: RunCostMeta;
  /** For the console summary, after the pass rates. */
  lines: string[];
}

/**
 * After an iteration's jobs: the jobs the budget refused (not run, the reason), the gates
 * adjusted for them (cost/partial.ts), the cost notes and the console's cost lines.
 */
export function finishIteration(engines: EngineConfig[], extras: RunExtras, decision: Decision, planned: number, results: JobResult[]): IterationCost {
  const budget = extras.budget;
  const refused = budget?.notRun ?? [];
  const notes = costNotes(engines, results);
  const jobs = results.map((r) => ({ engine: r.engine, variant: r.variant, cost_usd: r.costUsd, cost_estimated: r.costEstimated }));
  const lines = costConsoleLines(jobs, notes, engineNames(engines));
  const cost: RunCostMeta = { notes, ...(budget ? { budget: { maxUsd: budget.maxUsd, spentUsd: budget.spent, stopped: budget.stopped, notRun: refused.length } } : {}) };
  if (budget) lines.push(`--max-cost ${usd(budget.maxUsd)}: spent ${usd(budget.spent)} so far${budget.stopped ? ', budget reached' : ''}`);
  return {
    decision: budget && refused.length ? partialDecision(decision, refused, budget.reason) : decision,
    notRun: planned - results.length,
    ...(budget && refused.length ? { notRunReason: budget.reason } : {}),
    cost,
    lines,
  };
}
