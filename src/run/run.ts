/**
 * The run stage: executes planned jobs with bounded concurrency (`p-limit`), retries
 * errors per `retry_policy`, journals each result as it lands, and stops cleanly on abort.
 */
import pLimit from 'p-limit';
import type { Job } from '../plan/plan.js';
import { runJobOnce, type JobEnv } from './job.js';
import type { Journal } from './journal.js';
import type { JobResult } from './types.js';
import { withJob } from '../engine/observe.js';

/** Receives progress events (the TTY display, plain log lines, tests). */
export interface ProgressSink {
  jobStarted(job: Job): void;
  jobFinished(job: Job, result: JobResult): void;
}

/** Options of `executeJobs`. */
export interface ExecuteOptions {
  jobs: Job[];
  env: JobEnv;
  /** 1..256 jobs at once. */
  parallelism: number;
  journal?: Journal;
  progress?: ProgressSink;
  /** Cost and budget (`--max-cost`, src/cost/budget.ts): may refuse a job, sees every attempt. */
  hooks?: JobHooks;
  /** Subscribers to each job's final result: the report listener writes the per-job files. */
  listeners?: ResultListener[];
  /** Milliseconds to wait before `attempt` (2, 3, …); default 1 s doubling per retry, at most 30 s. */
  retryDelayMs?: (attempt: number) => number;
  /**
   * Leave the last removals running when the jobs are done (default: wait for them). The
   * caller then drains `env.removals` itself, before it returns: runSuite writes the reports
   * meanwhile (a one-job run waited about 10 ms for its workspace to go first).
   */
  leaveRemovals?: boolean;
}

/**
 * Receives each job's final result (after its retries), before it is journaled, e.g. to write
 * the job folder's report files (src/run/suite.ts). A throw makes that job an `error` whose
 * reason is the error's message (the run goes on); when the journal then fails, `recorded` is
 * called again with the changed result.
 */
export interface ResultListener {
  recorded(job: Job, result: JobResult): Promise<void>;
}

/** The default pause before retry `attempt` (2, 3, …): 1 s, 2 s, 4 s, … at most 30 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(1000 * 2 ** (attempt - 2), 30_000);
}

/** Called around each job by `executeJobs`. */
export interface JobHooks {
  /** Before a job starts; false leaves it not run (it is then absent from the results). */
  admit?(job: Job, signal: AbortSignal): Promise<boolean>;
  /** After each attempt, retries included (already priced by runJobOnce), before the result is journaled. */
  attempted?(job: Job, result: JobResult): void;
  /** After an admitted job's last attempt. */
  released?(job: Job): void;
}

/**
 * Runs every job and returns the finished results in plan order. Jobs not started before an
 * abort are left out (the caller reports them as not run); a job stopped by the abort is
 * recorded as `error` with reason `run interrupted`. Each job's workspaces are handed to
 * `env.removals` once its result is journaled, and the queue is drained before this resolves.
 */
export async function executeJobs(opts: ExecuteOptions): Promise<JobResult[]> {
  const { env } = opts;
  const limit = pLimit(opts.parallelism);
  const results: (JobResult | undefined)[] = new Array(opts.jobs.length);
  const policy = env.suite.retryPolicy;
  await Promise.all(
    opts.jobs.map((job) =>
      limit(async () => {
        if (env.signal.aborted) return;
        const hooks = opts.hooks;
        if (hooks?.admit && !(await hooks.admit(job, env.signal))) return;
        const once = async (attempt: number) => {
          const r = await withJob(job.id, () => runJobOnce(job, env, attempt));
          hooks?.attempted?.(job, r);
          return r;
        };
        let result: JobResult;
        try {
          opts.progress?.jobStarted(job);
          result = await once(1);
          for (let attempt = 2; attempt <= policy.maxRetries + 1 && shouldRetry(result, policy.retryOn) && !env.signal.aborted; attempt++) {
            await sleep((opts.retryDelayMs ?? retryDelayMs)(attempt), env.signal);
            if (env.signal.aborted) break;
            result = await once(attempt);
          }
        } finally {
          hooks?.released?.(job);
        }
        for (const l of opts.listeners ?? []) {
          try {
            await l.recorded(job, result);
          } catch (e) {
            // Out of descriptors, disk full, a folder in the way: this job is an error, the run goes on.
            result = { ...result, status: 'error', reason: `${(e as Error).message}${result.reason ? ` (after: ${result.reason})` : ''}` };
          }
        }
        results[job.index] = result;
        try {
          await opts.journal?.append(result);
        } catch (e) {
          // Not recorded (disk full, I/O error): a resume would run it again, so it counts as
          // an error of the harness, not as its own result.
          result = { ...result, status: 'error', reason: `journal.jsonl could not be written (${(e as Error).message}); the job itself ended ${result.status}${result.reason ? `: ${result.reason}` : ''}` };
          results[job.index] = result;
          const changed = result;
          // The job's files say what result.json will: best effort, the journal already failed.
          for (const l of opts.listeners ?? []) await l.recorded(job, changed).catch(() => undefined);
        }
        // The result is safe (journaled, or the journal failed and said so): its workspaces go now, in the background.
        env.removals?.release(job.id);
        opts.progress?.jobFinished(job, result);
      }),
    ),
  );
  // Every removal ends before the run does (interrupted or not): nothing is left half removed.
  if (!opts.leaveRemovals) await env.removals?.drain();
  return results.filter((r): r is JobResult => r !== undefined);
}

/**
 * Whether a finished attempt is tried again under `retry_policy.retry_on`: a timeout (its reason
 * says "timed out") under `timeout`, any other error under `error`; a pass, fail, skipped or an
 * interrupted job never.
 */
export function shouldRetry(r: JobResult, retryOn: ('timeout' | 'error')[]): boolean {
  if (r.status !== 'error' || r.reason === 'run interrupted') return false;
  const isTimeout = /timed out/.test(r.reason ?? '');
  return retryOn.includes(isTimeout ? 'timeout' : 'error');
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // The listener goes when the timer fires too: every retry would leave one on the run's signal otherwise.
    const onAbort = () => { clearTimeout(t); resolve(); };
    const t = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve(); }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
