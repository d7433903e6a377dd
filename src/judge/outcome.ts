import type { Assertion } from './types.js';

/**
 * What one judge returns. `error` means the judge itself could not reach a verdict (it is
 * never counted as a fail); `reason` then says why, or for `fail` which checks failed.
 */
export interface JudgeOutcome {
  status: 'pass' | 'fail' | 'error';
  assertions: Assertion[];
  reason?: string;
}
