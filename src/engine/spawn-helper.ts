/**
 * The program of the spawn helper (src/engine/spawner.ts): a small, long-lived Node process that
 * starts every engine process for skill-up, so that the fork() of each spawn copies the page
 * tables of a ~7 MB process instead of skill-up's 100+ MB heap.
 *
 * It is one self-contained function, run with `node -e "(<its source>)(require(…), …)"` (with
 * {@link captureStream}, which proc.ts's in-process path uses too, passed in as source): the
 * same text from dist/ (the CLI) and under vitest (src/*.ts), no file to locate or ship, only
 * Node built-ins loaded. It must therefore use nothing from this module's scope: only its
 * parameters and Node's globals. Types are imported for checking only (erased).
 *
 * What it does per request is what src/engine/proc.ts `runProcess` did in process (and still does
 * when the helper cannot be started): open both output files (O_NOFOLLOW) before the process
 * starts, spawn it in its own process group with the complete environment given, feed stdin,
 * drain stdout/stderr into the files capped at `cap` bytes each (a marker line ends a cut stderr),
 * kill the group on a timeout or a cancel (SIGTERM, then SIGKILL after the grace), sweep the group
 * with SIGKILL after the exit and wait (bounded) for it to be gone, let go of pipes an escaped
 * child holds after `pipeDrainMs`. When skill-up goes away (the IPC channel closes: normal exit,
 * crash, SIGKILL), it SIGKILLs every group it started and exits.
 */
import type * as ChildProcessModule from 'node:child_process';
import type * as FsModule from 'node:fs';
import type { Readable } from 'node:stream';
import type { removeWalk } from '../runtime/remove-walk.js';
import type * as StringDecoderModule from 'node:string_decoder';

/** After a process exits, how long its pipes may stay open (held by an escaped child), ms. */
export const PIPE_DRAIN_MS = 2000;

/** After the exit and the SIGKILL sweep, how long to wait for the group's last member to be gone, ms. */
export const GROUP_EXIT_WAIT_MS = 1000;

/** skill-up → helper: start a process (see src/engine/proc.ts ProcOptions for the fields). */
export interface HelperRunRequest {
  t: 'run';
  /** Call id, unique within one helper. */
  id: number;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  input?: string;
  stdoutFile: string;
  stderrFile: string;
  /** Most bytes of each stream kept on disk. */
  cap: number;
  /** ms before the group is killed; null = no limit (JSON has no Infinity). */
  timeoutMs: number | null;
  /** ms between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Send stderr text to skill-up (only when an observer listens for lines). */
  lines: boolean;
}

/** skill-up → helper: cancel call `id` (kills its group; the result says `cancelled`). */
export interface HelperCancelRequest {
  t: 'cancel';
  id: number;
}

/** How a call ended, as the helper reports it (turned into a ProcResult by src/engine/proc.ts). */
export interface HelperResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The spawn failed: the system error's message and code. */
  start?: { message: string; code?: string };
  /** An output file could not be opened or written: which, and the system error. */
  output?: { file: string; message: string; code?: string };
  /** ms from the request's start to the exit. */
  durationMs: number;
  stdoutBytes: number;
  stderrBytes: number;
}

/** skill-up → helper: remove the folder trees `dirs`, in order (src/runtime/remove-walk.ts), answered with one `removed`; the first failure ends it. */
export interface HelperRemoveRequest {
  t: 'remove';
  id: number;
  dirs: string[];
}

/** How a removal ended: done, or the file-system error that stopped it. */
export type HelperRemoved = { ok: true } | { ok: false; message: string; code?: string };

/** helper → skill-up. `spawned` comes once the pipes are set up (pid undefined when the start failed at once). */
export type HelperMessage =
  | { t: 'ready'; pid: number }
  | { t: 'removed'; id: number; result: HelperRemoved }
  | { t: 'spawned'; id: number; pid?: number }
  | { t: 'stderr'; id: number; text: string }
  | { t: 'done'; id: number; result: HelperResult }
  | { t: 'fatal'; message: string };

/** What {@link captureStream} writes to: a file's WriteStream, or the helper's {@link fileSink}. */
export interface CaptureSink {
  on(event: 'error', listener: (e: Error) => void): unknown;
  once(event: 'error' | 'drain', listener: (e?: Error) => void): unknown;
  /** False when the caller should wait for 'drain' before writing more. */
  write(chunk: Buffer | string): boolean;
  /** Flushes and closes; `done` runs once that is over (also after a failure). */
  end(done: () => void): unknown;
  destroy(): unknown;
}

/**
 * A {@link CaptureSink} writing to the open file `fd` with direct system calls: what the spawn
 * helper captures into (an engine's output is written where the helper reads it, one pipe chunk
 * of at most 64 KiB at a time, into the page cache). A WriteStream instead costs a thread-pool
 * hand-off per write and for the close, and its stream machinery, on every process (issue 13).
 * Never 'drain's: a write never waits. The first failure (ENOSPC, EIO) is the 'error' (once);
 * writes after it are dropped. Self-contained (the helper gets its source text).
 */
export function fileSink(fs: Pick<typeof FsModule, 'writeSync' | 'closeSync'>, fd: number): CaptureSink {
  const onError: ((e: Error) => void)[] = [];
  let failure: Error | undefined;
  let closed = false;
  const fail = (e: unknown): void => {
    if (failure) return;
    failure = e instanceof Error ? e : new Error(String(e));
    for (const f of onError.splice(0)) f(failure);
  };
  const close = (): void => {
    if (closed) return;
    closed = true;
    try {
      fs.closeSync(fd);
    } catch (e) {
      fail(e);
    }
  };
  return {
    on(_event, listener) {
      onError.push(listener);
    },
    once(event, listener) {
      if (event === 'error') onError.push(listener);
    },
    write(chunk) {
      if (failure || closed) return true;
      const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      try {
        for (let off = 0; off < data.length; ) {
          const n = fs.writeSync(fd, data, off, data.length - off);
          if (n <= 0) throw new Error(`write to the output file made no progress (${n})`);
          off += n;
        }
      } catch (e) {
        fail(e);
      }
      return true;
    },
    end(done) {
      close();
      done();
    },
    destroy: close,
  };
}

/**
 * Writes a stream to a file up to a cap, then keeps reading (so the writer never blocks) and
 * counts. While the file is written, a full write buffer pauses the stream until it drains, so
 * memory holds at most one buffer's worth (the writer waits on its pipe instead). With
 * `marker`, a cut file ends with a line saying so. `failed` resolves with the first error of
 * the file (EMFILE, ENOSPC, EACCES: never an unhandled 'error' event; the rest is drained and
 * counted); `done` with the bytes the stream carried once it closed and the file is flushed.
 *
 * Self-contained (it uses only its parameters): the spawn helper gets its source text
 * (src/engine/spawner.ts `program`), and src/engine/proc.ts's in-process path calls it.
 */
export function captureStream(stream: Readable, out: CaptureSink, cap: number, marker = false): { done: Promise<number>; stop(): void; failed: Promise<Error> } {
  // RAW: parsers and judges read the answer as the engine gave it; the file lies in the job's
  // outputs/ folder and is redacted in place when the job ends, after grading (src/run/job.ts).
  let total = 0;
  let marked = false;
  let failure: Error | undefined;
  const failed = new Promise<Error>((res) =>
    out.on('error', (e: Error) => {
      if (failure) return;
      failure = e;
      stream.resume();
      res(e);
    }),
  );
  stream.on('data', (chunk: Buffer) => {
    const before = total;
    total += chunk.length;
    if (failure || (before >= cap && (marked || !marker))) return;
    const ok = before < cap ? out.write(total <= cap ? chunk : chunk.subarray(0, cap - before)) : true;
    // The marker follows the last byte kept, also when a chunk ended exactly at the cap.
    if (total > cap && marker && !marked) {
      marked = true;
      out.write(`\n[skill-up: cut here at ${cap} bytes; the process wrote more, which was drained and counted]\n`);
    }
    if (!ok && total < cap && !failure) {
      stream.pause();
      out.once('drain', () => stream.resume());
    }
  });
  const ended = new Promise<void>((res) => {
    stream.once('close', res);
    stream.once('error', () => res());
  });
  const done = ended.then(
    () =>
      new Promise<number>((res) => {
        out.end(() => res(total));
        out.once('error', () => res(total));
      }),
  );
  return { done, stop: () => stream.destroy(), failed };
}

/**
 * The helper's main function. Runs in the helper process only; its source text is what
 * src/engine/spawner.ts passes to `node -e`. The parameters are Node modules (`require`d by the
 * `-e` wrapper) and constants.
 *
 * @param pipeDrainMs how long pipes may stay open after the exit (held by an escaped child), ms.
 * @param waitGroupMs how long to wait for a SIGKILLed group to be gone, ms.
 */
export function spawnHelperMain(
  cp: typeof ChildProcessModule,
  fs: typeof FsModule,
  sd: typeof StringDecoderModule,
  pipeDrainMs: number,
  waitGroupMs: number,
  captureTo: typeof captureStream,
  join: (a: string, b: string) => string,
  removeTree: typeof removeWalk,
  sinkFor: typeof fileSink,
): void {
  // `ps` shows this instead of the whole program text.
  process.title = 'skill-up spawn helper';
  /** Process groups started and not yet swept: killed if skill-up goes away. */
  const live = new Set<number>();
  /** Cancel functions of the calls running now. */
  const cancels = new Map<number, () => void>();
  const c = fs.constants;
  // O_NONBLOCK: a FIFO an agent left in place of an output file (a previous turn's `outputs/`)
  // fails to open (ENXIO) or is refused below, instead of blocking this helper and every job.
  const WRITE_FLAGS = c.O_WRONLY | c.O_CREAT | c.O_TRUNC | (c.O_NOFOLLOW ?? 0) | (c.O_NONBLOCK ?? 0);

  const send = (m: HelperMessage): void => {
    if (process.connected) process.send!(m);
  };
  const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
    if (!pid) return;
    try {
      process.kill(-pid, signal);
    } catch {
      /* ESRCH: already gone */
    }
  };
  const killAll = (): void => {
    for (const g of live) killGroup(g, 'SIGKILL');
  };

  // skill-up is gone (exit, crash, SIGKILL: the kernel closes the channel): its engines go too.
  process.on('disconnect', () => {
    killAll();
    process.exit(0);
  });
  // A bug of the helper must not leave groups behind; skill-up fails the calls in flight.
  process.on('uncaughtException', (e: Error) => {
    killAll();
    try {
      send({ t: 'fatal', message: e.stack ?? e.message });
    } finally {
      setTimeout(() => process.exit(70), 200);
    }
  });
  process.on('message', (m: HelperRunRequest | HelperCancelRequest | HelperRemoveRequest) => {
    if (m.t === 'run') void run(m);
    else if (m.t === 'cancel') cancels.get(m.id)?.();
    else if (m.t === 'remove') void remove(m);
  });

  // One removal at a time, in order: a few at once would only compete for the same disk.
  let removing: Promise<void> = Promise.resolve();
  const remove = (q: HelperRemoveRequest): Promise<void> =>
    (removing = removing.then(() =>
      q.dirs.reduce<Promise<void>>((prev, dir) => prev.then(() => removeTree(fs, join, dir, 128, () => new Promise<void>((r) => setImmediate(r)))), Promise.resolve()).then(
        () => send({ t: 'removed', id: q.id, result: { ok: true } }),
        (e: unknown) => send({ t: 'removed', id: q.id, result: { ok: false, ...errorOf(e) } }),
      ),
    ));

  /** True while some process of group `pgid` is alive (zombies do not count). */
  const groupHasLiveMembers = async (pgid: number): Promise<boolean> => {
    try {
      process.kill(-pgid, 0);
    } catch {
      return false;
    }
    if (process.platform !== 'linux') return true;
    const entries = await fs.promises.readdir('/proc').catch(() => [] as string[]);
    for (const entry of entries) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = await fs.promises.readFile(`/proc/${entry}/stat`, 'utf8');
        // Fields after the parenthesised command: state, ppid, pgrp, …
        const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (Number(pgrp) === pgid && state !== 'Z' && state !== 'X') return true;
      } catch {
        /* the process ended meanwhile */
      }
    }
    return false;
  };
  const waitForGroupExit = async (pgid: number, maxMs: number): Promise<void> => {
    const end = Date.now() + maxMs;
    while (Date.now() < end && (await groupHasLiveMembers(pgid))) await new Promise((r) => setTimeout(r, 20));
  };

  const errorOf = (e: unknown): { message: string; code?: string } => {
    const err = e as NodeJS.ErrnoException;
    return { message: String(err?.message ?? e), ...(typeof err?.code === 'string' ? { code: err.code } : {}) };
  };

  const run = async (q: HelperRunRequest): Promise<void> => {
    const started = performance.now();
    const zero = { exitCode: null, signal: null, timedOut: false, cancelled: false, stdoutBytes: 0, stderrBytes: 0 };
    const finish = (result: HelperResult): void => {
      cancels.delete(q.id);
      send({ t: 'done', id: q.id, result });
    };
    // Both files are opened before the process starts (an agent cannot swap `outputs/` for a
    // link first), never through a link (O_NOFOLLOW), and must be regular files (writes to them
    // never block the helper). One that cannot be opened: no process.
    const fds: number[] = [];
    for (const f of [q.stdoutFile, q.stderrFile]) {
      try {
        const fd = fs.openSync(f, WRITE_FLAGS);
        fds.push(fd);
        if (!fs.fstatSync(fd).isFile()) throw Object.assign(new Error(`${f} is not a regular file`), { code: 'EINVAL' });
      } catch (e) {
        for (const fd of fds) fs.closeSync(fd);
        finish({ ...zero, output: { file: f, ...errorOf(e) }, durationMs: performance.now() - started });
        return;
      }
    }
    const outFile = sinkFor(fs, fds[0]!);
    const errFile = sinkFor(fs, fds[1]!);
    const closeFiles = () => {
      outFile.destroy();
      errFile.destroy();
    };
    let child: ChildProcessModule.ChildProcess;
    try {
      child = cp.spawn(q.file, q.args, { cwd: q.cwd, env: q.env, detached: true, stdio: [q.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    } catch (e) {
      closeFiles();
      finish({ ...zero, start: errorOf(e), durationMs: performance.now() - started });
      return;
    }
    const startFailed = new Promise<Error>((res) => child.once('error', res));
    if (!child.stdout || !child.stderr) {
      // Out of descriptors (EMFILE, ENFILE): Node gives up before setting up the pipes.
      const e = await startFailed;
      closeFiles();
      finish({ ...zero, start: errorOf(e), durationMs: performance.now() - started });
      return;
    }
    const pid = child.pid;
    if (pid) live.add(pid);
    send({ t: 'spawned', id: q.id, ...(pid ? { pid } : {}) });
    if (q.lines) {
      // Decoded here as src/engine/proc.ts does in process (a UTF-8 sequence split across chunks stays whole).
      const decoder = new sd.StringDecoder('utf8');
      child.stderr.on('data', (chunk: Buffer) => {
        const text = decoder.write(chunk);
        if (text) send({ t: 'stderr', id: q.id, text });
      });
    }
    const out = captureTo(child.stdout, outFile, q.cap, false);
    const err = captureTo(child.stderr, errFile, q.cap, true);
    if (q.input !== undefined) {
      child.stdin!.on('error', () => undefined); // the engine may exit without reading it
      child.stdin!.end(q.input);
    }
    let timedOut = false;
    let cancelled = false;
    let hardKill: NodeJS.Timeout | undefined;
    const terminate = () => {
      killGroup(pid, 'SIGTERM');
      hardKill ??= setTimeout(() => killGroup(pid, 'SIGKILL'), q.graceMs);
    };
    const timer =
      q.timeoutMs !== null
        ? setTimeout(() => {
            timedOut = true;
            terminate();
          }, Math.max(0, q.timeoutMs))
        : undefined;
    let over = false;
    cancels.set(q.id, () => {
      if (over) return;
      cancelled = true;
      terminate();
    });
    let outputError: { error: Error; file: string } | undefined;
    for (const [capture, f] of [[out, q.stdoutFile], [err, q.stderrFile]] as const) {
      void capture.failed.then((error) => {
        outputError ??= { error, file: f };
        if (!over) terminate(); // no point running an engine whose output is lost
      });
    }
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('exit', (code, signal) => res({ code, signal })));
    const ended = await Promise.race([exited, startFailed]);
    over = true;
    clearTimeout(timer);
    clearTimeout(hardKill);
    const durationMs = performance.now() - started;
    killGroup(pid, 'SIGKILL');
    // SIGKILL is delivered asynchronously: wait (bounded) until no member still runs.
    if (pid) await waitForGroupExit(pid, waitGroupMs);
    if (pid) live.delete(pid);
    // A child that escaped the group may still hold the pipes: give them a moment, then let go.
    const drainTimer = setTimeout(() => {
      out.stop();
      err.stop();
    }, pipeDrainMs);
    const [stdoutBytes, stderrBytes] = await Promise.all([out.done, err.done]);
    clearTimeout(drainTimer);
    const counts = { durationMs, stdoutBytes, stderrBytes };
    const output = outputError ? { output: { file: outputError.file, ...errorOf(outputError.error) } } : {};
    if (ended instanceof Error) finish({ ...zero, timedOut, cancelled, start: errorOf(ended), ...counts, ...output });
    else finish({ exitCode: ended.code, signal: ended.signal, timedOut, cancelled, ...counts, ...output });
  };

  send({ t: 'ready', pid: process.pid });
}
