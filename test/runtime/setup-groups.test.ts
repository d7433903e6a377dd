/**
 * Setup steps run in process groups of their own: cancelling kills the whole group, and what
 * a step leaves in the background keeps running for the agent until the job ends
 * (Workspace.stopBackground / remove).
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { createWorkspace, WorkspaceError } from '../../src/runtime/workspace.js';
import { alive } from '../support/proc.js';

async function until(f: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!f() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  return f();
}

const make = async (steps: string[], signal?: AbortSignal) =>
  createWorkspace({ root: await mkdtemp(path.join(os.tmpdir(), 'su-setup-')), jobId: 'j', context: { files: {} }, env: {}, setupSteps: steps.map((run) => ({ run })), signal });

describe.runIf(process.platform === 'linux')('setup steps and their process groups', () => {
  test('a background service started by a step runs until stopBackground, then dies', async () => {
    const ws = await make(['(sleep 300 > /dev/null 2>&1 & echo $! > bg.pid)']);
    const pid = Number(await readFile(path.join(ws.dir, 'bg.pid'), 'utf8'));
    expect(alive(pid)).toBe(true);
    ws.stopBackground();
    expect(await until(() => !alive(pid))).toBe(true);
    await ws.remove();
  });

  test('remove() stops background services too', async () => {
    const ws = await make(['sleep 300 > /dev/null 2>&1 & echo $! > bg.pid']);
    const pid = Number(await readFile(path.join(ws.dir, 'bg.pid'), 'utf8'));
    await ws.remove();
    expect(await until(() => !alive(pid))).toBe(true);
  });

  test('cancelling kills the whole group of the running step, children included', async () => {
    const ac = new AbortController();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'su-setup-pid-'));
    const p = make([`sleep 300 & echo $! > ${dir}/bg.pid; sleep 300`], ac.signal);
    expect(await until(() => {
      try {
        return readFileSync(path.join(dir, 'bg.pid'), 'utf8').trim() !== '';
      } catch {
        return false;
      }
    }, 10_000)).toBe(true);
    const pid = Number(readFileSync(path.join(dir, 'bg.pid'), 'utf8'));
    ac.abort();
    const e = await p.then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(WorkspaceError);
    expect((e as WorkspaceError).stage).toBe('cancelled');
    expect(await until(() => !alive(pid))).toBe(true);
  });
});
