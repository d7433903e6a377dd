/**
 * The event log of `skill-up run --event-log FILE`: one JSON object per line, written as it
 * happens (one synchronous write per event, nothing buffered, so memory stays bounded and a
 * killed run leaves every event up to the kill). Schema: schemas/events.schema.json.
 *
 * The envelope and the run/iteration/case events are alibaba/skill-up's protocol v1
 * (`protocol_version`, `event_version`, `sequence_number`, `invocation_id`, `time`, `event`,
 * `last_event`, `payload`; `run_started`, `run_progress`, `iteration_started`,
 * `case_started`, `case_completed`, `iteration_completed`, `run_finished`), where a "task"
 * is one skill-up job. skill-up adds, per attempt of a job, `job_started`/`job_finished`,
 * and inside it `turn_started`/`turn_finished` and `judge_started`/`judge_finished`, each
 * with the job's ids, timings, statuses and token counts.
 *
 * Nothing secret is written: every string is redacted like the reports (src/util/redact.ts)
 * and free text (reasons) is cut to {@link MAX_TEXT} characters.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Job } from '../plan/plan.js';
import type { TokenUsage } from '../engine/types.js';
import { listRedactor, secretValues } from '../report/redact.js';
import { redactor } from '../util/redact.js';
import { writeFdSync } from '../util/out.js';
import type { ProgressSink } from './run.js';
import type { JobEvents, JobResult, JudgeRef, TurnResult } from './types.js';

/** alibaba/skill-up's envelope version; skill-up's own events are version 1 too. */
export const EVENT_PROTOCOL_VERSION = 1;
export const EVENT_VERSION = 1;
/** Longest free text (a reason) written into an event. */
export const MAX_TEXT = 1000;
/** Seconds between `run_progress` heartbeats while jobs run. */
const HEARTBEAT_MS = 30_000;

/** An unusable `--event-log` path; the CLI reports it as a usage error (exit 2) before anything runs. */
export class EventLogError extends Error {}

/**
 * `value` with every secret (of `secrets` and of the process-wide redactor, src/util/redact.ts)
 * replaced in every string (keys included), however deep; `value` itself when nothing changed.
 */
export function redactJson<T>(value: T, secrets: string[]): T {
  const once = redactor().redactValue(value);
  return listRedactor(secrets)?.redactValue(once) ?? once;
}

/** A path this run must not write the event log to, and why. */
export interface ForbiddenPath {
  path: string;
  /** A folder: nothing inside it either. */
  folder: boolean;
  why: string;
}

/**
 * Checks `file` as an event log target before anything runs: not empty, not `-`, not a
 * folder, in a folder that exists, not one of `forbidden` (the journal, a folder `--iteration`
 * empties). Returns the path with its folder's symlinks resolved. @throws EventLogError
 */
export function checkEventLogPath(file: string, forbidden: ForbiddenPath[] = []): string {
  if (file.trim() === '') throw new EventLogError('--event-log needs a file path, got an empty value');
  if (file === '-') throw new EventLogError('--event-log does not write to stdout: give a file path (e.g. --event-log events.jsonl)');
  const abs = path.resolve(file);
  // The forbidden places first: a folder --iteration empties may not exist yet.
  const where = path.join(canonicalPotential(path.dirname(abs)), path.basename(abs));
  for (const f of forbidden) {
    const rel = path.relative(canonicalPotential(f.path), where);
    const inside = f.folder ? rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel)) : rel === '';
    if (inside) throw new EventLogError(`--event-log ${file}: ${f.why}`);
  }
  const st = statOrUndefined(abs);
  if (st?.isDirectory()) throw new EventLogError(`--event-log ${file}: is a folder; give a file path (e.g. ${path.join(file, 'events.jsonl')})`);
  if (st?.isFile() && st.size > 0 && !isEventLog(abs)) throw new EventLogError(`--event-log ${file}: exists and is not an event log; refusing to overwrite it (remove it or give another path)`);
  const parent = statOrUndefined(path.dirname(abs));
  if (!parent) throw new EventLogError(`--event-log ${file}: its folder ${path.dirname(abs)} does not exist`);
  if (!parent.isDirectory()) throw new EventLogError(`--event-log ${file}: ${path.dirname(abs)} is not a folder`);
  return path.join(realpathSync(path.dirname(abs)), path.basename(abs));
}

/** Whether the file's first line is an event of this log's protocol (an earlier log may be replaced). */
function isEventLog(file: string): boolean {
  try {
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(4096);
      const n = readSync(fd, buf, 0, buf.length, 0);
      const first = buf.subarray(0, n).toString('utf8').split('\n')[0]!;
      const e = JSON.parse(first) as Record<string, unknown>;
      return e.protocol_version === 1 && typeof e.event === 'string' && 'sequence_number' in e;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

function statOrUndefined(p: string) {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

/** `p` with the symlinks of its longest existing ancestor resolved. */
function canonicalPotential(p: string): string {
  const missing: string[] = [];
  let cur = path.resolve(p);
  for (;;) {
    try {
      return path.join(realpathSync(cur), ...missing.reverse());
    } catch {
      const up = path.dirname(cur);
      if (up === cur) return path.resolve(p);
      missing.push(path.basename(cur));
      cur = up;
    }
  }
}

/** alibaba/skill-up's result counts. */
interface Counts {
  passed: number;
  failed: number;
  errored: number;
  skipped: number;
}

const CASE_STATUS = { pass: 'PASS', fail: 'FAIL', error: 'ERROR', skipped: 'SKIP' } as const;
const COUNT_KEY = { pass: 'passed', fail: 'failed', error: 'errored', skipped: 'skipped' } as const;

/** The terminal state of the run: alibaba/skill-up's `run_finished.status`. */
export type RunStatus = 'COMPLETED' | 'ERROR' | 'CANCELLED';

const tokens = (u: TokenUsage) => ({ input: u.input, output: u.output, cache_read: u.cacheRead, cache_write: u.cacheWrite, total: u.input + u.output + u.cacheRead + u.cacheWrite });
const text = (s: string | undefined) => (s === undefined ? {} : { reason: s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT - 1)}…` : s });
const ms = (x: number) => Math.max(0, Math.round(x));

/** What `run_started` announces. */
export interface RunStart {
  skillName: string;
  /** Engine names of the run; the first is alibaba/skill-up's single `engine`. */
  engines: string[];
  /** Jobs of every iteration. */
  taskTotal: number;
  iterationsTotal: number;
  version: string;
  /** A resume: the journal's results that are kept (they count as completed from the start). */
  reused?: JobResult[];
  /** A resume: the invocation id of the run it continues. */
  resumedRunId?: string;
}

/**
 * Writes one run's events to a file opened once (mode 0600, truncated, as alibaba/skill-up).
 * A write error mid-run is reported once on stderr and ends the log; the run goes on.
 */
export class EventLog {
  private fd: number;
  private seq = 1;
  private readonly secrets = secretValues();
  private readonly t0 = Date.now();
  private counts: Counts = { passed: 0, failed: 0, errored: 0, skipped: 0 };
  private completed = 0;
  private running = 0;
  private taskTotal = 0;
  /** Jobs of the iterations started so far (task indexes are run-wide). */
  private offset = 0;
  private phase: 'preparing' | 'executing' | 'finalizing' = 'preparing';
  private heartbeat?: NodeJS.Timeout;
  private readonly iterations = new Map<number, { t0: number; counts: Counts }>();

  private constructor(
    readonly file: string,
    readonly runId: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /** Opens (creates or truncates) `file`. @throws EventLogError when it cannot be written. */
  static open(file: string, runId: string): EventLog {
    try {
      return new EventLog(file, runId, openSync(file, 'w', 0o600));
    } catch (e) {
      throw new EventLogError(`--event-log ${file}: cannot write it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
    }
  }

  private emit(event: string, payload: Record<string, unknown>, last = false): void {
    if (this.fd < 0) return;
    const envelope = {
      protocol_version: EVENT_PROTOCOL_VERSION,
      event_version: EVENT_VERSION,
      sequence_number: this.seq++,
      invocation_id: this.runId,
      time: new Date().toISOString(),
      event,
      ...(last ? { last_event: true } : {}),
      payload: redactJson(payload, this.secrets),
    };
    try {
      writeFdSync(this.fd, JSON.stringify(envelope) + '\n');
    } catch (e) {
      process.stderr.write(`warning: --event-log ${this.file}: write failed (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); no further events are written\n`);
      this.close();
    }
  }

  private progressPayload() {
    return { phase: this.phase, task_total: this.taskTotal, completed_tasks: this.completed, running_tasks: this.running, ...this.counts, elapsed_ms: ms(Date.now() - this.t0) };
  }

  /** `run_progress`: a snapshot of the counts. */
  progress(): void {
    this.emit('run_progress', this.progressPayload());
  }

  /** `run_started`, then the first `run_progress` (phase `preparing`); starts the heartbeat. */
  runStarted(s: RunStart): void {
    this.taskTotal = s.taskTotal;
    for (const r of s.reused ?? []) this.count(this.counts, r);
    this.completed = s.reused?.length ?? 0;
    this.emit('run_started', {
      engine: s.engines[0] ?? '',
      skill_name: s.skillName,
      task_total: s.taskTotal,
      iterations_total: s.iterationsTotal,
      run_id: this.runId,
      engines: s.engines,
      skill_up_version: s.version,
      ...(s.resumedRunId !== undefined || s.reused ? { resumed_run_id: s.resumedRunId ?? null, reused_tasks: s.reused?.length ?? 0 } : {}),
    });
    this.progress();
    this.heartbeat = setInterval(() => this.progress(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Moves to phase `executing` (jobs are about to start). */
  executing(): void {
    this.phase = 'executing';
    this.progress();
  }

  /** `iteration_completed`, with the iteration's counts (of the jobs that finished in it). */
  iterationCompleted(iteration: number): void {
    const it = this.iterations.get(iteration) ?? { t0: this.t0, counts: { passed: 0, failed: 0, errored: 0, skipped: 0 } };
    this.emit('iteration_completed', { iteration, invocation_completed_tasks: this.completed, ...it.counts, duration_ms: ms(Date.now() - it.t0) });
  }

  /**
   * Starts an iteration of `tasks` planned jobs (`iteration_started`) and returns its sinks:
   * `progress` wraps the display and adds `case_started` / `case_completed` per job; `jobs`
   * goes into the job environment (attempts, turns, judges). Task indexes are run-wide.
   */
  iteration(iteration: number, tasks: number, display?: ProgressSink): { progress: ProgressSink; jobs: JobEvents } {
    const offset = this.offset;
    this.offset += tasks;
    this.iterations.set(iteration, { t0: Date.now(), counts: { passed: 0, failed: 0, errored: 0, skipped: 0 } });
    this.emit('iteration_started', { iteration, task_total: tasks });
    const started = new Map<string, number>();
    const task = (job: Job) => ({
      task_id: job.id,
      iteration,
      case_id: job.case.id,
      configuration: job.variant,
      task_index: offset + job.index + 1,
      task_total: this.taskTotal,
      title: job.case.title ?? '',
      engine: job.engine,
      trial: job.trial,
    });
    const ids = (job: Job, attempt: number) => ({ job_id: job.id, iteration, case_id: job.case.id, engine: job.engine, variant: job.variant, trial: job.trial, attempt });
    const progress: ProgressSink = {
      // The event is written before the display shows it: the log never lags the console.
      jobStarted: (job) => {
        this.running++;
        started.set(job.id, Date.now());
        this.emit('case_started', task(job));
        this.progress();
        display?.jobStarted(job);
      },
      jobFinished: (job, r) => {
        this.running = Math.max(0, this.running - 1);
        this.completed++;
        this.count(this.counts, r);
        const it = this.iterations.get(iteration);
        if (it) this.count(it.counts, r);
        const graded = r.assertions.length;
        this.emit('case_completed', {
          ...task(job),
          completed_tasks: this.completed,
          status: CASE_STATUS[r.status],
          ...(graded ? { pass_rate: r.assertions.filter((a) => a.passed).length / graded } : {}),
          duration_ms: ms(Date.now() - (started.get(job.id) ?? Date.now())),
          attempts: r.attempts,
          tokens: tokens(r.usage),
          ...text(r.reason),
        });
        started.delete(job.id);
        this.progress();
        display?.jobFinished(job, r);
      },
    };
    const jobs: JobEvents = {
      jobStarted: (job, attempt) => this.emit('job_started', ids(job, attempt)),
      jobFinished: (job, attempt, r) =>
        this.emit('job_finished', {
          ...ids(job, attempt),
          status: r.status,
          ...text(r.reason),
          started_at: r.startedAt,
          duration_ms: ms(r.durationMs),
          engine_duration_ms: ms(r.engineDurationMs),
          tokens: tokens(r.usage),
          ...(r.costUsd !== undefined ? { cost_usd: r.costUsd } : {}),
          turns: r.turns.length,
        }),
      turnStarted: (job, attempt, index) => this.emit('turn_started', { ...ids(job, attempt), turn: index }),
      turnFinished: (job, attempt, t: TurnResult) =>
        this.emit('turn_finished', {
          ...ids(job, attempt),
          turn: t.index,
          status: t.status,
          ...text(t.reason),
          duration_ms: ms(t.durationMs),
          tokens: tokens(t.usage),
          ...(t.costUsd !== undefined ? { cost_usd: t.costUsd } : {}),
          tool_calls: t.toolCalls.length,
        }),
      judgeStarted: (job, attempt, j: JudgeRef) => this.emit('judge_started', { ...ids(job, attempt), judge_id: j.id, judge_type: j.type, judge_index: j.index }),
      judgeFinished: (job, attempt, j: JudgeRef, o, durationMs) =>
        this.emit('judge_finished', {
          ...ids(job, attempt),
          judge_id: j.id,
          judge_type: j.type,
          judge_index: j.index,
          status: o.status,
          ...text(o.reason),
          duration_ms: ms(durationMs),
          assertions_passed: o.assertions.filter((a) => a.passed).length,
          assertions_total: o.assertions.length,
          ...(o.usage ? { tokens: tokens(o.usage) } : {}),
        }),
    };
    return { progress, jobs };
  }

  private count(c: Counts, r: JobResult): void {
    c[COUNT_KEY[r.status]]++;
  }

  /** The last `run_progress` (phase `finalizing`) and `run_finished` (`last_event: true`); closes the file. */
  finish(status: RunStatus, exitCode?: number): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.phase = 'finalizing';
    this.running = 0;
    this.progress();
    this.emit('run_finished', { status, completed_tasks: this.completed, ...this.counts, duration_ms: ms(Date.now() - this.t0), ...(exitCode !== undefined ? { exit_code: exitCode } : {}) }, true);
    this.close();
  }

  /** Closes the file without a last event (idempotent). */
  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.fd >= 0) {
      try {
        closeSync(this.fd);
      } catch {
        /* already gone */
      }
      this.fd = -1;
    }
  }
}
