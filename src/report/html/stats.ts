/**
 * The statistics and gates the HTML report shows, in result.json's own (snake_case) shape,
 * from one source whatever the document holds: its `summary` and `gates` when they are there
 * and well formed (the same shape check `skill-up report` applies), else computed from its
 * `jobs` by the decision stage with the settings recorded in `decision.config`.
 */
import { decide, DEFAULT_DECISION, type DecisionConfig } from '../../gate/index.js';
import { behaviourConfigOf } from '../../gate/behaviour.js';
import type { UpliftJson, VariantJson } from '../decision-text.js';
import { summaryProblem } from '../load.js';
import { trialOfJob, type ResultDoc, type ResultGate } from '../result-json.js';

/** The statistics the report shows. */
export interface Stats {
  variants: VariantJson[];
  uplift: UpliftJson[];
  gates: ResultGate[];
  /** Where the statistics came from: result.json's `summary`, or computed here from its jobs. */
  source: 'summary' | 'computed';
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** camelCase keys → snake_case, recursively (stats values hold no user keys). */
function snake(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snake);
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(x)]));
  return v;
}

/** `gates` when every entry has the fields the report reads; null otherwise. */
function gatesOf(gates: unknown): ResultGate[] | null {
  if (!Array.isArray(gates)) return null;
  const ok = gates.every((g) => isObj(g) && typeof g.name === 'string' && typeof g.reason === 'string' && (g.state === 'pass' || g.state === 'fail' || g.state === 'inconclusive'));
  return ok ? (gates as ResultGate[]) : null;
}

/** The decision settings recorded in result.json (`decision.config`), the defaults where absent. */
function configOf(doc: ResultDoc): DecisionConfig {
  const d = doc.decision as unknown;
  const c: Record<string, unknown> = isObj(d) && isObj(d.config) ? d.config : {};
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const minPassRate = num(c.min_pass_rate);
  const minUplift = num(c.min_uplift);
  return {
    alpha: num(c.alpha) ?? DEFAULT_DECISION.alpha,
    errorsAsFailures: typeof c.errors_as_failures === 'boolean' ? c.errors_as_failures : DEFAULT_DECISION.errorsAsFailures,
    maxErrorRate: num(c.max_error_rate) ?? DEFAULT_DECISION.maxErrorRate,
    ...(minPassRate !== undefined ? { minPassRate } : {}),
    ...(minUplift !== undefined ? { minUplift } : {}),
    ...behaviourConfigOf(c),
  };
}

/**
 * The statistics of a run: from its `summary` when well formed (and not empty while there are
 * jobs), else computed from its jobs. Gates come from its `gates` when well formed, else from
 * the same computation (which cannot redo a no-regression gate: it needs the previous run).
 */
export function runStats(doc: ResultDoc): Stats {
  const recorded = gatesOf(doc.gates);
  const s = doc.summary as unknown;
  if (!summaryProblem(s) && (doc.summary.variants.length > 0 || doc.jobs.length === 0)) {
    return { variants: doc.summary.variants, uplift: doc.summary.uplift, gates: recorded ?? [], source: 'summary' };
  }
  const d = decide(
    doc.jobs.map((j) => trialOfJob(j)),
    configOf(doc),
  );
  const stats = snake(d.stats) as ResultDoc['summary'];
  return { variants: stats.variants, uplift: stats.uplift, gates: recorded ?? (snake(d.gates) as ResultGate[]), source: 'computed' };
}
