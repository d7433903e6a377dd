/**
 * Grading shapes. An assertion is `{text, passed, evidence}` exactly as in Anthropic's
 * skill-creator `grading.json` (`expectations[]`), so reports can copy it verbatim.
 */
import type { CaseSpec } from '../config/types.js';
import type { TokenUsage, Transcript } from '../engine/types.js';
import type { WorkspaceChanges } from '../runtime/changes.js';

/** One graded check. `evidence` says what was seen, so a reader can verify the verdict. */
export interface Assertion {
  text: string;
  passed: boolean;
  evidence: string;
}

export type Status = 'pass' | 'fail' | 'error' | 'skipped';

/** The verdict on one job: the `expect` gate's assertions first, then the judge's. */
export interface Grading {
  status: Status;
  assertions: Assertion[];
  /** Why the status is `error` or `skipped`, or which gate failed. */
  reason?: string;
  /** What the agent_judge graders spent (summed over the case's agent_judges); absent without one. */
  judge?: JudgeSpend;
}

/**
 * What grading cost besides the agent: the agent_judge grader runs' tokens, wall time (ms),
 * cost (USD, as the grader engine reported it or estimated from its tokens when `costEstimated`),
 * the number of grader runs and, with `repeats` > 1, their agreement (0..1, mean over criteria of
 * the share of usable runs agreeing with the majority). Never part of the agent's usage or cost.
 */
export interface JudgeSpend {
  usage: TokenUsage;
  durationMs: number;
  costUsd?: number;
  costEstimated?: boolean;
  runs: number;
  agreement?: number;
  /** Absolute paths of the graders' workspace copies kept by `--keep-workspaces` (one per grader run), in run order. */
  workspaces?: string[];
}

/** Everything a judge may look at. Judges never start an engine themselves. */
export interface JudgeInput {
  case: CaseSpec;
  transcript: Transcript;
  /** The last completed turn's final text: whole, or its preview when `finalMessageFile` is set. */
  finalMessage: string;
  /**
   * Set when the final message is larger than the inline limit (src/engine/final-text.ts):
   * the absolute path of the file whose first `bytes` bytes are the whole message. Judges read
   * it through src/judge/text.ts (`finalMessageText`, `searchText`, `withFullText`).
   */
  finalMessageFile?: { path: string; bytes: number };
  /** Absolute path of the job folder, which turns' `finalTextFile` paths are relative to. */
  jobDir?: string;
  /** The engine's exit code of the last turn (0 when it ended normally). */
  exitCode: number;
  /** Absolute path of the job workspace after the engine ran. */
  workspace: string;
  /** Absolute path of the transcript JSON file given to script judges. */
  transcriptPath: string;
  /** Absolute path of the skill root, for `golden_file` and `script_path`. */
  skillDir: string;
  /**
   * What the agent changed in the workspace, from a snapshot taken after the skill was
   * installed and before the first turn (src/runtime/changes.ts). Absent when unknown.
   */
  changes?: WorkspaceChanges;
  /** Per-turn status from the conversation (completed, skipped, failed, error). */
  turnStatus: ('completed' | 'skipped' | 'failed' | 'error')[];
  signal?: AbortSignal;
}
