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
