/**
 * skill-up's side of the spawn helper (program: src/engine/spawn-helper.ts). Linux fork()s the
 * whole parent at every spawn: from skill-up's 100–130 MB process that cost ~3.5 ms of main-thread
 * time per engine and grew with the heap. A small Node process started once (lazily, at the first
 * engine process) does every spawn instead; skill-up sends it requests over the IPC channel and
 * hears back the pid, stderr text (only when someone listens for lines) and the outcome. The
 * output never passes through skill-up: the helper writes the files itself.
 *
 * - Lifetime: the helper runs detached (no terminal signal reaches it: Ctrl-C is skill-up's to
 *   handle), in `/`, with an empty environment (no NODE_OPTIONS), and is unref'ed whenever no
 *   call is waiting, so it never keeps skill-up alive. When skill-up ends in any way, SIGKILL
 *   included, the kernel closes the channel and the helper kills every group it started.
 * - The helper dies mid-run: each call in flight rejects with {@link SpawnHelperError} (its
 *   group is killed through the pid the caller learnt, see `HelperCallEvents.lost`) and the next
 *   call starts a new helper.
 * - The helper cannot be started at all (spawn fails, or it ends before saying it is ready):
 *   {@link runInHelper} answers `undefined` and the caller spawns in process; a debug line says
 *   so (`NODE_DEBUG=skill-up`), and no new start is tried for {@link RETRY_AFTER_MS}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { debuglog } from 'node:util';
import { removeWalk } from '../runtime/remove-walk.js';
import { captureStream, fileSink, GROUP_EXIT_WAIT_MS, PIPE_DRAIN_MS, spawnHelperMain, type HelperMessage, type HelperRemoved, type HelperResult, type HelperRunRequest } from './spawn-helper.js';

/** `NODE_DEBUG=skill-up` prints these lines on stderr (`SKILL-UP <pid>: …`). */
const debug = debuglog('skill-up');

/** After a failed start, engines are spawned in process for this long before a start is tried again, ms. */
const RETRY_AFTER_MS = 5000;

/** The helper ended while a call was running: skill-up's failure (an infrastructure error), not the engine's. */
export class SpawnHelperError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SpawnHelperError';
  }
}

/** What the caller of {@link runInHelper} hears while its process runs. */
export interface HelperCallEvents {
  /** The process was started (its pipes set up); `pid` is its process group, undefined when the start failed at once. */
  spawned(pid: number | undefined): void;
  /** stderr text, decoded as UTF-8 (only when the request asked for `lines`). */
  stderr(text: string): void;
  /** The helper died with this call in flight: kill group `pid` (when known) now. */
  lost(pid: number | undefined): void;
}

interface Call {
  file: string;
  pid?: number;
  events: HelperCallEvents;
  resolve(r: HelperResult): void;
  reject(e: Error): void;
}

interface Helper {
  child: ChildProcess;
  /** True once the helper said it is ready; false when it ended (or failed to start) before. */
  ready: Promise<boolean>;
  isReady: boolean;
  alive: boolean;
  calls: Map<number, Call>;
  /** Removals sent and not yet answered: each resolves undefined if the helper ends first. */
  removals: Map<number, (r: HelperRemoved | undefined) => void>;
  /** Calls waiting for `ready` or running: the helper keeps skill-up alive only while > 0. */
  users: number;
  nextId: number;
  /** What the helper said before a crash, or the first bytes of its stderr. */
  last: string;
}

let helper: Helper | undefined;
let retryAt = 0;
let nodePath = process.execPath;

/**
 * For tests: the Node binary the helper runs on (default `process.execPath`; a path that does not
 * exist makes every start fail, as when the helper cannot be started). Stops no running helper.
 */
export function setSpawnHelperNode(path: string = process.execPath): void {
  nodePath = path;
  retryAt = 0;
}

/** Helpers started, stderr messages received, trees the helper removed and `spawned` messages received, since skill-up started (for tests and diagnostics). */
const counts = { starts: 0, stderrMessages: 0, removals: 0, spawned: 0 };

/** A copy of the counts: helpers started (spawn attempts), stderr messages received, removals the helper answered, processes it said it started. */
export function spawnHelperStats(): { starts: number; stderrMessages: number; removals: number; spawned: number } {
  return { ...counts };
}

/** The running helper's pid, if any (for tests and diagnostics). */
export function spawnHelperPid(): number | undefined {
  return helper?.alive ? helper.child.pid : undefined;
}

/** The `node -e` program: the helper's function applied to the built-ins it uses, the capture function it shares with proc.ts and the remover it shares with src/runtime/removal.ts. */
function program(): string {
  return `(${spawnHelperMain.toString()})(require('node:child_process'), require('node:fs'), require('node:string_decoder'), ${PIPE_DRAIN_MS}, ${GROUP_EXIT_WAIT_MS}, ${captureStream.toString()}, require('node:path').join, ${removeWalk.toString()}, ${fileSink.toString()})`;
}

function hold(h: Helper, delta: number): void {
  h.users += delta;
  const on = h.users > 0;
  if (on) h.child.ref();
  else h.child.unref();
  const ch = h.child.channel;
  if (ch) {
    if (on) ch.ref();
    else ch.unref();
  }
}

function start(): Helper | undefined {
  let child: ChildProcess;
  counts.starts++;
  try {
    child = spawn(nodePath, ['-e', program()], { detached: true, cwd: '/', env: {}, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  } catch (e) {
    failedStart(`could not be spawned: ${(e as Error).message}`);
    return undefined;
  }
  let readyRes!: (ok: boolean) => void;
  const h: Helper = { child, ready: new Promise<boolean>((r) => (readyRes = r)), isReady: false, alive: true, calls: new Map(), removals: new Map(), users: 0, nextId: 1, last: '' };
  const stderr = child.stderr as Socket | null; // a pipe: a net.Socket, which can be unref'ed
  stderr?.on('data', (d: Buffer) => {
    if (h.last.length < 2000) h.last += d.toString('utf8').slice(0, 2000 - h.last.length);
  });
  stderr?.unref();
  child.on('message', (m: HelperMessage) => onMessage(h, m, readyRes));
  const end = (how: string) => {
    if (!h.alive) return;
    h.alive = false;
    if (helper === h) helper = undefined;
    if (!h.isReady) {
      failedStart(how);
      readyRes(false);
      return;
    }
    debug('the spawn helper (pid %d) ended: %s', child.pid, how);
    // A removal in flight is done again by skill-up (removing what is already gone is nothing).
    for (const [id, done] of h.removals) {
      h.removals.delete(id);
      done(undefined);
    }
    for (const [id, call] of h.calls) {
      h.calls.delete(id);
      call.events.lost(call.pid);
      call.reject(
        new SpawnHelperError(
          `skill-up's spawn helper (pid ${child.pid}) ended unexpectedly (${how}) while ${call.file} was running; its process group was killed${h.last ? `: ${h.last.trim().split('\n')[0]}` : ''}`,
        ),
      );
    }
  };
  // A spawn that fails (ENOENT, EMFILE, EAGAIN) may emit 'error' and no 'close'; a failed send
  // also emits 'error': the helper is then dead or unusable, and is killed to be sure.
  child.on('error', (e: Error) => {
    if (!h.isReady) end(`could not be spawned: ${e.message}`);
    else child.kill('SIGKILL');
  });
  // 'close' comes after every message the helper sent has been read.
  child.once('close', (code, signal) => end(signal ? `killed by ${signal}` : `exited with code ${code}`));
  hold(h, 0);
  return h;
}

function failedStart(why: string): void {
  retryAt = Date.now() + RETRY_AFTER_MS;
  debug('the spawn helper %s; engines are spawned in process for %d ms', why, RETRY_AFTER_MS);
}

function onMessage(h: Helper, m: HelperMessage, readyRes: (ok: boolean) => void): void {
  switch (m.t) {
    case 'ready':
      h.isReady = true;
      debug('the spawn helper (pid %d) is ready', m.pid);
      readyRes(true);
      return;
    case 'fatal':
      h.last = m.message;
      return;
    case 'spawned': {
      counts.spawned++;
      const call = h.calls.get(m.id);
      if (!call) return;
      call.pid = m.pid;
      call.events.spawned(m.pid);
      return;
    }
    case 'stderr':
      counts.stderrMessages++;
      h.calls.get(m.id)?.events.stderr(m.text);
      return;
    case 'removed': {
      const done = h.removals.get(m.id);
      if (!done) return;
      h.removals.delete(m.id);
      counts.removals++;
      done(m.result);
      return;
    }
    case 'done': {
      const call = h.calls.get(m.id);
      if (!call) return;
      h.calls.delete(m.id);
      call.resolve(m.result);
      return;
    }
  }
}

/**
 * Starts the helper ahead of the first {@link runInHelper} call, so its start (a Node process,
 * about 40–60 ms) overlaps skill-up's own preparation instead of delaying the first engine.
 * Does nothing when a helper runs or within the retry window after a failed start; the helper
 * stays unref'ed, so an unused one never keeps skill-up alive.
 */
export function prewarmSpawnHelper(): void {
  if (helper || Date.now() < retryAt) return;
  helper = start();
}

/**
 * Runs one process through the helper, starting the helper when none runs. Resolves with the
 * helper's report once the process has ended and its pipes are drained; `undefined` when the
 * helper cannot be started, or is not ready yet and `waitForReady` is false (the caller then
 * spawns the process itself). Aborting `signal` asks
 * the helper to kill the group (the result then says `cancelled`).
 *
 * @throws SpawnHelperError when the helper dies while the process runs (`events.lost` has been
 *   called first, so the caller can kill the group).
 */
export async function runInHelper(req: Omit<HelperRunRequest, 't' | 'id'>, events: HelperCallEvents, signal?: AbortSignal, waitForReady = true): Promise<HelperResult | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (Date.now() < retryAt) return undefined;
    if (!helper) helper = start();
    const h = helper;
    if (!h) return undefined;
    if (!waitForReady && !h.isReady) return undefined;
    hold(h, 1);
    try {
      if (!(await h.ready)) return undefined;
      // It died between its start and this call (nothing of this call was sent): a new one.
      if (!h.alive) continue;
      return await call(h, req, events, signal);
    } finally {
      hold(h, -1);
    }
  }
  return undefined;
}

function call(h: Helper, req: Omit<HelperRunRequest, 't' | 'id'>, events: HelperCallEvents, signal?: AbortSignal): Promise<HelperResult> {
  const id = h.nextId++;
  const onAbort = () => {
    if (h.alive && h.calls.has(id)) h.child.send({ t: 'cancel', id }, () => undefined);
  };
  return new Promise<HelperResult>((resolve, reject) => {
    h.calls.set(id, { file: req.file, events, resolve, reject });
    const msg: HelperRunRequest = { t: 'run', id, ...req };
    h.child.send(msg, (e) => {
      if (e) h.child.kill('SIGKILL'); // the call then fails as the helper's end
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
  }).finally(() => signal?.removeEventListener('abort', onAbort));
}

/**
 * Removes the folder trees `dirs`, in order, in the spawn helper (src/runtime/remove-walk.ts, the
 * same walk skill-up runs itself; one message for a job's workspace and home), if one is running
 * and ready; never starts one. Resolves with the
 * outcome (`ok`, or the file-system error's message and code), or `undefined` when no helper
 * could do it (none ready, or it ended meanwhile): the caller then removes the tree itself.
 * The helper keeps skill-up alive only while removals are in flight.
 */
export async function removeInHelper(dirs: string[]): Promise<HelperRemoved | undefined> {
  const h = helper;
  if (!h?.alive || !h.isReady || !h.child.connected) return undefined;
  const id = h.nextId++;
  hold(h, 1);
  try {
    return await new Promise<HelperRemoved | undefined>((resolve) => {
      h.removals.set(id, resolve);
      h.child.send({ t: 'remove', id, dirs }, (e) => {
        if (!e) return;
        h.removals.delete(id);
        resolve(undefined);
      });
    });
  } finally {
    hold(h, -1);
  }
}
