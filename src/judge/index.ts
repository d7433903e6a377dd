/**
 * Grading of one job (design.md, `judge/`): transcript + workspace → `Grading`.
 *
 * Order (alibaba/skill-up, docs "Judges"):
 * 1. engine errors are made `error` by the caller before grading; this module only grades;
 * 2. the `expect` gate (`expect.ts`): any failed check → `fail`, judges skipped;
 * 3. every judge of `case.judges` in order (all required): `rule_based` (`rules.ts`),
 *    `script` (`script.ts`), `agent_judge` (through an injected runner: src/run/grader.ts runs
 *    the grader agent; the pure parts are in `agent/`).
 * Final status: `error` when any judge could not reach a verdict (never counted as a fail),
 * else `pass` iff every judge passed, else `fail`. A rule or script judge passes iff all its
 * assertions passed; an agent_judge passes when passed/total criteria ≥ its `pass_threshold`,
 * so some of its criterion assertions may have failed in a passing job.
 */
import type { JudgeSpec } from '../config/types.js';
import { checkExpect } from './expect.js';
import type { JudgeOutcome } from './outcome.js';
import { runRuleJudge } from './rules.js';
import { runScriptJudge } from './script.js';
import type { Grading, JudgeInput, JudgeSpend } from './types.js';
import { addSpend } from './agent/verdict.js';

export { checkExpect, firstDifference } from './expect.js';
export { evaluateRule, runRuleJudge } from './rules.js';
export { runScriptJudge, interpreterFor } from './script.js';
export { argsMatch, argsMismatch } from './args.js';
export { evaluatePostCondition, evaluatePostConditionOn } from './postcondition.js';
export {
  captureValue,
  captureDetail,
  parseJsonPath,
  applyJsonPath,
  extractJson,
} from './capture.js';
export { resolveInWorkspace, inspectPath } from './paths.js';
export type { JudgeOutcome } from './outcome.js';

export * from './agent/index.js';

/** The reason given when a case has an `agent_judge` and gradeJob got no runner (a caller outside a run). */
export const AGENT_JUDGE_UNAVAILABLE = 'agent_judge needs a grader runner (src/run/grader.ts), and none was given to this grading';

/**
 * Runs an `agent_judge` through the engine layer (src/run/grader.ts `agentJudgeRunner`, or a
 * test double). The outcome's `spend` says what the grader runs cost; it is never the agent's.
 */
export type AgentJudgeRunner = (
  spec: Extract<JudgeSpec, { type: 'agent_judge' }>,
  input: JudgeInput,
) => Promise<JudgeOutcome>;

/** Optional collaborators of `gradeJob`. */
export interface GradeOptions {
  /** Runs `agent_judge` judges; when absent they grade as `error` (AGENT_JUDGE_UNAVAILABLE). */
  agentJudge?: AgentJudgeRunner;
  /** Told when each judge of `case.judges` starts and finishes (the run's event log); must not throw. */
  observer?: {
    started(judge: JudgeSpec, index: number): void;
    finished(judge: JudgeSpec, index: number, outcome: JudgeOutcome, durationMs: number): void;
  };
}

/** A judge's name in reasons: its `id`, else its type. */
function judgeName(j: JudgeSpec): string {
  return j.id ?? j.type;
}

async function runJudge(judge: JudgeSpec, input: JudgeInput, opts: GradeOptions): Promise<JudgeOutcome> {
  switch (judge.type) {
    case 'rule_based':
      return runRuleJudge(judge, input);
    case 'script':
      return runScriptJudge(judge, input);
    case 'agent_judge':
      if (!opts.agentJudge) return { status: 'error', assertions: [], reason: AGENT_JUDGE_UNAVAILABLE };
      return opts.agentJudge(judge, input);
    default: {
      const t = (judge as { type?: unknown }).type;
      return { status: 'error', assertions: [], reason: `unknown judge type ${JSON.stringify(t)}` };
    }
  }
}

/**
 * Grades one finished job. Never throws: a judge that crashes yields status `error` with the
 * message as reason. Assertions are the `expect` checks first, then each judge's in order;
 * with several judges, each judge's assertion texts are prefixed `[<id or type>] `.
 * Reasons: `expect gate failed`; `judge <name> failed: …`; for errors the judge's reason
 * (`the grader's engine … is not available`, `grader run 1 answered unusably twice …`, `cancelled`, …).
 */
export async function gradeJob(input: JudgeInput, options: GradeOptions = {}): Promise<Grading> {
  let assertions;
  try {
    assertions = await checkExpect(input);
  } catch (e) {
    return { status: 'error', assertions: [], reason: `expect gate crashed: ${(e as Error).message}` };
  }
  if (assertions.some((a) => !a.passed)) return { status: 'fail', assertions, reason: 'expect gate failed' };

  const judges = input.case.judges;
  const errors: string[] = [];
  const failures: string[] = [];
  let spend: JudgeSpend | undefined;
  for (const [index, judge] of judges.entries()) {
    if (input.signal?.aborted) {
      errors.push('cancelled');
      break;
    }
    let outcome: JudgeOutcome;
    const started = performance.now();
    options.observer?.started(judge, index);
    try {
      outcome = await runJudge(judge, input, options);
    } catch (e) {
      outcome = { status: 'error', assertions: [], reason: `judge ${judgeName(judge)} crashed: ${(e as Error).message}` };
    }
    options.observer?.finished(judge, index, outcome, performance.now() - started);
    if (outcome.spend) spend = addSpend(spend, outcome.spend);
    const prefix = judges.length > 1 ? `[${judgeName(judge)}] ` : '';
    for (const a of outcome.assertions) assertions.push({ ...a, text: `${prefix}${a.text}` });
    // An agent_judge decides by its threshold: a failed criterion in a passing agent_judge does not fail the job.
    const failed = judge.type === 'agent_judge' ? outcome.status === 'fail' : outcome.status === 'fail' || outcome.assertions.some((a) => !a.passed);
    if (outcome.status === 'error') errors.push(outcome.reason ?? `judge ${judgeName(judge)} could not grade`);
    else if (failed) failures.push(`judge ${judgeName(judge)} failed${outcome.reason ? `: ${outcome.reason}` : ''}`);
  }
  const spent = spend ? { judge: spend } : {};
  if (errors.length > 0) return { status: 'error', assertions, reason: errors.join('; '), ...spent };
  // The expect gate's assertions all passed (checked above); each judge's verdict is in `failures`.
  return failures.length === 0 ? { status: 'pass', assertions, ...spent } : { status: 'fail', assertions, reason: failures.join('; '), ...spent };
}
