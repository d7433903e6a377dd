/**
 * What the previous iteration of a suite cost per job, per engine and variant: the estimate
 * `run --dry-run` prints, and the first guess of `--max-cost` before any job of this run has
 * finished. Read from the newest iteration under the output root whose result.json holds a
 * cost (src/report/iterations.ts).
 */
import { basename, dirname } from 'node:path';
import type { EngineConfig } from '../config/types.js';
import type { Job } from '../plan/plan.js';
import { fromNewestIteration } from '../report/iterations.js';
import { costByArm, costTotal, usd } from './totals.js';

/** Mean cost per job of one arm of the earlier run. */
export interface PriorArm {
  engine: string;
  variant: string;
  meanUsd: number;
  /** Jobs the mean is over (those with a cost). */
  jobs: number;
  estimated: boolean;
}

/** The earlier run's cost per job. */
export interface CostPrior {
  iteration: number;
  /** Its result.json. */
  file: string;
  arms: PriorArm[];
  /** Mean over every job with a cost, for an arm the earlier run did not have. */
  overall: { meanUsd: number; jobs: number; estimated: boolean };
}

/** The newest earlier iteration under `outputRoot` with at least one job cost; null when none. */
export async function previousCosts(outputRoot: string): Promise<CostPrior | null> {
  return fromNewestIteration(outputRoot, (doc, file, iteration) => {
    const total = costTotal(doc.jobs);
    if (total.usd === null) return null;
    const arms = costByArm(doc.jobs)
      .filter((a) => a.usd !== null)
      .map((a) => ({ engine: a.engine, variant: a.variant, meanUsd: a.usd! / a.priced, jobs: a.priced, estimated: a.estimated }));
    return { iteration: doc.iteration ?? iteration, file, arms, overall: { meanUsd: total.usd / total.priced, jobs: total.priced, estimated: total.estimated } };
  });
}

/** The earlier run's mean cost per job of `engine` × `variant`, else over all its jobs; null without a prior. */
export function priorMean(prior: CostPrior | null, engine: string, variant: string): number | null {
  if (!prior) return null;
  return prior.arms.find((a) => a.engine === engine && a.variant === variant)?.meanUsd ?? prior.overall.meanUsd;
}

/** `iteration-3` (the folder of a result.json). */
function iterationName(file: string): string {
  return basename(dirname(file));
}

/**
 * `--dry-run`'s cost line(s): `≈ $X for N job(s) (from iteration-K of this suite: mean $Y per
 * job for <engine> <variant>, …)`, or why there is no estimate. With `maxUsd`, whether the
 * estimate fits the budget.
 */
export function dryRunCostText(jobs: Job[], engines: EngineConfig[], prior: CostPrior | null, names: Map<string, string>, maxUsd?: number): string {
  const name = (e: string) => names.get(e) ?? e;
  const scripted = new Set(engines.filter((e) => e.model.provider === 'scripted').map((e) => e.name));
  const paid = jobs.filter((j) => !scripted.has(j.engine));
  const lines: string[] = [''];
  if (paid.length === 0) {
    lines.push(`Cost: none: ${engines.length > 1 ? 'every engine uses' : 'the engine uses'} the scripted model (no cost)${maxUsd !== undefined ? `; --max-cost ${usd(maxUsd)} cannot bind` : ''}`);
    return `${lines.join('\n')}\n`;
  }
  if (!prior) {
    lines.push(`Cost: no estimate: no earlier iteration of this suite recorded a cost (each run's cost is in its result.json and summary)${maxUsd !== undefined ? `; --max-cost ${usd(maxUsd)} learns the cost per job from this run's first job` : ''}`);
    return `${lines.join('\n')}\n`;
  }
  const arms = new Map<string, { engine: string; variant: string; n: number }>();
  for (const j of paid) {
    const k = `${j.engine}\u0000${j.variant}`;
    const a = arms.get(k) ?? { engine: j.engine, variant: j.variant, n: 0 };
    a.n++;
    arms.set(k, a);
  }
  let total = 0;
  const parts: string[] = [];
  for (const a of arms.values()) {
    const own = prior.arms.find((p) => p.engine === a.engine && p.variant === a.variant);
    const mean = own?.meanUsd ?? prior.overall.meanUsd;
    total += mean * a.n;
    const what = `${usd(mean)}${parts.length ? '' : ' per job'} for ${name(a.engine)} ${a.variant}`;
    parts.push(`${what}${own ? '' : ' (not in that run: its mean over all jobs)'}`);
  }
  const wasEstimated = prior.arms.some((p) => p.estimated) || prior.overall.estimated;
  const skippedScripted = jobs.length - paid.length;
  lines.push(
    `Cost: ≈ ${usd(total)} for ${paid.length} job(s) (from ${iterationName(prior.file)} of this suite: mean ${parts.join(', ')}` +
      `${wasEstimated ? "; that run's costs were themselves estimated from tokens" : ''})` +
      `${skippedScripted ? `; ${skippedScripted} job(s) on the scripted model cost nothing` : ''}`,
  );
  if (maxUsd !== undefined) {
    if (total <= maxUsd) lines.push(`  within --max-cost ${usd(maxUsd)}`);
    else {
      const perJob = total / paid.length;
      const fit = Math.max(0, Math.floor(maxUsd / perJob));
      lines.push(`  above --max-cost ${usd(maxUsd)}: about ${Math.min(fit, paid.length)} of ${paid.length} job(s) would run before scheduling stops`);
    }
  }
  return `${lines.join('\n')}\n`;
}
