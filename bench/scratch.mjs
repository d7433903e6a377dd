// Where the benchmark's files go, and when they are removed.
//
// The file system matters more than anything skill-up does: on this project's machines /tmp is
// an ext4 without a journal, whose inode allocator skips (one buffer lookup each) every inode
// of the block group freed in the last 1–6 minutes. After a test suite or another benchmark has
// deleted tens of thousands of files there, creating a file in /tmp costs up to 20 times more
// (measured: 3,000 small files in 1.18 s in /tmp, 0.07 s in /root or /var/tmp at the same
// moment), which would measure what other programs did before rather than skill-up. So:
//
// - scratchRoot(): everything the benchmark creates, and TMPDIR for every process it starts (the
//   runs' workspaces included), lives in BENCH_TMPDIR, by default ~/.cache/skill-up-bench
//   (BENCH_TMPDIR=/tmp measures in /tmp);
// - removeAtExit(): its folders are removed when the benchmark exits, not after each section,
//   so that one section's clean-up is not charged to the next. What skill-up deletes while it
//   runs (each job's workspace) is still deleted as it runs, and counted.
import { mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The benchmark's scratch folder (created): BENCH_TMPDIR, else ~/.cache/skill-up-bench. */
export function scratchRoot() {
  const root = process.env.BENCH_TMPDIR || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'skill-up-bench');
  mkdirSync(root, { recursive: true });
  return root;
}

const later = [];
let hooked = false;

/** Removes `path` (recursively) when the benchmark process exits. */
export function removeAtExit(path) {
  later.push(path);
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const p of later) rmSync(p, { recursive: true, force: true });
  });
}
