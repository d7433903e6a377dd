/** Process and file helpers the tests share (Linux: they read /proc). */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** True while process `pid` runs; a zombie waiting for its parent counts as gone. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux'; // gone between the two calls, or no /proc to ask
  }
}

/** Every regular file under `dir`, recursively (absolute paths); none when `dir` is missing. */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/** Children of `ppid` whose command line contains `marker` (Linux /proc). */
export function childrenWith(ppid: number, marker: string): number[] {
  const found: number[] = [];
  for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === ppid && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(marker)) found.push(Number(p));
    } catch {
      /* gone */
    }
  }
  return found;
}

/** Sends SIGKILL to each pid, ignoring those already gone (a test's leftovers, in afterAll). */
export function killAll(pids: readonly number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}
