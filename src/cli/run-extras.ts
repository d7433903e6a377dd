/**
 * The parts of `skill-up run` about cost, the budget, report formats, the model and verbosity
 * (issue 9: `--max-cost`, cost totals, the dry-run estimate; alibaba/skill-up's `--format`,
 * `--model`, `--no-delete`, `-v`/`-vv`), kept here so cli/run.ts only calls them.
 */
import type { ReportFormat, Suite } from '../config/types.js';
import { CostBudget } from '../cost/budget.js';
import { partialDecision } from '../cost/partial.js';
import { dryRunCostText, previousCosts } from '../cost/prior.js';
import { costConsoleLines, costNotes, type RunCostMeta } from '../cost/result.js';
import { usd } from '../cost/totals.js';
import type { Decision } from '../gate/index.js';
import type { Job } from '../plan/plan.js';
import type { JobHooks } from '../run/run.js';
import type { JobResult } from '../run/types.js';
import { createVerbose } from '../run/verbose.js';
import { DECIMAL, UsageError } from './args.js';
import { parseFormats } from './report.js';

/** What the flags of this module resolved to, for the whole run. */
export interface RunExtras {
  /** `--format`: exactly these formats besides result.json (undefined: eval.yaml's report.formats and the defaults). */
  formats?: ReportFormat[];
  /** `--max-cost`, shared by every iteration of the run. */
  budget?: CostBudget;
  verbose: ReturnType<typeof createVerbose> | null;
}

/** `--format a,b …`: alibaba/skill-up's spellings (json, junit, html), skill-up's (markdown, benchmark), md and xml. @throws UsageError */
export function formatsFlag(values: string[] | undefined): ReportFormat[] | undefined {
  if (values === undefined) return undefined;
  const f = parseFormats(values);
  if (!f.length) throw new UsageError('--format needs a format: json, junit, markdown, benchmark or html (repeatable or comma-separated)');
  return f;
}

/** `--max-cost USD` (`5`, `0.50`, `$5`). @throws UsageError */
export function maxCostFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim().replace(/^\$/, '');
  const n = DECIMAL.test(text) ? Number(text) : NaN;
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 1e6) throw new UsageError(`--max-cost must be an amount in USD above 0 (e.g. 5 or 0.50), got \`${value}\``);
  return n;
}

/** `--model NAME`: every engine of the run uses this model name (engine.model.name). @throws UsageError */
export function applyModelOverride(suite: Suite, model: string | undefined): void {
  if (model === undefined) return;
  const name = model.trim();
  if (!name) throw new UsageError('--model needs a model name (e.g. --model claude-sonnet-4-5)');
  for (const e of new Set([suite.engine, ...suite.engines])) e.model = { ...e.model, name };
}

/** Engine id → the name the suite gives it. */
export function engineNames(suite: Suite): Map<string, string> {
  return new Map(suite.engines.map((e) => [e.name, e.displayName]));
}

/** Resolves the extras before anything runs (the budget reads the previous iteration's costs). */
export async function prepareExtras(suite: Suite, outputRoot: string, opts: { formats?: ReportFormat[]; maxCost?: number; verbose: number }): Promise<RunExtras> {
  const extras: RunExtras = { formats: opts.formats, verbose: opts.verbose > 0 ? createVerbose(opts.verbose) : null };
  if (opts.maxCost !== undefined) {
    extras.budget = new CostBudget(opts.maxCost, {
      prior: await previousCosts(outputRoot),
      scriptedEngines: suite.engines.filter((e) => e.model.provider === 'scripted').map((e) => e.name),
      engines: suite.engines.map((e) => e.name),
      names: engineNames(suite),
    });
  }
  return extras;
}

/** `--dry-run`'s cost estimate (from the newest earlier iteration with costs). */
export async function dryRunCost(suite: Suite, jobs: Job[], outputRoot: string, maxCost?: number): Promise<string> {
  return dryRunCostText(jobs, suite.engines, await previousCosts(outputRoot), engineNames(suite), maxCost);
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
export function finishIteration(suite: Suite, extras: RunExtras, decision: Decision, planned: number, results: JobResult[]): IterationCost {
  const budget = extras.budget;
  const refused = budget?.notRun ?? [];
  const notes = costNotes(suite.engines, results);
  const jobs = results.map((r) => ({ engine: r.engine, variant: r.variant, cost_usd: r.costUsd, cost_estimated: r.costEstimated }));
  const lines = costConsoleLines(jobs, notes, engineNames(suite));
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
