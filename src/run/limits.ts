/**
 * Parallelism against the open-file limit (`ulimit -n`). Every running job holds file
 * descriptors in skill-up's own process; past the limit, opening anything fails with EMFILE.
 * So a run checks, before it starts, that its parallelism fits, and lowers it (with one
 * warning line) when it does not.
 *
 * Measured (Linux, `ls /proc/<pid>/fd` sampled during runs of 32–36 jobs at once): skill-up
 * itself holds about 20 descriptors (stdio, epoll, event fds, the journal, the log); each job
 * running an engine holds about 4.5: the stdout and stderr pipes (2), the two files they are
 * drained into (2), the stdin pipe when there is one, and now and then a connection to the
 * scripted model server. Workspace set-up, file copies and judges add one or two for a moment,
 * never at the same time as the engine of the same job. Hence the estimate: {@link FDS_PER_JOB}
 * per job plus {@link RESERVED_FDS} for skill-up itself: loading its modules alone needs 63
 * (Node's loader opens them concurrently; below that skill-up cannot start at all), then its
 * own, the event log, the model server and the reports.
 *
 * Node has no API for the limit: on Linux it is read from `/proc/self/limits` (Node raises
 * its soft limit to the hard one at start, so that is the number in force); elsewhere from
 * `sh -c 'ulimit -n'`, run once (it inherits skill-up's limit).
 *
 * `SKILL_UP_FD_CHECK=0` turns the check off (for a system where the estimate is wrong, and
 * for tests of running out of descriptors).
 */
import type * as ChildProcess from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

/** Descriptors one running job is counted for (measured about 4.5; see the module doc). */
export const FDS_PER_JOB = 6;
/** Descriptors kept for skill-up itself, whatever the parallelism (module loading needs 63). */
export const RESERVED_FDS = 64;

/**
 * The soft limit on open files of this process, or undefined when unlimited or unknown.
 * Linux: `/proc/self/limits`; otherwise `sh -c 'ulimit -n'`.
 */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    if (line) {
      const soft = line.slice('Max open files'.length).trim().split(/\s+/)[0];
      return soft === 'unlimited' ? undefined : positive(soft);
    }
  } catch {
    /* not Linux: ask a shell */
  }
  try {
    // Loaded only here (not Linux): node:child_process costs every start-up ~5 ms (it loads node:net).
    const { spawnSync } = createRequire(import.meta.url)('node:child_process') as typeof ChildProcess;
    const r = spawnSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] });
    const out = (r.stdout ?? '').trim();
    return out === 'unlimited' ? undefined : positive(out);
  } catch {
    return undefined;
  }
}

function positive(s: string | undefined): number | undefined {
  const n = Number(s);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The most jobs that fit in `limit` open files (0 when not even one does). */
export function maxParallelism(limit: number): number {
  return Math.max(0, Math.floor((limit - RESERVED_FDS) / FDS_PER_JOB));
}

/** What {@link fitParallelism} decided: the parallelism to use, and one line to print when it differs. */
export interface FittedParallelism {
  parallelism: number;
  /** Set when the parallelism was lowered: a warning line (without the `warning: ` prefix). */
  warning?: string;
  /** Set when not even one job fits: the run must not start. */
  error?: string;
  /** The open-file limit found (undefined: unlimited or unknown). */
  limit?: number;
}

/**
 * Fits `requested` jobs at once into the open-file limit. `limit` defaults to
 * {@link openFileLimit}; `env` (default `process.env`) may turn the check off with
 * `SKILL_UP_FD_CHECK=0`.
 */
export function fitParallelism(requested: number, opts: { limit?: number | null; env?: Record<string, string | undefined> } = {}): FittedParallelism {
  const env = opts.env ?? process.env;
  if (env.SKILL_UP_FD_CHECK === '0') return { parallelism: requested };
  const limit = opts.limit === undefined ? openFileLimit() : (opts.limit ?? undefined);
  if (limit === undefined) return { parallelism: requested };
  const fits = maxParallelism(limit);
  if (fits >= requested) return { parallelism: requested, limit };
  const need = (n: number) => RESERVED_FDS + n * FDS_PER_JOB;
  if (fits < 1) {
    return {
      parallelism: 0,
      limit,
      error: `the open-file limit (ulimit -n) is ${limit}: too low for even one job, which needs about ${need(1)}; raise it (e.g. ulimit -n 1024) and run again`,
    };
  }
  return {
    parallelism: fits,
    limit,
    warning: `parallelism ${requested} needs about ${need(requested)} open files, more than the limit of ${limit} (ulimit -n): running ${fits} job(s) at once instead (raise it with ulimit -n ${need(requested)} to run ${requested})`,
  };
}
