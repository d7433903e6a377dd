/**
 * Small file-system work done synchronously, a batch at a time. A job's workspace is a few
 * folders and files in the temp folder: creating, listing and removing them takes 20–100 µs
 * per call synchronously, but 2–3 × that in CPU through fs/promises (a promise, a libuv thread
 * woken and joined; measured on 2 cores: 1.2 ms of CPU for 12 calls, 0.55 ms synchronously),
 * and that CPU is what limits a run of many short jobs (issue 13). So the tree walks of
 * workspaces call the synchronous API and give the event loop back after every
 * {@link FS_BATCH} calls, which bounds how long a big tree (an agent's node_modules) holds it.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** File-system calls between two turns of the event loop. */
export const FS_BATCH = 128;

/** Counts file-system calls and yields to the event loop after every {@link FS_BATCH} of them. */
export class FsBatch {
  private calls = 0;

  /** Records `n` calls made (default 1); resolves at once, or after one event-loop turn at a batch's end. */
  async tick(n = 1): Promise<void> {
    this.calls += n;
    if (this.calls >= FS_BATCH) {
      this.calls = 0;
      await nextTurn();
    }
  }
}
