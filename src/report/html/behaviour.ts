/**
 * The HTML report's "Behaviour checks" panel (partial `templates/partials/behaviour.hbs`): per
 * engine × variant, then per case × engine × variant, the claims verified, the jobs with a tool
 * loop or a silent failure, and the estimated skill context tokens (listing + body), from
 * result.json's jobs (src/report/behaviour.ts). Every value is text: Handlebars escapes it.
 */
import { behaviourByArm, summariseBehaviour, type BehaviourJob, type BehaviourSummary } from '../behaviour.js';
import type { ResultDoc } from '../result-json.js';

/** One row of the panel. */
export interface BehaviourRow {
  /** The case id, or '' for an arm row. */
  caseId: string;
  engine: string;
  variant: string;
  jobs: number;
  /** `3/4`, or `—` without claims. */
  claims: string;
  loops: number;
  silent: number;
  /** `31`, or `unknown` when no request was observed. */
  listing: string;
  body: string;
  /** Whether any check fired (an unverified claim, a loop, a silent failure): the row is marked. */
  fired: boolean;
}

/** The panel: empty `arms` when no job has a behaviour record (the panel is then not shown). */
export interface BehaviourView {
  arms: BehaviourRow[];
  cases: BehaviourRow[];
  /** Case rows left out (the table shows at most {@link MAX_CASE_ROWS}). */
  casesMore: number;
}

/** Case rows shown; the rest are in result.json. */
export const MAX_CASE_ROWS = 200;

function row(caseId: string, engine: string, variant: string, s: BehaviourSummary): BehaviourRow {
  const tokens = (x: number | null) => (x === null ? 'unknown' : String(x));
  return {
    caseId,
    engine,
    variant,
    jobs: s.jobs,
    claims: s.claims ? `${s.claims_verified}/${s.claims}` : '—',
    loops: s.tool_loops,
    silent: s.silent_failures,
    listing: tokens(s.listing_tokens_mean),
    body: tokens(s.body_tokens_mean),
    fired: s.tool_loops > 0 || s.silent_failures > 0 || s.claims_verified < s.claims,
  };
}

/** The panel's rows (see the module doc). */
export function behaviourView(doc: Pick<ResultDoc, 'jobs'>, engineName: (e: string) => string = (e) => e): BehaviourView {
  const jobs = doc.jobs as BehaviourJob[];
  const arms = behaviourByArm(jobs).filter((a) => a.jobs > 0);
  if (arms.length === 0) return { arms: [], cases: [], casesMore: 0 };
  const groups = new Map<string, BehaviourJob[]>();
  for (const j of jobs) {
    const key = `${j.case_id}\u0000${j.engine}\u0000${j.variant}`;
    groups.set(key, [...(groups.get(key) ?? []), j]);
  }
  const cases: BehaviourRow[] = [];
  for (const [key, js] of groups) {
    const [caseId, engine, variant] = key.split('\u0000') as [string, string, string];
    const s = summariseBehaviour(js);
    if (s.jobs > 0) cases.push(row(caseId, engineName(engine), variant, s));
  }
  return {
    arms: arms.map((a) => row('', engineName(a.engine), a.variant, a)),
    cases: cases.slice(0, MAX_CASE_ROWS),
    casesMore: Math.max(0, cases.length - MAX_CASE_ROWS),
  };
}
