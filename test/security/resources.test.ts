/**
 * Running out of resources never crashes a run: out of file descriptors, a full disk or a
 * folder in the way makes the affected job `error` and the run still ends with its reports;
 * parallelism is fitted to `ulimit -n`; an unusable output folder is one line; and engine
 * processes die with skill-up even when it is killed with SIGKILL (src/engine/reaper.ts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ProcessOutputError, runProcess } from '../../src/engine/proc.js';
import { FDS_PER_JOB, fitParallelism, maxParallelism, openFileLimit, RESERVED_FDS } from '../../src/run/limits.js';
import { BIN, runCli, writeSkill } from '../cli/helpers.js';
import { alive, childrenWith } from '../support/proc.js';

/** A suite of `n` cases whose agent prints `done` (after `sleep` seconds); `extra` adds case-specific shell lines. */
function cheapSuite(n: number, opts: { parallelism: number; sleep?: number; extra?: string; args?: string } = { parallelism: 1 }): string {
  const files: Record<string, string> = {
    'evals/agent.sh': ['#!/bin/sh', 'prompt=$(cat "$1")', opts.extra ?? '', `sleep ${opts.sleep ?? 0}`, 'echo done', ''].join('\n'),
    'evals/eval.yaml': [
      'schema_version: v1alpha1',
      'engine:',
      '  name: cheap',
      '  custom:',
      '    transport: local',
      '    response_format: text',
      `    local: { command: ./evals/agent.sh, args: ["\${input_file}"${opts.args ? `, ${opts.args}` : ''}] }`,
      'cases:',
      '  files: [evals/cases/*.yaml]',
      `  parallelism: ${opts.parallelism}`,
    ].join('\n'),
  };
  for (let i = 1; i <= n; i++) files[`evals/cases/c${String(i).padStart(3, '0')}.yaml`] = `input: { prompt: case-${i} }\nexpect: { must_contain: [done] }\n`;
  return writeSkill(files);
}

/** Runs the built CLI under `sh -c 'ulimit -n N; exec node …'`. */
function runLimited(limit: number, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('/bin/sh', ['-c', `ulimit -n ${limit} && exec ${quoted}`], { env: { ...process.env, CI: '1', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

function expectNoCrash(r: { stdout: string; stderr: string }): void {
  const all = r.stdout + r.stderr;
  expect(all).not.toMatch(/Unhandled|internal error|\n\s+at .*\(.*:\d+:\d+\)/);
}

function result(out: string) {
  return JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')) as { jobs: { id: string; case_id: string; status: string; reason?: string }[] };
}

describe('parallelism fitted to the open-file limit', () => {
  it('reads the soft limit skill-up runs under', () => {
    const r = spawnSync('/bin/sh', ['-c', `ulimit -n 300 && exec '${process.execPath}' --input-type=module -e "import('${join(import.meta.dirname, '../../dist/src/run/limits.js')}').then((m) => console.log(m.openFileLimit()))"`], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('300');
    expect(openFileLimit()).toBeGreaterThan(0);
  });

  it('lowers a parallelism that does not fit, refuses when not even one job fits', () => {
    expect(maxParallelism(256)).toBe(Math.floor((256 - RESERVED_FDS) / FDS_PER_JOB));
    expect(fitParallelism(8, { limit: 1024 })).toEqual({ parallelism: 8, limit: 1024 });
    const low = fitParallelism(64, { limit: 256 });
    expect(low.parallelism).toBe(maxParallelism(256));
    expect(low.warning).toMatch(/^parallelism 64 needs about \d+ open files, more than the limit of 256 \(ulimit -n\): running \d+ job\(s\) at once instead/);
    expect(fitParallelism(4, { limit: 20 }).error).toMatch(/too low for even one job/);
    expect(fitParallelism(64, { limit: null })).toEqual({ parallelism: 64 });
    expect(fitParallelism(64, { limit: 256, env: { SKILL_UP_FD_CHECK: '0' } })).toEqual({ parallelism: 64 });
  });

  it('ulimit -n 256 with parallelism 64: a warning line, then every job runs and passes', async () => {
    const skill = cheapSuite(64, { parallelism: 64, sleep: 0.3 });
    const out = join(skill, '..', 'out');
    const r = await runLimited(256, ['run', skill, '--output-dir', out]);
    expectNoCrash(r);
    expect(r.stderr).toMatch(/warning: parallelism 64 needs about \d+ open files, more than the limit of 256/);
    expect(r.code).toBe(0);
    const doc = result(out);
    expect(doc.jobs.filter((j) => j.status === 'pass')).toHaveLength(64);
  });

  it('a limit too low for one job is one line and exit 3', async () => {
    const skill = cheapSuite(1, { parallelism: 1 });
    // 66: enough to load skill-up's modules (63), not enough for a job besides.
    const r = await runLimited(66, ['run', skill, '--output-dir', join(skill, '..', 'out')]);
    expectNoCrash(r);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/error: the open-file limit \(ulimit -n\) is 66: too low for even one job/);
  });

  it('out of descriptors for real (check off, ulimit -n 128, 64 jobs at once): errors, never a crash, reports written', async () => {
    const skill = cheapSuite(64, { parallelism: 64, sleep: 0.5 });
    const out = join(skill, '..', 'out');
    const r = await runLimited(128, ['run', skill, '--output-dir', out], { SKILL_UP_FD_CHECK: '0' });
    expectNoCrash(r);
    expect([0, 1, 3, 4]).toContain(r.code);
    expect(existsSync(join(out, 'iteration-1/result.json'))).toBe(true);
    const doc = result(out);
    expect(doc.jobs).toHaveLength(64);
    for (const j of doc.jobs.filter((x) => x.status === 'error')) expect(j.reason).toMatch(/EMFILE|too many open files/);
    // Nothing left behind: no workspace of this run in the temporary folder.
    expect(readdirSync(tmpdir()).filter((n) => n.startsWith('skill-up-c'))).toEqual([]);
  });
});

describe('a write failure on one job', () => {
  it('a folder where grading.json goes, or a file where outputs/ goes: that job is `error`, the run ends with reports, exit 3', async () => {
    // The agent gets the job's output folder and sabotages it in two cases only.
    const skill = cheapSuite(3, {
      parallelism: 3,
      args: '"${output_dir}"',
      extra: ['case "$prompt" in', '  *case-1*) mkdir -p "$2/grading.json" ;;', '  *case-2*) sleep 0.5; rm -rf "$2/outputs" && echo in-the-way > "$2/outputs" ;;', 'esac'].join('\n'),
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expectNoCrash(r);
    expect(r.code).toBe(3);
    const by = Object.fromEntries(result(out).jobs.map((j) => [j.case_id, j]));
    expect(by.c001!.status).toBe('error');
    expect(by.c001!.reason).toMatch(/cannot write .*grading\.json: EISDIR/);
    expect(by.c002!.status).toBe('error');
    expect(by.c002!.reason).toMatch(/ENOTDIR/);
    expect(by.c003!.status).toBe('pass');
    for (const f of ['result.json', 'report.xml', 'summary.md']) expect(existsSync(join(out, 'iteration-1', f)), f).toBe(true);
  });

  it('runProcess: an output file that cannot be opened rejects with ProcessOutputError (no unhandled error event)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-res-'));
    const e = await runProcess('/bin/sh', ['-c', 'sleep 300'], {
      cwd: dir,
      env: { PATH: process.env.PATH },
      stdoutFile: join(dir, 'missing-folder/out.txt'),
      stderrFile: join(dir, 'err.txt'),
      timeoutMs: 300_000,
      killGraceMs: 200,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ProcessOutputError);
    expect((e as ProcessOutputError).code).toBe('ENOENT');
    expect((e as Error).message).toMatch(/could not write the output of \/bin\/sh to .*missing-folder\/out\.txt: ENOENT/);
    // The process is stopped at once: left to run its 300 s, it would outlast the test's timeout.
  });
});

describe('an unusable output folder', () => {
  const asNobody = process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status === 0;

  it('a path under a regular file: one line, exit 2', async () => {
    const skill = cheapSuite(1, { parallelism: 1 });
    const file = join(skill, '..', 'a-file');
    writeFileSync(file, 'x');
    const r = await runCli(['run', skill, '--output-dir', join(file, 'out')]);
    expectNoCrash(r);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.runIf(asNobody || process.getuid?.() !== 0)('write-only (0300) and read-only (0500) output folders: one line each, exit 2, no stack trace', async () => {
    // Root ignores permissions: run the CLI as nobody then (every folder on the way readable).
    const base = mkdtempSync(join('/tmp', 'su-res-perm-'));
    chmodSync(base, 0o755);
    const skill = join(base, 'cheap');
    mkdirSync(join(skill, 'evals/cases'), { recursive: true });
    writeFileSync(join(skill, 'SKILL.md'), '---\nname: cheap\ndescription: A skill used by skill-up tests.\n---\n');
    writeFileSync(join(skill, 'evals/eval.yaml'), 'schema_version: v1alpha1\nengine:\n  name: x\n  custom:\n    transport: local\n    response_format: text\n    local: { command: /bin/echo, args: [done] }\ncases:\n  files: [evals/cases/*.yaml]\n');
    writeFileSync(join(skill, 'evals/cases/a.yaml'), 'input: { prompt: hi }\n');
    for (const [name, mode] of [['write-only', 0o300], ['read-only', 0o500]] as const) {
      const out = join(base, name);
      mkdirSync(out);
      const argv = [process.execPath, BIN, 'run', skill, '--output-dir', out];
      let r;
      if (asNobody) {
        spawnSync('chown', ['-R', 'nobody', base]);
        chmodSync(out, mode);
        r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...argv], { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: base, TMPDIR: base, CI: '1' } });
      } else {
        chmodSync(out, mode);
        r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', env: { ...process.env, CI: '1' } });
      }
      expectNoCrash(r);
      expect(r.status, `${name}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).toContain(out);
      chmodSync(out, 0o700);
    }
    spawnSync('rm', ['-rf', base]);
  });
});


async function waitFor<T>(f: () => T | undefined, ms: number): Promise<T | undefined> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v !== undefined || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(process.platform === 'linux')('the reaper: engine processes die with skill-up', () => {
  const leftovers: number[] = [];
  afterAll(() => {
    for (const p of leftovers) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });

  /**
   * Starts the built CLI on `skill`, waits until `pids` holds `count` non-empty pid files
   * (written by whatever runs: agent, setup step, judge), SIGKILLs skill-up and checks that,
   * within 3 s, none of those processes is alive and the reaper has exited.
   */
  async function killDuring(skill: string, pids: string, count: number): Promise<void> {
    const child = spawn(process.execPath, [BIN, 'run', skill, '--output-dir', join(skill, '..', 'out')], { env: { ...process.env, CI: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const files = await waitFor(() => {
      const f = readdirSync(pids);
      return f.length >= count && f.every((n) => readFileSync(join(pids, n), 'utf8').trim() !== '') ? f : undefined;
    }, 45_000);
    expect(files, `nothing started: ${stderr}`).toBeDefined();
    const started = files!.map((f) => Number(readFileSync(join(pids, f), 'utf8')));
    leftovers.push(...started);
    expect(started.every(alive)).toBe(true);
    // The reaper starts as the first process group is watched, a moment after that group's spawn:
    // on a loaded machine the pid files can be written first.
    const reaper = (await waitFor(() => {
      const r = childrenWith(child.pid!, 'groups=');
      return r.length > 0 ? r : undefined;
    }, 5000)) ?? [];
    expect(reaper, 'one reaper, a child of skill-up').toHaveLength(1);
    child.kill('SIGKILL');
    const t0 = Date.now();
    const survivors = await waitFor(() => {
      const s = started.filter(alive);
      return s.length === 0 ? [] : Date.now() - t0 > 3000 ? s : undefined;
    }, 5000);
    expect(survivors).toEqual([]);
    expect(await waitFor(() => (alive(reaper[0]!) ? undefined : true), 3000), 'the reaper exits after reaping').toBe(true);
  }

  /** Shell lines: a background child and the process itself, both recorded in folder `dir`, then a long sleep. */
  const lingerIn = (dir: string) => ['sleep 300 &', `echo $! > "${dir}/bg-$$"`, `echo $$ > "${dir}/main-$$"`, 'sleep 60'].join('\n');

  it('kill -9 of skill-up during the agents: within 3 s no process of theirs (nor a background child) is alive', { timeout: 90_000 }, async () => {
    const pids = mkdtempSync(join(tmpdir(), 'su-reaper-'));
    await killDuring(cheapSuite(2, { parallelism: 2, extra: lingerIn(pids) }), pids, 4);
  });

  it('kill -9 of skill-up during a setup step: the step and what it started die too', { timeout: 90_000 }, async () => {
    const pids = mkdtempSync(join(tmpdir(), 'su-reaper-'));
    const skill = cheapSuite(1, { parallelism: 1 });
    const evalFile = join(skill, 'evals/eval.yaml');
    const script = join(skill, 'evals/setup.sh');
    writeFileSync(script, `#!/bin/sh\n${lingerIn(pids)}\n`);
    chmodSync(script, 0o755);
    writeFileSync(evalFile, `${readFileSync(evalFile, 'utf8')}\nenvironment:\n  setup_steps:\n    - run: ${JSON.stringify(`${script} > /dev/null 2>&1`)}\n`);
    await killDuring(skill, pids, 2);
  });

  it('kill -9 of skill-up during a script judge: the judge and what it started die too', { timeout: 90_000 }, async () => {
    const pids = mkdtempSync(join(tmpdir(), 'su-reaper-'));
    const skill = cheapSuite(1, { parallelism: 1 });
    writeFileSync(join(skill, 'evals/judge.sh'), `#!/bin/sh\n${lingerIn(pids)}\n`);
    chmodSync(join(skill, 'evals/judge.sh'), 0o755);
    writeFileSync(join(skill, 'evals/cases/c001.yaml'), 'input: { prompt: case-1 }\njudge: { type: script, script_path: evals/judge.sh, timeout_seconds: 120 }\n');
    await killDuring(skill, pids, 2);
  });

  it('a normal run leaves no reaper behind', async () => {
    const skill = cheapSuite(2, { parallelism: 2, sleep: 1 });
    const child = spawn(process.execPath, [BIN, 'run', skill, '--output-dir', join(skill, '..', 'out')], { env: { ...process.env, CI: '1' }, stdio: 'ignore' });
    const reaper = await waitFor(() => {
      const r = childrenWith(child.pid!, 'groups=');
      return r.length ? r : undefined;
    }, 20_000);
    const code = await new Promise((res) => child.on('close', res));
    expect(code).toBe(0);
    expect(reaper).toHaveLength(1);
    leftovers.push(reaper![0]!);
    expect(await waitFor(() => (alive(reaper![0]!) ? undefined : true), 3000)).toBe(true);
  });
});
