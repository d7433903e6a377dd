/**
 * The run record: what one job measured, as kept in the journal and in result.json.
 * Durations are milliseconds, tokens are counts, cost is USD.
 */
import type { SkillActivation, TokenUsage, TurnSource, Variant } from '../engine/types.js';
import type { Assertion, JudgeSpend, Status } from '../judge/types.js';
import type { Job } from '../plan/plan.js';
import type { TriggerVerdict } from '../judge/trigger.js';
import type { JobBehaviour } from '../judge/behaviour/types.js';

/** Most tool calls one turn keeps; later ones are counted (`toolCallsDropped`), not kept. */
export const MAX_TOOL_CALLS_PER_TURN = 10_000;
/** Most characters of tool inputs (as JSON) and outputs one turn keeps in total (16 Mi); later calls keep a short preview. */
export const MAX_TOOL_IO_CHARS_PER_TURN = 16 * 1024 * 1024;
/** Characters of a tool input or output kept as a preview once a turn's tool budget is spent. */
export const TOOL_PREVIEW_CHARS = 200;

/**
 * Tool calls an engine's parser counted but did not build (past {@link MAX_TOOL_CALLS_PER_TURN}),
 * keyed by the `toolCalls` array it returned (adapters pass that array on as is); src/run/job.ts
 * reads it into `toolCallsDropped`.
 */
export const droppedToolCalls = new WeakMap<object, number>();

/** One user turn's outcome inside a job. */
export interface TurnResult {
  /** 1-based. */
  index: number;
  prompt: string;
  /** Who wrote `prompt` (case with a user simulator only): `case` or `simulator`. */
  source?: TurnSource;
  /**
   * On the last turn of a case with a user simulator: why the conversation ended,
   * `simulator_stop: <reason>`, `max_turns`, `turns_done`, `post_condition` or `error`.
   */
  stopReason?: string;
  status: 'completed' | 'skipped' | 'failed' | 'error';
  /** The answer: whole, or a bounded preview (head … tail) when `finalTextFile` is set. */
  finalText: string;
  /**
   * When the answer is larger than INLINE_TEXT_BYTES (64 KiB, src/engine/final-text.ts): the
   * job-folder-relative file whose first `finalTextBytes` bytes are the whole answer.
   */
  finalTextFile?: string;
  /** UTF-8 bytes of the whole answer, when it lives in `finalTextFile`. */
  finalTextBytes?: number;
  reason?: string;
  durationMs: number;
  usage: TokenUsage;
  costUsd?: number;
  toolCalls: { name: string; input: unknown; isError?: boolean }[];
  /** Tool calls past {@link MAX_TOOL_CALLS_PER_TURN} that were counted but not kept. */
  toolCallsDropped?: number;
  skillActivations: SkillActivation[];
  /** Skills the engine offered the model in this turn, when observable. */
  skillsListed?: string[];
  /** Tool names offered to the model in this turn, when observable (TranscriptTurn.toolsOffered). */
  toolsOffered?: string[];
  /** The engine's permission mode for this turn, when it says (TranscriptTurn.permissionMode). */
  permissionMode?: string;
  sessionId?: string;
}

/** One MCP server a job offered its agent (JobResult.mcpServers): never its command, env, url or headers. */
export interface McpServerOffered {
  name: string;
  mode: 'real' | 'mocked';
  transport: 'stdio' | 'http';
}

/** One finished job (case × engine × variant × trial). */
export interface JobResult {
  id: string;
  caseId: string;
  engine: string;
  variant: Variant;
  trial: number;
  /** Attempts used, 1 when no retry happened. */
  attempts: number;
  status: Status;
  reason?: string;
  /** ISO 8601. */
  startedAt: string;
  /** Wall time of the job, ms, without the agent_judge graders' (which is `judge.durationMs`). */
  durationMs: number;
  /** Time spent inside the engine processes. */
  engineDurationMs: number;
  usage: TokenUsage;
  /** USD: as the engine reported it, or estimated from `usage` and the price table when `costEstimated`. */
  costUsd?: number;
  /** `costUsd` is an estimate (src/cost/estimate.ts), not a cost the engine reported. */
  costEstimated?: boolean;
  /**
   * What the agent_judge graders spent (tokens, wall ms, USD, runs, agreement): reported apart
   * from the agent's `usage`, `costUsd` and `engineDurationMs`, never added into them.
   */
  judge?: JudgeSpend;
  /** The last completed turn's answer: whole, or its bounded preview when `finalMessageFile` is set. */
  finalMessage: string;
  /** When the final message is larger than the inline limit: the job-folder-relative file whose first `finalMessageBytes` bytes are the whole message (that turn's `finalTextFile`). */
  finalMessageFile?: string;
  /** UTF-8 bytes of the whole final message, when it lives in `finalMessageFile`. */
  finalMessageBytes?: number;
  turns: TurnResult[];
  /** Skill names installed into the workspace (empty for `without_skill`). */
  skillsInstalled: string[];
  /** Union of the skills the engine offered the model over all turns, when observable. */
  skillsOffered?: string[];
  /**
   * The MCP servers offered to the agent (eval.yaml's and the case's `mcp.servers`, src/config/mcp.ts):
   * name, mode and transport, in configuration order; the same for both variants of a case. Absent when none.
   */
  mcpServers?: McpServerOffered[];
  skillActivations: SkillActivation[];
  assertions: Assertion[];
  /** Job folder relative to the iteration folder, e.g. `hello/with_skill/run-1`. */
  outputDir: string;
  /** Workspace files collected by `collect_artifacts`, relative to the workspace. */
  artifacts: string[];
  /**
   * How many workspace files the agent added, modified and deleted (src/runtime/changes.ts);
   * absent when the agent never ran. The files themselves are saved in
   * `<outputDir>/outputs/changes/` when any changed (what `skill-up regrade` restores).
   */
  changes?: { added: number; modified: number; deleted: number; truncated?: boolean };
  /** Absolute path of the job's workspace, when it was kept (`--keep-workspaces`). */
  workspace?: string;
  /**
   * A trigger case's job (CaseSpec.shouldTrigger): the skill under test, the expectation, the
   * query and whether the skill was activated (src/judge/trigger.ts); also on an `error` job,
   * whose activation is then not a verdict (the stats stage leaves errors out).
   */
  trigger?: TriggerVerdict;
  /**
   * The behaviour checks (src/judge/behaviour): claims verified, the longest tool loop, silent
   * failures, the skill context cost; absent when the agent never ran.
   */
  behaviour?: JobBehaviour;
  /**
   * What skill-up did about the job that is not a verdict (links planted in the job folder
   * removed, artifacts skipped, tool calls dropped); also appended to `reason`.
   */
  notes?: string[];
}

/** A judge as the event log names it: its `id` (else its type), its type, its 1-based place in `judges`. */
export interface JudgeRef {
  id: string;
  type: string;
  index: number;
}

/**
 * Receives the lifecycle of one job attempt from `runJobOnce` (src/run/events.ts writes them
 * to `--event-log`). Calls for one attempt come in order: job started, then per turn sent
 * started/finished, then per judge started/finished, then job finished. Must not throw.
 */
export interface JobEvents {
  jobStarted(job: Job, attempt: number): void;
  jobFinished(job: Job, attempt: number, result: JobResult): void;
  turnStarted(job: Job, attempt: number, index: number): void;
  turnFinished(job: Job, attempt: number, turn: TurnResult): void;
  judgeStarted(job: Job, attempt: number, judge: JudgeRef): void;
  judgeFinished(job: Job, attempt: number, judge: JudgeRef, outcome: { status: string; reason?: string; assertions: { passed: boolean }[]; usage?: TokenUsage }, durationMs: number): void;
}

/**
 * The reason of every job stopped by an interrupt (Ctrl-C): status `skipped`, never a pass, a
 * fail or an error; `run --resume` runs exactly these again (src/run/resume.ts).
 */
export const INTERRUPTED = 'run interrupted';

/** True for a job an interrupt stopped (reason {@link INTERRUPTED}, perhaps followed by `; <notes>`). */
export function wasInterrupted(r: Pick<JobResult, 'status' | 'reason'>): boolean {
  return r.status === 'skipped' && (r.reason === INTERRUPTED || r.reason?.startsWith(`${INTERRUPTED}; `) === true);
}
