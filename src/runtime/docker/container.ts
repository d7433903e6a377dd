/**
 * A job's container (issue 14): created and started under a concurrency limit with retries on
 * the daemon's transient errors, idling until removed, and running the job's processes through
 * `docker exec` with the contract of src/engine/proc.ts `runProcess`. Containers carry labels so
 * that they can be found again: `skill-up.run` (the run id: removed on interrupt),
 * `skill-up.job`, `skill-up.pid` and `skill-up.host` (skill-up's pid and host name: a container
 * whose skill-up died is removed by the next start, {@link removeOrphanContainers}).
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import { PassThrough, type Duplex } from 'node:stream';
import type Dockerode from 'dockerode';
import pLimit from 'p-limit';
import { currentJob, processObserver } from '../../engine/observe.js';
import { maxStreamBytes, ProcessOutputError, type ProcOptions, type ProcResult } from '../../engine/proc.js';
import { captureStream, PIPE_DRAIN_MS } from '../../engine/spawn-helper.js';
import { createRawWriteStream } from '../../util/out.js';
import { daemonMessage } from './daemon.js';

/** Label names on every container skill-up makes. */
export const LABELS = { run: 'skill-up.run', job: 'skill-up.job', pid: 'skill-up.pid', host: 'skill-up.host' } as const;

/** What a job's container is made of ({@link startJobContainer}). */
export interface ContainerSpec {
  /** Image name or id; must be on the daemon (never pulled). */
  image: string;
  /** The run's id: label `skill-up.run`. */
  runId: string;
  /** The job's id: label `skill-up.job`, and part of the name `skill-up-<sanitised job id>-<random>`. */
  jobId: string;
  /** Bind mounts; `host` is a path on THIS machine (the daemon must be local), absolute and existing (a missing one is an error, never created). */
  binds: { host: string; container: string; readOnly: boolean }[];
  /** `none`, `host`, `bridge` or a named network (always sent: Podman's default is a bridge). */
  network: string;
  /** Memory limit, bytes; swap is limited to the same (none extra), so a hog is OOM-killed, not swapped. */
  memoryBytes?: number;
  /** CPU limit in units of 1e-9 CPUs (1e9 = one CPU). */
  nanoCpus?: number;
  /** Most processes (and threads) in the container at once. */
  pidsLimit?: number;
  /** User of PID 1 and of every `run`: "uid[:gid]" or a name from the image's /etc/passwd. */
  user?: string;
  /** /etc/hosts entries, `name:address` (e.g. `host.docker.internal:host-gateway`). */
  extraHosts?: string[];
  /** PATH inside (the image's: ImageInfo.path); every `run` gets it instead of the host's. */
  path: string;
}

/** A job's container, started and idling (PID 1 is a shell loop that exits on TERM) until removed. */
export interface JobContainer {
  /** The container's id. */
  id: string;
  /** The container's name (`skill-up-<job>-<random>`). */
  name: string;
  /**
   * Runs `file args` inside with the contract of src/engine/proc.ts `runProcess`: `opts.cwd` is
   * the working folder inside; `opts.env` the environment (variables with an undefined value are
   * left out; PATH is always spec.path, since a host PATH means nothing inside; the image's own
   * ENV is the base beneath it, as for any `docker exec`: nothing of the host's environment is
   * passed); stdout and stderr are demultiplexed into `opts.stdoutFile`/`stderrFile` on the host
   * as they arrive, each capped at `maxStreamBytes()` and counted whole (stderr ends with the
   * cut marker); `opts.input` is written to stdin, which is then closed (no input: stdin is
   * /dev/null). `timeoutMs` or `signal` kills the whole container (SIGKILL): the job is over then,
   * and the result says `timedOut` or `cancelled` with `exitCode: null` as runProcess does.
   * An exit code of 129–159 from the daemon is a process killed by signal code−128 (the OOM
   * killer's SIGKILL gives 137): `exitCode: null, signal: 'SIGKILL'`, as runProcess reports it.
   * When the process never started (the daemon's exec reports pid 0 with exit 126/127: no such
   * file, not executable, no such working folder or user) the result has a `startError` such as
   * `command not found: …`, and stdout holds the runtime's message. A container that no longer
   * runs gives a `startError` too. Never throws for the process's own failures.
   *
   * @throws ProcessOutputError when the output files cannot be written.
   * @throws Error with the daemon's message when the daemon fails the exec itself.
   */
  run(file: string, args: string[], opts: ProcOptions): Promise<ProcResult>;
  /**
   * True when the kernel OOM-killed a process in the container: the container's State.OOMKilled
   * (set by dockerd only when PID 1 was the victim), or the `oom_kill` count in its memory
   * cgroup, read inside through `sh` (cgroup v1 `memory.oom_control`, v2 `memory.events`), which
   * also sees an exec'd process killed. Costs a `docker exec` (~60–140 ms): ask after an exit
   * by SIGKILL. False when neither can be read (e.g. the container was already killed).
   */
  oomKilled(): Promise<boolean>;
  /** Force-removes the container and its anonymous volumes; idempotent; never throws (resolves to the daemon's error message, if any). */
  remove(): Promise<string | undefined>;
}

/** Default number of container creations and starts at once (bursts overload the daemon). */
export const DEFAULT_START_CONCURRENCY = 4;

/** Tries per creation/start, and the waits between them, ms (multiplied by 1, 3, …). */
const START_TRIES = 3;
const RETRY_BASE_MS = 250;

/** The PID 1 command: idles, and exits at once on SIGTERM (a `sleep` alone would ignore it as PID 1). */
const IDLE_LOOP = 'trap "exit 0" TERM INT; while :; do sleep 3600 & wait $!; done';

let limiter: ReturnType<typeof pLimit> | undefined;
let limiterSize = DEFAULT_START_CONCURRENCY;

/**
 * Sets how many container creations and starts run at once (default
 * {@link DEFAULT_START_CONCURRENCY}); takes effect for starts queued after the call.
 */
export function setStartConcurrency(n: number): void {
  limiterSize = Math.max(1, Math.floor(n));
  limiter = undefined;
}

/**
 * The container's name for a job: `skill-up-<job id, characters outside [A-Za-z0-9_.-] as '-', at
 * most 40>-<8 hex>`.
 */
export function containerName(jobId: string): string {
  const clean = jobId.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[-.]+/, '').slice(0, 40).replace(/[-.]+$/, '');
  return `skill-up-${clean || 'job'}-${randomBytes(4).toString('hex')}`;
}

/** True for the daemon's errors worth another try: 5xx, a reset or hung-up connection, "… is already in progress". */
export function isTransient(e: unknown): boolean {
  const err = e as { statusCode?: number; code?: string; message?: string };
  const m = daemonMessage(e);
  if (/already in progress/i.test(m)) return true;
  // A 5xx that says what is wrong with the request will say it again.
  if (typeof err.statusCode === 'number' && err.statusCode >= 500) return !/no such image|not found|failed to find|invalid|permission denied|no such file|executable file/i.test(m);
  if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.code === 'ETIMEDOUT') return true;
  return /socket hang up/i.test(m);
}

/** An AbortError, as fetch and timers/promises throw it. */
function abortError(): Error {
  return Object.assign(new Error('cancelled: the container was not started'), { name: 'AbortError' });
}

/**
 * Creates and starts a job's container, at most {@link setStartConcurrency} (default 4) at a time
 * (`p-limit`), retrying the daemon's transient errors ({@link isTransient}) up to 3 tries with
 * backoff. Every bind source must exist here (checked first). PID 1 is `/bin/sh -c <idle loop>` (the image's entrypoint is replaced; the image needs
 * `/bin/sh`); the container's env is PATH = spec.path; labels `skill-up.run`, `.job`, `.pid`
 * (this process) and `.host` (os.hostname()). A container that was created but could not be
 * started is removed before the next try or the error.
 *
 * @param signal aborting it before the container runs removes what was made and throws an AbortError.
 * @throws Error with the daemon's message ("cannot start a container for job …: …") when no try
 *   succeeded or the error is not transient.
 */
export async function startJobContainer(docker: Dockerode, spec: ContainerSpec, signal?: AbortSignal): Promise<JobContainer> {
  for (const b of spec.binds) {
    // dockerd refuses a missing source; Podman would create it, empty: refuse it here for both.
    const st = await stat(b.host).catch(() => undefined);
    if (!st) throw new Error(`cannot start a container of image ${spec.image} for job ${spec.jobId}: the bind mount's source ${b.host} does not exist`);
  }
  limiter ??= pLimit(limiterSize);
  return limiter(async () => {
    let last: unknown;
    for (let attempt = 1; attempt <= START_TRIES; attempt++) {
      if (signal?.aborted) throw abortError();
      const name = containerName(spec.jobId);
      let container: Dockerode.Container | undefined;
      try {
        container = await docker.createContainer(createOptions(spec, name));
        if (signal?.aborted) throw abortError();
        await container.start();
        if (signal?.aborted) throw abortError();
        return jobContainer(container, name, spec);
      } catch (e) {
        last = e;
        // Half-made: a created container, or one the daemon made before failing the request.
        await (container ?? docker.getContainer(name)).remove({ force: true, v: true }).catch(() => undefined);
        if ((e as Error).name === 'AbortError' || !isTransient(e) || attempt === START_TRIES) break;
        await new Promise((r) => setTimeout(r, RETRY_BASE_MS * (2 * attempt - 1)));
      }
    }
    if ((last as Error).name === 'AbortError') throw last as Error;
    throw new Error(`cannot start a container of image ${spec.image} for job ${spec.jobId}: ${daemonMessage(last)}`, { cause: last });
  });
}

/** The create request for `spec`. */
function createOptions(spec: ContainerSpec, name: string): Dockerode.ContainerCreateOptions {
  return {
    name,
    Image: spec.image,
    Entrypoint: ['/bin/sh', '-c', IDLE_LOOP],
    Cmd: [],
    Env: [`PATH=${spec.path}`],
    ...(spec.user ? { User: spec.user } : {}),
    Tty: false,
    OpenStdin: false,
    Labels: { [LABELS.run]: spec.runId, [LABELS.job]: spec.jobId, [LABELS.pid]: String(process.pid), [LABELS.host]: os.hostname() },
    HostConfig: {
      NetworkMode: spec.network,
      // Mounts, not Binds: a missing host folder is an error rather than an empty root-owned one.
      Mounts: spec.binds.map((b) => ({ Type: 'bind' as const, Source: b.host, Target: b.container, ReadOnly: b.readOnly })),
      ...(spec.memoryBytes ? { Memory: spec.memoryBytes, MemorySwap: spec.memoryBytes } : {}),
      ...(spec.nanoCpus ? { NanoCpus: spec.nanoCpus } : {}),
      ...(spec.pidsLimit ? { PidsLimit: spec.pidsLimit } : {}),
      ...(spec.extraHosts?.length ? { ExtraHosts: spec.extraHosts } : {}),
    },
  };
}

/** Signal names by number (Linux), for exit codes 128+n. */
const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 9: 'SIGKILL', 10: 'SIGUSR1', 11: 'SIGSEGV', 12: 'SIGUSR2', 13: 'SIGPIPE', 14: 'SIGALRM', 15: 'SIGTERM', 24: 'SIGXCPU', 25: 'SIGXFSZ', 31: 'SIGSYS' };

/** The JobContainer of a started container. */
function jobContainer(container: Dockerode.Container, name: string, spec: ContainerSpec): JobContainer {
  let removed: Promise<string | undefined> | undefined;
  /** SIGKILL to the container, resolved once it has stopped (at most ~10 s). */
  const kill = async () => {
    await container.kill({ signal: 'SIGKILL' }).catch(() => undefined);
    for (let i = 0; i < 200; i++) {
      const info = await container.inspect().catch(() => undefined);
      if (!info?.State?.Running) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return {
    id: container.id,
    name,
    run: (file, args, opts) => execIn(container, spec, file, args, opts, kill),
    async oomKilled() {
      const info = await container.inspect().catch(() => undefined);
      if (info?.State?.OOMKilled) return true;
      if (!info?.State?.Running) return false;
      const text = await execSmall(container, ['/bin/sh', '-c', 'cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null || cat /sys/fs/cgroup/memory.events 2>/dev/null'], spec.path).catch(() => '');
      const m = /^oom_kill (\d+)/m.exec(text);
      return m !== null && Number(m[1]) > 0;
    },
    remove() {
      removed ??= container.remove({ force: true, v: true }).then(
        () => undefined,
        (e: unknown) => {
          const status = (e as { statusCode?: number }).statusCode;
          const m = daemonMessage(e);
          // Gone already, or the daemon is removing it (an interrupt's sweep raced us).
          if (status === 404 || /already in progress/i.test(m)) return undefined;
          removed = undefined; // a later call may succeed
          return m;
        },
      );
      return removed;
    },
  };
}

/** The result of a run that was cancelled before it started. */
function notStarted(extra: Partial<ProcResult> = {}): ProcResult {
  return { exitCode: null, timedOut: false, cancelled: false, durationMs: 0, stdoutBytes: 0, stderrBytes: 0, ...extra };
}

/** {@link JobContainer.run}. */
async function execIn(container: Dockerode.Container, spec: ContainerSpec, file: string, args: string[], opts: ProcOptions, killContainer: () => Promise<unknown>): Promise<ProcResult> {
  if (opts.signal?.aborted) return notStarted({ cancelled: true });
  const started = performance.now();
  const cap = maxStreamBytes();
  const env = Object.entries({ ...opts.env, PATH: spec.path })
    .filter((kv): kv is [string, string] => kv[1] !== undefined)
    .map(([k, v]) => `${k}=${v}`);
  const withInput = opts.input !== undefined;
  let exec: Dockerode.Exec;
  let stream: Duplex;
  try {
    exec = await container.exec({
      Cmd: [file, ...args],
      Env: env,
      WorkingDir: opts.cwd,
      ...(spec.user ? { User: spec.user } : {}),
      AttachStdin: withInput,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    stream = await exec.start({ hijack: true, stdin: withInput });
  } catch (e) {
    const status = (e as { statusCode?: number }).statusCode;
    const m = daemonMessage(e);
    // Podman fails the exec itself (500 "container not running - unable to find user x").
    if (/unable to find user|no matching entries in passwd/i.test(m)) return notStarted({ startError: `cannot start ${file}: ${m.replace(/^container not running - /, '')}`, durationMs: performance.now() - started });
    // dockerd: 409 "Container … is not running"; Podman: 500 "… container state improper".
    if (status === 409 || status === 404 || /is not running|state improper|no such container/i.test(m)) {
      return notStarted({ startError: `cannot start ${file}: the job's container ${spec.jobId} no longer runs (${m})`, durationMs: performance.now() - started });
    }
    throw new Error(`docker exec of ${file} failed: ${m}`, { cause: e });
  }
  processObserver()?.spawned?.(currentJob(), file, args, opts.cwd);
  // Opened after the exec is made (a failed exec leaves no files), before any output is read.
  const outFile = createRawWriteStream(opts.stdoutFile);
  const errFile = createRawWriteStream(opts.stderrFile);
  outFile.on('error', () => undefined);
  errFile.on('error', () => undefined);
  const outPipe = new PassThrough();
  const errPipe = new PassThrough();
  const out = captureStream(outPipe, outFile, cap);
  const err = captureStream(errPipe, errFile, cap, true);
  // The first bytes of each stream, to read the runtime's message when the process never started.
  const heads = { out: [] as Buffer[], err: [] as Buffer[], n: 0 };
  const keepHead = (which: 'out' | 'err') => (chunk: Buffer) => {
    if (heads.n < 2048) {
      heads[which].push(chunk.subarray(0, 2048 - heads.n));
      heads.n += Math.min(chunk.length, 2048 - heads.n);
    }
  };
  outPipe.on('data', keepHead('out'));
  errPipe.on('data', keepHead('err'));
  container.modem.demuxStream(stream, outPipe, errPipe);
  // demuxStream ignores back-pressure: pause the socket while a file is slower than the process.
  stream.on('data', () => {
    for (const p of [outPipe, errPipe]) {
      if (p.writableNeedDrain && !stream.isPaused()) {
        stream.pause();
        p.once('drain', () => stream.resume());
      }
    }
  });
  const streamEnded = new Promise<void>((res) => {
    stream.once('end', res);
    stream.once('close', res);
    stream.once('error', () => res());
  });
  void streamEnded.then(() => {
    outPipe.end();
    errPipe.end();
  });
  if (withInput) {
    stream.on('error', () => undefined); // the process may exit without reading it
    stream.end(opts.input); // half-close: the process sees EOF
  }

  let timedOut = false;
  let cancelled = false;
  let killed: Promise<unknown> | undefined;
  const terminate = () => {
    killed ??= killContainer();
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
  for (const [c, f] of [[out, opts.stdoutFile], [err, opts.stderrFile]] as const) {
    void c.failed.then((error) => {
      outputError ??= { error, file: f };
      terminate(); // no point running a process whose output is lost
    });
  }
  // The stream ends when the process and every holder of its pipes are done. A background child
  // may hold them: once the process has exited, give the pipes PIPE_DRAIN_MS, then let go.
  let over = false;
  let watchTimer: NodeJS.Timeout | undefined;
  const later = (ms: number, fn: () => void) => {
    if (!over) watchTimer = setTimeout(fn, ms);
  };
  const watchExit = (wait: number) => {
    if (killed && wait >= 2000) return later(5000, () => stream.destroy()); // the container's end closes it; bound that anyway
    void exec.inspect().then(
      (info) => {
        if (!info.Running && info.ExitCode !== null) later(PIPE_DRAIN_MS, () => stream.destroy());
        else later(wait, () => watchExit(Math.min(wait * 2, 2000)));
      },
      () => later(wait, () => watchExit(Math.min(wait * 2, 2000))),
    );
  };
  later(250, () => watchExit(500));
  await streamEnded;
  over = true;
  clearTimeout(watchTimer);
  clearTimeout(timer);
  opts.signal?.removeEventListener('abort', onAbort);
  const [stdoutBytes, stderrBytes] = await Promise.all([out.done, err.done]);
  const durationMs = performance.now() - started;
  // As runProcess waits for the killed group to be gone: return once the container has stopped.
  if (killed) await killed;
  if (outputError) {
    const { error, file: f } = outputError;
    throw new ProcessOutputError(`skill-up could not write the output of ${file} to ${f}: ${error.message}`, (error as NodeJS.ErrnoException).code);
  }
  const cut = { ...(stdoutBytes > cap ? { stdoutTruncated: true } : {}), ...(stderrBytes > cap ? { stderrTruncated: true } : {}) };
  const counts = { durationMs, stdoutBytes, stderrBytes, ...cut };
  if (timedOut || cancelled) return { exitCode: null, signal: 'SIGKILL', timedOut, cancelled: cancelled && !timedOut, ...counts };
  const info = await exitOf(exec);
  const said = Buffer.concat([...heads.out, ...heads.err]).toString('utf8');
  if ((info.exitCode === 126 || info.exitCode === 127) && NOT_STARTED.test(said)) {
    const { startError, startErrorCode } = describeExecFailure(said, file, opts.cwd);
    return { exitCode: null, timedOut: false, cancelled: false, startError, ...(startErrorCode ? { startErrorCode } : {}), ...counts };
  }
  if (info.exitCode === null) {
    // The container ended under the process (removed, or killed from outside).
    return { exitCode: null, signal: 'SIGKILL', timedOut: false, cancelled: false, ...counts };
  }
  const sig = info.exitCode > 128 && info.exitCode < 160 ? SIGNALS[info.exitCode - 128] : undefined;
  if (sig) return { exitCode: null, signal: sig, timedOut: false, cancelled: false, ...counts };
  return { exitCode: info.exitCode, signal: undefined, timedOut: false, cancelled: false, ...counts };
}

/**
 * The container runtime's words for an exec whose process never started (with exit 126 or 127):
 * dockerd writes `OCI runtime exec failed: exec failed: unable to start container process: …` on
 * stdout, or `unable to find user x: …`; Podman `Error: runc: exec failed: unable to start
 * container process: …: OCI runtime attempted to invoke a command that was not found` (or `OCI
 * permission denied`) on stderr. (dockerd's exec also reports pid 0 then, but Podman's reports
 * pid 0 for every ended exec, so the words decide.)
 */
const NOT_STARTED = /OCI runtime|OCI permission denied|unable to start container process|unable to find user/;

/** The exec's exit code once it has ended (inspect may lag the stream's end briefly). */
async function exitOf(exec: Dockerode.Exec): Promise<{ exitCode: number | null }> {
  for (let i = 0; i < 50; i++) {
    const info = await exec.inspect().catch(() => undefined);
    if (!info) return { exitCode: null };
    if (!info.Running && info.ExitCode !== null) return { exitCode: info.ExitCode };
    await new Promise((r) => setTimeout(r, 20));
  }
  return { exitCode: null };
}

/**
 * The runtime's message for a process that never started, in the words runProcess uses:
 * dockerd says `OCI runtime exec failed: … exec: "x": executable file not found in $PATH` (or
 * `stat x: no such file or directory`, `permission denied`, `chdir to cwd … failed`, `unable to
 * find user …`); podman says the same on stderr with exit 127.
 */
function describeExecFailure(said: string, file: string, cwd: string): { startError: string; startErrorCode?: string } {
  const line = said.replace(/\s+/g, ' ').trim();
  if (/chdir to cwd/i.test(line)) return { startError: `cannot start ${file}: the working folder ${cwd} does not exist in the container`, startErrorCode: 'ENOENT' };
  if (/unable to find user|no matching entries in passwd/i.test(line)) return { startError: `cannot start ${file}: ${line}` };
  if (/permission denied/i.test(line)) return { startError: `permission denied: ${file} is not executable in the container (chmod +x ${file})`, startErrorCode: 'EACCES' };
  if (/not found|no such file/i.test(line) || line === '') {
    return { startError: `command not found: ${file} (not on the container's PATH, or no such file in the image or a mount)`, startErrorCode: 'ENOENT' };
  }
  return { startError: `cannot start ${file}: ${line}` };
}

/** Runs a short command inside and returns its stdout (at most 64 KiB kept), for skill-up's own probes. */
async function execSmall(container: Dockerode.Container, cmd: string[], pathInside: string): Promise<string> {
  const exec = await container.exec({ Cmd: cmd, Env: [`PATH=${pathInside}`], AttachStdout: true, AttachStderr: true, Tty: false });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  const sink = new PassThrough();
  const parts: Buffer[] = [];
  let n = 0;
  out.on('data', (d: Buffer) => {
    if (n < 65536) parts.push(d);
    n += d.length;
  });
  sink.resume();
  container.modem.demuxStream(stream, out, sink);
  await new Promise<void>((res) => {
    stream.once('end', res);
    stream.once('close', res);
    stream.once('error', () => res());
  });
  return Buffer.concat(parts).toString('utf8');
}

/** Force-removes the containers `list` names, several at once; how many were removed (a 404 counts: gone is gone). */
async function removeAll(docker: Dockerode, ids: string[]): Promise<number> {
  const results = await Promise.all(
    ids.map((id) =>
      docker
        .getContainer(id)
        .remove({ force: true, v: true })
        .then(
          () => true,
          (e: unknown) => (e as { statusCode?: number }).statusCode === 404,
        ),
    ),
  );
  return results.filter(Boolean).length;
}

/** Removes every container labelled `skill-up.run=<runId>` (on interrupt, and at a run's end); how many. Never throws for one container; throws the daemon's error when it cannot list. */
export async function removeRunContainers(docker: Dockerode, runId: string): Promise<number> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABELS.run}=${runId}`] } });
  return removeAll(
    docker,
    list.map((c) => c.Id),
  );
}

/** True while process `pid` exists on this machine (EPERM: it exists, as another user's). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the containers of earlier skill-up processes that were killed: those labelled
 * `skill-up.host` = os.hostname() whose `skill-up.pid` is not this process and no longer alive
 * here (a reused pid keeps its containers: the safe side). Containers of live skill-up processes,
 * and of other hosts sharing the daemon, are left alone. Returns how many were removed.
 *
 * @throws the daemon's error when it cannot list containers.
 */
export async function removeOrphanContainers(docker: Dockerode): Promise<number> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABELS.host}=${os.hostname()}`] } });
  const dead = list.filter((c) => {
    const pid = Number(c.Labels?.[LABELS.pid]);
    return Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !pidAlive(pid);
  });
  return removeAll(
    docker,
    dead.map((c) => c.Id),
  );
}
