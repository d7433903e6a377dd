/**
 * runJobOnce's own loop (converse: turns, resume, captures, post-conditions, engine errors)
 * and its promise never to throw, driven by an in-process fake adapter (test/run/fake-adapter.ts).
 */
import { chmod, mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CaseSpec, TurnSpec } from '../../src/config/types.js';
import type { EngineAdapter } from '../../src/engine/types.js';
import { planJobs, type Job } from '../../src/plan/plan.js';
import { runJobOnce, type JobEnv } from '../../src/run/job.js';
import type { JobEvents } from '../../src/run/types.js';
import { fakeAdapter } from './fake-adapter.js';
import { makeCase, makeSuite } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skill-up-job-'));
  await mkdir(join(dir, 'skill'));
  await mkdir(join(dir, 'iteration-1'));
});
afterEach(async () => {
  await chmod(join(dir, 'iteration-1'), 0o755).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

const turn = (content: string, over: Partial<TurnSpec> = {}): TurnSpec => ({ content, capture: [], ...over });

/** One job of `c` on the fake engine, and the env it runs in. */
function setup(c: CaseSpec, adapter: EngineAdapter, over: Partial<JobEnv> = {}): { job: Job; env: JobEnv } {
  const suite = makeSuite([c], { skillDir: join(dir, 'skill'), evalFile: join(dir, 'skill', 'evals', 'eval.yaml') });
  const job = planJobs(suite)[0]!;
  const env: JobEnv = {
    suite,
    adapters: new Map([['custom', adapter]]),
    skills: [],
    iterationDir: join(dir, 'iteration-1'),
    keepWorkspaces: false,
    workspaceRoot: dir,
    baseEnv: { PATH: process.env.PATH },
    signal: new AbortController().signal,
    ...over,
  };
  return { job, env };
}

describe('runJobOnce: the conversation', () => {
  it('sends every turn in order, resumes the session, fills a capture into the next turn, and passes on the last answer', async () => {
    const adapter = fakeAdapter((req) => (req.index === 1 ? { finalText: 'ticket: T-42', sessionId: 'sess-1' } : { finalText: `closed ${req.prompt}` }));
    const c = makeCase('two', {
      turns: [turn('open a ticket', { capture: [{ variable: 'id', pattern: 'ticket: (\\S+)' }] }), turn('close {{id}}')],
      expect: { ...makeCase('x').expect, mustContain: ['closed'] },
    });
    const { job, env } = setup(c, adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status, r.reason).toBe('pass');
    expect(adapter.calls.map((x) => x.request.prompt)).toEqual(['open a ticket', 'close T-42']);
    expect(adapter.calls[0]!.request.sessionId).toBeUndefined();
    expect(adapter.calls[1]!.request.sessionId).toBe('sess-1');
    expect(adapter.calls[1]!.request.history).toEqual(['open a ticket', 'close T-42']);
    expect(r.turns.map((t) => [t.index, t.status])).toEqual([
      [1, 'completed'],
      [2, 'completed'],
    ]);
    expect(r.finalMessage).toBe('closed close T-42');
    expect(r.engineDurationMs).toBe(10);
    expect(await readFile(join(env.iterationDir, job.id, 'outputs', 'response.md'), 'utf8')).toBe('closed close T-42');
    // grading.json is the report listener's (src/run/suite.ts), not the job's.
    await expect(stat(join(env.iterationDir, job.id, 'grading.json'))).rejects.toThrow();
  });

  it('flattens the turns into one prompt for an engine that cannot resume', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'ok' }), { supportsResume: false });
    const { job, env } = setup(makeCase('flat', { turns: [turn('first'), turn('second')] }), adapter);
    const r = await runJobOnce(job, env, 1);
    expect(adapter.calls.map((x) => x.request.prompt)).toEqual(['first\n\nsecond']);
    expect(r.turns).toHaveLength(1);
  });

  it('refuses captures on an engine that cannot resume, without sending a turn', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'x' }), { supportsResume: false });
    const c = makeCase('cap', { turns: [turn('a', { capture: [{ variable: 'v', pattern: '(x)' }] }), turn('b {{v}}')] });
    const { job, env } = setup(c, adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toContain('cannot resume a session');
    expect(adapter.calls).toHaveLength(0);
  });

  it('a failed post_condition with on_fail: fail ends the job as fail and sends no later turn', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'nothing useful' }));
    const pc = { mustContainAll: ['DONE'], mustContainAny: [], mustNotContain: [], onFail: 'fail' as const };
    const { job, env } = setup(makeCase('pc', { turns: [turn('a', { postCondition: pc }), turn('b')] }), adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('fail');
    expect(r.reason).toBe('post_condition of turn 1 failed');
    expect(r.turns.map((t) => t.status)).toEqual(['failed']);
    expect(r.assertions[0]!.text).toMatch(/^turn 1 post_condition must_contain_all: /);
    expect(adapter.calls).toHaveLength(1);
  });

  it('on_fail: skip_remaining records the later turns as skipped, unsent, and the judges still decide', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'partial' }));
    const pc = { mustContainAll: ['DONE'], mustContainAny: [], mustNotContain: [], onFail: 'skip_remaining' as const };
    const c = makeCase('skip', { turns: [turn('a', { postCondition: pc }), turn('b'), turn('c')], expect: { ...makeCase('x').expect, mustContain: ['partial'] } });
    const { job, env } = setup(c, adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.turns.map((t) => t.status)).toEqual(['failed', 'skipped', 'skipped']);
    expect(adapter.calls).toHaveLength(1);
    expect(r.status, r.reason).toBe('pass');
  });

  it('an engine error in a turn makes the job an error naming the turn, and later turns are not sent', async () => {
    const adapter = fakeAdapter((req) => (req.index === 2 ? { error: { kind: 'api', message: 'HTTP 529 overloaded' } } : { finalText: 'fine' }));
    const { job, env } = setup(makeCase('err', { turns: [turn('a'), turn('b'), turn('c')] }), adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toBe('engine API error in turn 2: HTTP 529 overloaded');
    expect(r.turns.map((t) => t.status)).toEqual(['completed', 'error']);
    expect(adapter.calls).toHaveLength(2);
  });

  it('a capture that finds nothing is an error that names the variable', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'no id here' }));
    const c = makeCase('nocap', { turns: [turn('a', { capture: [{ variable: 'id', pattern: 'id=(\\d+)' }] }), turn('b {{id}}')] });
    const { job, env } = setup(c, adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toContain('capture `id` found no value in turn 1');
    expect(adapter.calls).toHaveLength(1);
  });

  it('reports each turn to the events in order, between job started and job finished', async () => {
    const seen: string[] = [];
    const events: JobEvents = {
      jobStarted: () => seen.push('job+'),
      jobFinished: (_j, _a, r) => seen.push(`job-${r.status}`),
      turnStarted: (_j, _a, i) => seen.push(`turn+${i}`),
      turnFinished: (_j, _a, t) => seen.push(`turn-${t.index}`),
      judgeStarted: () => seen.push('judge+'),
      judgeFinished: () => seen.push('judge-'),
    };
    const adapter = fakeAdapter(() => ({ finalText: 'ok' }));
    const { job, env } = setup(makeCase('ev', { turns: [turn('a'), turn('b')] }), adapter, { events });
    await runJobOnce(job, env, 1);
    expect(seen.slice(0, 5)).toEqual(['job+', 'turn+1', 'turn-1', 'turn+2', 'turn-2']);
    expect(seen.at(-1)).toMatch(/^job-/);
  });
});

describe('runJobOnce: its files and workspace', () => {
  it('writes transcript.json once, compactly, holding the transcript; removes its workspace itself without a removal queue', async () => {
    let workspace = '';
    const adapter = fakeAdapter((req, ctx) => {
      workspace = ctx.workspace;
      return { finalText: `answer to ${req.prompt}`, sessionId: 's-1' };
    });
    const { job, env } = setup(makeCase('one', { expect: { ...makeCase('x').expect, mustContain: ['answer'] } }), adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status, r.reason).toBe('pass');
    const text = await readFile(join(env.iterationDir, job.id, 'transcript.json'), 'utf8');
    expect(text.trim().split('\n')).toHaveLength(1);
    const t = JSON.parse(text);
    expect(t.engine).toBe('custom');
    expect(t.turns.map((x: { prompt: string; finalText: string; sessionId: string }) => [x.prompt, x.finalText, x.sessionId])).toEqual([[r.turns[0]!.prompt, r.finalMessage, 's-1']]);
    await expect(stat(workspace)).rejects.toThrow(/ENOENT/);
    await expect(stat(`${workspace}-home`)).rejects.toThrow(/ENOENT/);
  });
});

describe('runJobOnce never throws', () => {
  // Root writes through any mode; the next test covers the same path for root.
  it.skipIf(process.getuid?.() === 0)('an iteration folder that cannot be written makes the job an error with the reason', async () => {
    await chmod(join(dir, 'iteration-1'), 0o500);
    const adapter = fakeAdapter(() => ({ finalText: 'ok' }));
    const { job, env } = setup(makeCase('ro'), adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toMatch(/cannot create the job folder .*EACCES/);
    expect(adapter.calls).toHaveLength(0);
  });

  it('an iteration folder that does not exist as a folder (a file in the way) is an error, not a rejection', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'ok' }));
    const { job, env } = setup(makeCase('file'), adapter, { iterationDir: join(dir, 'skill', 'evals-file') });
    await import('node:fs/promises').then((fs) => fs.writeFile(join(dir, 'skill', 'evals-file'), 'x'));
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toContain('cannot create the job folder');
  });

  it('a job whose engine has no adapter is an error', async () => {
    const { job, env } = setup(makeCase('none'), fakeAdapter(() => ({})), { adapters: new Map() });
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toContain('no adapter for engine `custom`');
  });

  it('an event sink that throws (against its contract) does not make the promise reject', async () => {
    const boom = () => {
      throw new Error('sink broke');
    };
    const events = { jobStarted: boom, jobFinished: boom, turnStarted: boom, turnFinished: boom, judgeStarted: boom, judgeFinished: boom } as JobEvents;
    const { job, env } = setup(makeCase('sink'), fakeAdapter(() => ({ finalText: 'ok' })), { events });
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toContain('sink broke');
    expect(r.id).toBe(job.id);
  });

  it('an adapter whose runTurn throws is an error of the job', async () => {
    const adapter = fakeAdapter(() => {
      throw new Error('adapter bug');
    });
    const { job, env } = setup(makeCase('throws'), adapter);
    const r = await runJobOnce(job, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toBe('adapter bug');
  });
});
