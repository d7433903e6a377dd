/**
 * executeJobs (src/run/run.ts): retries under retry_policy, the result listeners (the report
 * listener that writes grading.json), plan order, and the abort; driven by an in-process fake
 * adapter (test/run/fake-adapter.ts).
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CaseSpec, Suite } from '../../src/config/types.js';
import type { EngineAdapter } from '../../src/engine/types.js';
import { planJobs } from '../../src/plan/plan.js';
import { executeJobs, retryDelayMs, shouldRetry, type ExecuteOptions } from '../../src/run/run.js';
import { writeJobFiles } from '../../src/report/write.js';
import { RemovalQueue } from '../../src/runtime/removal.js';
import type { Journal } from '../../src/run/journal.js';
import type { JobResult } from '../../src/run/types.js';
import { fakeAdapter } from './fake-adapter.js';
import { makeCase, makeResult, makeSuite } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skill-up-exec-'));
  await mkdir(join(dir, 'skill'));
  await mkdir(join(dir, 'iteration-1'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mustSay = (word: string): Partial<CaseSpec> => ({ expect: { ...makeCase('x').expect, mustContain: [word] } });

function options(cases: CaseSpec[], adapter: EngineAdapter, over: { suite?: Partial<Suite>; signal?: AbortSignal } & Partial<ExecuteOptions> = {}): ExecuteOptions {
  const { suite: suiteOver, signal, ...rest } = over;
  const suite = makeSuite(cases, { skillDir: join(dir, 'skill'), ...suiteOver });
  return {
    jobs: planJobs(suite),
    parallelism: 2,
    retryDelayMs: () => 0,
    env: {
      suite,
      adapters: new Map([['custom', adapter]]),
      skills: [],
      iterationDir: join(dir, 'iteration-1'),
      keepWorkspaces: false,
      workspaceRoot: dir,
      baseEnv: { PATH: process.env.PATH },
      signal: signal ?? new AbortController().signal,
      removals: new RemovalQueue(),
    },
    ...rest,
  };
}

describe('shouldRetry', () => {
  const err = (reason: string) => makeResult({ status: 'error', reason });
  it('retries a timeout under `timeout` and any other error under `error`, never a pass, fail or interrupt', () => {
    expect(shouldRetry(err('turn 1 timed out after 5 s'), ['timeout'])).toBe(true);
    expect(shouldRetry(err('turn 1 timed out after 5 s'), ['error'])).toBe(false);
    expect(shouldRetry(err('engine error in turn 1: boom'), ['error'])).toBe(true);
    expect(shouldRetry(err('engine error in turn 1: boom'), ['timeout'])).toBe(false);
    expect(shouldRetry(err('run interrupted'), ['timeout', 'error'])).toBe(false);
    expect(shouldRetry(makeResult({ status: 'fail' }), ['timeout', 'error'])).toBe(false);
    expect(shouldRetry(makeResult({ status: 'pass' }), ['timeout', 'error'])).toBe(false);
  });
  it('waits 1 s, 2 s, 4 s … between attempts, at most 30 s', () => {
    expect([2, 3, 4, 10].map(retryDelayMs)).toEqual([1000, 2000, 4000, 30_000]);
  });
});

describe('executeJobs', () => {
  it('retries an errored job until it passes, within max_retries, and records the attempts', async () => {
    let n = 0;
    const adapter = fakeAdapter(() => (++n < 3 ? { error: { kind: 'crash', message: `crash ${n}` } } : { finalText: 'done' }));
    const opts = options([makeCase('flaky', mustSay('done'))], adapter, { suite: { retryPolicy: { maxRetries: 3, retryOn: ['error'] } } });
    const seen: number[] = [];
    const [r] = await executeJobs({ ...opts, hooks: { attempted: (_j, x) => seen.push(x.attempts) } });
    expect(r!.status, r!.reason).toBe('pass');
    expect(r!.attempts).toBe(3);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('gives up after max_retries and keeps the last error', async () => {
    const adapter = fakeAdapter(() => ({ error: { kind: 'crash', message: 'always' } }));
    const opts = options([makeCase('broken')], adapter, { suite: { retryPolicy: { maxRetries: 1, retryOn: ['error'] } } });
    const [r] = await executeJobs(opts);
    expect(r!.status).toBe('error');
    expect(r!.attempts).toBe(2);
    expect(adapter.calls).toHaveLength(2);
  });

  it('does not retry an error that retry_on does not name, nor a fail', async () => {
    const errs = fakeAdapter(() => ({ error: { kind: 'crash', message: 'crash' } }));
    const [e] = await executeJobs(options([makeCase('e')], errs, { suite: { retryPolicy: { maxRetries: 3, retryOn: ['timeout'] } } }));
    expect(e!.attempts).toBe(1);
    const fails = fakeAdapter(() => ({ finalText: 'wrong' }));
    const [f] = await executeJobs(options([makeCase('f', mustSay('right'))], fails, { suite: { retryPolicy: { maxRetries: 3, retryOn: ['error', 'timeout'] } } }));
    expect(f!.status).toBe('fail');
    expect(f!.attempts).toBe(1);
  });

  it('returns results in plan order whatever order they finish in, and reports progress per job', async () => {
    // The first case answers last.
    const adapter = fakeAdapter(async (_req, ctx) => {
      if (ctx.jobId?.startsWith('slow')) await new Promise((r) => setTimeout(r, 80));
      return { finalText: 'done' };
    });
    const started: string[] = [];
    const finished: string[] = [];
    const opts = options([makeCase('slow', mustSay('done')), makeCase('fast', mustSay('done'))], adapter, {
      progress: { jobStarted: (j) => started.push(j.id), jobFinished: (j) => finished.push(j.id) },
    });
    const results = await executeJobs(opts);
    expect(results.map((r) => r.caseId)).toEqual(['slow', 'fast']);
    expect(finished).toEqual(['fast/with_skill/run-1', 'slow/with_skill/run-1']);
    expect(started).toHaveLength(2);
  });

  it('the report listener writes each job folder\'s grading.json once, with the final attempt', async () => {
    let n = 0;
    const adapter = fakeAdapter(() => (++n === 1 ? { error: { kind: 'crash', message: 'first' } } : { finalText: 'done' }));
    const opts = options([makeCase('g', mustSay('done'))], adapter, { suite: { retryPolicy: { maxRetries: 1, retryOn: ['error'] } } });
    let writes = 0;
    const [r] = await executeJobs({ ...opts, listeners: [{ recorded: async (_j, x) => (writes++, writeJobFiles(opts.env.iterationDir, x)) }] });
    expect(writes).toBe(1);
    const grading = JSON.parse(await readFile(join(opts.env.iterationDir, r!.outputDir, 'grading.json'), 'utf8'));
    expect(grading.status).toBe('pass');
    expect(grading.summary.failed).toBe(0);
    expect(grading.summary.passed).toBeGreaterThan(0);
  });

  it('a listener that fails makes that job an error with the reason, and the run goes on', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'done' }));
    const opts = options([makeCase('a', mustSay('done')), makeCase('b', mustSay('done'))], adapter);
    const results = await executeJobs({
      ...opts,
      listeners: [{ recorded: async (j) => { if (j.case.id === 'a') throw new Error('cannot write a/grading.json: ENOSPC'); } }],
    });
    expect(results.map((r) => r.status)).toEqual(['error', 'pass']);
    expect(results[0]!.reason).toBe('cannot write a/grading.json: ENOSPC');
  });

  it('removes each workspace, of every attempt, only once the job result is journaled, and all of them before it returns', async () => {
    const workspaces = new Map<string, string[]>();
    let n = 0;
    const adapter = fakeAdapter((_req, ctx) => {
      const id = ctx.jobId ?? '';
      workspaces.set(id, [...(workspaces.get(id) ?? []), ctx.workspace, ctx.homeDir ?? '']);
      // The first attempt of `flaky` errors: its workspace waits with the retry's for the journal.
      return id.startsWith('flaky') && ++n === 1 ? { error: { kind: 'crash', message: 'boom' } } : { finalText: 'done' };
    });
    const opts = options([makeCase('a', mustSay('done')), makeCase('flaky', mustSay('done'))], adapter, { suite: { retryPolicy: { maxRetries: 1, retryOn: ['error'] } } });
    const present: Record<string, boolean[]> = {};
    const journal = {
      append: async (r: JobResult) => {
        present[r.id] = (workspaces.get(r.id) ?? []).map((w) => existsSync(w));
      },
    } as unknown as Journal;
    const results = await executeJobs({ ...opts, journal });
    expect(results.map((r) => r.status)).toEqual(['pass', 'pass']);
    expect(Object.values(present).flat()).toHaveLength(6);
    // At journal time every folder was still there; after the run none is.
    expect(Object.values(present).flat().every(Boolean)).toBe(true);
    expect([...workspaces.values()].flat().filter((w) => existsSync(w))).toEqual([]);
  });

  it('keeps the workspaces with keepWorkspaces, reported on the result', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'done' }));
    const opts = options([makeCase('a', mustSay('done'))], adapter);
    const [r] = await executeJobs({ ...opts, env: { ...opts.env, keepWorkspaces: true } });
    expect(r!.workspace).toBeDefined();
    expect(existsSync(r!.workspace!)).toBe(true);
  });

  it('starts nothing once the run is aborted', async () => {
    const abort = new AbortController();
    abort.abort();
    const adapter = fakeAdapter(() => ({ finalText: 'done' }));
    const results = await executeJobs(options([makeCase('x')], adapter, { signal: abort.signal }));
    expect(results).toEqual([]);
    expect(adapter.calls).toHaveLength(0);
  });

  it('an abort during a job leaves it skipped, `run interrupted`, and not retried', async () => {
    const abort = new AbortController();
    const adapter = fakeAdapter(async (_req, ctx) => {
      abort.abort();
      await new Promise((r) => setTimeout(r, 10));
      return ctx.signal.aborted ? { error: { kind: 'cancelled', message: 'cancelled' } } : { finalText: 'done' };
    });
    const opts = options([makeCase('x')], adapter, { signal: abort.signal, suite: { retryPolicy: { maxRetries: 3, retryOn: ['error'] } } });
    const [r] = await executeJobs(opts);
    expect(r!.status).toBe('skipped');
    expect(r!.reason).toContain('run interrupted');
    expect(adapter.calls).toHaveLength(1);
  });
});
