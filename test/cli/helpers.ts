import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the built CLI, the executable package.json names (npm test builds before vitest runs). */
export const BIN = fileURLToPath(new URL('../../dist/src/cli/skill-up.cjs', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI; `onStderr` sees stderr as it arrives (for interrupt tests). */
export function runCli(args: string[], opts: { cwd?: string; env?: Record<string, string>; bin?: string; onStderr?: (text: string, child: ReturnType<typeof spawn>) => void } = {}): Promise<CliRun> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [opts.bin ?? BIN, ...args], { cwd: opts.cwd ?? process.cwd(), env: { ...process.env, CI: '1', ...opts.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => {
      stderr += d;
      opts.onStderr?.(stderr, child);
    });
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

/** Writes a skill folder from a map of relative path → content (`.sh` files made executable). */
export function writeSkill(files: Record<string, string>, name = 'demo-skill'): string {
  const root = mkdtempSync(join(tmpdir(), 'su-cli-'));
  const dir = join(root, name);
  const all = { 'SKILL.md': `---\nname: ${name}\ndescription: A skill used by skill-up's own tests.\n---\n\n# Demo\n`, ...files };
  for (const [rel, content] of Object.entries(all)) {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
    if (rel.endsWith('.sh')) chmodSync(p, 0o755);
  }
  return dir;
}
