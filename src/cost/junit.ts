/**
 * The cost of a JUnit test suite (one engine × variant) and of the whole run, as
 * `<property>`s: `cost_usd` (the arm's sum), `cost_estimated` (true when part of it was
 * estimated from tokens), `cost` (as every report shows it: `~$0.42 (estimated)`), the run's
 * `cost.total_usd`, and `not_run` / `not_run_reason` of a run cut short by `--max-cost`.
 */
import type { JobJson, ResultDoc } from '../report/result-json.js';
import { costTotal, formatCost } from './totals.js';

/** Properties for the suite of `jobs` (one engine and variant) of `doc`. */
export function costProperties(doc: Pick<ResultDoc, 'jobs' | 'not_run'> & { not_run_reason?: string }, jobs: readonly JobJson[]): [string, string][] {
  const out: [string, string][] = [];
  const arm = costTotal(jobs);
  if (arm.usd !== null) out.push(['cost_usd', String(Number(arm.usd.toFixed(6)))], ['cost_estimated', String(arm.estimated)], ['cost', formatCost(arm, { coverage: true })]);
  const total = costTotal(doc.jobs);
  if (total.usd !== null) out.push(['cost.total_usd', String(Number(total.usd.toFixed(6)))], ['cost.total', formatCost(total, { coverage: true })]);
  if (doc.not_run && doc.not_run_reason) out.push(['not_run', String(doc.not_run)], ['not_run_reason', doc.not_run_reason]);
  return out;
}
