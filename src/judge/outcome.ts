import type { TokenUsage } from '../engine/types.js';
import type { Assertion, JudgeSpend } from './types.js';

/**
 * What one judge returns. `error` means the judge itself could not reach a verdict (it is
 * never counted as a fail); `reason` then says why, or for `fail` which checks failed.
 */
export interface JudgeOutcome {
  status: 'pass' | 'fail' | 'error';
  assertions: Assertion[];
  reason?: string;
  /** agent_judge: the grader's tokens (also in `spend`; the event log's `judge_finished.tokens`). */
  usage?: TokenUsage;
  /** agent_judge: what its grader runs spent, never counted as the agent's. */
  spend?: JudgeSpend;
}
