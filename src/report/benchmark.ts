/**
 * Anthropic skill-creator compatible files, built from the result.json document:
 *
 * - `benchmark.json` and `benchmark.md` per job tree (one for a single-engine run, at the
 *   iteration folder; one per `<engine>/` folder when several engines ran);
 * - `grading.json` per run, in `<case>/<variant>/run-<k>/` (the job folder);
 * - `eval_metadata.json` per case, in `<case>/` and, so that skill-creator's viewer finds the
 *   prompt of a `run-<k>` layout, in `<case>/<variant>/` too.
 *
 * Source of the shapes: anthropics/skills `skills/skill-creator/references/schemas.md`
 * (field names), `scripts/aggregate_benchmark.py` (how runs are read and summarised: sample
 * standard deviation, values rounded to 4 decimals, `delta` = first configuration minus the
 * second as signed strings `+.2f` / `+.1f` / `+.0f`) and `eval-viewer/viewer.html` (what the
 * Benchmark tab reads: every `run_summary` key except `delta` is taken as a configuration, so
 * nothing else may live there). Prior-art notes: other-tools-and-statistics.md, A2 and (e).
 *
 * skill-up's own numbers never rename a field: they are added under new keys
 * (`statistics` in benchmark.json, built in `benchmark-stats.ts`: the case-clustered
 * intervals, the three-state uplift verdict with its reason, the engine's gates; `status`,
 * `reason`, `output_dir` in a run; `status`, `reason` in grading.json; `case_id` in
 * eval_metadata.json).
 *
 * Definitions used here:
 * - `result.pass_rate` of a run is skill-creator's: assertions passed / assertions graded
 *   (0 when the run has none). skill-up's job verdict (`pass` only when every gate and judge
 *   passed) is `status`, and the rates under `statistics` are job pass rates.
 * - Runs that ended in `error` or `skipped` are listed in `runs[]` (with `errors` ≥ 1 for an
 *   error) but left out of `run_summary`: skill-up never counts a broken run as a failed one.
 *   Their job folders hold no grading.json but `ungraded.json` (the same shape, {@link
 *   gradingFileName}): skill-creator's aggregator reads every `run-<k>/grading.json` and takes a
 *   missing `summary.pass_rate` as 0.0, so an errored run with a grading.json would score 0 %
 *   there; without one, it warns `grading.json not found` and leaves the run out, as skill-up does.
 * - `time_seconds` is the job's wall time; `tokens` is every token the engine reported
 *   (input + output + cache read + cache write); `tool_calls` counts every tool call;
 *   `errors` is tool calls that reported an error, plus one when the job itself ended in `error`.
 */
import type { Assertion } from '../judge/types.js';
import { cell, CONFIGS, label, statisticsMarkdown, statisticsOf, upliftNotes, type BenchmarkStatistics } from './benchmark-stats.js';
import type { Variant } from '../engine/types.js';
import type { JobJson, ResultDoc } from './result-json.js';
import { gradingClaims } from './behaviour.js';

export type { BenchmarkStatistics } from './benchmark-stats.js';

/** mean, sample standard deviation (n − 1; 0 for one value), min, max; each rounded to 4 decimals. */
export interface Stat {
  mean: number;
  stddev: number;
  min: number;
  max: number;
}

/** `runs[].result` of benchmark.json. */
export interface BenchmarkRunResult {
  /** Assertions passed / assertions graded in this run (0 when none). */
  pass_rate: number;
  passed: number;
  failed: number;
  total: number;
  /** Job wall time, seconds. */
  time_seconds: number;
  /** Every token the engine reported for the job. */
  tokens: number;
  tool_calls: number;
  errors: number;
}

/** One entry of benchmark.json's `runs`. */
export interface BenchmarkRun {
  eval_id: number;
  eval_name: string;
  configuration: Variant;
  run_number: number;
  result: BenchmarkRunResult;
  expectations: Assertion[];
  notes: string[];
  /** skill-up: the job's verdict (`pass` | `fail` | `error` | `skipped`). */
  status: JobJson['status'];
  /** skill-up: why the job failed, errored or was skipped. */
  reason?: string;
  /** skill-up: the job folder, relative to the iteration folder. */
  output_dir: string;
  /** skill-up: what the job's agent_judge graders spent (tokens, seconds, USD, runs); not part of `result`. */
  judge?: { tokens: number; time_seconds: number; cost_usd?: number; runs: number };
}

/** One configuration in `run_summary`. */
export interface ConfigSummary {
  pass_rate: Stat;
  time_seconds: Stat;
  tokens: Stat;
}

/** `run_summary.delta`: first configuration minus the second, as signed strings. */
export interface Delta {
  pass_rate: string;
  time_seconds: string;
  tokens: string;
}

/** benchmark.json (skill-creator `references/schemas.md`, "benchmark.json"), plus `statistics`. */
export interface BenchmarkJson {
  metadata: {
    skill_name: string;
    skill_path: string;
    executor_model: string;
    analyzer_model: string;
    /** `YYYY-MM-DDTHH:MM:SSZ`, the run's start. */
    timestamp: string;
    evals_run: number[];
    runs_per_configuration: number;
  };
  runs: BenchmarkRun[];
  run_summary: Partial<Record<Variant, ConfigSummary>> & { delta?: Delta };
  notes: string[];
  statistics: BenchmarkStatistics;
}

/** grading.json of one run (skill-creator `references/schemas.md`, "grading.json"), plus `status`/`reason`. */
export interface GradingJson {
  expectations: Assertion[];
  summary: { passed: number; failed: number; total: number; pass_rate: number };
  execution_metrics: {
    /** Calls per tool name. */
    tool_calls: Record<string, number>;
    total_tool_calls: number;
    /** Turns sent to the engine. */
    total_steps: number;
    errors_encountered: number;
    /** Characters of the final message (outputs/response.md). */
    output_chars: number;
    /** Characters of every prompt and answer of the conversation. */
    transcript_chars: number;
  };
  timing: {
    /** Seconds spent inside the engine processes. */
    executor_duration_seconds: number;
    /** The job's wall time (workspace, engine, judges), seconds. */
    total_duration_seconds: number;
  };
  /** skill-creator's `{claim, type, verified, evidence}`: the behaviour checks' claims (src/report/behaviour.ts `gradingClaims`). */
  claims: ReturnType<typeof gradingClaims>;
  user_notes_summary: { uncertainties: string[]; needs_review: string[]; workarounds: string[] };
  status: JobJson['status'];
  reason?: string;
}

/** eval_metadata.json of one case (skill-creator: `{eval_id, eval_name, prompt, assertions}`), plus `case_id`. */
export interface EvalMetadata {
  eval_id: number;
  eval_name: string;
  /** The case's prompt (several turns joined by a `---` line). */
  prompt: string;
  /** Assertion texts of the case, in first-seen order. */
  assertions: string[];
  case_id: string;
}

/** Every file of one job tree, ready to write; paths are relative to the report folder. */
export interface BenchmarkBundle {
  /** The tree's folder: '' for a single-engine run, else the engine's folder. */
  root: string;
  engine: string;
  benchmark: BenchmarkJson;
  markdown: string;
  /** `<root>/<case>/<variant>/run-<k>` → its grading.json (or ungraded.json: `grading.status`, {@link gradingFileName}). */
  gradings: { dir: string; grading: GradingJson }[];
  /** `<root>/<case>` and `<root>/<case>/<variant>` → the case's eval_metadata.json. */
  evalMetadata: { dir: string; metadata: EvalMetadata }[];
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** skill-creator's `calculate_stats` (aggregate_benchmark.py): zeros for no values, n − 1 deviation. */
export function calculateStats(values: number[]): Stat {
  const n = values.length;
  if (n === 0) return { mean: 0, stddev: 0, min: 0, max: 0 };
  const mean = values.reduce((a, b) => a + b, 0) / n;
  const stddev = n > 1 ? Math.sqrt(values.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { mean: round4(mean), stddev: round4(stddev), min: round4(min), max: round4(max) };
}

/** Python's `f"{x:+.{digits}f}"`. */
export function signed(x: number, digits: number): string {
  const s = x.toFixed(digits);
  return s.startsWith('-') ? s : `+${s}`;
}

const EVAL_DIR = /^eval-(\d+)(?:-|$)/;

/**
 * Numeric eval ids for case ids (skill-creator's ids are integers). A case named like
 * skill-creator's folders, `eval-<n>` or `eval-<n>-<name>` (as `skill-up import` names them),
 * keeps n; every other case gets the next unused integer from 1, in first-appearance order.
 */
export function evalIds(caseIds: string[]): Map<string, number> {
  const out = new Map<string, number>();
  const used = new Set<number>();
  const unique = [...new Set(caseIds)];
  for (const id of unique) {
    const m = EVAL_DIR.exec(id);
    const n = m ? Number(m[1]) : NaN;
    if (Number.isSafeInteger(n) && !used.has(n)) {
      out.set(id, n);
      used.add(n);
    }
  }
  let next = 1;
  for (const id of unique) {
    if (out.has(id)) continue;
    while (used.has(next)) next++;
    out.set(id, next);
    used.add(next);
  }
  return out;
}

/** The folder of a job path minus its last `drop` segments ('' when nothing is left). */
function parentOf(outputDir: string, drop: number): string {
  const parts = outputDir.split('/').filter(Boolean);
  return parts.slice(0, Math.max(0, parts.length - drop)).join('/');
}

function countErrors(job: JobJson): number {
  let n = job.status === 'error' ? 1 : 0;
  for (const t of job.turns) for (const c of t.tool_calls) if (c.is_error) n++;
  return n;
}

function toolCounts(job: JobJson): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of job.turns) for (const c of t.tool_calls) out[c.name] = (out[c.name] ?? 0) + 1;
  return out;
}

/**
 * The name of a job's grading file in its folder: `grading.json` for a graded run (`pass`,
 * `fail`), `ungraded.json` for one that ended in `error` or `skipped`, so that skill-creator's
 * aggregator (which reads every `run-<k>/grading.json`, a missing pass rate as 0 %) leaves it
 * out of its pass rates as skill-up's own statistics do.
 */
export function gradingFileName(status: JobJson['status']): 'grading.json' | 'ungraded.json' {
  return status === 'pass' || status === 'fail' ? 'grading.json' : 'ungraded.json';
}

/** grading.json (or ungraded.json, {@link gradingFileName}) of one job. */
export function gradingJson(job: JobJson): GradingJson {
  const passed = job.assertions.filter((a) => a.passed).length;
  const total = job.assertions.length;
  const tools = toolCounts(job);
  const needsReview = job.status === 'error' || job.status === 'skipped' ? [`${job.status}: ${job.reason ?? 'no reason recorded'}`] : [];
  return {
    expectations: job.assertions,
    summary: { passed, failed: total - passed, total, pass_rate: total ? passed / total : 0 },
    execution_metrics: {
      tool_calls: tools,
      total_tool_calls: Object.values(tools).reduce((a, b) => a + b, 0),
      total_steps: job.turns.length,
      errors_encountered: countErrors(job),
      output_chars: job.final_message.length,
      transcript_chars: job.turns.reduce((a, t) => a + t.prompt.length + t.final_text.length, 0),
    },
    timing: { executor_duration_seconds: job.engine_duration_ms / 1000, total_duration_seconds: job.duration_ms / 1000 },
    claims: gradingClaims(job.behaviour),
    user_notes_summary: { uncertainties: [], needs_review: needsReview, workarounds: [] },
    status: job.status,
    ...(job.reason ? { reason: job.reason } : {}),
  };
}

function promptOf(jobs: JobJson[]): string {
  const withTurns = jobs.find((j) => j.turns.length > 0);
  if (!withTurns) return '';
  return withTurns.turns.map((t) => t.prompt).join('\n\n---\n\n');
}

function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(0)}%`;
}

function executorModel(doc: ResultDoc, engine: string): string {
  const e = doc.engines.find((x) => x.name === engine) ?? doc.engines[0];
  if (!e) return engine;
  const model = [e.model.provider, e.model.name].filter(Boolean).join('/');
  return model ? `${model} (${e.display_name})` : e.display_name;
}

function timestampOf(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Builds the skill-creator files of every job tree of `doc`. Pure: returns what to write.
 * Trees are found from `jobs[].output_dir` (`[<engine>/]<case>/<variant>/run-<k>`).
 */
export function buildBenchmarks(doc: ResultDoc): BenchmarkBundle[] {
  return [...benchmarkBundles(doc)];
}

/** {@link buildBenchmarks} one tree at a time, each built when asked for (a writer then holds one tree's files, not the run's). */
export function* benchmarkBundles(doc: ResultDoc): Generator<BenchmarkBundle> {
  // Trigger jobs are not tasks: skill-creator's benchmark compares the two variants on tasks only (README "Trigger evaluation").
  const tasks = doc.jobs.filter((j) => !j.trigger);
  const ids = evalIds(tasks.map((j) => j.case_id));
  const trees = new Map<string, JobJson[]>();
  for (const j of tasks) {
    const root = parentOf(j.output_dir, 3);
    const t = trees.get(root);
    if (t) t.push(j);
    else trees.set(root, [j]);
  }
  for (const [root, jobs] of trees) yield buildBundle(doc, root, jobs, ids);
}

function buildBundle(doc: ResultDoc, root: string, jobs: JobJson[], ids: Map<string, number>): BenchmarkBundle {
  const engine = jobs[0]!.engine;
  const gradings = jobs.map((j) => ({ dir: j.output_dir, job: j, grading: gradingJson(j) }));

  // Runs, ordered like the aggregator's walk: by configuration, then eval, then run number.
  const runs: BenchmarkRun[] = gradings
    .map(({ job, grading }) => ({
      eval_id: ids.get(job.case_id)!,
      eval_name: job.case_id,
      configuration: job.variant,
      run_number: job.trial,
      result: {
        pass_rate: grading.summary.pass_rate,
        passed: grading.summary.passed,
        failed: grading.summary.failed,
        total: grading.summary.total,
        time_seconds: job.duration_ms / 1000,
        tokens: job.tokens.total,
        tool_calls: grading.execution_metrics.total_tool_calls,
        errors: grading.execution_metrics.errors_encountered,
      },
      expectations: job.assertions,
      notes: [...grading.user_notes_summary.uncertainties, ...grading.user_notes_summary.needs_review, ...grading.user_notes_summary.workarounds],
      status: job.status,
      ...(job.reason ? { reason: job.reason } : {}),
      output_dir: job.output_dir,
      // skill-up extension: the agent_judge graders' spend, never inside `result.tokens` / `time_seconds`.
      ...(job.judge ? { judge: { tokens: job.judge.tokens.total, time_seconds: job.judge.duration_ms / 1000, ...(job.judge.cost_usd !== undefined ? { cost_usd: job.judge.cost_usd } : {}), runs: job.judge.runs } } : {}),
    }))
    .sort((a, b) => CONFIGS.indexOf(a.configuration) - CONFIGS.indexOf(b.configuration) || a.eval_id - b.eval_id || a.run_number - b.run_number);

  const runSummary: BenchmarkJson['run_summary'] = {};
  for (const config of CONFIGS) {
    const graded = runs.filter((r) => r.configuration === config && (r.status === 'pass' || r.status === 'fail'));
    if (graded.length === 0) continue;
    runSummary[config] = {
      pass_rate: calculateStats(graded.map((r) => r.result.pass_rate)),
      time_seconds: calculateStats(graded.map((r) => r.result.time_seconds)),
      tokens: calculateStats(graded.map((r) => r.result.tokens)),
    };
  }
  const a = runSummary.with_skill;
  const b = runSummary.without_skill;
  if (a && b) {
    runSummary.delta = {
      pass_rate: signed(a.pass_rate.mean - b.pass_rate.mean, 2),
      time_seconds: signed(a.time_seconds.mean - b.time_seconds.mean, 1),
      tokens: signed(a.tokens.mean - b.tokens.mean, 0),
    };
  }

  // Cases, in first-appearance order, with their jobs.
  const byCase = new Map<string, JobJson[]>();
  for (const j of jobs) {
    const c = byCase.get(j.case_id);
    if (c) c.push(j);
    else byCase.set(j.case_id, [j]);
  }
  const evalMetadata: BenchmarkBundle['evalMetadata'] = [];
  for (const [caseId, cjobs] of byCase) {
    const texts = new Set<string>();
    const ordered = [...cjobs.filter((j) => j.variant === 'with_skill'), ...cjobs.filter((j) => j.variant !== 'with_skill')];
    for (const j of ordered) for (const a of j.assertions) texts.add(a.text);
    const metadata: EvalMetadata = { eval_id: ids.get(caseId)!, eval_name: caseId, prompt: promptOf(ordered), assertions: [...texts], case_id: caseId };
    const caseDir = parentOf(cjobs[0]!.output_dir, 2);
    evalMetadata.push({ dir: caseDir, metadata });
    for (const variant of new Set(cjobs.map((j) => parentOf(j.output_dir, 1)))) evalMetadata.push({ dir: variant, metadata });
  }

  const statistics = statisticsOf(doc, engine, ids);
  const benchmark: BenchmarkJson = {
    metadata: {
      skill_name: doc.skill.name,
      skill_path: doc.skill.path,
      executor_model: executorModel(doc, engine),
      analyzer_model: 'none',
      timestamp: timestampOf(doc.started_at),
      evals_run: [...new Set(runs.map((r) => r.eval_id))].sort((x, y) => x - y),
      runs_per_configuration: runs.reduce((m, r) => Math.max(m, r.run_number), 0),
    },
    runs,
    run_summary: runSummary,
    notes: notesOf(runs, statistics, byCase, ids),
    statistics,
  };
  return {
    root,
    engine,
    benchmark,
    markdown: benchmarkMarkdown(benchmark, byCase, ids),
    gradings: gradings.map(({ dir, grading }) => ({ dir, grading })),
    evalMetadata,
  };
}

const MAX_NOTES = 20;

/** Factual analyst-style notes (skill-creator's `notes`): broken runs, the uplift verdict, assertions that do not discriminate. */
function notesOf(runs: BenchmarkRun[], stats: BenchmarkStatistics, byCase: Map<string, JobJson[]>, ids: Map<string, number>): string[] {
  const notes: string[] = [];
  const errors = runs.filter((r) => r.status === 'error').length;
  const skipped = runs.filter((r) => r.status === 'skipped').length;
  if (errors || skipped) {
    notes.push(
      `${errors} run(s) ended in error and ${skipped} were skipped: they are listed in runs but left out of run_summary (an error is the harness or engine breaking, never a failure of the skill).`,
    );
  }
  notes.push(...upliftNotes(stats.uplift));
  for (const e of stats.per_eval) {
    if (notes.length >= MAX_NOTES) break;
    if (e.flaky) notes.push(`Eval ${e.eval_id} (${e.eval_name}) is flaky ${e.configuration}: ${e.passed}/${e.passed + e.failed} graded runs passed.`);
  }
  const discrim: string[] = [];
  for (const [caseId, jobs] of byCase) {
    const counts = new Map<string, Record<Variant, { pass: number; n: number }>>();
    for (const j of jobs) {
      if (j.status !== 'pass' && j.status !== 'fail') continue;
      for (const a of j.assertions) {
        let c = counts.get(a.text);
        if (!c) counts.set(a.text, (c = { with_skill: { pass: 0, n: 0 }, without_skill: { pass: 0, n: 0 } }));
        c[j.variant].n++;
        if (a.passed) c[j.variant].pass++;
      }
    }
    for (const [text, c] of counts) {
      if (c.with_skill.n === 0 || c.without_skill.n === 0) continue;
      const allPass = c.with_skill.pass === c.with_skill.n && c.without_skill.pass === c.without_skill.n;
      const allFail = c.with_skill.pass === 0 && c.without_skill.pass === 0;
      if (allPass) discrim.push(`Eval ${ids.get(caseId)} (${caseId}): assertion "${text}" passes in every run of both configurations - it may not differentiate the skill.`);
      else if (allFail) discrim.push(`Eval ${ids.get(caseId)} (${caseId}): assertion "${text}" fails in every run of both configurations - check the assertion or the case.`);
    }
  }
  const room = Math.max(0, MAX_NOTES - notes.length);
  if (discrim.length > room) {
    notes.push(...discrim.slice(0, Math.max(0, room - 1)), `… and ${discrim.length - Math.max(0, room - 1)} more assertion(s) that pass or fail in every run of both configurations.`);
  } else {
    notes.push(...discrim);
  }
  return notes;
}

/**
 * benchmark.md: skill-creator's layout (`generate_markdown` of aggregate_benchmark.py: title,
 * Model, Date, Evals, the Summary table of mean ± sd and delta, the notes), followed by
 * skill-up's job pass rates with intervals, the uplift, and a per-eval assertion table.
 */
export function benchmarkMarkdown(b: BenchmarkJson, byCase?: Map<string, JobJson[]>, ids?: Map<string, number>): string {
  const m = b.metadata;
  const configs = Object.keys(b.run_summary).filter((k) => k !== 'delta') as Variant[];
  const ca = configs[0] ?? 'config_a';
  const cb = configs[1] ?? 'config_b';
  const sa = b.run_summary[ca as Variant];
  const sb = b.run_summary[cb as Variant];
  const d = b.run_summary.delta;
  const fmt = (s: Stat | undefined, kind: 'pct' | 's' | 'n') => {
    if (!s) return '—';
    if (kind === 'pct') return `${(s.mean * 100).toFixed(0)}% ± ${(s.stddev * 100).toFixed(0)}%`;
    if (kind === 's') return `${s.mean.toFixed(1)}s ± ${s.stddev.toFixed(1)}s`;
    return `${s.mean.toFixed(0)} ± ${s.stddev.toFixed(0)}`;
  };
  const lines = [
    `# Skill Benchmark: ${m.skill_name}`,
    '',
    `**Model**: ${m.executor_model}`,
    `**Date**: ${m.timestamp}`,
    `**Evals**: ${m.evals_run.join(', ')} (${m.runs_per_configuration} runs each per configuration)`,
    '',
    '## Summary',
    '',
    `| Metric | ${label(ca)} | ${label(cb)} | Delta |`,
    '|--------|------------|---------------|-------|',
    `| Pass Rate | ${fmt(sa?.pass_rate, 'pct')} | ${fmt(sb?.pass_rate, 'pct')} | ${d?.pass_rate ?? '—'} |`,
    `| Time | ${fmt(sa?.time_seconds, 's')} | ${fmt(sb?.time_seconds, 's')} | ${d ? `${d.time_seconds}s` : '—s'} |`,
    `| Tokens | ${fmt(sa?.tokens, 'n')} | ${fmt(sb?.tokens, 'n')} | ${d?.tokens ?? '—'} |`,
  ];
  // skill-up: the agent_judge graders' spend, which the table above never includes.
  const judged = b.runs.filter((r) => r.judge);
  if (judged.length) {
    const sum = (f: (j: NonNullable<BenchmarkRun['judge']>) => number) => judged.reduce((x, r) => x + f(r.judge!), 0);
    const costs = judged.filter((r) => r.judge!.cost_usd !== undefined);
    lines.push('', `**Judges** (agent_judge graders, not in the table): ${sum((j) => j.runs)} grader run(s) over ${judged.length} run(s), ${sum((j) => j.tokens)} tokens, ${sum((j) => j.time_seconds).toFixed(1)}s${costs.length ? `, $${costs.reduce((x, r) => x + r.judge!.cost_usd!, 0).toFixed(4)}` : ''}`);
  }
  if (b.notes.length) {
    lines.push('', '## Notes', '');
    for (const n of b.notes) lines.push(`- ${n}`);
  }


  const st = b.statistics;
  lines.push(...statisticsMarkdown(st));

  if (byCase && ids) {
    lines.push('', '## Per-eval results', '');
    const perEval = new Map(st.per_eval.map((e) => [`${e.eval_name}\u0000${e.configuration}`, e]));
    for (const [caseId, jobs] of byCase) {
      lines.push(`### ${cell(caseId)} (eval ${ids.get(caseId)})`, '');
      const present = CONFIGS.filter((c) => jobs.some((j) => j.variant === c));
      lines.push('| Configuration | Runs | Pass rate [95% Wilson CI] | pass@k | pass^k | Errors |', '|---|---|---|---|---|---|');
      for (const config of present) {
        const e = perEval.get(`${caseId}\u0000${config}`);
        if (!e) continue;
        const ks = Object.keys(e.pass_at_k).map(Number).sort((x, y) => x - y);
        const k = ks[ks.length - 1];
        const atK = k === undefined ? '—' : `${pct(e.pass_at_k[String(k)])} (k=${k})`;
        const hatK = k === undefined ? '—' : `${pct(e.pass_hat_k[String(k)])} (k=${k})`;
        lines.push(`| ${label(config)} | ${e.trials} | ${pct(e.job_pass_rate)} [${pct(e.wilson_95.low)}–${pct(e.wilson_95.high)}]${e.flaky ? ' flaky' : ''} | ${atK} | ${hatK} | ${e.errors} |`);
      }
      const counts = new Map<string, Partial<Record<Variant, { pass: number; n: number }>>>();
      for (const j of jobs) {
        for (const a of j.assertions) {
          let c = counts.get(a.text);
          if (!c) counts.set(a.text, (c = {}));
          const x = (c[j.variant] ??= { pass: 0, n: 0 });
          x.n++;
          if (a.passed) x.pass++;
        }
      }
      if (counts.size) {
        lines.push('', `| Assertion | ${present.map(label).join(' | ')} |`, `|---|${present.map(() => '---|').join('')}`);
        for (const [text, c] of counts) {
          lines.push(`| ${cell(text)} | ${present.map((p) => (c[p] ? `${c[p].pass}/${c[p].n}` : '—')).join(' | ')} |`);
        }
      }
      lines.push('');
    }
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
