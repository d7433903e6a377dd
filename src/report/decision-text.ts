/**
 * How a run's decision reads in every report (summary.md, benchmark.json notes and
 * benchmark.md, report.html, `skill-up report`): pass rates with their case-clustered 95 %
 * interval and the arm's errors, the uplift with its interval, verdict, reason, p-value and
 * dropped cases, and the gates. One wording everywhere, so the reports cannot drift apart.
 *
 * Everything here is plain text: each report escapes it its own way (Markdown with `mdText`,
 * HTML through Handlebars, the console as is).
 */
import { formatP } from '../stats/summarise.js';
import type { ResultGate, ResultSummary } from './result-json.js';

/** One entry of result.json `summary.variants`. */
export type VariantJson = ResultSummary['variants'][number];
/** One entry of result.json `summary.uplift`. */
export type UpliftJson = ResultSummary['uplift'][number];
/** A two-sided interval, both ends fractions. */
export type Range = { low: number; high: number };

/** What every pass-rate interval is, for labels. */
export const CLUSTERED_CI = '95% CI, clustered by case';

/** A fraction as a whole percentage: `0.667` → `67%`. */
export const pct = (x: number): string => `${Math.round(x * 100)}%`;

/** A difference of fractions as signed whole percentage points: `0.5` → `+50`, `-0.25` → `-25`, `0` → `0`. */
export function pts(x: number): string {
  const v = Math.round(x * 100);
  return v > 0 ? `+${v}` : v < 0 ? `${v}` : '0';
}

/** A pass rate with its interval: `50% [9%–91%]`; `n/a` when nothing was graded. */
export function rateWithCI(rate: number | null, interval: Range | null): string {
  if (rate === null) return 'n/a';
  return interval ? `${pct(rate)} [${pct(interval.low)}–${pct(interval.high)}]` : pct(rate);
}

/** An interval of a difference in points: `[-44, +100]`. */
export const pointsCI = (i: Range): string => `[${pts(i.low)}, ${pts(i.high)}]`;

/** `1 error in 3 trials` / `0 errors in 4 trials`: an arm's errors among its non-skipped trials. */
export function errorsIn(e: { errors: number; trials: number }): string {
  return `${e.errors} error${e.errors === 1 ? '' : 's'} in ${e.trials} trial${e.trials === 1 ? '' : 's'}`;
}

/** `3 errors`, `1 error`, `0 errors`. */
export const errorCount = (n: number): string => `${n} error${n === 1 ? '' : 's'}`;

/** What a variant's pass rate and its interval are, for a footnote under a table of them; `unit` is what the suite's items are called (`case`, or skill-creator's `eval`). */
export function passRateNote(unit: 'case' | 'eval' = 'case'): string {
  return (
    `Pass rate: mean over ${unit}s of each ${unit}’s pass rate over its graded trials (every ${unit} weighs the same; errors and skips are not graded). ` +
    `95% CI clustered by ${unit}: a Wilson interval at the effective number of trials, which accounts for trials of one ${unit} being alike (case-clustered Wilson).`
  );
}

/** The uplift of one engine in plain-text parts, each a phrase or sentence a report lays out. */
export interface UpliftText {
  verdict: 'improves' | 'regresses' | 'inconclusive';
  /** `+50 points [-44, +100] (95% CI, clustered by case) over 3 compared cases`, or why there is none. */
  delta: string;
  /** The stats stage's one-sentence reason for the verdict. */
  reason: string;
  /** `with_skill 50% [9%–91%] vs without_skill 0% [0%–79%] over the compared cases`. */
  rates: string;
  /** `p = 0.031 (exact paired permutation test over 6 cases; Holm-adjusted over 2 engines, unadjusted 0.016), α = 0.05`. */
  p: string;
  /** `2 better, 1 same, 0 worse (secondary: sign test p = 0.5)`. */
  votes: string;
  /** `errors: with_skill 1 error in 3 trials, without_skill 0 errors in 2 trials`. */
  errors: string;
  /** Cases left out of the comparison and why. */
  dropped: { caseId: string; reason: string }[];
}

/** What {@link upliftText} reads of an uplift: result.json `summary.uplift[]` has it all. */
export type UpliftInput = Pick<
  UpliftJson,
  'compared_cases' | 'pass_rate_delta' | 'with_rate' | 'without_rate' | 'p' | 'p_adjusted' | 'p_method' | 'alpha' | 'verdict' | 'reason' | 'wins' | 'ties' | 'losses' | 'sign_test_p' | 'errors' | 'dropped'
> & { interval: Range | null; with_interval: Range | null; without_interval: Range | null };

/**
 * The uplift's parts. `engines` is how many engines were compared in the run (the p-value is
 * Holm-adjusted across them when more than one).
 */
export function upliftText(u: UpliftInput, engines: number): UpliftText {
  const n = u.compared_cases;
  const cases = `${n} compared case${n === 1 ? '' : 's'}`;
  const delta =
    u.pass_rate_delta === null
      ? 'no uplift: no case has graded trials in both variants'
      : `${pts(u.pass_rate_delta)} points${u.interval ? ` ${pointsCI(u.interval)} (${CLUSTERED_CI})` : ''} over ${cases}`;
  const test = u.p_method === 'exact' ? `exact paired permutation test over ${n} case${n === 1 ? '' : 's'}` : `paired permutation test over ${n} cases, Monte Carlo`;
  const holm = engines > 1 ? `; Holm-adjusted over ${engines} engines, unadjusted ${formatP(u.p)}` : '';
  return {
    verdict: u.verdict,
    delta,
    reason: u.reason,
    rates:
      u.with_rate === null || u.without_rate === null
        ? 'no case was compared'
        : `with_skill ${rateWithCI(u.with_rate, u.with_interval)} vs without_skill ${rateWithCI(u.without_rate, u.without_interval)} over the compared cases`,
    p: `p = ${formatP(u.p_adjusted)} (${test}${holm}), α = ${u.alpha}`,
    votes: `${u.wins} better, ${u.ties} same, ${u.losses} worse (secondary: sign test p = ${formatP(u.sign_test_p)})`,
    errors: `errors: with_skill ${errorsIn(u.errors.with)}, without_skill ${errorsIn(u.errors.without)}`,
    dropped: u.dropped.map((d) => ({ caseId: d.case_id, reason: d.reason })),
  };
}

/** Gates whose figures are differences (percentage points) rather than rates. */
const POINT_GATES = new Set<ResultGate['name']>(['min_uplift', 'no_regression']);

/** One gate as table cells (plain text). */
export interface GateCells {
  name: ResultGate['name'];
  /** The engine, or `—` for a run-wide gate. */
  engine: string;
  /** `≥ 80%`, `≥ +10 points`, `≤ 0%`, or `every trial passes`. */
  threshold: string;
  figure: string;
  /** `[62%–95%]`, `[-44, +100] points`, or `—` when decided on counts. */
  interval: string;
  /** `PASS`, `FAIL` or `INCONCLUSIVE`. */
  state: string;
  reason: string;
}

/** `PASS`, `FAIL`, `INCONCLUSIVE`. */
export const gateState = (s: ResultGate['state']): string => s.toUpperCase();

/** A gate's cells; `engineName` turns an engine name into its display form. */
export function gateCells(g: ResultGate, engineName: (e: string) => string = (e) => e): GateCells {
  const points = POINT_GATES.has(g.name);
  const value = (x: number | null) => (x === null ? '—' : points ? `${pts(x)} points` : pct(x));
  const threshold =
    g.name === 'all_trials_passed' ? 'every trial passes' : g.threshold === null ? '—' : `${g.name === 'max_error_rate' ? '≤' : '≥'} ${value(g.threshold)}`;
  const interval = g.interval === null ? '—' : points ? `${pointsCI(g.interval)} points` : `[${pct(g.interval.low)}–${pct(g.interval.high)}]`;
  return { name: g.name, engine: g.engine === null ? '—' : engineName(g.engine), threshold, figure: value(g.figure), interval, state: gateState(g.state), reason: g.reason };
}

/** `min_pass_rate (claude_code)` or `max_error_rate`: a gate named for a sentence. */
export function gateLabel(g: Pick<ResultGate, 'name' | 'engine'>, engineName: (e: string) => string = (e) => e): string {
  return g.engine === null ? g.name : `${g.name} (${engineName(g.engine)})`;
}
