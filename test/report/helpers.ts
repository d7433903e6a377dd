import type { JobResult } from '../../src/run/types.js';
import { decide } from '../../src/gate/index.js';
import { buildResultJson, trialsOf, type ResultDoc, type RunMeta } from '../../src/report/result-json.js';
import { makeResult } from '../run/helpers.js';

export { makeResult };

/**
 * Run metadata of `results` with every field set, its decision computed from them once with
 * the default gates (as the run driver does); override what a test needs.
 */
export function makeMeta(results: JobResult[], over: Partial<RunMeta> = {}): RunMeta {
  return {
    decision: decide(trialsOf(results)),
    tool: { name: 'skill-up', version: '0.1.0' },
    skill: { name: 'my-skill', path: '/skills/my-skill' },
    evalFile: '/skills/my-skill/evals/eval.yaml',
    iteration: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:01:00.000Z',
    durationMs: 60_000,
    interrupted: false,
    notRun: 0,
    engines: [{ name: 'custom', displayName: 'agent', model: {}, kwargs: {} }],
    options: {},
    exitCode: 0,
    ...over,
  };
}

/** The result.json document of `results`. */
export function makeDoc(results: JobResult[], over: Partial<RunMeta> = {}): ResultDoc {
  return buildResultJson(makeMeta(results, over), results);
}

/**
 * A job of `caseId` × `variant` × `trial`, with `assertions` given as [text, passed] pairs;
 * status follows the assertions (fail when any failed) unless given.
 */
export function job(
  caseId: string,
  variant: 'with_skill' | 'without_skill',
  trial: number,
  checks: [string, boolean][],
  over: Partial<JobResult> = {},
): JobResult {
  const id = `${over.engine && over.engine !== 'custom' ? `${over.engine}/` : ''}${caseId}/${variant}/run-${trial}`;
  return makeResult({
    id,
    caseId,
    variant,
    trial,
    status: checks.every(([, p]) => p) ? 'pass' : 'fail',
    assertions: checks.map(([text, passed]) => ({ text, passed, evidence: passed ? `ok: ${text}` : `missing: ${text}` })),
    outputDir: id,
    durationMs: 1000 * trial + (variant === 'with_skill' ? 500 : 0),
    engineDurationMs: 800 * trial,
    usage: { input: 100 * trial, output: 10, cacheRead: variant === 'with_skill' ? 5 : 0, cacheWrite: 0 },
    finalMessage: `answer of ${caseId} ${variant} ${trial}`,
    turns: [
      {
        index: 1,
        prompt: `prompt of ${caseId}`,
        status: 'completed',
        finalText: `answer of ${caseId} ${variant} ${trial}`,
        durationMs: 800 * trial,
        usage: { input: 100 * trial, output: 10, cacheRead: 0, cacheWrite: 0 },
        toolCalls: [{ name: 'Write', input: { path: 'a' } }, { name: 'Bash', input: { command: 'x' }, isError: trial === 2 }, { name: 'Write', input: { path: 'b' } }],
        skillActivations: [],
      },
    ],
    ...over,
  });
}
