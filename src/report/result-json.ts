/**
 * result.json: the complete record of a run, schema in `schemas/result.schema.json`.
 * Keys are snake_case like alibaba/skill-up's and Anthropic's files; durations in ms,
 * tokens as counts, cost in USD.
 */
import type { EngineConfig } from '../config/types.js';
import type { SkillActivation, TokenUsage, TurnSource, Variant } from '../engine/types.js';
import type { Assertion, Status } from '../judge/types.js';
import type { ShardRecord } from '../plan/shard.js';
import type { MergeRecord } from '../merge/types.js';
import type { JobResult, McpServerOffered, TurnResult } from '../run/types.js';
import type { JudgeSpend } from '../judge/types.js';
import { addSpend } from '../judge/agent/verdict.js';
import type { RunStats, TrialResult } from '../stats/index.js';
import type { TriggerStats } from '../stats/trigger.js';
import { configJson, type Decision, type GateResult } from '../gate/index.js';
import { costJson, type RunCostMeta } from '../cost/result.js';
import { behaviourByArm, behaviourFromJson, behaviourJson, trialBehaviour, type BehaviourArm, type BehaviourJson } from './behaviour.js';
import { TOKEN_ESTIMATE } from '../judge/behaviour/types.js';

/** The version of the result.json format written by this code (2: clustered intervals, three-state verdict, gates). */
export const RESULT_SCHEMA_VERSION = '2';

/** Everything known about a run besides its job results. */
export interface RunMeta {
  tool: { name: string; version: string };
  skill: { name: string; description?: string; path: string };
  evalFile: string;
  /** config/hash.ts `suiteHash` of the skill folder: equal for shards and resumes of one suite. */
  suiteHash?: string;
  /** `run --shard i/n`: which part of the plan this run is (plan/shard.ts). */
  shard?: ShardRecord;
  /** A run assembled by `skill-up merge` from shards (merge/types.ts). */
  merge?: MergeRecord;
  /** A saved run graded again by `skill-up regrade` (src/regrade/): its result.json, the jobs graded again, those kept as graded. */
  regrade?: RegradeJson;
  iteration: number;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  interrupted: boolean;
  /** Jobs planned but never started (after an interrupt, or refused by `--max-cost`). */
  notRun: number;
  /** Why jobs were not run, when it was not an interrupt (e.g. `--max-cost $5.00 reached`). */
  notRunReason?: string;
  /** How the engines were priced and the `--max-cost` budget (src/cost/result.ts). */
  cost?: RunCostMeta;
  engines: (EngineConfig & { resolvedVersion?: string })[];
  options: Record<string, unknown>;
  exitCode: number;
  /**
   * The run's statistics and gates (gate/decide.ts), computed once by the caller (the run
   * driver, merge, a journal rebuild): result.json records this decision and never recomputes it.
   */
  decision: Decision;
}

/** result.json `regrade`: the saved run's result.json, how many jobs were graded again, and those kept as graded with the reason. */
export interface RegradeJson {
  from: string;
  regraded: number;
  kept: { id: string; reason: string }[];
}

/** Token counts as result.json writes them; `total` is the sum of the other four. */
export interface TokensJson {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
  total: number;
}

/** A tool call of a turn in result.json (its output stays in transcript.json). */
export interface ToolCallJson {
  name: string;
  input: unknown;
  is_error?: true;
}

/** One user turn of a job in result.json (schema `$defs.turn`); durations ms, cost USD. */
export interface TurnJson {
  /** 1-based. */
  index: number;
  prompt: string;
  /** Who wrote `prompt`, in a case with a user simulator: `case` or `simulator`. */
  source?: TurnSource;
  /** On the last turn of a case with a user simulator: why the conversation ended. */
  stop_reason?: string;
  status: TurnResult['status'];
  /** The answer; a bounded preview when `final_text_file` is set. */
  final_text: string;
  /** Job-folder-relative file whose first `final_text_bytes` bytes are the whole answer. */
  final_text_file?: string;
  final_text_bytes?: number;
  final_text_truncated?: true;
  reason?: string;
  duration_ms: number;
  tokens: TokensJson;
  cost_usd?: number;
  tool_calls: ToolCallJson[];
  skill_activations: SkillActivation[];
  skills_listed?: string[];
  /** Tool names the engine offered the model in this turn, when observable. */
  tools_offered?: string[];
  /** The engine's permission mode in this turn, in its own words, when it says. */
  permission_mode?: string;
  session_id?: string;
}

/** One job (case × engine × variant × trial) in result.json (schema `$defs.job`). */
export interface JobJson {
  id: string;
  case_id: string;
  engine: string;
  variant: Variant;
  trial: number;
  attempts: number;
  status: Status;
  reason?: string;
  /** ISO 8601. */
  started_at: string;
  duration_ms: number;
  engine_duration_ms: number;
  tokens: TokensJson;
  cost_usd?: number;
  /** `cost_usd` is estimated from the tokens and the price table. */
  cost_estimated?: true;
  /** What the agent_judge graders spent (JobResult.judge): never part of `tokens`, `cost_usd` or `engine_duration_ms`. */
  judge?: JudgeJson;
  /** The last completed turn's answer; a preview when `final_message_file` is set. */
  final_message: string;
  final_message_file?: string;
  final_message_bytes?: number;
  final_message_truncated?: true;
  skills_installed: string[];
  skills_offered?: string[];
  /** The MCP servers offered to the agent (JobResult.mcpServers): name, mode, transport, in configuration order; absent when none. */
  mcp_servers?: McpServerOffered[];
  skill_activations: SkillActivation[];
  assertions: Assertion[];
  turns: TurnJson[];
  /** Job folder relative to the iteration folder. */
  output_dir: string;
  artifacts: string[];
  /** Workspace files the agent added, modified and deleted (JobResult.changes). */
  changes?: { added: number; modified: number; deleted: number; truncated?: boolean };
  /** Absolute path of the kept workspace (`--keep-workspaces`). */
  workspace?: string;
  /** A trigger case's job: the skill under test, what was expected, whether it was activated, the query (JobResult.trigger). */
  trigger?: { skill: string; should_trigger: boolean; activated: boolean; query: string };
  /** The behaviour checks (src/report/behaviour.ts `behaviourJson`): claims, tool loop, silent failure, skill context. */
  behaviour?: BehaviourJson;
}

/** An engine of the run in result.json. */
export interface EngineJson {
  name: string;
  display_name: string;
  /** The version pinned in eval.yaml. */
  version?: string;
  /** The version the engine's check found. */
  resolved_version?: string;
  model: { provider: string | null; name: string | null };
}

/**
 * What grading with agent_judge cost (schema `$defs.judgeSpend`): the graders' tokens, wall time
 * (ms), cost (USD; estimated when `cost_estimated`), grader runs, and with `repeats` > 1 the
 * agreement (0..1). Apart from, never inside, the agent's figures.
 */
export interface JudgeJson {
  tokens: TokensJson;
  duration_ms: number;
  cost_usd?: number;
  cost_estimated?: true;
  runs: number;
  agreement?: number;
  /** The graders' workspace copies kept by `--keep-workspaces` (absolute paths; a job's only, never in `totals`). */
  workspaces?: string[];
}

/** JobResult.judge (or a sum of them) as result.json writes it. */
export function judgeJson(j: JudgeSpend): JudgeJson {
  return {
    tokens: usageJson(j.usage),
    duration_ms: Math.round(j.durationMs),
    ...(j.costUsd !== undefined ? { cost_usd: j.costUsd } : {}),
    ...(j.costUsd !== undefined && j.costEstimated ? { cost_estimated: true as const } : {}),
    runs: j.runs,
    ...(j.agreement !== undefined ? { agreement: j.agreement } : {}),
    ...(j.workspaces?.length ? { workspaces: j.workspaces } : {}),
  };
}

/** The judges' spend over `results` (undefined when no job ran an agent_judge); the agreement is the mean of the jobs'. */
export function judgeTotals(results: readonly Pick<JobResult, 'judge'>[]): JudgeSpend | undefined {
  let out: JudgeSpend | undefined;
  for (const r of results) if (r.judge) out = addSpend(out, r.judge);
  // The kept grader workspaces are each job's (result.json `jobs[].judge.workspaces`), not a total.
  if (out) delete out.workspaces;
  return out;
}

/** result.json's `totals`: job counts by status, tokens and cost over every job. */
export interface TotalsJson {
  jobs: number;
  pass: number;
  fail: number;
  error: number;
  skipped: number;
  tokens: TokensJson;
  cost_usd?: number;
  cost_estimated?: true;
  /** The agent_judge graders over every job; `tokens` and `cost_usd` above are the agents' alone. */
  judge?: JudgeJson;
}

/**
 * The result.json document (schema: schemas/result.schema.json, checked against it in
 * test/report/result-schema.test.ts), as built by {@link buildResultJson} or as loaded by
 * `loadResultDoc`. Keys snake_case; durations ms, tokens counts, cost USD.
 */
export interface ResultDoc {
  /** {@link RESULT_SCHEMA_VERSION}. */
  schema_version: string;
  tool: { name: string; version: string };
  skill: { name: string; description?: string; path: string };
  eval_file: string;
  suite_hash?: string;
  shard?: ShardRecord;
  merge?: MergeRecord;
  regrade?: RegradeJson;
  iteration: number;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  interrupted: boolean;
  not_run: number;
  not_run_reason?: string;
  exit_code: number;
  options: Record<string, unknown>;
  engines: EngineJson[];
  totals: TotalsJson;
  /** How the jobs were priced and the `--max-cost` budget (src/cost/result.ts). */
  cost: ReturnType<typeof costJson>;
  /** The gate settings (gate/decide.ts `configJson`) and the decision's exit code. */
  decision: { config: ReturnType<typeof configJson>; exit_code: number };
  gates: ResultGate[];
  summary: ResultSummary;
  /** The trigger evaluation per engine (src/stats/trigger.ts, snake_case); absent when the run had no trigger case. */
  triggers?: ResultTriggers;
  /** Behaviour checks per engine × variant over the graded jobs (src/report/behaviour.ts); token means are estimates. */
  behaviour: { method: string; by_arm: BehaviourArm[] };
  jobs: JobJson[];
}

/** result.json's `triggers`: src/stats/trigger.ts `TriggerStats` with snake_case keys. */
export type ResultTriggers = Snake<TriggerStats>;

const usageJson = (u: TokenUsage): TokensJson => ({ input: u.input, output: u.output, cache_read: u.cacheRead, cache_write: u.cacheWrite, total: u.input + u.output + u.cacheRead + u.cacheWrite });

function turnJson(t: TurnResult): TurnJson {
  return {
    index: t.index,
    prompt: t.prompt,
    ...(t.source ? { source: t.source } : {}),
    ...(t.stopReason !== undefined ? { stop_reason: t.stopReason } : {}),
    status: t.status,
    final_text: t.finalText,
    ...(t.finalTextFile ? { final_text_file: t.finalTextFile, final_text_bytes: t.finalTextBytes ?? 0, final_text_truncated: true as const } : {}),
    ...(t.reason ? { reason: t.reason } : {}),
    duration_ms: Math.round(t.durationMs),
    tokens: usageJson(t.usage),
    ...(t.costUsd !== undefined ? { cost_usd: t.costUsd } : {}),
    tool_calls: t.toolCalls.map((c) => ({ name: c.name, input: c.input, ...(c.isError ? { is_error: true } : {}) })),
    skill_activations: t.skillActivations,
    ...(t.skillsListed ? { skills_listed: t.skillsListed } : {}),
    ...(t.toolsOffered ? { tools_offered: t.toolsOffered } : {}),
    ...(t.permissionMode ? { permission_mode: t.permissionMode } : {}),
    ...(t.sessionId ? { session_id: t.sessionId } : {}),
  };
}

/** One job as written in result.json. */
export function jobJson(r: JobResult): JobJson {
  return {
    id: r.id,
    case_id: r.caseId,
    engine: r.engine,
    variant: r.variant,
    trial: r.trial,
    attempts: r.attempts,
    status: r.status,
    ...(r.reason ? { reason: r.reason } : {}),
    started_at: r.startedAt,
    duration_ms: Math.round(r.durationMs),
    engine_duration_ms: Math.round(r.engineDurationMs),
    tokens: usageJson(r.usage),
    ...(r.costUsd !== undefined ? { cost_usd: r.costUsd } : {}),
    ...(r.costUsd !== undefined && r.costEstimated ? { cost_estimated: true } : {}),
    ...(r.judge ? { judge: judgeJson(r.judge) } : {}),
    final_message: r.finalMessage,
    // Over the inline limit (src/engine/final-text.ts) `final_message` is a preview: the whole
    // message is the first `final_message_bytes` bytes of `<output_dir>/<final_message_file>`.
    ...(r.finalMessageFile ? { final_message_file: r.finalMessageFile, final_message_bytes: r.finalMessageBytes ?? 0, final_message_truncated: true as const } : {}),
    skills_installed: r.skillsInstalled,
    ...(r.skillsOffered ? { skills_offered: r.skillsOffered } : {}),
    ...(r.mcpServers?.length ? { mcp_servers: r.mcpServers.map((s) => ({ name: s.name, mode: s.mode, transport: s.transport })) } : {}),
    skill_activations: r.skillActivations,
    assertions: r.assertions,
    turns: r.turns.map(turnJson),
    output_dir: r.outputDir,
    artifacts: r.artifacts,
    ...(r.changes ? { changes: r.changes } : {}),
    ...(r.workspace ? { workspace: r.workspace } : {}),
    ...(r.trigger ? { trigger: { skill: r.trigger.skill, should_trigger: r.trigger.shouldTrigger, activated: r.trigger.activated, query: r.trigger.query } } : {}),
    ...(r.behaviour ? { behaviour: behaviourJson(r.behaviour) } : {}),
  };
}

/** A result.json job back as the run record (the inverse of {@link jobJson}), for merge's totals and regrade. */
export function jobResultOf(j: JobJson): JobResult {
  const usage = (t: JobJson['tokens']) => ({ input: t.input, output: t.output, cacheRead: t.cache_read, cacheWrite: t.cache_write });
  return {
    id: j.id,
    caseId: j.case_id,
    engine: j.engine,
    variant: j.variant,
    trial: j.trial,
    attempts: j.attempts,
    status: j.status,
    ...(j.reason !== undefined ? { reason: j.reason } : {}),
    startedAt: j.started_at,
    durationMs: j.duration_ms,
    engineDurationMs: j.engine_duration_ms,
    usage: usage(j.tokens),
    ...(j.cost_usd !== undefined ? { costUsd: j.cost_usd } : {}),
    ...(j.cost_estimated ? { costEstimated: true } : {}),
    // The graders' spend, so the merged totals count it (apart from the agents').
    ...(j.judge
      ? {
          judge: {
            usage: usage(j.judge.tokens),
            durationMs: j.judge.duration_ms,
            ...(j.judge.cost_usd !== undefined ? { costUsd: j.judge.cost_usd } : {}),
            ...(j.judge.cost_estimated ? { costEstimated: true } : {}),
            runs: j.judge.runs,
            ...(j.judge.agreement !== undefined ? { agreement: j.judge.agreement } : {}),
          },
        }
      : {}),
    finalMessage: j.final_message,
    turns: j.turns.map(
      (t): TurnResult => ({
        index: t.index,
        prompt: t.prompt,
        ...(t.source ? { source: t.source } : {}),
        ...(t.stop_reason !== undefined ? { stopReason: t.stop_reason } : {}),
        status: t.status,
        finalText: t.final_text,
        ...(t.reason !== undefined ? { reason: t.reason } : {}),
        durationMs: t.duration_ms,
        usage: usage(t.tokens),
        ...(t.cost_usd !== undefined ? { costUsd: t.cost_usd } : {}),
        toolCalls: t.tool_calls.map((c) => ({ name: c.name, input: c.input, ...('is_error' in c && c.is_error ? { isError: true } : {}) })),
        skillActivations: t.skill_activations,
        ...(t.skills_listed ? { skillsListed: t.skills_listed } : {}),
        ...(t.tools_offered ? { toolsOffered: t.tools_offered } : {}),
        ...(t.permission_mode ? { permissionMode: t.permission_mode } : {}),
        ...(t.session_id ? { sessionId: t.session_id } : {}),
      }),
    ),
    skillsInstalled: j.skills_installed,
    ...(j.skills_offered ? { skillsOffered: j.skills_offered } : {}),
    ...(j.mcp_servers?.length ? { mcpServers: j.mcp_servers.map((s) => ({ name: s.name, mode: s.mode, transport: s.transport })) } : {}),
    skillActivations: j.skill_activations,
    assertions: j.assertions,
    outputDir: j.output_dir,
    artifacts: j.artifacts,
    ...(j.changes ? { changes: j.changes } : {}),
    ...(j.workspace ? { workspace: j.workspace } : {}),
    ...(j.behaviour ? { behaviour: behaviourFromJson(j.behaviour) } : {}),
    // A trigger job stays one: its verdict record feeds the trigger statistics, never the pass rates.
    ...(j.trigger ? { trigger: { skill: j.trigger.skill, shouldTrigger: j.trigger.should_trigger, activated: j.trigger.activated, query: j.trigger.query } } : {}),
  };
}

/** `passAtK` → `pass_at_k`, at the type level (mirrors {@link snake}). */
type SnakeKey<S extends string> = S extends `${infer H}${infer T}` ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeKey<T>}` : S;

/** `T` with every object key converted to snake_case, recursively: the JSON form of a stats value. */
export type Snake<T> = T extends (infer U)[]
  ? Snake<U>[]
  : T extends object
    ? { [K in keyof T as K extends string ? SnakeKey<K> : K]: Snake<T[K]> }
    : T;

/**
 * result.json's `summary`: the stats stage's `RunStats` with snake_case keys
 * (`options`, `cases[]`, `variants[]`, `uplift[]`; see src/stats/summarise.ts for every field).
 * `pass_at_k` / `pass_hat_k` keys are the k values, as strings once parsed back from JSON.
 */
export type ResultSummary = Snake<RunStats>;

/** result.json's `gates`: every gate with name, engine, threshold, figure, interval, state and reason (gate/gates.ts). */
export type ResultGate = Snake<GateResult>;

/** camelCase keys → snake_case, recursively (for the stats block, which holds no user keys). */
function snake(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snake);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(x)]));
  }
  return v;
}

/** Stats input from job results (the stats stage takes plain trial records). */
export function trialsOf(results: JobResult[]): TrialResult[] {
  return results.map((r) => ({
    caseId: r.caseId,
    engine: r.engine,
    variant: r.variant,
    trial: r.trial,
    status: r.status,
    durationMs: r.durationMs,
    tokens: r.usage.input + r.usage.output + r.usage.cacheRead + r.usage.cacheWrite,
    costUsd: r.costUsd,
    // Trigger trials are left out of the pass rates and uplift by the stats stage itself.
    ...(r.trigger ? { trigger: { query: r.trigger.query, shouldTrigger: r.trigger.shouldTrigger, activated: r.trigger.activated } } : {}),
    ...(r.behaviour ? { behaviour: trialBehaviour(r.behaviour) } : {}),
  }));
}

/**
 * A job of result.json as the stats stage's trial record (durations ms, tokens = the job's
 * total over input, output and cache, cost USD when reported).
 */
export function trialOfJob(j: JobJson, engine = j.engine, variant: Variant = j.variant): TrialResult {
  return {
    caseId: j.case_id,
    engine,
    variant,
    trial: j.trial,
    status: j.status,
    durationMs: j.duration_ms,
    tokens: j.tokens.total,
    ...(j.cost_usd !== undefined ? { costUsd: j.cost_usd } : {}),
    ...(j.trigger ? { trigger: { query: j.trigger.query, shouldTrigger: j.trigger.should_trigger, activated: j.trigger.activated } } : {}),
    ...(j.behaviour ? { behaviour: trialBehaviour(j.behaviour) } : {}),
  };
}

/**
 * Builds the result.json document: the single source every other report is built from
 * (`buildJunit`, `buildBenchmarks`, `buildSummaryMarkdown`, the HTML report all take it), so
 * `skill-up report` can regenerate them from a saved file.
 */
export function buildResultJson(meta: RunMeta, results: JobResult[]): ResultDoc {
  const count = (s: string) => results.filter((r) => r.status === s).length;
  const tokens = results.reduce(
    (u, r) => ({ input: u.input + r.usage.input, output: u.output + r.usage.output, cacheRead: u.cacheRead + r.usage.cacheRead, cacheWrite: u.cacheWrite + r.usage.cacheWrite }),
    { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  );
  const costs = results.filter((r) => r.costUsd !== undefined);
  const decision = meta.decision;
  return {
    schema_version: RESULT_SCHEMA_VERSION,
    tool: meta.tool,
    skill: meta.skill,
    eval_file: meta.evalFile,
    ...(meta.suiteHash ? { suite_hash: meta.suiteHash } : {}),
    ...(meta.shard ? { shard: meta.shard } : {}),
    ...(meta.merge ? { merge: meta.merge } : {}),
    ...(meta.regrade ? { regrade: meta.regrade } : {}),
    iteration: meta.iteration,
    started_at: meta.startedAt,
    ended_at: meta.endedAt,
    duration_ms: Math.round(meta.durationMs),
    interrupted: meta.interrupted,
    not_run: meta.notRun,
    ...(meta.notRunReason && meta.notRun ? { not_run_reason: meta.notRunReason } : {}),
    exit_code: meta.exitCode,
    options: meta.options,
    engines: meta.engines.map((e) => ({
      name: e.name,
      display_name: e.displayName,
      ...(e.version ? { version: e.version } : {}),
      ...(e.resolvedVersion ? { resolved_version: e.resolvedVersion } : {}),
      model: { provider: e.model.provider ?? null, name: e.model.name ?? null },
    })),
    totals: {
      jobs: results.length,
      pass: count('pass'),
      fail: count('fail'),
      error: count('error'),
      skipped: count('skipped'),
      tokens: usageJson(tokens),
      ...(costs.length ? { cost_usd: costs.reduce((s, r) => s + r.costUsd!, 0) } : {}),
      ...(costs.some((r) => r.costEstimated) ? { cost_estimated: true } : {}),
      ...(judgeTotals(results) ? { judge: judgeJson(judgeTotals(results)!) } : {}),
    },
    cost: costJson(meta.cost, results.map((r) => ({ engine: r.engine, variant: r.variant, cost_usd: r.costUsd, cost_estimated: r.costEstimated }))),
    decision: { config: configJson(decision.config), exit_code: decision.exitCode },
    gates: snake(decision.gates) as ResultGate[],
    summary: snake(decision.stats) as ResultSummary,
    ...(decision.triggers ? { triggers: snake(decision.triggers) as ResultTriggers } : {}),
    ...behaviourOfJobs(results.map(jobJson)),
  };
}

/** `behaviour` (the summaries per arm) and `jobs` of result.json, from the jobs as written. */
function behaviourOfJobs(jobs: JobJson[]): { behaviour: ResultDoc['behaviour']; jobs: JobJson[] } {
  return { behaviour: { method: TOKEN_ESTIMATE, by_arm: behaviourByArm(jobs) }, jobs };
}
