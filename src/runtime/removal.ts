/**
 * Removing job workspaces: {@link removeTree}, a recursive delete with the fewest system calls,
 * and {@link RemovalQueue}, which deletes finished jobs' workspaces in the background, a few at
 * a time, once each job's result is safe in the journal (src/run/run.ts), so no job waits for
 * the removal of another's workspace and no removal competes with the running jobs for more
 * than `concurrency` of libuv's threads.
 */
import * as fsModule from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { removeInHelper } from '../engine/spawner.js';
import { FS_BATCH } from '../util/fs-batch.js';
import { removeWalk } from './remove-walk.js';

/**
 * Deletes `dir` and everything under it, never following a link (src/runtime/remove-walk.ts
 * removeWalk has the rules). When skill-up's spawn helper is running and ready (a large run,
 * src/engine/spawner.ts), the helper does the walk, so its system calls and their CPU are off
 * skill-up's main thread (measured on 200 no-op jobs: the removals were about a sixth of the
 * main thread's CPU); otherwise, or when the helper goes away meanwhile, skill-up does it here.
 *
 * @throws the file-system error when the tree cannot be removed (EACCES on a folder that
 *   cannot be made writable, EBUSY, …), with its message and code, wherever it was removed.
 */
export async function removeTree(dir: string): Promise<void> {
  return removeTrees([dir]);
}

/** {@link removeTree} of each of `dirs`, in order, as one request to the spawn helper; the first failure throws. */
export async function removeTrees(dirs: string[]): Promise<void> {
  const remote = await removeInHelper(dirs);
  if (remote === undefined) {
    for (const dir of dirs) await removeWalk(fsModule, (a, b) => path.join(a, b), dir, FS_BATCH, () => nextTurn());
    return;
  }
  if (remote.ok) return;
  throw Object.assign(new Error(remote.message), remote.code ? { code: remote.code } : {});
}

/** A removal that failed: the folder and the file-system error's message. */
export interface RemovalFailure {
  path: string;
  message: string;
}

/** Options of {@link RemovalQueue}. */
export interface RemovalQueueOptions {
  /** Removals at once (default 2): each takes one libuv thread at a time. */
  concurrency?: number;
  /** Told about every removal that failed (the run prints a warning); never silent. */
  onError?: (failure: RemovalFailure) => void;
}

/** Something to remove: a workspace (`remove()` deletes its folders) and the folder named in a failure. */
export interface Removable {
  /** The folder named when the removal fails. */
  dir: string;
  remove(): Promise<void>;
}

/**
 * Background removal of finished jobs' workspaces. A job's workspaces are {@link hold}-ed while
 * it runs (every attempt's), and {@link release}-d once its result is journaled: only then are
 * they queued, so a workspace never disappears before the result that was measured in it is on
 * disk. At most `concurrency` removals run at once; the rest wait in order. {@link drain}
 * queues whatever is still held and resolves when the queue is empty: the run calls it before
 * it returns, interrupted or not, so a finished run leaves no workspace half removed behind
 * (only a second Ctrl-C, which exits at once, or SIGKILL can; workspaces are uniquely named
 * folders in the temp folder that no later run reads).
 */
export class RemovalQueue {
  private readonly held = new Map<string, Removable[]>();
  private readonly waiting: Removable[] = [];
  private running = 0;
  private idle: (() => void)[] = [];
  private readonly concurrency: number;
  /** Every removal that failed so far. */
  readonly failures: RemovalFailure[] = [];

  constructor(private readonly opts: RemovalQueueOptions = {}) {
    this.concurrency = Math.max(1, opts.concurrency ?? 2);
  }

  /** Keeps `item` until {@link release} of `key` (a job id). */
  hold(key: string, item: Removable): void {
    const list = this.held.get(key);
    if (list) list.push(item);
    else this.held.set(key, [item]);
  }

  /** Queues the items held under `key` for removal (the job's result is safe now). */
  release(key: string): void {
    const list = this.held.get(key);
    if (!list) return;
    this.held.delete(key);
    this.waiting.push(...list);
    this.pump();
  }

  /** Removals queued or running now. */
  get pending(): number {
    return this.waiting.length + this.running;
  }

  /** Queues everything still held, then resolves once every removal has ended (failures are in {@link failures}). */
  drain(): Promise<void> {
    for (const key of [...this.held.keys()]) this.release(key);
    if (this.pending === 0) return Promise.resolve();
    return new Promise((done) => this.idle.push(done));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.waiting.length) {
      const item = this.waiting.shift()!;
      this.running++;
      item
        .remove()
        .catch((e: Error) => {
          const failure = { path: item.dir, message: e?.message ?? String(e) };
          this.failures.push(failure);
          try {
            this.opts.onError?.(failure);
          } catch {
            /* a reporter that throws must not stop the queue */
          }
        })
        .finally(() => {
          this.running--;
          this.pump();
          if (this.pending === 0) for (const done of this.idle.splice(0)) done();
        });
    }
  }
}
