/**
 * The loaded, validated and fully merged suite: what `config/` hands to every later stage.
 *
 * Field names follow alibaba/skill-up's `v1alpha1` eval.yaml / case.yaml format
 * (docs/guide/writing-evals.md), converted to camelCase. Every path here is absolute;
 * every default (timeouts, `cases.defaults`) has already been applied, so no later
 * stage reads a raw YAML document.
 */

import type { McpServerSpec } from './mcp.js';

/** One `skills[]` entry of eval.yaml: a skill folder to install, with its file selection. */
export interface SkillRef {
  source: 'local_path';
  /** Absolute path to the skill folder (the one holding SKILL.md). */
  path: string;
  /** Globs relative to `path` (picomatch syntax, `**` crosses folders). Empty = every file. */
  include: string[];
  /** Globs relative to `path`; applied after `include`, so exclude wins. `evals/**` is always excluded. */
  exclude: string[];
  /**
   * `skills[].target` as written: a bare folder name (no `/`) is the folder under the engine's
   * skill folder (default: the skill's `name`); a path with a `/` is the workspace-relative
   * folder the skill is installed into (src/skill/install.ts skillInstallDir).
   */
  target?: string;
}

/** `engine.model` of eval.yaml. */
export interface ModelConfig {
  provider?: string;
  name?: string;
  baseUrl?: string;
  /** Absolute path of the scripted-model rule file, with `provider: scripted`. */
  script?: string;
}

/** `engine.custom` of eval.yaml: a user's own agent behind a command or an HTTP endpoint. */
export interface CustomEngineConfig {
  transport: 'local' | 'http';
  responseFormat: 'session_result' | 'text';
  conversationMode: 'batch' | 'stateful';
  /** Per-call deadline in seconds; the smaller of this and the case timeout applies. */
  timeoutSeconds?: number;
  /** Extra environment for the agent process; the only place secrets may be referenced. */
  env: Record<string, string>;
  kwargs: Record<string, string>;
  local?: {
    command: string;
    args: string[];
    cwd?: string;
    /** Workspace-relative path of the SessionInput JSON skill-up writes. */
    inputFile?: string;
    /** Workspace-relative path the agent writes its SessionResult to; stdout when unset. */
    outputFile?: string;
  };
  http?: {
    url: string;
    headers: Record<string, string>;
  };
}

/** eval.yaml's `environment` for `type: docker` (src/runtime/docker/). */
export interface DockerSettings {
  image: string;
  /** `none` (default), `host`, `bridge` or a network name. */
  network: string;
  /** The workspace's path inside the container; undefined = its host path. */
  workdir?: string;
  /** CPUs (may be fractional). */
  cpus?: number;
  /** Memory limit, bytes. */
  memoryBytes?: number;
  pidsLimit?: number;
  /** `uid`, `uid:gid` or a user name of the image. */
  user?: string;
  /** Read-only mounts: absolute host path (inside the skill root) → absolute container path. */
  mounts: { source: string; target: string }[];
}

/** `engine` of eval.yaml. */
export interface EngineConfig {
  /** Canonical engine name: `claude_code`, `codex`, `opencode`, `gemini_cli`, `qwen_code` or `custom`. */
  name: string;
  /** The name as written (a custom engine may be called anything). */
  displayName: string;
  /** Exact npm version to install into skill-up's cache; unset = engine on PATH. */
  version?: string;
  model: ModelConfig;
  kwargs: Record<string, string>;
  custom?: CustomEngineConfig;
}

/** `expect` of a case, merged with `cases.defaults.expect` (lists appended and de-duplicated, scalars overridden). */
export interface ExpectSpec {
  mustContain: string[];
  mustNotContain: string[];
  exitCode?: number;
  filesExist: string[];
  filesNotExist: string[];
  fileContains: { path: string; content: string }[];
  /** Absolute path of a file the final message must equal (trailing white space ignored). */
  goldenFile?: string;
  /** Skills that must have been activated (evidence from the transcript). */
  skillInvoked: string[];
  /** Skills that must not have been activated. */
  skillNotInvoked: string[];
}

/** One rule of a `rule_based` judge's `success` or `failure` list. Exactly one key is set. Each field is one rule kind of `RULE_KINDS` (src/judge/rules.ts), which the compiler checks against this type. */
export interface Rule {
  outputContains?: { all?: string[]; any?: string[]; not?: string[] };
  outputMatches?: { all?: string[]; any?: string[]; not?: string[] };
  exitCode?: number;
  filesExist?: string[];
  filesNotExist?: string[];
  toolCalled?: { name: string; args?: Record<string, unknown> };
  toolNotCalled?: { name: string };
  skillInvoked?: string;
  skillNotInvoked?: string;
  turnResponseContains?: { turn: number; containsAll?: string[]; containsAny?: string[] };
  turnResponseNotContains?: { turn: number; notContains: string[] };
  toolCalledInTurn?: { turn: number; name: string; args?: Record<string, unknown> };
  toolNotCalledInTurn?: { turn: number; name: string };
  /** Some call of MCP server `server`'s `tool` (any of its tools when unset) in any turn, its input matching `args` partially (src/judge/mcp-rules.ts). */
  mcpToolCalled?: { server: string; tool?: string; args?: Record<string, unknown> };
  /** No call of MCP server `server`'s `tool` (any of its tools when unset) in any turn. */
  mcpToolNotCalled?: { server: string; tool?: string };
  /** Every claim (of `kinds`, default all) the answers made holds (src/judge/behaviour/claims.ts). */
  claimsVerified?: { kinds?: ('file_created' | 'file_changed' | 'file_deleted' | 'tests_pass')[] };
  /** No tool called with the same input `maxRepeats` times in a row (default 3). */
  noToolLoop?: { maxRepeats: number };
  /** Every failed tool call or engine error is acknowledged by an answer (src/judge/behaviour/silent.ts). */
  noSilentFailure?: { enabled: true };
}

/** A case's `judge` (or one member of `judges`). `id` names it in reports. */
export type JudgeSpec = { id?: string } & (
  | { type: 'rule_based'; success: Rule[]; failure: Rule[] }
  | { type: 'script'; scriptPath: string; timeoutSeconds: number }
  | AgentJudgeSpec
);

/** One criterion of an `agent_judge`: its stable id (`c1`, `c2`, … by position, or as written) and the statement. */
export interface AgentJudgeCriterion {
  id: string;
  text: string;
}

/**
 * `context` of an `agent_judge`: the review materials put into the grader's context folder
 * (alibaba/skill-up's shape). Each boolean is the profile's default unless written.
 */
export interface AgentJudgeContext {
  /** `standard` (default): every material; `minimal`: the final message and the generated-files list only. */
  profile: 'minimal' | 'standard';
  finalMessage: boolean;
  transcript: boolean;
  workspaceDiff: boolean;
  generatedFiles: boolean;
  /** The skill's files (with_skill only). */
  skillSource: boolean;
  limits: {
    /** Bytes each text material (final message, transcript, diff, generated files) keeps; default 64 KiB. */
    maxBytes: number;
    /** Only the last N turns of the transcript; unset = all. */
    transcriptMaxTurns?: number;
    /** Lines of the workspace diff kept; unset = as many as `maxBytes` allows. */
    workspaceDiffMaxLines?: number;
  };
  /** Files or folders inside the skill root (absolute paths), copied into the context folder's `attachments/`. */
  attachments: { path: string; label?: string }[];
}

/** An `agent_judge`: a grader agent run through the engine layer grades `criteria` with evidence (src/run/grader.ts). */
export interface AgentJudgeSpec {
  type: 'agent_judge';
  /** Model override for the grader as written (`provider/name` or a bare name). */
  model?: string;
  criteria: AgentJudgeCriterion[];
  /** Pass when passed/total criteria ≥ this fraction (default 0.7). */
  passThreshold: number;
  /** Seconds each grader run may take; 0 = no limit. */
  timeoutSeconds: number;
  /** The grader's engine (a named `engines[]` entry or an inline one); unset = the job's own engine. */
  engine?: EngineConfig;
  /**
   * Where `engine` came from: `suite` (it names one of the suite's engines, which a run then
   * configures as its own: `--model`, `--model-script`) or `inline` (a map of its own).
   */
  engineFrom?: 'suite' | 'inline';
  /** Where an inline engine's `version` pin is written (file, 1-based line and column, field path): a pin npm lacks is reported there. */
  engineVersionAt?: { file: string; line: number; col: number; path: string };
  /** Independent grader runs; the majority per criterion decides (default 1). */
  repeats: number;
  /** Absolute paths of skill folders installed for the grader only (both variants). */
  skills: string[];
  context: AgentJudgeContext;
}

/** `post_condition` of a turn: a gate checked on that turn's answer before the next turn is sent. */
export interface PostCondition {
  mustContainAll: string[];
  mustContainAny: string[];
  mustNotContain: string[];
  onFail: 'fail' | 'skip_remaining';
}

/** One user turn. A single `input.prompt` becomes one turn. */
export interface TurnSpec {
  /** The user message as written (`''` for a `respond` turn, whose message the simulator writes). */
  content: string;
  /**
   * A `respond` turn: the instruction to the user simulator (src/simulator/), which writes
   * this turn's message from the conversation so far and must reply; `''` for `respond: true`
   * (no instruction beyond the case's scenario). Absent for a turn with `content`.
   */
  respond?: string;
  postCondition?: PostCondition;
  /** Values taken from this turn's answer into `{{variable}}` of later turns. */
  capture: { variable: string; pattern?: string; jsonpath?: string }[];
  timeoutSeconds?: number;
}

/** `context` of a case: how the fresh workspace is prepared before the engine starts. */
export interface CaseContext {
  /** Absolute path of a folder copied into the workspace. */
  repoFixture?: string;
  /** Workspace-relative path → file content. */
  files: Record<string, string>;
  git?: {
    init: boolean;
    checkout?: string;
    /** Absolute path of a patch applied with `git apply`. */
    applyDiff?: string;
    remotes: { name: string; url: string }[];
  };
}

/** A case with every default applied. */
export interface CaseSpec {
  id: string;
  /** Absolute path of the case file (or eval.yaml for inline cases). */
  file: string;
  /** 1-based line of the case in `file`: 1 for a case file, the item's line for `cases.inline`; unset = 1. */
  line?: number;
  title?: string;
  description?: string;
  tags: string[];
  turns: TurnSpec[];
  context: CaseContext;
  /** Seconds for the workspace set-up and the agent's turns (judges have their own limits); -1 = no deadline. */
  timeoutSeconds: number;
  maxTurns: number;
  /** Trials per variant for this case. */
  trials: number;
  expect: ExpectSpec;
  /** `judge` (one) or `judges` (several, all required to pass); empty = the expect gate alone decides. */
  judges: JudgeSpec[];
  /** Workspace-relative globs of files copied into the job's output folder. */
  collectArtifacts: string[];
  /** Engines this case runs on; unset = every engine of the run. */
  engines?: string[];
  /**
   * The case's `user_simulator`: `scenario` (what the simulated user wants, given to the
   * simulator with every request) and `autonomous` (`input.prompt` plus a scenario: after the
   * prompt, the simulator replies or stops until `maxTurns`). Unset: no simulator involved
   * beyond `respond` turns.
   */
  userSimulator?: { scenario: string; autonomous: boolean };
  /** The MCP servers offered in this case's jobs (eval.yaml's merged with the case's by name; src/config/mcp.ts); absent = none. */
  mcpServers?: McpServerSpec[];
  /**
   * A trigger case (`should_trigger`, or an item of eval.yaml `triggers.file`): graded only on
   * whether the skill under test (the suite's first skill) was activated; pass iff activated
   * equals this. It has no `expect` or judges and runs only in `with_skill` (src/judge/trigger.ts).
   */
  shouldTrigger?: boolean;
}

/**
 * eval.yaml `user_simulator`: the model that writes simulated user messages (src/simulator/).
 * `provider: scripted` talks to the run's scripted model server (the suite's model script,
 * `simulator: true` rules); any other provider to `baseUrl` with the key from `apiKeyEnv`.
 */
export interface UserSimulatorConfig {
  /** `scripted`, or a provider name (`openai`, `anthropic`, …; only labels it otherwise). */
  provider: string;
  /** Wire format: OpenAI Chat Completions or Anthropic Messages. */
  protocol: 'openai' | 'anthropic';
  /** Model name sent in the request (`scripted-simulator` for the scripted model when unset). */
  model: string;
  /** Seconds one simulator request may take (default 30). */
  timeoutSeconds: number;
  /** Endpoint base: OpenAI's includes `/v1` (`https://api.openai.com/v1`), Anthropic's does not. Unset for `scripted`. */
  baseUrl?: string;
  /** Name of the environment variable holding the API key (its value is never printed or written). Unset for `scripted`. */
  apiKeyEnv?: string;
}

/** The whole suite. */
export interface Suite {
  /** Absolute path of eval.yaml. */
  evalFile: string;
  /** Absolute path of the skill root: the folder holding SKILL.md and evals/. */
  skillDir: string;
  schemaVersion: 'v1alpha1';
  environment: {
    type: 'none' | 'docker';
    env: Record<string, string>;
    setupSteps: { run: string }[];
    image?: string;
    workspaceMount: string;
    /** `type: docker` only (src/runtime/docker/): the container's settings. */
    docker?: DockerSettings;
  };
  skills: SkillRef[];
  engine: EngineConfig;
  /** eval.yaml `user_simulator`: the simulated user's model connection; unset = no `respond` turn or scenario allowed. */
  userSimulator?: UserSimulatorConfig;
  /** Extra engines from `engines:` (engine matrix); the first is always `engine`. */
  engines: EngineConfig[];
  cases: CaseSpec[];
  parallelism: number;
  retryPolicy: { maxRetries: number; retryOn: ('timeout' | 'error')[] };
  benchmark: { enabled: boolean };
  /** `gates:` of eval.yaml (command-line flags override each field). */
  gates: SuiteGates;
  trials: number;
  report: { formats: ReportFormat[]; artifacts: string[] };
}

/** eval.yaml `gates:`; rates as fractions, uplift and margin in points as written. */
export interface SuiteGates {
  minPassRate?: number;
  /** Points (10 = +10 points). */
  minUplift?: number;
  /** Absolute path of a previous result.json or iteration folder; margin in points. */
  noRegression?: { baseline: string; margin?: number };
  maxErrorRate?: number;
  alpha?: number;
  onInconclusive?: 'pass' | 'fail';
  errorsAsFailures?: boolean;
  /** Trigger precision to reach, a fraction (decided on its Wilson interval; src/gate/trigger.ts). */
  minTriggerPrecision?: number;
  /** Trigger recall to reach, a fraction. */
  minTriggerRecall?: number;
  /** Behaviour gates (src/gate/behaviour.ts), fractions: highest tool-loop and silent-failure job rates, lowest claims-verified job rate. */
  maxToolLoopRate?: number;
  maxSilentFailureRate?: number;
  minClaimsVerifiedRate?: number;
}

export type ReportFormat = 'json' | 'junit' | 'html' | 'markdown' | 'benchmark';
