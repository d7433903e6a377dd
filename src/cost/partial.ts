/**
 * The gates of a run that `--max-cost` cut short. The gates decide on what ran, but what did
 * not run cannot count as passed:
 *
 * - `all_trials_passed`: a failed trial still fails it; when every trial that ran passed but
 *   some with_skill job did not run, it is INCONCLUSIVE (not every planned trial passed).
 * - `min_pass_rate`, `min_uplift`: when a planned case of the engine has no trial at all in an
 *   arm the gate reads, the cases that ran may not stand for the suite: PASS or FAIL becomes
 *   INCONCLUSIVE. When every case ran at least once, fewer trials only widen the intervals
 *   and the gate stands as decided.
 * - `no_regression`: a proven regression on the cases that ran stays FAIL; a PASS with a
 *   planned case missing becomes INCONCLUSIVE.
 * - `max_error_rate` is about the jobs that ran and stands.
 *
 * The exit code is then recomputed from the gates (so a cut-short run that passed everything
 * that ran exits 4, or what `--on-inconclusive` maps 4 to).
 */
import { exitCodeOf, type Decision, type GateResult } from '../gate/index.js';
import type { Job } from '../plan/plan.js';

/** `d` with its gates and exit code adjusted for the jobs in `notRun` (refused for `why`); only a job's engine, variant and case id are read. */
export function partialDecision(d: Decision, notRun: readonly (Pick<Job, 'engine' | 'variant'> & { case: Pick<Job['case'], 'id'> })[], why: string): Decision {
  if (notRun.length === 0) return d;
  const ran = new Set(d.stats.cases.filter((c) => c.trials - c.skipped > 0).map((c) => key(c.engine, c.caseId, c.variant)));
  const missing = (engine: string | null, variants: string[]) =>
    new Set(notRun.filter((j) => (engine === null || j.engine === engine) && variants.includes(j.variant) && !ran.has(key(j.engine, j.case.id, j.variant))).map((j) => `${j.engine}\u0000${j.case.id}`)).size;
  const withNotRun = notRun.filter((j) => j.variant === 'with_skill').length;
  const gates = d.gates.map((g): GateResult => {
    switch (g.name) {
      case 'all_trials_passed':
        if (!withNotRun) return g;
        if (g.state === 'pass') return { ...g, state: 'inconclusive', reason: `${g.reason}; but ${withNotRun} with_skill job(s) did not run (${why}), so not every planned trial passed` };
        return { ...g, reason: `${g.reason}; ${withNotRun} with_skill job(s) did not run (${why})` };
      case 'min_pass_rate':
      case 'min_uplift': {
        const n = missing(g.engine, g.name === 'min_pass_rate' ? ['with_skill'] : ['with_skill', 'without_skill']);
        if (!n || g.state === 'inconclusive') return g;
        return { ...g, state: 'inconclusive', reason: `${g.reason}; but ${n} planned case(s) did not run at all (${why}), so the cases that ran may not stand for the suite` };
      }
      case 'no_regression': {
        const n = missing(g.engine, ['with_skill']);
        if (!n || g.state !== 'pass') return g;
        return { ...g, state: 'inconclusive', reason: `${g.reason}; but ${n} planned case(s) did not run at all (${why})` };
      }
      default:
        return g;
    }
  });
  return { ...d, gates, exitCode: exitCodeOf(gates, d.config.onInconclusive) };
}

function key(engine: string, caseId: string, variant: string): string {
  return `${engine}\u0000${caseId}\u0000${variant}`;
}

/**
 * `d` for a run of which `notRun` planned jobs are unknown (a killed run rebuilt from its
 * journal, whose plan is not recorded job by job): no gate but max_error_rate may PASS on it,
 * so every PASS becomes INCONCLUSIVE; FAILs stand.
 */
export function incompleteDecision(d: Decision, notRun: number, why: string): Decision {
  if (notRun <= 0) return d;
  const gates = d.gates.map((g): GateResult =>
    g.name !== 'max_error_rate' && g.state === 'pass' ? { ...g, state: 'inconclusive', reason: `${g.reason}; but ${notRun} planned job(s) did not run (${why})` } : g,
  );
  return { ...d, gates, exitCode: exitCodeOf(gates, d.config.onInconclusive) };
}
