/**
 * skill-up's statistics in benchmark.json (the new top-level key `statistics`: skill-creator's
 * own fields are never renamed) and their sections of benchmark.md and its notes: per
 * configuration the mean eval pass rate with its 95 % interval clustered by eval and the
 * configuration's errors; the with/without uplift with its clustered interval, the three-state
 * verdict and its reason, the permutation p-value (Holm-adjusted across engines), the secondary
 * wins/ties/losses, per-arm rates and errors, and the dropped evals; and the engine's gates.
 */
import { oneLine } from '../util/cut.js';
import { passRateNote, rateWithCI, upliftText, type UpliftInput } from './decision-text.js';
import type { ResultDoc, ResultGate } from './result-json.js';
import { armCost, costByArm } from '../cost/totals.js';
import type { Variant } from '../engine/types.js';

/** The variants in report order (skill-creator calls a variant a "configuration"). */
export const CONFIGS: Variant[] = ['with_skill', 'without_skill'];

/** A case-clustered 95 % interval as result.json writes it (`summary.variants[].interval`). */
export type ClusteredCI = NonNullable<ResultDoc['summary']['variants'][number]['interval']>;

/** skill-up's job-level numbers of one configuration (new key `statistics.configurations`). */
export interface ConfigStatistics {
  trials: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  /** errors / (trials − skipped); null when every trial was skipped. */
  error_rate: number | null;
  /** passed / (passed + failed), pooled over the graded trials; null when nothing was graded. */
  job_pass_rate: number | null;
  /** Mean over evals of each eval's job pass rate (every eval weighs the same); null when no eval was graded. */
  mean_eval_pass_rate: number | null;
  /** 95 % interval of mean_eval_pass_rate clustered by eval (case-clustered Wilson); null when no eval was graded. */
  ci_95_clustered: ClusteredCI | null;
  mean_time_seconds: number | null;
  mean_tokens: number | null;
  /** USD of every job with a cost (reported by the engine, or estimated from tokens); null when none had one. */
  cost_usd: number | null;
  /** Part of cost_usd was estimated from tokens and skill-up's price table (src/cost/prices.json). */
  cost_estimated: boolean;
}

/** skill-up's numbers of one eval and configuration (new key `statistics.per_eval`). */
export interface EvalStatistics {
  eval_id: number;
  eval_name: string;
  configuration: Variant;
  trials: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
  job_pass_rate: number | null;
  /** 95 % Wilson interval of this eval's job pass rate over its graded trials. */
  wilson_95: { low: number; high: number };
  /** Unbiased pass@k for k = 1 and k = graded trials (keys are k). */
  pass_at_k: Record<string, number>;
  /** Unbiased pass^k for k = 1 and k = graded trials (keys are k). */
  pass_hat_k: Record<string, number>;
  flaky: boolean;
}

/** skill-up's paired with/without comparison over evals (new key `statistics.uplift`). */
export interface UpliftStatistics {
  /** Evals graded in both configurations: every figure below is over these. */
  compared_evals: number;
  /** Mean over the compared evals of (with − without) job pass rate. */
  pass_rate_delta: number | null;
  /** 95 % interval of pass_rate_delta clustered by eval; null when no eval was compared. */
  ci_95_clustered: { low: number; high: number } | null;
  with_skill_pass_rate: number | null;
  without_skill_pass_rate: number | null;
  with_skill_ci_95_clustered: ClusteredCI | null;
  without_skill_ci_95_clustered: ClusteredCI | null;
  /** Exact two-sided paired permutation test over the compared evals (Monte Carlo when p_method says so). */
  p: number;
  /** p after Holm's correction across the run's engines (equal to p with one engine). */
  p_adjusted: number;
  /** How many engines the Holm correction was over (1: none). */
  holm_engines: number;
  p_method: 'exact' | 'monte_carlo';
  alpha: number;
  /** `improves` / `regresses` when p_adjusted ≤ alpha in that direction; else `inconclusive`. */
  verdict: 'improves' | 'regresses' | 'inconclusive';
  /** One sentence: why the verdict is what it is. */
  reason: string;
  /** Smallest uplift (fraction) detectable at 80 % power at this size and flakiness; null when not computable. */
  detectable_uplift: number | null;
  /** Secondary: one vote per eval (better, same, worse) and the exact sign test over the votes. */
  wins: number;
  ties: number;
  losses: number;
  sign_test_p: number;
  /** Errors among the non-skipped trials of each configuration. */
  errors: Record<Variant, { errors: number; trials: number }>;
  /** Evals left out of the comparison, and why. */
  dropped: { eval_id: number; eval_name: string; reason: string }[];
  tokens_delta: number | null;
  time_seconds_delta: number | null;
}

/** Everything skill-up adds to benchmark.json, under the new top-level key `statistics`. */
export interface BenchmarkStatistics {
  source: string;
  engine: string;
  definitions: string;
  configurations: Partial<Record<Variant, ConfigStatistics>>;
  per_eval: EvalStatistics[];
  uplift: UpliftStatistics | null;
  /** The run's gates that concern this engine (its own and the run-wide ones), as in result.json `gates`. */
  gates: ResultGate[];
}

/** `with_skill` → `With Skill` (skill-creator's column labels). */
export function label(config: string): string {
  return config.replace(/_/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());
}

/** Markdown table cell: one line, `|` escaped. */
export function cell(s: string, max = 200): string {
  return oneLine(s, max).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;');
}

/** The `statistics` block of benchmark.json for `engine` (from result.json's `summary` and `gates`); `ids` maps case ids to eval ids. */
export function statisticsOf(doc: ResultDoc, engine: string, ids: Map<string, number>): BenchmarkStatistics {
  const s = doc.summary;
  const configurations: BenchmarkStatistics['configurations'] = {};
  const arms = costByArm(doc.jobs);
  for (const v of s.variants) {
    if (v.engine !== engine) continue;
    configurations[v.variant] = {
      trials: v.trials,
      passed: v.passed,
      failed: v.failed,
      errors: v.errors,
      skipped: v.skipped,
      error_rate: v.error_rate,
      job_pass_rate: v.passed + v.failed ? v.passed / (v.passed + v.failed) : null,
      mean_eval_pass_rate: v.pass_rate,
      ci_95_clustered: v.interval,
      mean_time_seconds: v.mean_duration_ms === null ? null : v.mean_duration_ms / 1000,
      mean_tokens: v.mean_tokens,
      cost_usd: v.cost_usd,
      cost_estimated: armCost(arms, v.engine, v.variant).estimated,
    };
  }
  const perEval: EvalStatistics[] = s.cases
    .filter((c) => c.engine === engine)
    .map((c) => ({
      eval_id: ids.get(c.case_id) ?? 0,
      eval_name: c.case_id,
      configuration: c.variant,
      trials: c.trials,
      passed: c.passed,
      failed: c.failed,
      errors: c.errors,
      skipped: c.skipped,
      job_pass_rate: c.pass_rate,
      wilson_95: c.wilson,
      pass_at_k: c.pass_at_k,
      pass_hat_k: c.pass_hat_k,
      flaky: c.flaky,
    }));
  const u = s.uplift.find((x) => x.engine === engine);
  return {
    source: `${doc.tool.name} ${doc.tool.version}`,
    engine,
    definitions:
      'job_pass_rate = passed / (passed + failed) over trials, where a trial passes only when every gate and judge passed; ' +
      'errors and skips are never counted as failures. mean_eval_pass_rate: mean over evals of each eval\'s job pass rate; ' +
      'ci_95_clustered: its 95% interval clustered by eval (case-clustered Wilson: trials of one eval are not independent). ' +
      'per_eval wilson_95: 95% Wilson score interval of one eval\'s job pass rate. pass_at_k / pass_hat_k: unbiased estimators ' +
      'over the graded trials (keys are k). uplift: mean over the compared evals of (with_skill − without_skill) job pass rate, ' +
      'with its 95% interval clustered by eval; verdict improves / regresses when the exact paired permutation test over evals ' +
      '(Holm-adjusted across engines) gives p_adjusted ≤ alpha, else inconclusive, with the reason; wins / ties / losses and ' +
      'sign_test_p are secondary. gates: the run\'s gates for this engine, as in result.json. run_summary keeps skill-creator\'s ' +
      'definitions (pass_rate = fraction of assertions passed per run) over the graded runs only.',
    configurations,
    per_eval: perEval,
    uplift: u
      ? {
          compared_evals: u.compared_cases,
          pass_rate_delta: u.pass_rate_delta,
          ci_95_clustered: u.interval,
          with_skill_pass_rate: u.with_rate,
          without_skill_pass_rate: u.without_rate,
          with_skill_ci_95_clustered: u.with_interval,
          without_skill_ci_95_clustered: u.without_interval,
          p: u.p,
          p_adjusted: u.p_adjusted,
          holm_engines: s.uplift.length,
          p_method: u.p_method,
          alpha: u.alpha,
          verdict: u.verdict,
          reason: u.reason,
          detectable_uplift: u.detectable_uplift,
          wins: u.wins,
          ties: u.ties,
          losses: u.losses,
          sign_test_p: u.sign_test_p,
          errors: { with_skill: u.errors.with, without_skill: u.errors.without },
          dropped: u.dropped.map((d) => ({ eval_id: ids.get(d.case_id) ?? 0, eval_name: d.case_id, reason: d.reason })),
          tokens_delta: u.tokens_delta,
          time_seconds_delta: u.duration_ms_delta === null ? null : u.duration_ms_delta / 1000,
        }
      : null,
    gates: (doc.gates ?? []).filter((g) => g.engine === null || g.engine === engine),
  };
}

/** benchmark.json's uplift in the words of result.json's, for the shared wording (decision-text.ts). */
function upliftInput(u: UpliftStatistics): UpliftInput {
  return {
    ...u,
    compared_cases: u.compared_evals,
    interval: u.ci_95_clustered,
    with_rate: u.with_skill_pass_rate,
    without_rate: u.without_skill_pass_rate,
    with_interval: u.with_skill_ci_95_clustered,
    without_interval: u.without_skill_ci_95_clustered,
    errors: { with: u.errors.with_skill, without: u.errors.without_skill },
    dropped: u.dropped.map((d) => ({ case_id: d.eval_name, reason: d.reason })),
  };
}

/** The notes (skill-creator's `notes`) about the uplift: the figure, verdict, reason, p and votes, and the dropped evals. */
export function upliftNotes(u: UpliftStatistics | null): string[] {
  if (!u) return [];
  const x = upliftText(upliftInput(u), u.holm_engines);
  const notes = [`Uplift over evals (job pass rate): ${x.delta}; verdict ${x.verdict}: ${x.reason}. ${x.p}; ${x.votes}.`];
  if (u.dropped.length) notes.push(`${u.dropped.length} eval(s) left out of the uplift: ${u.dropped.slice(0, 5).map((d) => `${d.eval_id} (${d.eval_name}): ${d.reason}`).join('; ')}${u.dropped.length > 5 ? '; …' : ''}.`);
  return notes;
}

/** benchmark.md's skill-up sections: job pass rates per configuration with their clustered intervals and errors, then the uplift. */
export function statisticsMarkdown(st: BenchmarkStatistics): string[] {
  const lines: string[] = [];
  lines.push(
    '',
    '## Job pass rates (skill-up)',
    '',
    `A job passes only when every gate and judge passed; errors and skips are not counted as failures. ${passRateNote('eval')}`,
    '',
    `| Configuration | Pass rate [95% CI, clustered by eval] | Errors | Passed / graded | Skipped | Mean time | Mean tokens |`,
    '|---|---|---|---|---|---|---|',
  );
  for (const config of CONFIGS) {
    const c = st.configurations[config];
    if (!c) continue;
    lines.push(
      `| ${label(config)} | ${rateWithCI(c.mean_eval_pass_rate, c.ci_95_clustered)} | ${c.errors} | ${c.passed}/${c.passed + c.failed} | ${c.skipped} | ${c.mean_time_seconds === null ? '—' : `${c.mean_time_seconds.toFixed(1)}s`} | ${c.mean_tokens === null ? '—' : c.mean_tokens.toFixed(0)} |`,
    );
  }
  if (st.uplift) lines.push('', ...upliftMarkdown(st.uplift));
  return lines;
}

/** benchmark.md's uplift: points with the clustered interval and the verdict, then why, p, votes, rates over the compared evals, errors, dropped evals. */
function upliftMarkdown(u: UpliftStatistics): string[] {
  const x = upliftText(upliftInput(u), u.holm_engines);
  const out = [`**Uplift**: ${cell(x.delta)} · verdict: **${x.verdict}**`, '', `- Why: ${cell(x.reason, 1000)}`, `- ${x.rates}`, `- ${x.p}`, `- Evals: ${x.votes}`, `- Errors: ${x.errors.replace(/^errors: /, '')}`];
  if (u.dropped.length) {
    const shown = u.dropped.slice(0, 10).map((d) => `eval ${d.eval_id} (${cell(d.eval_name, 120)}): ${cell(d.reason)}`);
    out.push(`- Left out of the comparison (${u.dropped.length}): ${shown.join('; ')}${u.dropped.length > 10 ? `; … and ${u.dropped.length - 10} more` : ''}`);
  }
  return out;
}
