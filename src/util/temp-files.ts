/**
 * Temporary files of atomic writes (a report's, a job file's) that have not been renamed into
 * place yet. A process that exits meanwhile (a second Ctrl-C exits at once, with the reports
 * half written) removes them in its `exit` handler, so no `*.tmp-<pid>-*` file is left beside
 * the reports. A write that ends, well or not, takes its file off the list itself.
 */
import { unlinkSync } from 'node:fs';

const pending = new Set<string>();
let hooked = false;

/**
 * A fresh temporary name beside `file` (`<file>.tmp-<pid>-<random>`), listed until
 * {@link tempFileDone}: its writer renames or removes it; removed at exit if still listed.
 */
export function tempFileFor(file: string): string {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  tempFileStarted(tmp);
  return tmp;
}

/** `file` is being written and will be renamed or removed by its writer; removed at exit if still listed. */
export function tempFileStarted(file: string): void {
  pending.add(file);
  if (hooked) return;
  hooked = true;
  process.once('exit', () => {
    for (const f of pending) {
      try {
        unlinkSync(f);
      } catch {
        /* already renamed or never created */
      }
    }
  });
}

/** `file` was renamed into place or removed by its writer. */
export function tempFileDone(file: string): void {
  pending.delete(file);
}
