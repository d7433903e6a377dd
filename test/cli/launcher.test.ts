import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, writeSkill } from './helpers.js';

/** Threads of a running process (Linux /proc). */
const threads = (pid: number) => readdirSync(`/proc/${pid}/task`).length;

/**
 * Starts the CLI (`entry`) on a suite whose engine sleeps, samples its thread count while the job
 * runs, and returns the largest count seen.
 */
async function peakThreads(entry: string, env: Record<string, string | undefined>): Promise<number> {
  const skill = writeSkill({
    'evals/eval.yaml': 'schema_version: v1alpha1\nengine:\n  name: sleeper\n  custom:\n    transport: local\n    response_format: text\n    local: { command: sleep, args: ["1.5"] }\ncases:\n  files: [evals/cases/*.yaml]\n',
    'evals/cases/a.yaml': 'input: { prompt: wait }\nexpect: { exit_code: 0 }\n',
  });
  const child = spawn(process.execPath, [entry, 'run', skill, '--output-dir', join(skill, '..', 'out')], { env: { ...env, CI: '1' }, stdio: 'ignore' });
  let peak = 0;
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, threads(child.pid!));
    } catch {
      /* exited */
    }
  }, 50);
  const code = await new Promise<number | null>((res) => child.on('close', res));
  clearInterval(timer);
  expect(code).toBe(0);
  return peak;
}

describe.runIf(process.platform === 'linux')('the skill-up executable (src/cli/skill-up.cts)', () => {
  const env = { ...process.env };
  delete env.UV_THREADPOOL_SIZE;

  it('runs with 16 libuv pool threads; an ES module entry setting the variable itself would get the default 4', async () => {
    const viaLauncher = await peakThreads(BIN, env);
    const esmEntry = await peakThreads(BIN.replace(/skill-up\.cjs$/, 'bin.js'), env);
    // 12 more pool threads, whatever else Node runs (V8 platform workers, the inspector …).
    expect(viaLauncher - esmEntry).toBeGreaterThanOrEqual(12);
  }, 30_000);

  it("keeps the user's own UV_THREADPOOL_SIZE", async () => {
    const four = await peakThreads(BIN, { ...env, UV_THREADPOOL_SIZE: '4' });
    const esmEntry = await peakThreads(BIN.replace(/skill-up\.cjs$/, 'bin.js'), env);
    expect(four).toBe(esmEntry);
  }, 30_000);
});
