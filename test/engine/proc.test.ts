/**
 * runProcess (src/engine/proc.ts) behaves the same whether the engine is spawned by the spawn
 * helper (src/engine/spawner.ts, the default) or by skill-up itself (`SKILL_UP_SPAWN_HELPER=0`,
 * the fallback): every case below runs in both modes, and checks which process is the parent.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { currentJob, setProcessObserver, withJob } from '../../src/engine/observe.js';
import { afterNextProcessStart, ProcessOutputError, runProcess, type ProcOptions } from '../../src/engine/proc.js';
import { spawnHelperPid, spawnHelperStats } from '../../src/engine/spawner.js';
import { alive, killAll } from '../support/proc.js';

const leftovers: number[] = [];
afterAll(() => killAll(leftovers));

/** Field `n` (1-based, after the command) of /proc/<pid>/stat as a number: 2 = ppid, 3 = pgrp. */
function statField(text: string, n: number): number {
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[n - 1]);
}

describe.each([
  { mode: 'through the spawn helper', helper: true },
  { mode: 'in process (SKILL_UP_SPAWN_HELPER=0)', helper: false },
])('runProcess $mode', ({ helper }) => {
  let dir: string;
  const saved = { ...process.env };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'su-proc-'));
    if (!helper) process.env.SKILL_UP_SPAWN_HELPER = '0';
  });
  afterEach(() => {
    for (const k of ['SKILL_UP_SPAWN_HELPER', 'SKILL_UP_MAX_OUTPUT_BYTES', 'SU_PROC_LEAK']) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    setProcessObserver(undefined);
  });
  const opts = (o: Partial<ProcOptions> = {}): ProcOptions => ({ cwd: dir, env: { PATH: process.env.PATH }, stdoutFile: join(dir, 'out.txt'), stderrFile: join(dir, 'err.txt'), timeoutMs: 20_000, ...o });
  const out = () => readFileSync(join(dir, 'out.txt'), 'utf8');

  it('a process group of its own, the cwd, the complete environment only, stdin text then EOF; the right parent', async () => {
    process.env.SU_PROC_LEAK = 'from-skill-up';
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    const script = 'cat /proc/$$/stat; pwd; echo "FOO=$FOO LEAK=${SU_PROC_LEAK:-none}"; cat; echo "[eof]"';
    const r = await runProcess('/bin/sh', ['-c', script], opts({ cwd: sub, env: { PATH: process.env.PATH, FOO: 'bar' }, input: 'line one\nline two' }));
    expect(r).toEqual({ exitCode: 0, signal: undefined, timedOut: false, cancelled: false, durationMs: expect.any(Number), stdoutBytes: Buffer.byteLength(out()), stderrBytes: 0 });
    const [stat, cwd, env, ...rest] = out().split('\n');
    const pid = Number(stat!.split(' ')[0]);
    expect(statField(stat!, 3), 'its own process group').toBe(pid);
    const ppid = statField(stat!, 2);
    if (helper) {
      expect(ppid, 'started by the helper').toBe(spawnHelperPid());
      expect(ppid).not.toBe(process.pid);
    } else expect(ppid, 'started by skill-up').toBe(process.pid);
    expect(cwd).toBe(sub);
    expect(env).toBe('FOO=bar LEAK=none');
    expect(rest.join('\n')).toBe('line one\nline two[eof]\n');
  });

  it('afterNextProcessStart: called once, after the next process started and while it runs', async () => {
    let calls = 0;
    afterNextProcessStart(() => {
      calls++;
      writeFileSync(join(dir, 'called'), '');
    });
    expect(calls).toBe(0);
    // Exit 0 only if the callback ran while this process was waiting for it (up to 10 s).
    const r = await runProcess('sh', ['-c', 'i=0; while [ ! -e called ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; [ -e called ]'], opts());
    expect(r.exitCode).toBe(0);
    await runProcess('true', [], opts());
    expect(calls).toBe(1);
  });

  it('no input: stdin is /dev/null (ignored), never a pipe left open', async () => {
    const r = await runProcess('/bin/sh', ['-c', 'readlink /proc/$$/fd/0; cat; echo "[eof]"'], opts());
    expect(r.exitCode).toBe(0);
    expect(out()).toBe('/dev/null\n[eof]\n');
  });

  it('stdout and stderr capped at SKILL_UP_MAX_OUTPUT_BYTES, counted whole, the marker line on the cut stderr', async () => {
    process.env.SKILL_UP_MAX_OUTPUT_BYTES = String(64 * 1024);
    const script = "process.stdout.write('o'.repeat(200000)); process.stderr.write('e'.repeat(150000))";
    const r = await runProcess(process.execPath, ['-e', script], opts());
    expect(r).toMatchObject({ exitCode: 0, stdoutBytes: 200_000, stderrBytes: 150_000, stdoutTruncated: true, stderrTruncated: true });
    expect(statSync(join(dir, 'out.txt')).size).toBe(65536);
    const err = readFileSync(join(dir, 'err.txt'), 'utf8');
    expect(err).toBe(`${'e'.repeat(65536)}\n[skill-up: cut here at 65536 bytes; the process wrote more, which was drained and counted]\n`);
    const small = await runProcess('/bin/sh', ['-c', 'echo small; echo e >&2'], opts());
    expect(small.stdoutTruncated).toBeUndefined();
    expect(small.stderrTruncated).toBeUndefined();
  });

  it('a timeout kills the whole group (SIGTERM) and waits until a background child is gone', async () => {
    const bg = join(dir, 'bg');
    const t0 = Date.now();
    const r = await runProcess('/bin/sh', ['-c', `sleep 300 & echo $! > ${bg}; sleep 300`], opts({ timeoutMs: 500, killGraceMs: 200 }));
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: true, cancelled: false });
    const pid = Number(readFileSync(bg, 'utf8'));
    leftovers.push(pid);
    expect(alive(pid), 'the background child died with its group').toBe(false);
  });

  it('SIGTERM ignored: SIGKILL after the grace', async () => {
    const r = await runProcess('/bin/sh', ['-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done'], opts({ timeoutMs: 300, killGraceMs: 400 }));
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true, cancelled: false });
    expect(r.durationMs).toBeGreaterThanOrEqual(650);
  });

  it('an abort kills the group and says cancelled; already aborted: nothing starts', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const r = await runProcess('/bin/sh', ['-c', 'sleep 300'], opts({ signal: ac.signal, killGraceMs: 200 }));
    expect(r).toMatchObject({ exitCode: null, timedOut: false, cancelled: true });
    const marker = join(dir, 'ran');
    const before = await runProcess('/bin/sh', ['-c', `touch ${marker}`], opts({ signal: ac.signal }));
    expect(before).toEqual({ exitCode: null, timedOut: false, cancelled: true, durationMs: 0, stdoutBytes: 0, stderrBytes: 0 });
    expect(existsSync(marker)).toBe(false);
  });

  it('a child that escaped the group and holds the pipes is let go of after the drain time', async () => {
    const esc = join(dir, 'escaped');
    const t0 = Date.now();
    // The main process waits until the escaped child has left the group (its pid written after
    // setsid): a fixed sleep lost that race on a loaded machine, and the group kill took it too.
    const r = await runProcess('/bin/sh', ['-c', `setsid sh -c 'echo $$ > ${esc}.tmp; mv ${esc}.tmp ${esc}; exec sleep 30' & while [ ! -s ${esc} ]; do sleep 0.05; done; echo main done`], opts());
    const took = Date.now() - t0;
    const pid = Number(readFileSync(esc, 'utf8'));
    leftovers.push(pid);
    expect(r.exitCode).toBe(0);
    expect(out()).toBe('main done\n');
    expect(took).toBeGreaterThanOrEqual(1800);
    expect(took).toBeLessThan(15_000);
  });

  it('start errors: ENOENT and EACCES in the same words', async () => {
    const missing = await runProcess('./no-such-agent', [], opts());
    expect(missing).toMatchObject({ exitCode: null, startErrorCode: 'ENOENT', startError: 'command not found: ./no-such-agent (not on PATH; a relative path with a slash is resolved against the skill folder)', stdoutBytes: 0 });
    const file = join(dir, 'not-exec.sh');
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    chmodSync(file, 0o644);
    const denied = await runProcess(file, [], opts());
    expect(denied).toMatchObject({ exitCode: null, startErrorCode: 'EACCES', startError: `permission denied: ${file} is not executable (chmod +x ${file})` });
  });

  it('an output file planted as a link is never written through: ProcessOutputError (ELOOP), the target untouched', async () => {
    const target = join(dir, 'target.txt');
    writeFileSync(target, 'keep');
    symlinkSync(target, join(dir, 'out.txt'));
    const e = await runProcess('/bin/sh', ['-c', 'echo overwritten'], opts()).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ProcessOutputError);
    expect((e as ProcessOutputError).code).toBe('ELOOP');
    expect((e as Error).message).toMatch(/^skill-up could not write the output of \/bin\/sh to .*out\.txt: ELOOP/);
    expect(readFileSync(target, 'utf8')).toBe('keep');
  });

  it('-v / -vv: the command line with its job, each stderr line; stderr reaches skill-up only when lines are listened for', async () => {
    const seen: string[] = [];
    setProcessObserver({ spawned: (job, file, args, cwd) => seen.push(`${job} $ ${file} ${args.join(' ')} (${cwd})`) });
    const before = spawnHelperStats().stderrMessages;
    await withJob('job-1', () => runProcess('/bin/sh', ['-c', 'echo one >&2; echo two >&2'], opts()));
    expect(seen).toEqual([`job-1 $ /bin/sh -c echo one >&2; echo two >&2 (${dir})`]);
    expect(spawnHelperStats().stderrMessages, 'no stderr sent without a line listener').toBe(before);
    const lines: string[] = [];
    setProcessObserver({ stderrLine: (job, l) => lines.push(`${job}: ${l}`) });
    // A multi-byte character split across writes, and a last line without its line break.
    const script = "const b=Buffer.from('é\\n'); process.stderr.write('a '+b.subarray(0,1).toString('latin1').length); process.stderr.write(Buffer.concat([Buffer.from('x'), b.subarray(0,1)])); setTimeout(()=>{process.stderr.write(b.subarray(1)); process.stderr.write('second\\nlast')},50)";
    await withJob('job-2', () => runProcess(process.execPath, ['-e', script], opts()));
    expect(lines).toEqual(['job-2: a 1xé', 'job-2: second', 'job-2: last']);
    expect(readFileSync(join(dir, 'err.txt'), 'utf8')).toBe('a 1xé\nsecond\nlast');
  });

  it('without an observer a job is not tagged (no AsyncLocalStorage, so no promise hooks); with one it is', async () => {
    setProcessObserver(undefined);
    expect(await withJob('job-3', async () => currentJob())).toBeUndefined();
    setProcessObserver({});
    expect(await withJob('job-4', async () => {
      await new Promise((r) => setTimeout(r, 1));
      return currentJob();
    })).toBe('job-4');
    setProcessObserver(undefined);
  });
});
