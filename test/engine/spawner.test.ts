/**
 * The spawn helper's lifetime (src/engine/spawner.ts, src/engine/spawn-helper.ts): it dies with
 * skill-up and takes the engine groups with it, even on SIGKILL and without the sh reaper; a
 * helper killed mid-run turns the job in flight into an `error` and the next job gets a new
 * helper; when it cannot be started at all, engines are spawned in process and a debug line
 * says so; it never keeps skill-up alive.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/engine/proc.js';
import { setSpawnHelperNode, SpawnHelperError, spawnHelperPid, spawnHelperStats } from '../../src/engine/spawner.js';
import { BIN, writeSkill } from '../cli/helpers.js';
import { alive, childrenWith, killAll } from '../support/proc.js';

const DIST = join(import.meta.dirname, '../../dist/src/engine');
const leftovers: number[] = [];
afterAll(() => killAll(leftovers));

async function waitFor<T>(f: () => T | undefined, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}


/** Shell lines: a background child and the process itself recorded in `dir`, then a long sleep. */
const linger = (dir: string) => `sleep 300 & echo $! > "${dir}/bg"; echo $$ > "${dir}/main"; sleep 300`;
const pidsIn = (dir: string) => ['main', 'bg'].map((f) => Number(readFileSync(join(dir, f), 'utf8')));
const started = (dir: string) => (['main', 'bg'].every((f) => existsSync(join(dir, f)) && readFileSync(join(dir, f), 'utf8').trim() !== '') ? true : undefined);

/** A node script (ESM) importing the built proc.js and spawner.js as `proc` and `spawner`. */
function script(body: string): string {
  return `const proc = await import(${JSON.stringify(join(DIST, 'proc.js'))}); const spawner = await import(${JSON.stringify(join(DIST, 'spawner.js'))});\n${body}`;
}

function runScript(body: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', script(body)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const closed = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
  return { child, closed, out: () => stdout, err: () => stderr };
}

describe.runIf(process.platform === 'linux')('the spawn helper', () => {
  /**
   * A script (standing for skill-up) that starts a lingering engine through its spawn helper:
   * the script, the engine's and its background child's pids, the helper's and the sh reaper's.
   */
  async function lingeringEngine() {
    const dir = mkdtempSync(join(tmpdir(), 'su-spawner-'));
    const s = runScript(`
      void proc.runProcess('/bin/sh', ['-c', ${JSON.stringify(linger(dir))}], { cwd: '/', env: { PATH: process.env.PATH }, stdoutFile: ${JSON.stringify(join(dir, 'o'))}, stderrFile: ${JSON.stringify(join(dir, 'e'))}, timeoutMs: 300000 });
      const t = setInterval(() => { const p = spawner.spawnHelperPid(); if (p) { console.log('helper', p); clearInterval(t); } }, 10);`);
    expect(await waitFor(() => started(dir), 30_000), s.err()).toBe(true);
    const pids = pidsIn(dir);
    leftovers.push(...pids);
    const helper = Number((await waitFor(() => /helper (\d+)/.exec(s.out())?.[1], 10_000)) ?? NaN);
    const reaper = (await waitFor(() => {
      const r = childrenWith(s.child.pid!, 'groups=');
      return r.length ? r : undefined;
    }, 5000)) ?? [];
    return { s, pids, helper, reaper };
  }

  /** `[]` once every pid is gone, within `ms`; undefined if some are still alive then. */
  const survivorsOf = (pids: number[], ms = 3000) =>
    waitFor(() => {
      const left = pids.filter(alive);
      return left.length === 0 ? [] : undefined;
    }, ms);

  it('SIGKILL of skill-up (its sh reaper killed first): the helper kills the engine group, background child included, and exits', { timeout: 60_000 }, async () => {
    const { s, pids, helper, reaper } = await lingeringEngine();
    expect(childrenWith(s.child.pid!, 'skill-up spawn helper'), 'the helper is a child of skill-up').toEqual([helper]);
    // Without the reaper only the helper can kill the group.
    expect(reaper).toHaveLength(1);
    process.kill(reaper[0]!, 'SIGKILL');
    expect(await waitFor(() => (alive(reaper[0]!) ? undefined : true), 3000)).toBe(true);
    expect(pids.every(alive), 'the engine still runs after the reaper died').toBe(true);
    s.child.kill('SIGKILL');
    expect(await survivorsOf([...pids, helper]), 'engine, background child and helper gone within 3 s').toEqual([]);
  });

  it('skill-up and its helper SIGKILLed at once (`pkill -9 -f skill-up`): the sh reaper kills the engine group, background child included', { timeout: 60_000 }, async () => {
    const { s, pids, helper, reaper } = await lingeringEngine();
    expect(reaper, 'a group the helper started is told to the reaper too').toHaveLength(1);
    process.kill(helper, 'SIGKILL');
    s.child.kill('SIGKILL');
    expect(await survivorsOf([...pids, helper, reaper[0]!]), 'engine, background child, helper and reaper gone within 3 s').toEqual([]);
  });

  it('a helper killed mid-run: the call in flight rejects (its group killed), the next call starts a new helper', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-spawner-'));
    const opts = { cwd: dir, env: { PATH: process.env.PATH }, stdoutFile: join(dir, 'o'), stderrFile: join(dir, 'e'), timeoutMs: 300_000 };
    const spawnedBefore = spawnHelperStats().spawned;
    const running = runProcess('/bin/sh', ['-c', linger(dir)], opts).catch((e: unknown) => e);
    expect(await waitFor(() => started(dir), 30_000)).toBe(true);
    // The pid reaches skill-up in the helper's `spawned` message, sent once its spawn returns; on a
    // loaded machine the child can write its files first, and a helper killed before sending
    // leaves skill-up nothing to kill (seen once in CI): the kill waits for the message.
    expect(await waitFor(() => (spawnHelperStats().spawned > spawnedBefore ? true : undefined), 30_000), 'skill-up heard the pid').toBe(true);
    const pids = pidsIn(dir);
    leftovers.push(...pids);
    const old = spawnHelperPid()!;
    expect(old).toBeGreaterThan(0);
    const starts = spawnHelperStats().starts;
    process.kill(old, 'SIGKILL');
    const e = await running;
    expect(e).toBeInstanceOf(SpawnHelperError);
    expect((e as Error).message).toMatch(new RegExp(`^skill-up's spawn helper \\(pid ${old}\\) ended unexpectedly \\(killed by SIGKILL\\) while /bin/sh was running; its process group was killed`));
    expect(await waitFor(() => (pids.some(alive) ? undefined : true), 10_000), 'the group of the call in flight was killed').toBe(true);
    const next = await runProcess('/bin/sh', ['-c', 'echo $PPID'], opts);
    expect(next.exitCode).toBe(0);
    expect(spawnHelperStats().starts).toBe(starts + 1);
    expect(Number(readFileSync(join(dir, 'o'), 'utf8'))).toBe(spawnHelperPid());
    expect(spawnHelperPid()).not.toBe(old);
  });

  it('the helper cannot be started: engines are spawned in process, no new start for a while', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-spawner-'));
    const opts = { cwd: dir, env: { PATH: process.env.PATH }, stdoutFile: join(dir, 'o'), stderrFile: join(dir, 'e'), timeoutMs: 30_000 };
    const helper = spawnHelperPid();
    if (helper) {
      process.kill(helper, 'SIGKILL');
      await waitFor(() => (spawnHelperPid() === undefined ? true : undefined), 5000);
    }
    setSpawnHelperNode(join(dir, 'no-such-node'));
    try {
      const starts = spawnHelperStats().starts;
      for (let i = 0; i < 2; i++) {
        const r = await runProcess('/bin/sh', ['-c', 'echo $PPID'], opts);
        expect(r.exitCode).toBe(0);
        expect(Number(readFileSync(join(dir, 'o'), 'utf8')), 'spawned by skill-up itself').toBe(process.pid);
      }
      expect(spawnHelperStats().starts, 'one start tried, then in process').toBe(starts + 1);
    } finally {
      setSpawnHelperNode();
    }
    const r = await runProcess('/bin/sh', ['-c', 'echo $PPID'], opts);
    expect(Number(readFileSync(join(dir, 'o'), 'utf8')), 'a helper again').toBe(spawnHelperPid());
    expect(r.exitCode).toBe(0);
  });

  it('the fallback is said in a debug line (NODE_DEBUG=skill-up); the helper never keeps skill-up alive', { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-spawner-'));
    const o = JSON.stringify({ cwd: dir, env: {}, stdoutFile: join(dir, 'o'), stderrFile: join(dir, 'e'), timeoutMs: 10000 });
    const failed = runScript(`spawner.setSpawnHelperNode('/no/such/node'); const r = await proc.runProcess('/bin/echo', ['hi'], ${o}); console.log('exit', r.exitCode);`, { NODE_DEBUG: 'skill-up' });
    expect(await failed.closed).toBe(0);
    expect(failed.out()).toContain('exit 0');
    expect(failed.err()).toMatch(/SKILL-UP \d+: the spawn helper could not be spawned: .*ENOENT.*; engines are spawned in process for 5000 ms/);
    // A normal script: it ends as soon as its last call has, and its helper goes with it.
    const t0 = Date.now();
    const ok = runScript(`const r = await proc.runProcess('/bin/echo', ['hi'], ${o}); console.log('exit', r.exitCode, 'helper', spawner.spawnHelperPid());`);
    expect(await ok.closed).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const helper = Number(/helper (\d+)/.exec(ok.out())?.[1]);
    expect(helper).toBeGreaterThan(0);
    expect(await waitFor(() => (alive(helper) ? undefined : true), 3000), 'the helper exits with skill-up').toBe(true);
  });

  it('a run whose helper is killed mid-job: that job is an `error` naming the helper, the next job passes', { timeout: 90_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-spawner-'));
    const skill = writeSkill({
      'evals/agent.sh': ['#!/bin/sh', 'case "$(cat "$1")" in', `  *case-1*) echo $$ > "${dir}/main"; sleep 300 & echo $! > "${dir}/bg"; wait ;;`, 'esac', 'echo done', ''].join('\n'),
      'evals/eval.yaml': ['schema_version: v1alpha1', 'engine:', '  name: cheap', '  custom:', '    transport: local', '    response_format: text', '    local: { command: ./evals/agent.sh, args: ["${input_file}"] }', 'cases:', '  files: [evals/cases/*.yaml]', '  parallelism: 1'].join('\n'),
      'evals/cases/c1.yaml': 'input: { prompt: case-1 }\nexpect: { must_contain: [done] }\n',
      'evals/cases/c2.yaml': 'input: { prompt: case-2 }\nexpect: { must_contain: [done] }\n',
    });
    const out = join(dir, 'out');
    // A two-job run spawns in process by default (src/engine/proc.ts HELPER_MIN_PROCESSES): =1 makes it use the helper.
    const cli = spawn(process.execPath, [BIN, 'run', skill, '--output-dir', out], { env: { ...process.env, CI: '1', SKILL_UP_SPAWN_HELPER: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (d) => (stderr += d));
    const closed = new Promise<number | null>((res) => cli.on('close', res));
    expect(await waitFor(() => started(dir), 45_000), stderr).toBe(true);
    const pids = pidsIn(dir);
    leftovers.push(...pids);
    const helper = childrenWith(cli.pid!, 'skill-up spawn helper');
    expect(helper).toHaveLength(1);
    process.kill(helper[0]!, 'SIGKILL');
    expect(await closed, stderr).toBe(3);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')) as { jobs: { case_id: string; status: string; reason?: string }[] };
    const by = Object.fromEntries(doc.jobs.map((j) => [j.case_id, j]));
    expect(by.c1!.status).toBe('error');
    expect(by.c1!.reason).toMatch(/spawn helper \(pid \d+\) ended unexpectedly \(killed by SIGKILL\)/);
    expect(by.c2!.status).toBe('pass');
    expect(pids.filter(alive)).toEqual([]);
  });
});

describe.runIf(process.platform === 'linux')("who spawns a run's engines (src/engine/proc.ts prepareProcesses)", () => {
  /** Runs a suite of `cases` × `trials` jobs whose engine records its parent's pid; the CLI's pid and the parents seen. */
  async function parents(cases: number, trials: number, env: Record<string, string> = {}): Promise<{ cli: number; ppids: number[] }> {
    const dir = mkdtempSync(join(tmpdir(), 'su-spawn-mode-'));
    const files: Record<string, string> = {
      'evals/agent.sh': ['#!/bin/sh', `echo $PPID >> "${dir}/ppids"`, 'echo done', ''].join('\n'),
      'evals/eval.yaml': ['schema_version: v1alpha1', 'engine:', '  name: cheap', '  custom:', '    transport: local', '    response_format: text', '    local: { command: ./evals/agent.sh, args: [] }', 'cases:', '  files: [evals/cases/*.yaml]', '  parallelism: 4', `trials: ${trials}`].join('\n'),
    };
    for (let i = 0; i < cases; i++) files[`evals/cases/c${i}.yaml`] = `input: { prompt: case-${i} }\nexpect: { must_contain: [done] }\n`;
    const skill = writeSkill(files);
    const cli = spawn(process.execPath, [BIN, 'run', skill, '--output-dir', join(dir, 'out')], { env: { ...process.env, CI: '1', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    cli.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((res) => cli.on('close', res));
    expect(code, stderr).toBe(0);
    return { cli: cli.pid!, ppids: readFileSync(join(dir, 'ppids'), 'utf8').trim().split('\n').map(Number) };
  }

  it('a one-job run starts no helper: skill-up spawns its engine itself', { timeout: 60_000 }, async () => {
    const { cli, ppids } = await parents(1, 1);
    expect(ppids).toEqual([cli]);
  });

  it('SKILL_UP_SPAWN_HELPER=1: even a one-job run spawns through the helper', { timeout: 60_000 }, async () => {
    const { cli, ppids } = await parents(1, 1, { SKILL_UP_SPAWN_HELPER: '1' });
    expect(ppids).toHaveLength(1);
    expect(ppids[0]).not.toBe(cli);
  });

  it('a large run spawns through one helper once it is ready (the first engines may start in process meanwhile)', { timeout: 90_000 }, async () => {
    const { cli, ppids } = await parents(4, 6);
    expect(ppids).toHaveLength(24);
    const others = [...new Set(ppids.filter((p) => p !== cli))];
    expect(others, 'one helper spawned the rest').toHaveLength(1);
    expect(ppids.filter((p) => p === others[0]).length, 'most engines go through the helper').toBeGreaterThan(12);
  });
});

describe.runIf(process.platform === 'linux')('removing workspaces in the helper (src/runtime/removal.ts removeTree)', () => {
  it('a ready helper removes the tree with the same rules: links never followed, read-only folders made writable', { timeout: 30_000 }, async () => {
    const { removeTree } = await import('../../src/runtime/removal.js');
    const { chmodSync, mkdirSync, symlinkSync, writeFileSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'su-helper-rm-'));
    // A call through the helper first: it is running and ready afterwards.
    const r = await runProcess('/bin/true', [], { cwd: dir, env: { PATH: process.env.PATH }, stdoutFile: join(dir, 'o'), stderrFile: join(dir, 'e'), timeoutMs: 10_000 });
    expect(r.exitCode).toBe(0);
    expect(spawnHelperPid()).toBeGreaterThan(0);
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'keep.txt'), 'mine');
    const ws = join(dir, 'ws');
    mkdirSync(join(ws, 'a/ro'), { recursive: true });
    writeFileSync(join(ws, 'a/ro/f.txt'), 'x');
    chmodSync(join(ws, 'a/ro'), 0o500);
    symlinkSync(outside, join(ws, 'to-outside'));
    const before = spawnHelperStats().removals;
    await removeTree(ws);
    expect(spawnHelperStats().removals, 'removed by the helper').toBe(before + 1);
    expect(existsSync(ws)).toBe(false);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('mine');
    // A link in place of the folder itself is unlinked, its target kept.
    symlinkSync(outside, join(dir, 'swapped'));
    await removeTree(join(dir, 'swapped'));
    expect(existsSync(join(dir, 'swapped'))).toBe(false);
    expect(existsSync(join(outside, 'keep.txt'))).toBe(true);
    // Nothing there: nothing to do.
    await expect(removeTree(join(dir, 'missing'))).resolves.toBeUndefined();
  });

  it("a job's workspace and home go in one request (removeTrees); the first failure rejects", { timeout: 30_000 }, async () => {
    const { removeTrees } = await import('../../src/runtime/removal.js');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    const dir = mkdtempSync(join(tmpdir(), 'su-helper-rm2-'));
    const r = await runProcess('/bin/true', [], { cwd: dir, env: { PATH: process.env.PATH }, stdoutFile: join(dir, 'o'), stderrFile: join(dir, 'e'), timeoutMs: 10_000 });
    expect(r.exitCode).toBe(0);
    const [ws, home] = [join(dir, 'ws'), join(dir, 'ws-home')];
    mkdirSync(join(ws, '.agents/skills/x'), { recursive: true });
    writeFileSync(join(ws, '.agents/skills/x/SKILL.md'), 'x');
    mkdirSync(join(home, '.config'), { recursive: true });
    const before = spawnHelperStats().removals;
    await removeTrees([ws, home]);
    expect(spawnHelperStats().removals, 'one request for both').toBe(before + 1);
    expect([existsSync(ws), existsSync(home)]).toEqual([false, false]);
    // A path that cannot be removed (/proc/self, a link the kernel owns) rejects.
    await expect(removeTrees([join(dir, 'missing'), '/proc/self'])).rejects.toThrow();
  });
});
