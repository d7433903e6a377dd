/**
 * Combining checked shards (check.ts) into one run: the union of their jobs in the order an
 * unsharded run records them, the statistics and gates decided anew over that union with the
 * shards' own gate settings, and the result.json document of the merged run. Pure: no file is
 * read or written here (the CLI copies the job folders and writes the reports).
 *
 * Job order = plan order (plan.ts `planJobs`): by case in suite order (`shard.plan_cases`),
 * then engine in the run's engine order, then trial, then variant (with_skill before
 * without_skill). That is the order `skill-up run` writes without --shard, so the trial list
 * given to `decide()` — and therefore every figure — is the one an unsharded run computes.
 *
 * A partial merge (`--allow-partial`) is gated as a run cut short (see `partialGates`).
 *
 * Times: started_at is the earliest shard start, ended_at the latest shard end, duration_ms the
 * wall span between them (each shard's own duration is in `merge.shards`).
 */
import type { Variant } from '../engine/types.js';
import { decide, type Decision, type DecisionConfig, type PreviousRun } from '../gate/index.js';
import { buildResultJson, jobResultOf, trialOfJob, type JobJson, type ResultDoc, type RunMeta } from '../report/result-json.js';
import type { MergePlan } from './check.js';
import type { MergeRecord } from './types.js';
import { costNotes } from '../cost/result.js';
import { partialDecision } from '../cost/partial.js';
import { behaviourConfigOf } from '../gate/behaviour.js';
import { triggerConfigOf } from '../gate/trigger.js';
import type { CaseSpec } from '../config/types.js';

const VARIANTS: Variant[] = ['with_skill', 'without_skill'];

/** The union of the shards' jobs in plan order (see the module comment). */
export function orderJobs(plan: MergePlan): JobJson[] {
  const casePos = new Map(plan.planCases.map((c, i) => [c, i]));
  const enginePos = new Map(plan.shards[0]!.doc.engines.map((e, i) => [e.name, i]));
  const pos = (m: Map<string, number>, k: string) => m.get(k) ?? Number.MAX_SAFE_INTEGER;
  const all = plan.shards.flatMap((s) => s.doc.jobs);
  return all
    .map((j, i) => ({ j, i }))
    .sort(
      (a, b) =>
        pos(casePos, a.j.case_id) - pos(casePos, b.j.case_id) ||
        pos(enginePos, a.j.engine) - pos(enginePos, b.j.engine) ||
        a.j.trial - b.j.trial ||
        VARIANTS.indexOf(a.j.variant) - VARIANTS.indexOf(b.j.variant) ||
        a.i - b.i,
    )
    .map((x) => x.j);
}

/** The shards' gate settings (result.json `decision.config`) as the decision stage takes them; `previous` is the loaded no_regression baseline, if the shards had one. */
export function decisionConfigOf(doc: ResultDoc, previous?: PreviousRun): DecisionConfig {
  const c = doc.decision.config;
  const out: DecisionConfig = {
    alpha: c.alpha,
    errorsAsFailures: c.errors_as_failures,
    maxErrorRate: c.max_error_rate,
    engineNames: Object.fromEntries(doc.engines.map((e) => [e.name, e.display_name])),
  };
  if (c.min_pass_rate !== null && c.min_pass_rate !== undefined) out.minPassRate = c.min_pass_rate;
  if (c.min_uplift !== null && c.min_uplift !== undefined) out.minUplift = c.min_uplift;
  if (c.on_inconclusive) out.onInconclusive = c.on_inconclusive;
  Object.assign(out, behaviourConfigOf(c), triggerConfigOf(c));
  if (c.no_regression) {
    if (!previous) throw new RangeError('the shards have a no_regression gate: its baseline run must be given');
    out.noRegression = { previous, margin: c.no_regression.margin };
  }
  return out;
}

/** `argv` without `--shard i/n` (either form). */
export function withoutShardFlag(argv: unknown): unknown {
  if (!Array.isArray(argv)) return argv;
  const out: unknown[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--shard') i++;
    else if (typeof a === 'string' && a.startsWith('--shard=')) continue;
    else out.push(a);
  }
  return out;
}

/**
 * A partial merge (`--allow-partial`) is gated as `run` gates a run cut short (cost/partial.ts):
 * a gate that would pass only because cases were left out is INCONCLUSIVE. Left out are the
 * missing shards' cases and the cases of an interrupted shard with no job at all, each on
 * every engine and variant of the run (× the run's --trials when it set one, else once: the
 * per-case trial count of a missing case is not recorded anywhere).
 */
function partialGates(plan: MergePlan, d: Decision): Decision {
  const ran = new Set(plan.shards.flatMap((s) => s.doc.jobs.map((j) => j.case_id)));
  const absent = plan.shards.filter((s) => plan.interrupted.includes(s)).flatMap((s) => s.shard.cases.filter((c) => !ran.has(c)));
  const left = [...plan.missingCases, ...absent];
  if (left.length === 0) return d;
  const first = plan.shards[0]!.doc;
  const options = first.options as { trials?: unknown; baseline?: unknown };
  const trials = typeof options.trials === 'number' ? options.trials : 1;
  const variants: Variant[] = options.baseline ? ['with_skill', 'without_skill'] : ['with_skill'];
  const notRun = left.flatMap((id) =>
    first.engines.flatMap((e) => variants.flatMap((variant) => Array.from({ length: trials }, () => ({ engine: e.name, variant, case: { id } as CaseSpec })))),
  );
  const why = plan.missingShards.length
    ? `shard(s) ${plan.missingShards.map((i) => `${i}/${plan.count}`).join(', ')} not merged (--allow-partial)`
    : 'an interrupted shard (--allow-partial)';
  return partialDecision(d, notRun, why);
}

/** The merged run. */
export interface Merged {
  doc: ResultDoc;
  decision: Decision;
  jobs: JobJson[];
}

/**
 * Builds the merged run's result.json document. `iteration` is the number of the folder it is
 * written to; `tool` the merging skill-up; `previous` the no_regression baseline when the
 * shards had that gate.
 */
export function combine(plan: MergePlan, opts: { iteration: number; tool: { name: string; version: string }; previous?: PreviousRun }): Merged {
  const first = plan.shards[0]!.doc;
  const jobs = orderJobs(plan);
  const config = decisionConfigOf(first, opts.previous);
  const decision = partialGates(plan, decide(jobs.map((j) => trialOfJob(j)), config));
  const starts = plan.shards.map((s) => Date.parse(s.doc.started_at));
  const ends = plan.shards.map((s) => Date.parse(s.doc.ended_at));
  const startedAt = new Date(Math.min(...starts));
  const endedAt = new Date(Math.max(...ends));
  const merge: MergeRecord = {
    count: plan.count,
    shards: plan.shards.map((s) => ({
      index: s.shard.index,
      source: s.source,
      cases: s.shard.cases,
      jobs: s.doc.jobs.length,
      started_at: s.doc.started_at,
      ended_at: s.doc.ended_at,
      duration_ms: s.doc.duration_ms,
      exit_code: s.doc.exit_code,
      interrupted: s.doc.interrupted,
      not_run: s.doc.not_run,
    })),
    partial: plan.missingShards.length > 0 || plan.interrupted.length > 0,
    missing_shards: plan.missingShards,
    missing_cases: plan.missingCases,
  };
  // The engines as the record builders read them (name, display name, model); costNotes prices by the model.
  const engines = first.engines.map((e) => ({ name: e.name, displayName: e.display_name, model: { ...(e.model.provider ? { provider: e.model.provider } : {}), ...(e.model.name ? { name: e.model.name } : {}) }, kwargs: {} }));
  const results = jobs.map(jobResultOf);
  const notRunReason = plan.shards.map((s) => s.doc.not_run_reason).find(Boolean);
  const meta: RunMeta = {
    tool: opts.tool,
    skill: first.skill,
    evalFile: first.eval_file,
    ...(first.suite_hash ? { suiteHash: first.suite_hash } : {}),
    merge,
    iteration: opts.iteration,
    startedAt: startedAt.toISOString(),
    endedAt: endedAt.toISOString(),
    durationMs: Math.max(0, endedAt.getTime() - startedAt.getTime()),
    interrupted: plan.shards.some((s) => s.doc.interrupted),
    notRun: plan.shards.reduce((n, s) => n + s.doc.not_run, 0),
    ...(notRunReason ? { notRunReason } : {}),
    // Notes over the union; a shard's --max-cost budget was its own and is not carried.
    cost: { notes: costNotes(engines, results) },
    // The `engines` block is replaced by the shards' own below.
    engines,
    options: { ...first.options, argv: withoutShardFlag(first.options.argv) },
    exitCode: decision.exitCode,
    decision,
  };
  const doc = buildResultJson(meta, results);
  // Lossless: the shards' own engine and job records, not their round trip through the run types.
  doc.engines = first.engines;
  doc.jobs = jobs;
  return { doc, decision, jobs };
}
