/**
 * result.json against schemas/result.schema.json: a real run's document (the random agent,
 * a custom engine, run in-process by the driver src/run/suite.ts) and a builder output with
 * every optional field set validate with ajv; and the schema and the `ResultDoc` type cannot
 * drift apart: every key the builder writes is declared in the schema, declared objects refuse
 * undeclared keys, and the schema requires nothing the builder may leave out.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSuite } from '../../src/config/load.js';
import { decide, type DecisionConfig } from '../../src/gate/index.js';
import { buildResultJson, trialsOf, type ResultDoc, type RunMeta } from '../../src/report/result-json.js';
import { createIterationDir } from '../../src/run/output.js';
import { planRun, prepareRun, runSuite, type RunRecord } from '../../src/run/suite.js';
import type { JobResult } from '../../src/run/types.js';
import { uniformCases, writeRandomSuite } from '../fixtures/random-agent/suite.mjs';
import { makeResult } from '../run/helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8'));
const Ajv = (Ajv2020 as unknown as { default?: typeof Ajv2020 }).default ?? Ajv2020;
const ajv = new (Ajv as unknown as new (o: object) => { compile(s: object): ((d: unknown) => boolean) & { errors?: unknown } })({ allErrors: true, strict: true, allowUnionTypes: true, validateFormats: false });
const validate = ajv.compile(schema);

function expectValid(doc: unknown): void {
  const ok = validate(doc);
  expect(ok, JSON.stringify(validate.errors, null, 2)).toBe(true);
}

type Node = Record<string, unknown>;
const deref = (n: Node): Node => (typeof n.$ref === 'string' ? deref(schema.$defs[(n.$ref).replace('#/$defs/', '')]) : n);

/**
 * Walks `value` along `node`: every key of every object is declared in its schema's
 * `properties` (where the schema declares them); returns the declared object paths that do not
 * set `additionalProperties: false`.
 */
function undeclared(value: unknown, node: Node, path: string, open: string[]): string[] {
  const n = deref(node);
  const out: string[] = [];
  if (Array.isArray(value)) {
    const items = n.items as Node | undefined;
    if (items) value.forEach((v, i) => out.push(...undeclared(v, items, `${path}[${i}]`, open)));
    return out;
  }
  if (!value || typeof value !== 'object') return out;
  const props = n.properties as Record<string, Node> | undefined;
  if (!props) return out; // a free-form object (options, summary, decision.config)
  if (n.additionalProperties !== false) open.push(path);
  for (const [k, v] of Object.entries(value)) {
    if (!(k in props)) out.push(`${path}.${k}`);
    else out.push(...undeclared(v, props[k]!, `${path}.${k}`, open));
  }
  return out;
}

/** A job with every optional field of JobResult and TurnResult set. */
function fullJob(over: Partial<JobResult> = {}): JobResult {
  return makeResult({
    reason: 'note',
    costUsd: 0.25,
    costEstimated: true,
    judge: { usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 }, durationMs: 1234.5, costUsd: 0.01, costEstimated: true, runs: 3, agreement: 0.75 },
    finalMessage: 'head … tail',
    finalMessageFile: 'outputs/final-1.txt',
    finalMessageBytes: 100_000,
    skillsOffered: ['s'],
    mcpServers: [{ name: 'tickets', mode: 'mocked', transport: 'stdio' }, { name: 'api', mode: 'real', transport: 'http' }],
    workspace: '/tmp/ws',
    artifacts: ['out.txt'],
    changes: { added: 1, modified: 0, deleted: 0, truncated: true },
    behaviour: {
      claims: [{ text: 'Created out.txt.', kind: 'file_created', path: 'out.txt', turn: 1, verified: true, evidence: 'out.txt was added by the agent' }],
      claimsTotal: 1,
      claimsVerified: 1,
      toolLoop: { longestRun: 3, tool: 'Bash', turn: 1, input: '{"command":"ls"}', threshold: 3, detected: true },
      silentFailure: { failures: 1, recovered: 0, unmentioned: [{ turn: 1, tool: 'Bash', error: 'Exit code 1' }], unmentionedCount: 1, detected: true },
      skillContext: { observed: true, method: 'estimate: UTF-8 bytes / 4', listingTokens: 30, bodyTokens: 500, skills: [{ skill: 's', listingTokens: 30, bodyTokens: 500, loaded: true }] },
    },
    skillActivations: [{ skill: 's', via: 'Skill' }],
    turns: [
      {
        index: 1,
        prompt: 'do it',
        status: 'completed',
        finalText: 'head … tail',
        finalTextFile: 'outputs/final-1.txt',
        finalTextBytes: 100_000,
        reason: 'why',
        durationMs: 12.6,
        usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 },
        costUsd: 0.25,
        toolCalls: [{ name: 'Bash', input: { command: 'ls' }, isError: true }],
        toolCallsDropped: 2,
        skillActivations: [{ skill: 's', via: 'Skill' }],
        skillsListed: ['s'],
        toolsOffered: ['Bash', 'Read'],
        permissionMode: 'bypassPermissions',
        source: 'simulator',
        stopReason: 'simulator_stop: done',
        sessionId: 'sess-1',
      },
    ],
    ...over,
  });
}

function fullMeta(results: JobResult[]): RunMeta {
  const config: DecisionConfig = {
    alpha: 0.05,
    errorsAsFailures: true,
    maxErrorRate: 0.1,
    minPassRate: 0.5,
    minUplift: 0.1,
    onInconclusive: 'fail',
    engineNames: { custom: 'agent' },
    noRegression: { previous: { source: 'prev/result.json', iteration: 1, cases: [{ engine: 'custom', caseId: 'c', passed: 1, failed: 0 }] }, margin: 0.1 },
  };
  return {
    tool: { name: 'skill-up', version: '0.0.0' },
    skill: { name: 's', description: 'a skill', path: '/tmp/s' },
    evalFile: '/tmp/s/evals/eval.yaml',
    suiteHash: `sha256:${'a'.repeat(64)}`,
    shard: { index: 1, count: 2, cases: ['c'], plan_cases: ['c', 'd'] },
    merge: { count: 2, shards: [], partial: true, missing_shards: [2], missing_cases: ['d'] },
    regrade: { from: '/runs/iteration-1/result.json', regraded: 3, kept: [{ id: 'x/with_skill/run-1', reason: 'the job was skipped' }] },
    iteration: 1,
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:01:00.000Z',
    durationMs: 60_000,
    interrupted: false,
    notRun: 1,
    notRunReason: '--max-cost $1.00 reached',
    cost: { notes: ['agent: estimated'], budget: { maxUsd: 1, spentUsd: 0.5, stopped: true, notRun: 1 } },
    engines: [{ name: 'custom', displayName: 'agent', version: '1.0.0', resolvedVersion: '1.0.1', model: { provider: 'anthropic', name: 'm' }, kwargs: {} }],
    options: { parallelism: 1 },
    exitCode: 1,
    decision: decide(trialsOf(results), config),
  };
}

describe('result.json and its schema', () => {
  it('a builder output with every optional field set validates', () => {
    const results = [fullJob(), fullJob({ id: 'c/without_skill/run-1', variant: 'without_skill', status: 'fail', outputDir: 'c/without_skill/run-1' })];
    expectValid(JSON.parse(JSON.stringify(buildResultJson(fullMeta(results), results))));
  });

  it('declares every key the builder writes, and declared objects refuse undeclared keys', () => {
    // A trigger case's job besides (its `trigger`, and result.json's `triggers` section).
    const results = [fullJob(), fullJob({ id: 't/with_skill/run-1', caseId: 't', outputDir: 't/with_skill/run-1', trigger: { skill: 's', shouldTrigger: true, activated: true, query: 'do it' } })];
    const doc = JSON.parse(JSON.stringify(buildResultJson(fullMeta(results), results))) as ResultDoc;
    const open: string[] = [];
    expect(undeclared(doc, schema, '$', open)).toEqual([]);
    // Every object the schema declares is closed.
    expect(open).toEqual([]);
    // What the sample sets covers every property the schema declares for a job and a turn.
    const jobProps = Object.keys(schema.$defs.job.properties);
    const turnProps = Object.keys(schema.$defs.turn.properties);
    expect(jobProps.filter((k) => !doc.jobs.some((j) => k in j))).toEqual([]);
    expect(turnProps.filter((k) => !(k in doc.jobs[0]!.turns[0]!))).toEqual([]);
    expect(Object.keys(schema.properties).filter((k) => !(k in doc))).toEqual([]);
  });

  it('requires nothing the builder leaves out of a minimal job and run', () => {
    const results = [makeResult()];
    const doc = buildResultJson({ ...fullMeta(results), suiteHash: undefined, shard: undefined, merge: undefined, regrade: undefined, notRun: 0, notRunReason: undefined, cost: undefined }, results);
    expectValid(JSON.parse(JSON.stringify(doc)));
  });

  it('rejects a key the schema does not know', () => {
    const results = [makeResult()];
    const doc = JSON.parse(JSON.stringify(buildResultJson(fullMeta(results), results)));
    doc.jobs[0].surprise = 1;
    expect(validate(doc)).toBe(false);
  });
});

describe('a real run through the driver (src/run/suite.ts)', () => {
  let dir: string;
  let record: RunRecord;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'skill-up-result-'));
    const skill = writeRandomSuite(dir, { cases: uniformCases(3, 'pass_with=70 pass_without=30'), trials: 2, benchmark: true, formats: ['json', 'benchmark'] });
    const { suite } = await loadSuite(skill, { cwd: dir });
    const engines = suite.engines;
    const { jobs } = planRun(suite, engines, { baseline: true }, { baseline: true });
    const out = join(dir, 'out');
    const prepared = await prepareRun(suite, engines, out);
    const target = await createIterationDir(out);
    record = await runSuite(suite, {
      engines,
      jobs,
      target,
      parallelism: 4,
      decision: { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0 },
      prepared,
      skillName: 'random-skill',
      suiteHash: `sha256:${'b'.repeat(64)}`,
      keepWorkspaces: false,
      extras: { verbose: null },
      log: { runId: 'test-run', plan: {}, flags: {}, target: skill },
      runOptions: { parallelism: 4, trials: null, baseline: true, argv: [] },
      notice: () => undefined,
    });
  }, 120_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a result.json that validates, with the decision the record holds (computed once)', async () => {
    expect(record.results).toHaveLength(12);
    expect(record.reports?.skipped).toEqual([]);
    const doc = JSON.parse(await readFile(join(record.dir, 'result.json'), 'utf8'));
    expectValid(doc);
    expect(doc.exit_code).toBe(record.exitCode);
    expect(doc.decision.exit_code).toBe(record.decision.exitCode);
    expect(doc.summary.variants.map((v: { passed: number }) => v.passed)).toEqual(record.decision.stats.variants.map((v) => v.passed));
    expect(doc.gates.map((g: { state: string }) => g.state)).toEqual(record.decision.gates.map((g) => g.state));
    const open: string[] = [];
    expect(undeclared(doc, schema, '$', open)).toEqual([]);
  });

  it('each job folder has its grading.json from the report listener, matching result.json', async () => {
    const doc = JSON.parse(await readFile(join(record.dir, 'result.json'), 'utf8')) as ResultDoc;
    for (const j of doc.jobs) {
      const g = JSON.parse(await readFile(join(record.dir, j.output_dir, 'grading.json'), 'utf8'));
      expect(g.status).toBe(j.status);
      expect(g.expectations).toEqual(j.assertions);
    }
    // The benchmark format wrote its own files and left the per-job ones to the listener.
    expect((await stat(join(record.dir, 'benchmark.json'))).isFile()).toBe(true);
  });
});
