/**
 * The run record: what one job measured, as kept in the journal and in result.json.
 * Durations are milliseconds, tokens are counts, cost is USD.
 */
import type { SkillActivation, TokenUsage, Variant } from '../engine/types.js';
import type { Assertion, Status } from '../judge/types.js';

/** One user turn's outcome inside a job. */
export interface TurnResult {
  /** 1-based. */
  index: number;
  prompt: string;
  status: 'completed' | 'skipped' | 'failed' | 'error';
  finalText: string;
  reason?: string;
  durationMs: number;
  usage: TokenUsage;
  costUsd?: number;
  toolCalls: { name: string; input: unknown; isError?: boolean }[];
  skillActivations: SkillActivation[];
  /** Skills the engine offered the model in this turn, when observable. */
  skillsListed?: string[];
  sessionId?: string;
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
  durationMs: number;
  /** Time spent inside the engine processes. */
  engineDurationMs: number;
  usage: TokenUsage;
  costUsd?: number;
  finalMessage: string;
  turns: TurnResult[];
  /** Skill names installed into the workspace (empty for `without_skill`). */
  skillsInstalled: string[];
  /** Union of the skills the engine offered the model over all turns, when observable. */
  skillsOffered?: string[];
  skillActivations: SkillActivation[];
  assertions: Assertion[];
  /** Job folder relative to the iteration folder, e.g. `hello/with_skill/run-1`. */
  outputDir: string;
  /** Workspace files collected by `collect_artifacts`, relative to the workspace. */
  artifacts: string[];
  /** Absolute path of the job's workspace, when it was kept (`--keep-workspaces`). */
  workspace?: string;
}
