/**
 * Runs an engine process the way every adapter needs: its own process group (so a timeout
 * or Ctrl-C kills the whole tree, including children it left in the background), stdout and
 * stderr written straight to files by the kernel (always fully drained, whatever the size,
 * at no cost to the harness), and a bounded read-back for parsing.
 */
import { closeSync, openSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { execa } from 'execa';

/** Options for `runProcess`. */
export interface ProcOptions {
  cwd: string;
  /** The complete environment (nothing is inherited implicitly). */
  env: Record<string, string | undefined>;
  /** Absolute path receiving stdout. */
  stdoutFile: string;
  /** Absolute path receiving stderr. */
  stderrFile: string;
  /** Milliseconds before the process group is killed; Infinity = none. */
  timeoutMs: number;
  /** Aborting kills the process group (Ctrl-C, job deadline). */
  signal?: AbortSignal;
  /** Text written to stdin, which is then closed. stdin is empty otherwise. */
  input?: string;
  /** Milliseconds between SIGTERM and SIGKILL. Default 2000. */
  killGraceMs?: number;
}

/** How a process ended. Exactly one of the four outcomes holds. */
export interface ProcResult {
  /** Exit code when it exited by itself; null when killed or never started. */
  exitCode: number | null;
  /** Name of the signal that ended it, if any. */
  signal?: string;
  timedOut: boolean;
  cancelled: boolean;
  /** Why it could not start (e.g. `spawn ./agent ENOENT`). */
  startError?: string;
  /** Wall time from spawn to exit, ms. */
  durationMs: number;
}

/** Kills a whole process group; silently ignores a group that is already gone. */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* ESRCH: already gone */
  }
}

/**
 * Spawns `file args` in a new process group and waits for it to end. Never throws for the
 * child's own failures: they are reported in the result. After the main process ends, the
 * group is swept with SIGKILL so no background child outlives its job.
 */
export async function runProcess(file: string, args: string[], opts: ProcOptions): Promise<ProcResult> {
  const started = performance.now();
  if (opts.signal?.aborted) {
    return { exitCode: null, timedOut: false, cancelled: true, durationMs: 0 };
  }
  // Raw file descriptors: the kernel writes the child's output straight to disk, so it is
  // always drained, costs the harness nothing, and a background child holding the fd open
  // cannot delay the end of the job.
  const outFd = openSync(opts.stdoutFile, 'w');
  const errFd = openSync(opts.stderrFile, 'w');
  const child = execa(file, args, {
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: false,
    detached: true,
    reject: false,
    ...(opts.input === undefined ? { stdin: 'ignore' as const } : { input: opts.input }),
    // execa accepts any file descriptor at run time; its types list only the literals 3–9.
    stdout: outFd as 3,
    stderr: errFd as 3,
    cleanup: true,
    buffer: false,
  });
  const pid = child.pid;
  let timedOut = false;
  let cancelled = false;
  const grace = opts.killGraceMs ?? 2000;
  let hardKill: NodeJS.Timeout | undefined;
  const terminate = () => {
    killGroup(pid, 'SIGTERM');
    hardKill ??= setTimeout(() => killGroup(pid, 'SIGKILL'), grace);
  };
  const timer = Number.isFinite(opts.timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        terminate();
      }, Math.max(0, opts.timeoutMs))
    : undefined;
  const onAbort = () => {
    cancelled = true;
    terminate();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const result = await child;
  closeSync(outFd);
  closeSync(errFd);
  clearTimeout(timer);
  clearTimeout(hardKill);
  opts.signal?.removeEventListener('abort', onAbort);
  killGroup(pid, 'SIGKILL');
  const durationMs = performance.now() - started;
  if (pid === undefined || (result.failed && result.exitCode === undefined && !result.signal && !timedOut && !cancelled)) {
    return { exitCode: null, timedOut, cancelled, startError: result.shortMessage ?? result.message, durationMs };
  }
  return {
    exitCode: timedOut || cancelled ? null : (result.exitCode ?? null),
    signal: result.signal ?? undefined,
    timedOut,
    cancelled: cancelled && !timedOut,
    durationMs,
  };
}

/** The beginning of a file, decoded as UTF-8, at most `maxBytes`. Missing file = empty. */
export async function readHead(file: string, maxBytes: number): Promise<{ text: string; truncated: boolean; size: number }> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return { text: '', truncated: false, size: 0 };
  }
  const fh = await open(file, 'r');
  try {
    const n = Math.min(size, maxBytes);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, 0);
    return { text: buf.toString('utf8'), truncated: size > maxBytes, size };
  } finally {
    await fh.close();
  }
}

/** The last `maxBytes` of a file as UTF-8 (for stderr excerpts in error messages). */
export async function readTail(file: string, maxBytes: number): Promise<string> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch {
    return '';
  }
  const fh = await open(file, 'r');
  try {
    const n = Math.min(size, maxBytes);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, size - n);
    return buf.toString('utf8');
  } finally {
    await fh.close();
  }
}

/** Describes an abnormal end as one line, e.g. `timed out after 5.0 s` or `exited with code 3: <stderr tail>`. */
export function describeFailure(r: ProcResult, timeoutMs: number, stderrTail: string): string {
  const tail = stderrTail.trim().split('\n').slice(-5).join('\n');
  const suffix = tail ? `: ${tail}` : '';
  if (r.startError) return `could not start: ${r.startError}`;
  if (r.timedOut) return `timed out after ${(timeoutMs / 1000).toFixed(1)} s (process group killed)`;
  if (r.cancelled) return 'cancelled (process group killed)';
  if (r.signal) return `killed by ${r.signal}${suffix}`;
  return `exited with code ${r.exitCode}${suffix}`;
}
