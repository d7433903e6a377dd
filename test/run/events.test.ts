import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it } from 'vitest';
import { planJobs } from '../../src/plan/plan.js';
import { checkEventLogPath, EventLog, EventLogError, MAX_TEXT, redactJson } from '../../src/run/events.js';
import { makeCase, makeResult, makeSuite } from './helpers.js';

const ROOT = join(import.meta.dirname, '../..');
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addFormat('date-time', (s: string) => !Number.isNaN(Date.parse(s)));
const validate = ajv.compile(JSON.parse(readFileSync(join(ROOT, 'schemas/events.schema.json'), 'utf8')));
const tmp = () => mkdtempSync(join(tmpdir(), 'su-events-'));
const RUN_ID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

function read(file: string) {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('event log path', () => {
  it('refuses, with a message naming the path: empty, stdout, a folder, a missing folder, a forbidden file or folder', () => {
    const dir = tmp();
    const msg = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        expect(e).toBeInstanceOf(EventLogError);
        return (e as Error).message;
      }
      throw new Error('did not throw');
    };
    expect(msg(() => checkEventLogPath(' '))).toMatch(/needs a file path/);
    expect(msg(() => checkEventLogPath('-'))).toMatch(/does not write to stdout/);
    expect(msg(() => checkEventLogPath(dir))).toMatch(/is a folder; give a file path/);
    expect(msg(() => checkEventLogPath(join(dir, 'no/such/events.jsonl')))).toMatch(/its folder .*no\/such does not exist/);
    writeFileSync(join(dir, 'file'), '');
    expect(msg(() => checkEventLogPath(join(dir, 'file/events.jsonl')))).toMatch(/is not a folder/);
    // An existing file that is not an event log (SKILL.md, a result.json) is never overwritten; an earlier log may be.
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: x\n---\n');
    expect(msg(() => checkEventLogPath(join(dir, 'SKILL.md')))).toMatch(/exists and is not an event log; refusing to overwrite it/);
    writeFileSync(join(dir, 'old.jsonl'), '{"protocol_version":1,"event_version":1,"sequence_number":1,"event":"run_started"}\n');
    expect(checkEventLogPath(join(dir, 'old.jsonl'))).toBe(join(realpathSync(dir), 'old.jsonl'));
    const it1 = join(dir, 'out/iteration-1');
    mkdirSync(it1, { recursive: true });
    expect(msg(() => checkEventLogPath(join(it1, 'ev.jsonl'), [{ path: it1, folder: true, why: 'inside it' }]))).toMatch(/: inside it$/);
    // Through a symlink to the same folder.
    symlinkSync(it1, join(dir, 'alias'));
    expect(msg(() => checkEventLogPath(join(dir, 'alias/ev.jsonl'), [{ path: it1, folder: true, why: 'inside it' }]))).toMatch(/: inside it$/);
    expect(msg(() => checkEventLogPath(join(it1, 'journal.jsonl'), [{ path: join(it1, 'journal.jsonl'), folder: false, why: 'the journal' }]))).toMatch(/the journal$/);
    // Allowed: beside the folder, and a file merely named like it elsewhere.
    expect(checkEventLogPath(join(dir, 'out/events.jsonl'), [{ path: it1, folder: true, why: 'x' }, { path: join(it1, 'journal.jsonl'), folder: false, why: 'y' }])).toBe(join(dir, 'out/events.jsonl'));
  });

  it('is a usage error to open a file that cannot be written', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'ro'), { mode: 0o500 });
    if (process.getuid?.() === 0) return; // root writes anywhere
    expect(() => EventLog.open(join(dir, 'ro/ev.jsonl'), RUN_ID)).toThrow(/cannot write it \(EACCES\)/);
  });
});

describe('event log', () => {
  afterEach(() => {
    delete process.env.SU_EVENTS_TEST_SECRET;
  });

  it('writes a schema-valid, ordered run with ids, timings, statuses and tokens; secrets redacted', () => {
    process.env.SU_EVENTS_TEST_SECRET = 'events-canary-abcdef123';
    const file = join(tmp(), 'ev.jsonl');
    const suite = makeSuite([makeCase('a', { title: 'Case A' }), makeCase('b')]);
    const jobs = planJobs(suite, { baseline: true });
    const log = EventLog.open(file, RUN_ID);
    log.runStarted({ skillName: 's', engines: ['agent'], taskTotal: jobs.length, iterationsTotal: 1, version: '0.0.0' });
    log.executing();
    const { progress, jobs: sink } = log.iteration(1, jobs.length);
    for (const job of jobs) {
      progress.jobStarted(job);
      sink.jobStarted(job, 1);
      sink.turnStarted(job, 1, 1);
      const turn = { index: 1, prompt: 'p', status: 'completed' as const, finalText: '', durationMs: 12.4, usage: { input: 3, output: 4, cacheRead: 1, cacheWrite: 0 }, toolCalls: [{ name: 'Write', input: {} }], skillActivations: [] };
      sink.turnFinished(job, 1, turn);
      const judge = { id: 'checks', type: 'rule_based', index: 1 };
      sink.judgeStarted(job, 1, judge);
      sink.judgeFinished(job, 1, judge, { status: 'fail', reason: 'saw events-canary-abcdef123', assertions: [{ passed: true }, { passed: false }] }, 5);
      const result = makeResult({ id: job.id, caseId: job.case.id, variant: job.variant, status: job.variant === 'with_skill' ? 'pass' : 'error', reason: job.variant === 'with_skill' ? undefined : `boom ${'x'.repeat(2000)} events-canary-abcdef123` });
      sink.jobFinished(job, 1, result);
      progress.jobFinished(job, result);
    }
    log.iterationCompleted(1);
    log.finish('COMPLETED', 3);
    log.finish('COMPLETED', 3); // idempotent once closed
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain('events-canary-abcdef123');
    const events = read(file);
    for (const e of events) expect(validate(e), `${e.event}: ${JSON.stringify(validate.errors)}`).toBe(true);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.invocation_id))).toEqual(new Set([RUN_ID]));
    expect(events[0].event).toBe('run_started');
    expect(events.at(-1)).toMatchObject({ event: 'run_finished', last_event: true, payload: { status: 'COMPLETED', completed_tasks: 4, passed: 2, errored: 2, exit_code: 3 } });
    expect(events.filter((e) => e.last_event)).toHaveLength(1);
    for (const job of jobs) {
      const mine = events.filter((e) => e.payload.job_id === job.id || e.payload.task_id === job.id).map((e) => e.event);
      expect(mine).toEqual(['case_started', 'job_started', 'turn_started', 'turn_finished', 'judge_started', 'judge_finished', 'job_finished', 'case_completed']);
    }
    const done = events.find((e) => e.event === 'case_completed' && e.payload.configuration === 'without_skill');
    expect(done.payload).toMatchObject({ case_id: 'a', status: 'ERROR', task_total: 4, task_index: 2, title: 'Case A', engine: 'custom', trial: 1, pass_rate: 1, tokens: { input: 10, output: 5, total: 15 } });
    expect(done.payload.reason.length).toBeLessThanOrEqual(MAX_TEXT);
    const judged = events.find((e) => e.event === 'judge_finished');
    expect(judged.payload).toMatchObject({ judge_id: 'checks', judge_type: 'rule_based', status: 'fail', reason: 'saw [REDACTED]', assertions_passed: 1, assertions_total: 2, duration_ms: 5 });
    expect(events.find((e) => e.event === 'turn_finished').payload).toMatchObject({ turn: 1, status: 'completed', duration_ms: 12, tool_calls: 1, tokens: { input: 3, output: 4, cache_read: 1, cache_write: 0, total: 8 } });
    const progressed = events.filter((e) => e.event === 'run_progress').map((e) => e.payload);
    expect(progressed.map((p) => p.phase)).toEqual(['preparing', 'executing', ...Array(8).fill('executing'), 'finalizing']);
    for (const p of progressed) expect(p.completed_tasks).toBe(p.passed + p.failed + p.errored + p.skipped);
  });

  it('counts a resume’s kept jobs as completed from the start and numbers tasks across iterations', () => {
    const file = join(tmp(), 'ev.jsonl');
    const jobs = planJobs(makeSuite([makeCase('a'), makeCase('b')]));
    const log = EventLog.open(file, RUN_ID);
    log.runStarted({ skillName: 's', engines: ['agent'], taskTotal: 4, iterationsTotal: 2, version: '0', reused: [makeResult({ id: jobs[0]!.id })], resumedRunId: RUN_ID });
    log.executing();
    for (const n of [1, 2]) {
      const { progress } = log.iteration(n, jobs.length);
      progress.jobStarted(jobs[1]!);
      progress.jobFinished(jobs[1]!, makeResult({ id: jobs[1]!.id, status: 'fail' }));
      log.iterationCompleted(n);
    }
    log.finish('CANCELLED');
    const events = read(file);
    for (const e of events) expect(validate(e), JSON.stringify(validate.errors)).toBe(true);
    expect(events[0].payload).toMatchObject({ resumed_run_id: RUN_ID, reused_tasks: 1, iterations_total: 2 });
    expect(events[1].payload).toMatchObject({ completed_tasks: 1, passed: 1 });
    expect(events.filter((e) => e.event === 'case_started').map((e) => e.payload.task_index)).toEqual([2, 4]);
    expect(events.filter((e) => e.event === 'iteration_completed').map((e) => [e.payload.iteration, e.payload.failed, e.payload.invocation_completed_tasks])).toEqual([[1, 1, 2], [2, 1, 3]]);
    expect(events.at(-1).payload).toMatchObject({ status: 'CANCELLED', completed_tasks: 3 });
  });

  it('redacts secrets in nested strings and keys, leaving other values alone', () => {
    expect(redactJson({ a: 'x s3cret-value y', b: [1, { 's3cret-value': true, c: null }] }, ['s3cret-value'])).toEqual({ a: 'x [REDACTED] y', b: [1, { '[REDACTED]': true, c: null }] });
    const same = { a: 1 };
    expect(redactJson(same, [])).toBe(same);
  });
});
