/**
 * Removing job workspaces: {@link removeTree}, a recursive delete with the fewest system calls,
 * and {@link RemovalQueue}, which deletes finished jobs' workspaces in the background, a few at
 * a time, once each job's result is safe in the journal (src/run/run.ts), so no job waits for
 * the removal of another's workspace and no removal competes with the running jobs for more
 * than `concurrency` of libuv's threads.
 */
import { chmodSync, lstatSync, readdirSync, rmdirSync, unlinkSync, type Dirent } from 'node:fs';
import { rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import { FsBatch } from '../util/fs-batch.js';

/**
 * Deletes `dir` and everything under it; a missing `dir` is nothing to do, a file or link at
 * `dir` is unlinked (a link is never followed: an agent may have put a link to a folder outside
 * in place of its workspace, its home or a folder in them). One `lstat` and one `readdir` (with
 * file types) per folder, one `unlink` per file or link, one `rmdir` per folder: no `lstat` per
 * file and no failed
 * `rmdir` first, as Node 20's `fs.rm` makes (measured with strace: 39 calls instead of 53 for a
 * workspace holding an installed 3-file skill, and its home; no `lstat` at all instead of 12).
 * A folder the agent made read-only is made writable (0700) and tried
 * again. What is left (an entry that appears meanwhile, an error this walk does not handle) is
 * handed to `fs.rm` with retries.
 *
 * @throws the file-system error when the tree cannot be removed (EACCES on a folder that
 *   cannot be made writable, EBUSY, …).
 */
export async function removeTree(dir: string): Promise<void> {
  try {
    await removeFolder(dir, new FsBatch());
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR') {
      await unlink(dir).catch((u: NodeJS.ErrnoException) => {
        if (u.code !== 'ENOENT') throw u;
      });
      return;
    }
    // Something this walk does not handle: Node's own remover, which retries (EBUSY, ENOTEMPTY).
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/**
 * Removes the folder `dir`; throws ENOTDIR when `dir` is not a folder (a link to one included),
 * which is then unlinked. Synchronous calls, a batch at a time (src/util/fs-batch.ts).
 */
async function removeFolder(dir: string, batch: FsBatch): Promise<void> {
  // readdir and chmod follow links: whatever is at `dir` now must be a real folder.
  if (!lstatSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is not a folder`), { code: 'ENOTDIR' });
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
    chmodSync(dir, 0o700);
    entries = readdirSync(dir, { withFileTypes: true });
  }
  await batch.tick(2);
  let madeWritable = false;
  for (const e of entries) {
    const child = path.join(dir, e.name);
    const once = async () => {
      if (e.isDirectory()) return removeFolder(child, batch);
      unlinkSync(child);
      await batch.tick();
    };
    try {
      await once();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      // A read-only folder refuses unlinking its entries (as a non-root user).
      if ((code === 'EACCES' || code === 'EPERM') && !madeWritable) {
        madeWritable = true;
        chmodSync(dir, 0o700);
        await once();
        continue;
      }
      throw err;
    }
  }
  rmdirSync(dir);
  await batch.tick();
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
