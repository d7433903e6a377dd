/**
 * Runs an engine process the way every adapter needs: its own process group (so a timeout
 * or Ctrl-C kills the whole tree, including children it left in the background), stdout and
 * stderr always fully drained into files capped in size, and a bounded read-back for parsing.
 */
import { spawn } from 'node:child_process';
import { createRawWriteStream } from '../util/out.js';
import { redactor } from '../util/redact.js';
import { open, readdir, readFile, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { OUTPUT_READ_FLAGS } from './final-text.js';
import { currentJob, processObserver, type ProcessObserver } from './observe.js';
import { unwatchGroup, watchGroup } from './reaper.js';
import { captureStream, GROUP_EXIT_WAIT_MS, PIPE_DRAIN_MS, type HelperResult } from './spawn-helper.js';
import { prewarmSpawnHelper, runInHelper } from './spawner.js';
import type { EngineError } from './types.js';

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
  /** Why it could not start, in words (e.g. `command not found: ./agent …`). */
  startError?: string;
  /** The system error code of a failed start (`ENOENT`, `EACCES`, …). */
  startErrorCode?: string;
  /** Wall time from spawn to exit, ms. */
  durationMs: number;
  /** Bytes the process wrote to stdout and stderr (files keep at most `maxStreamBytes()` of each). */
  stdoutBytes: number;
  stderrBytes: number;
  /** stdout was longer than the cap: its file holds only the first `maxStreamBytes()` bytes. */
  stdoutTruncated?: boolean;
  /** stderr was longer than the cap (its file ends with a `[skill-up: … cut …]` line). */
  stderrTruncated?: boolean;
}

/**
 * How a job starts a process: {@link runProcess} on this machine, or a runtime's equivalent
 * with the same contract (src/runtime/docker/container.ts `JobContainer.run` inside a container).
 */
export type ProcessRunner = (file: string, args: string[], opts: ProcOptions) => Promise<ProcResult>;

/** Process groups of engine processes running now (so a hard exit can still kill them). */
const liveGroups = new Set<number>();

/**
 * Records process group `pgid` (a detached child's pid) as one that must not outlive
 * skill-up: {@link killAllGroups} kills it, and so does the reaper (engine/reaper.ts) if
 * skill-up dies, SIGKILL included. Every detached child skill-up starts (engines, setup
 * steps, script judges) is tracked from its spawn to {@link untrackGroup}, those the spawn
 * helper started too: the helper kills them itself when skill-up goes away, but not when both
 * are killed at once (`pkill -9 -f skill-up` matches both), which the reaper still covers.
 */
export function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  watchGroup(pgid);
  if (startWaiters.length > 0) {
    const due = startWaiters.splice(0);
    setImmediate(() => due.forEach((fn) => fn()));
  }
}

/** Callbacks for the next process start ({@link afterNextProcessStart}). */
const startWaiters: (() => void)[] = [];

/**
 * Runs `fn` once, on a later turn of the event loop, after the next process (engine, setup
 * step, script judge) has started. The run uses it to load report modules while its first
 * engine works rather than before that engine's spawn, which they would delay (issue 13). A
 * run that never starts a process never calls `fn`.
 */
export function afterNextProcessStart(fn: () => void): void {
  startWaiters.push(fn);
}

/** Group `pgid` has ended or was killed: forgets it (see {@link trackGroup}). */
export function untrackGroup(pgid: number): void {
  liveGroups.delete(pgid);
  unwatchGroup(pgid);
}

/** Sends SIGKILL to every engine process group still running (used before a forced exit). */
export function killAllGroups(): void {
  for (const pid of liveGroups) killGroup(pid, 'SIGKILL');
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
 * Default for the most bytes of each stream kept on disk per process (1 GiB): large enough
 * that any answer a judge can read is whole. The rest is drained and counted, and the turn
 * says so (an `error` of kind `protocol`, see {@link truncationError}). Memory never holds a
 * stream: it goes to its file as it arrives.
 */
export const MAX_STREAM_BYTES = 1024 * 1024 * 1024;

/** Smallest cap `SKILL_UP_MAX_OUTPUT_BYTES` may set (64 KiB). */
const MIN_STREAM_BYTES = 64 * 1024;

/**
 * The cap in force, bytes: `SKILL_UP_MAX_OUTPUT_BYTES` (an integer ≥ 65536, read from
 * skill-up's own environment at each call) or {@link MAX_STREAM_BYTES}. It bounds each stdout
 * and stderr file of an engine process and the body of an HTTP agent's answer.
 */
export function maxStreamBytes(): number {
  const v = process.env.SKILL_UP_MAX_OUTPUT_BYTES;
  const n = v === undefined || v.trim() === '' ? NaN : Number(v);
  return Number.isSafeInteger(n) && n >= MIN_STREAM_BYTES ? n : MAX_STREAM_BYTES;
}

/**
 * The error of a turn whose output was cut at the cap: `protocol`, naming the sizes and the
 * setting. Undefined when nothing was cut.
 *
 * @param what e.g. `stdout`, `the answer`.
 * @param bytes what the engine produced (bytes; a lower bound when reading stopped early).
 * @param cap the cap in force (bytes).
 */
export function truncationError(what: string, bytes: number, cap: number, atLeast = false): EngineError {
  return {
    kind: 'protocol',
    message: `${what} larger than ${cap} bytes (${atLeast ? 'at least ' : ''}${bytes} bytes); skill-up keeps the first ${cap} bytes on disk and cannot grade a cut answer (raise SKILL_UP_MAX_OUTPUT_BYTES to keep more)`,
  };
}

/** skill-up could not write an engine's output file (out of descriptors, disk full, …): the harness broke, not the engine. */
export class ProcessOutputError extends Error {
  constructor(
    message: string,
    /** The system error code (`EMFILE`, `ENOSPC`, …), when known. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'ProcessOutputError';
  }
}

/**
 * Below this many engine processes in a run, skill-up spawns them itself: its heap is still
 * small then, so each fork() costs about a millisecond, while the spawn helper's own start (a
 * Node process, ~50 ms of CPU) would compete with the first engine's start on a small machine
 * (measured: a one-job Claude Code run 70–90 ms faster on 2 cores without the helper).
 */
export const HELPER_MIN_PROCESSES = 16;

/**
 * How this run starts processes (see {@link prepareProcesses}): `on-demand` (no run said how
 * many: the helper is started at the first process and waited for), `in-process` (a small run),
 * `prewarmed` (the helper is starting; processes started before it is ready are spawned in process).
 */
let spawnMode: 'on-demand' | 'in-process' | 'prewarmed' = 'on-demand';

/** `SKILL_UP_SPAWN_HELPER`: `0` never use the spawn helper, `1` always (waiting for it to be ready), unset: by the run's size. */
function helperSetting(): '0' | '1' | undefined {
  const v = process.env.SKILL_UP_SPAWN_HELPER;
  return v === '0' || v === '1' ? v : undefined;
}

/**
 * Gets process spawning ready before the first {@link runProcess} of a run. `processes`: about
 * how many engine processes the run will start (its jobs); below {@link HELPER_MIN_PROCESSES}
 * they are spawned in process, else the spawn helper (src/engine/spawner.ts) starts now and
 * takes over once ready. Without a count (a caller that does not know) the helper starts now.
 * Nothing on Windows or with `SKILL_UP_SPAWN_HELPER=0` (always in process); `=1` always uses
 * the helper, each process waiting until it is ready.
 */
export function prepareProcesses(processes?: number): void {
  const setting = helperSetting();
  if (process.platform === 'win32' || setting === '0') return;
  if (processes !== undefined) spawnMode = setting === '1' ? 'on-demand' : processes < HELPER_MIN_PROCESSES ? 'in-process' : 'prewarmed';
  if (spawnMode !== 'in-process') prewarmSpawnHelper();
}

/**
 * Spawns `file args` in a new process group and waits for it to end. Never throws for the
 * child's own failures: they are reported in the result. stdout and stderr are always fully
 * drained; at most `maxStreamBytes()` of each reach the files (stdout/stderrTruncated say when
 * more came), and the totals are reported.
 * After the main process ends, its group is swept with SIGKILL so no background child
 * outlives its job (and a pipe it held is closed).
 *
 * The process is started by skill-up's spawn helper (src/engine/spawner.ts), a small process
 * whose fork() is cheap whatever skill-up's heap; the helper opens the files and drains the
 * pipes, with the same rules as here. The process is spawned by skill-up itself
 * ({@link runInProcess}) when the helper cannot be started at all, in a small run, before a
 * prewarmed helper is ready, or with `SKILL_UP_SPAWN_HELPER=0` (see {@link prepareProcesses}).
 *
 * node:child_process is used directly (not execa) because the job must end when the process
 * exits, not when every holder of its pipes has let go, and because the output is capped.
 * Out of file descriptors at spawn is a `startError` (EMFILE) like any failed start.
 *
 * @throws ProcessOutputError when skill-up cannot write the output files (out of
 *   descriptors, disk full, permissions): the process is stopped then, and the caller's job
 *   becomes an `error` naming the file and the reason.
 * @throws SpawnHelperError (src/engine/spawner.ts) when the spawn helper dies while the process
 *   runs: its group is killed, the job becomes an `error`, and the next call starts a new helper.
 */
export async function runProcess(file: string, args: string[], opts: ProcOptions): Promise<ProcResult> {
  if (opts.signal?.aborted) {
    return { exitCode: null, timedOut: false, cancelled: true, durationMs: 0, stdoutBytes: 0, stderrBytes: 0 };
  }
  if (process.platform !== 'win32' && helperSetting() !== '0' && spawnMode !== 'in-process') {
    const r = await runThroughHelper(file, args, opts);
    if (r) return r;
  }
  return runInProcess(file, args, opts);
}

/** {@link runProcess} through the spawn helper; undefined when the helper cannot be started. */
async function runThroughHelper(file: string, args: string[], opts: ProcOptions): Promise<ProcResult | undefined> {
  const cap = maxStreamBytes();
  const observer = processObserver();
  const job = currentJob();
  const lines = observer?.stderrLine ? stderrLines(observer.stderrLine.bind(observer), job) : undefined;
  let pid: number | undefined;
  const r = await runInHelper(
    {
      file,
      args,
      cwd: opts.cwd,
      env: opts.env,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
      stdoutFile: opts.stdoutFile,
      stderrFile: opts.stderrFile,
      cap,
      timeoutMs: Number.isFinite(opts.timeoutMs) ? opts.timeoutMs : null,
      graceMs: opts.killGraceMs ?? 2000,
      lines: lines !== undefined,
    },
    {
      spawned(p) {
        // `run -v` / `-vv` (engine/observe.ts): the command line, and stderr line by line.
        observer?.spawned?.(job, file, args, opts.cwd);
        pid = p;
        if (p) trackGroup(p);
      },
      stderr: (text) => lines?.write(text),
      lost(p) {
        killGroup(p, 'SIGKILL');
        if (p) untrackGroup(p);
      },
    },
    opts.signal,
    // Prewarmed for a large run: a process asked for before the helper is ready starts here now.
    spawnMode !== 'prewarmed',
  );
  if (!r) return undefined;
  lines?.end();
  if (pid) untrackGroup(pid);
  return procResultOf(r, file, cap);
}

/** The helper's report as a ProcResult, exactly as {@link runInProcess} builds it. @throws ProcessOutputError */
function procResultOf(r: HelperResult, file: string, cap: number): ProcResult {
  if (r.output) throw new ProcessOutputError(`skill-up could not write the output of ${file} to ${r.output.file}: ${r.output.message}`, r.output.code);
  const { durationMs, stdoutBytes, stderrBytes, timedOut, cancelled } = r;
  const start = r.start ? Object.assign(new Error(r.start.message), { code: r.start.code }) : undefined;
  return procResult(file, { start, exitCode: r.exitCode, signal: r.signal ?? null, timedOut, cancelled, durationMs, stdoutBytes, stderrBytes, cap });
}

/** The {@link ProcResult} of an ended process, from either spawning path (helper or in process). */
function procResult(
  file: string,
  o: { start?: Error; exitCode: number | null; signal: string | null; timedOut: boolean; cancelled: boolean; durationMs: number; stdoutBytes: number; stderrBytes: number; cap: number },
): ProcResult {
  const { timedOut, cancelled, durationMs, stdoutBytes, stderrBytes, cap } = o;
  const cut = { ...(stdoutBytes > cap ? { stdoutTruncated: true } : {}), ...(stderrBytes > cap ? { stderrTruncated: true } : {}) };
  if (o.start) {
    return { exitCode: null, timedOut, cancelled, startError: describeStartError(o.start, file), startErrorCode: (o.start as NodeJS.ErrnoException).code, durationMs, stdoutBytes, stderrBytes, ...cut };
  }
  return {
    exitCode: timedOut || cancelled ? null : o.exitCode,
    signal: o.signal ?? undefined,
    timedOut,
    cancelled: cancelled && !timedOut,
    durationMs,
    stdoutBytes,
    stderrBytes,
    ...cut,
  };
}

/** {@link runProcess} spawning from skill-up's own process (the helper could not be started). */
async function runInProcess(file: string, args: string[], opts: ProcOptions): Promise<ProcResult> {
  const started = performance.now();
  // Both files are opened before the process starts, so an agent cannot swap `outputs/` for a
  // link first and have skill-up create them elsewhere.
  const outFile = createRawWriteStream(opts.stdoutFile);
  const errFile = createRawWriteStream(opts.stderrFile);
  const closeFiles = () => {
    outFile.destroy();
    errFile.destroy();
  };
  outFile.on('error', () => undefined);
  errFile.on('error', () => undefined);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
  } catch (e) {
    closeFiles();
    return { exitCode: null, timedOut: false, cancelled: false, startError: describeStartError(e as Error, file), startErrorCode: (e as NodeJS.ErrnoException).code, durationMs: performance.now() - started, stdoutBytes: 0, stderrBytes: 0 };
  }
  const startFailed = new Promise<Error>((res) => child.once('error', res));
  if (!child.stdout || !child.stderr) {
    // Out of descriptors (EMFILE, ENFILE): Node gives up before setting up the pipes.
    const e = await startFailed;
    closeFiles();
    return { exitCode: null, timedOut: false, cancelled: false, startError: describeStartError(e, file), startErrorCode: (e as NodeJS.ErrnoException).code, durationMs: performance.now() - started, stdoutBytes: 0, stderrBytes: 0 };
  }
  // `run -v` / `-vv` (engine/observe.ts): the command line, and stderr line by line.
  const observer = processObserver();
  if (observer) watchProcess(observer, currentJob(), file, args, opts.cwd, child.stderr);
  const cap = maxStreamBytes();
  const out = captureStream(child.stdout, outFile, cap);
  const err = captureStream(child.stderr, errFile, cap, true);
  if (opts.input !== undefined) {
    child.stdin!.on('error', () => undefined); // the engine may exit without reading it
    child.stdin!.end(opts.input);
  }
  const pid = child.pid;
  if (pid) trackGroup(pid);
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
  let outputError: { error: Error; file: string } | undefined;
  let over = false;
  for (const [c, f] of [[out, opts.stdoutFile], [err, opts.stderrFile]] as const) {
    void c.failed.then((error) => {
      outputError ??= { error, file: f };
      if (!over) terminate(); // no point running an engine whose output is lost
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once('exit', (code, signal) => res({ code, signal })),
  );
  const ended = await Promise.race([exited, startFailed]);
  over = true;
  clearTimeout(timer);
  clearTimeout(hardKill);
  opts.signal?.removeEventListener('abort', onAbort);
  const durationMs = performance.now() - started;
  killGroup(pid, 'SIGKILL');
  // SIGKILL is delivered asynchronously: wait (bounded) until no member still runs, so a
  // caller that checks right after a timeout sees no process of the job.
  if (pid) await waitForGroupExit(pid, GROUP_EXIT_WAIT_MS);
  if (pid) untrackGroup(pid);
  // A child that escaped the group may still hold the pipes: give them a moment, then let go.
  const drainTimer = setTimeout(() => {
    out.stop();
    err.stop();
  }, PIPE_DRAIN_MS);
  const [stdoutBytes, stderrBytes] = await Promise.all([out.done, err.done]);
  clearTimeout(drainTimer);
  if (outputError) {
    const { error, file: f } = outputError;
    throw new ProcessOutputError(`skill-up could not write the output of ${file} to ${f}: ${error.message}`, (error as NodeJS.ErrnoException).code);
  }
  if (ended instanceof Error) return procResult(file, { start: ended, exitCode: null, signal: null, timedOut, cancelled, durationMs, stdoutBytes, stderrBytes, cap });
  return procResult(file, { exitCode: ended.code, signal: ended.signal, timedOut, cancelled, durationMs, stdoutBytes, stderrBytes, cap });
}

/** Longest stderr line shown with `-vv`, in UTF-16 units; a longer one is cut ({@link cutLine}). */
export const STDERR_LINE_DISPLAY = 4096;

/**
 * `line` as shown on the console: whole when at most `limit` units, else its first `limit`
 * units and `… [+N bytes]` (N: the UTF-8 bytes left out, at least `extraBytes` more that were
 * never held). The cut is made AFTER redaction of the whole held text (which keeps at least the
 * longest secret past the limit), so a secret straddling the cut is redacted whole, never shown
 * in part.
 */
export function cutLine(line: string, limit = STDERR_LINE_DISPLAY, extraBytes = 0): string {
  const clean = redactor().redact(line);
  if (clean.length <= limit && extraBytes === 0) return clean;
  let head = clean.slice(0, limit);
  const c = head.charCodeAt(head.length - 1);
  if (c >= 0xd800 && c <= 0xdbff) head = head.slice(0, -1);
  // Never end on part of a redaction marker.
  const mark = head.lastIndexOf('[');
  if (mark >= 0 && '[REDACTED]'.startsWith(head.slice(mark)) && head.length - mark < 10) head = head.slice(0, mark);
  const left = Buffer.byteLength(clean.slice(head.length)) + extraBytes;
  return left > 0 ? `${head}… [+${left} bytes]` : head;
}

/**
 * Tells `observer` about a started process and, when it listens, each line of its stderr
 * ({@link stderrLines}).
 */
function watchProcess(observer: ProcessObserver, job: string | undefined, file: string, args: string[], cwd: string, stderr: Readable): void {
  observer.spawned?.(job, file, args, cwd);
  if (!observer.stderrLine) return;
  const lines = stderrLines(observer.stderrLine.bind(observer), job);
  const decoder = new StringDecoder('utf8');
  stderr.on('data', (chunk: Buffer) => lines.write(decoder.write(chunk)));
  stderr.once('close', () => lines.end());
}

/**
 * Splits stderr text (decoded as UTF-8, in the pieces it arrives in) into lines for `onLine`. A
 * line longer than {@link STDERR_LINE_DISPLAY} is shown once, cut ({@link cutLine}); the rest of
 * that line is counted and skipped. Enough text past the cut (the longest secret variant) is held
 * before cutting, so redaction sees a secret straddling the cut whole. `end()` at the stream's
 * end shows a last line without a line break.
 */
function stderrLines(onLine: NonNullable<ProcessObserver['stderrLine']>, job: string | undefined): { write(text: string): void; end(): void } {
  let pending = '';
  /** A long line was shown cut: bytes of it skipped since, until its end of line. */
  let skipping = false;
  let skipped = 0;
  let cutShown = '';
  const hold = () => STDERR_LINE_DISPLAY + Math.max(redactor().maxBytes, 1);
  return {
    write(text: string): void {
      if (skipping) {
        const nl = text.indexOf('\n');
        if (nl < 0) {
          skipped += Buffer.byteLength(text);
          return;
        }
        skipped += Buffer.byteLength(text.slice(0, nl).replace(/\r$/, ''));
        onLine(job, cutShown.replace(/\[\+(\d+) bytes\]$/, (_m, n: string) => `[+${Number(n) + skipped} bytes]`));
        skipping = false;
        skipped = 0;
        text = text.slice(nl + 1);
      }
      const lines = (pending + text).split(/\r?\n/);
      pending = lines.pop() ?? '';
      for (const l of lines) onLine(job, l.length > STDERR_LINE_DISPLAY ? cutLine(l) : l);
      if (pending.length >= hold()) {
        // Cut now (redacted with all it holds); show it when the line ends, with the bytes skipped.
        cutShown = cutLine(pending);
        if (!cutShown.endsWith(' bytes]')) cutShown += '… [+0 bytes]';
        pending = '';
        skipping = true;
        skipped = 0;
      }
    },
    end(): void {
      if (skipping) onLine(job, cutShown.replace(/\[\+(\d+) bytes\]$/, (_m, n: string) => `[+${Number(n) + skipped} bytes]`));
      else if (pending) onLine(job, pending.length > STDERR_LINE_DISPLAY ? cutLine(pending) : pending);
    },
  };
}

/** True while some process of group `pgid` is alive (zombies waiting for a reaper do not count). */
async function groupHasLiveMembers(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  if (process.platform !== 'linux') return true;
  // Out of descriptors: the group was already sent SIGKILL; do not wait on what cannot be seen.
  const entries = await readdir('/proc').catch(() => [] as string[]);
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, pgrp, …
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
    } catch {
      /* the process ended meanwhile */
    }
  }
  return false;
}

/** Waits until group `pgid` has no live member, at most `maxMs`. */
async function waitForGroupExit(pgid: number, maxMs: number): Promise<void> {
  const end = Date.now() + maxMs;
  while (Date.now() < end && (await groupHasLiveMembers(pgid))) await new Promise((r) => setTimeout(r, 20));
}

/** A spawn failure in words a user can act on. */
function describeStartError(e: Error, file: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `command not found: ${file} (not on PATH; a relative path with a slash is resolved against the skill folder)`;
  if (code === 'EACCES') return `permission denied: ${file} is not executable (chmod +x ${file})`;
  if (code === 'EMFILE' || code === 'ENFILE') return `cannot start ${file}: too many open files (${code}); lower --parallelism or raise the limit (ulimit -n)`;
  return `${file}: ${e.message}`;
}

/**
 * An engine output file opened for reading, with its size: never through a symbolic link,
 * never waiting on a FIFO (an agent can replace its own output files), regular files only.
 * Undefined when it is missing, unreadable or not a regular file (an excerpt is then empty).
 */
async function openOutputFile(file: string): Promise<{ fh: FileHandle; size: number } | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(file, OUTPUT_READ_FLAGS);
  } catch {
    return undefined;
  }
  const st = await fh.stat().catch(() => undefined);
  if (st?.isFile()) return { fh, size: st.size };
  await fh.close();
  return undefined;
}

/** The first `maxBytes` of a file as UTF-8, whether it holds more, and its size (for stderr excerpts in error messages). */
export async function readHead(file: string, maxBytes: number): Promise<{ text: string; truncated: boolean; size: number }> {
  const f = await openOutputFile(file);
  if (!f) return { text: '', truncated: false, size: 0 };
  try {
    const n = Math.min(f.size, maxBytes);
    const buf = Buffer.alloc(n);
    await f.fh.read(buf, 0, n, 0);
    return { text: buf.toString('utf8'), truncated: f.size > maxBytes, size: f.size };
  } finally {
    await f.fh.close();
  }
}

/** The last `maxBytes` of a file as UTF-8 (for stderr excerpts in error messages). */
export async function readTail(file: string, maxBytes: number): Promise<string> {
  const f = await openOutputFile(file);
  if (!f) return '';
  try {
    const n = Math.min(f.size, maxBytes);
    const buf = Buffer.alloc(n);
    await f.fh.read(buf, 0, n, f.size - n);
    return buf.toString('utf8');
  } finally {
    await f.fh.close();
  }
}

/** Where a process's stderr went, for {@link describeFailure}. */
export interface StderrRef {
  /** The stderr file, relative to the job folder (e.g. `outputs/turn-1.stderr.txt`): named in the message so a reader finds the whole text. */
  file?: string;
  /** The file's first bytes ({@link readHead}): the error line of a long stack trace is often past the tail. */
  head?: string;
}

/**
 * Lines that say what went wrong, as most runtimes print it: `TypeError: …`, `Error: …`,
 * `SomeException: …`, `error: …`, `error[E0425]: …`, `fatal: …`, `panic: …`, `ERROR …`. A stack
 * frame (`    at …`, `  File "…"`) never matches.
 */
const ERROR_LINE = [/^(?:Uncaught\s+)?(?:[\w$]+\.)*[\w$]*(?:Error|Exception)(?:\s*\[[^\]]*\])?:\s*\S/, /^(?:error|fatal|panic)(?:\s*\[[^\]]*\])?:\s*\S/i, /^ERROR\b/];

/** The first line of `texts` (in order) that looks like an error ({@link ERROR_LINE}), trimmed and capped at 500 characters. */
export function firstErrorLine(...texts: string[]): string | undefined {
  for (const text of texts) {
    for (const raw of text.split('\n')) {
      const line = raw.trim();
      if (ERROR_LINE.some((re) => re.test(line))) return line.length > 500 ? `${line.slice(0, 499)}…` : line;
    }
  }
  return undefined;
}

/**
 * Where a message says the whole stderr is: `outputs/turn-1.stderr.txt in the job folder` (the
 * folder the progress line's job id names, under the iteration folder). Relative, so result.json
 * stays valid when the run folder moves, and the same for every trial that failed alike, so
 * their reasons group (GitHub annotations, the summary); always saying relative to what: a bare
 * `outputs/…` was looked for in the current directory.
 */
export function stderrLocation(ref: StderrRef & { file: string }): string {
  return `${ref.file} in the job folder`;
}

/**
 * Describes an abnormal end, e.g. `timed out after 5.0 s` or `exited with code 3: <what stderr
 * says>`. What stderr says is its first line that looks like an error ({@link firstErrorLine},
 * searched in `stderr.head`, then in `stderrTail`), else its last 5 lines; with `stderr.file`
 * and any stderr at all, ` (stderr: <where>)` follows, the file holding it all
 * ({@link stderrLocation}).
 */
export function describeFailure(r: ProcResult, timeoutMs: number, stderrTail: string, stderr: StderrRef = {}): string {
  const tail = stderrTail.trim().split('\n').slice(-5).join('\n');
  const said = firstErrorLine(stderr.head ?? '', stderrTail) ?? tail;
  const where = stderr.file && (tail || stderr.head?.trim()) ? ` (stderr: ${stderrLocation({ ...stderr, file: stderr.file })})` : '';
  const suffix = said ? `: ${said}${where}` : where;
  if (r.startError) return r.startError;
  if (r.timedOut) return `timed out after ${(timeoutMs / 1000).toFixed(1)} s (process group killed)`;
  if (r.cancelled) return 'cancelled (process group killed)';
  if (r.signal) return `killed by ${r.signal}${suffix}`;
  return `exited with code ${r.exitCode}${suffix}`;
}
