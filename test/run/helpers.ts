import type { CaseSpec, Suite } from '../../src/config/types.js';
import type { JobResult } from '../../src/run/types.js';

/** A minimal case with every default. */
export function makeCase(id: string, over: Partial<CaseSpec> = {}): CaseSpec {
  return {
    id,
    file: `/tmp/${id}.yaml`,
    tags: [],
    turns: [{ content: `prompt of ${id}`, capture: [] }],
    context: { files: {} },
    timeoutSeconds: 60,
    maxTurns: 10,
    trials: 1,
    expect: { mustContain: [], mustNotContain: [], filesExist: [], filesNotExist: [], fileContains: [], skillInvoked: [], skillNotInvoked: [] },
    judges: [],
    collectArtifacts: [],
    ...over,
  };
}

/** A minimal suite around `cases`. */
export function makeSuite(cases: CaseSpec[], over: Partial<Suite> = {}): Suite {
  const engine = { name: 'custom', displayName: 'agent', model: {}, kwargs: {} };
  return {
    evalFile: '/tmp/s/evals/eval.yaml',
    skillDir: '/tmp/s',
    schemaVersion: 'v1alpha1',
    environment: { type: 'none', env: {}, setupSteps: [], workspaceMount: '/workspace' },
    skills: [],
    engine,
    engines: [engine],
    cases,
    parallelism: 1,
    retryPolicy: { maxRetries: 0, retryOn: [] },
    benchmark: { enabled: false },
    gates: {},
    trials: 1,
    report: { formats: ['json', 'junit'], artifacts: [] },
    ...over,
  };
}

/** A finished job result. */
export function makeResult(over: Partial<JobResult> = {}): JobResult {
  return {
    id: 'c/with_skill/run-1',
    caseId: 'c',
    engine: 'custom',
    variant: 'with_skill',
    trial: 1,
    attempts: 1,
    status: 'pass',
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 1200,
    engineDurationMs: 1000,
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
    finalMessage: 'done',
    turns: [],
    skillsInstalled: ['s'],
    skillActivations: [],
    assertions: [{ text: 'must_contain: "done"', passed: true, evidence: 'found' }],
    outputDir: 'c/with_skill/run-1',
    artifacts: [],
    ...over,
  };
}
