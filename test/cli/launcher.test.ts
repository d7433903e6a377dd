/**
 * The `skill-up` command: bin/skill-up, the POSIX sh launcher package.json names, which keeps
 * NODE_EXTRA_CA_CERTS from Node's start and runs dist/src/cli/skill-up.cjs; and that executable's
 * libuv thread pool (src/cli/skill-up.cts).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, LAUNCHER, TLS_FIXTURES, runCli, writeSkill } from './helpers.js';

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

/** A shell's path when it is installed (`dash`, `busybox`), else undefined. */
function installed(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}
const DASH = installed('dash');
const BUSYBOX = installed('busybox');

/**
 * A copy of the launcher in a package folder of its own (`<pkg>/bin/skill-up`, an empty
 * `<pkg>/dist/src/cli/skill-up.cjs`), the symlinks npm and users make to it, and a fake `node`
 * that prints its arguments (NUL-separated), then `--env--` and its environment.
 */
function fakeInstall() {
  const work = mkdtempSync(join(tmpdir(), 'su-launcher-'));
  const pkg = join(work, 'pkg');
  mkdirSync(join(pkg, 'bin'), { recursive: true });
  mkdirSync(join(pkg, 'dist/src/cli'), { recursive: true });
  copyFileSync(LAUNCHER, join(pkg, 'bin/skill-up'));
  chmodSync(join(pkg, 'bin/skill-up'), 0o755);
  writeFileSync(join(pkg, 'dist/src/cli/skill-up.cjs'), '');
  const fakeBin = join(work, 'fake-bin');
  mkdirSync(fakeBin);
  writeFileSync(join(fakeBin, 'node'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\0' "$a"; done\nprintf -- '--env--\\0'\nenv\n`, { mode: 0o755 });
  // node_modules/.bin style (relative), then absolute, then a relative one in the same folder, then relative again.
  for (const d of ['a', 'b', 'c', 'prefix/bin', 'prefix/lib/node_modules']) mkdirSync(join(work, d), { recursive: true });
  symlinkSync('../pkg/bin/skill-up', join(work, 'a/skill-up'));
  symlinkSync(join(work, 'a/skill-up'), join(work, 'b/skill-up'));
  symlinkSync('skill-up', join(work, 'b/alias'));
  symlinkSync('../b/alias', join(work, 'c/skill-up'));
  // npm link: <prefix>/bin/skill-up → ../lib/node_modules/skill-up/bin/skill-up, the package folder itself a link.
  symlinkSync(pkg, join(work, 'prefix/lib/node_modules/skill-up'));
  symlinkSync('../lib/node_modules/skill-up/bin/skill-up', join(work, 'prefix/bin/skill-up'));
  // Folders reached through a link (PATH holding a linked bin folder): `<link>/..` as text names the wrong place.
  symlinkSync('prefix/bin', join(work, 'alias-bin'));
  symlinkSync(join(pkg, 'bin'), join(work, 'pkg-bin'));
  symlinkSync('../alias-bin/skill-up', join(work, 'c/through-alias'));
  return { work, pkg, fakeBin, script: join(pkg, 'dist/src/cli/skill-up.cjs') };
}

/** Runs `command args` with only PATH (the fake node first), HOME and `env`; the fake node's arguments and environment. */
function viaFakeNode(fakeBin: string, command: string, args: string[], env: Record<string, string> = {}, cwd?: string) {
  const r = spawnSync(command, args, { cwd, env: { PATH: `${fakeBin}:${process.env.PATH ?? ''}`, HOME: process.env.HOME ?? '/', ...env }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const [argText, envText] = r.stdout.split('--env--\0') as [string, string];
  const argv = argText.split('\0').slice(0, -1);
  const seen = new Map(envText.split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
  return { argv, env: seen };
}

const ARGS = ['run', 'my skill', '', '--x=1', "it's", '*', '$HOME', 'two\nlines', ' '];

describe('bin/skill-up, the POSIX sh launcher', () => {
  it('is a #!/bin/sh script with its execute bit set in git', () => {
    expect(readFileSync(LAUNCHER, 'utf8').startsWith('#!/bin/sh\n')).toBe(true);
    const r = spawnSync('git', ['ls-files', '--stage', 'bin/skill-up'], { cwd: resolve(LAUNCHER, '../..'), encoding: 'utf8' });
    expect(r.stdout).toMatch(/^100755 /);
  });

  const shells: [string, string | undefined][] = [
    ['its #! line (/bin/sh)', undefined],
    ['dash', DASH],
    ['busybox sh', BUSYBOX],
  ];
  for (const [name, shell] of shells) {
    it.runIf(shell !== undefined || name.startsWith('its'))(`follows every symlink to its package and passes the arguments unchanged (${name})`, () => {
      const { work, pkg, fakeBin, script } = fakeInstall();
      const run = (path: string, env: Record<string, string> = {}, cwd?: string) => {
        const [command, args] = shell === undefined ? [path, ARGS] : shell.endsWith('busybox') ? [shell, ['sh', path, ...ARGS]] : [shell, [path, ...ARGS]];
        return viaFakeNode(fakeBin, command, args, env, cwd);
      };
      for (const entry of ['pkg/bin/skill-up', 'a/skill-up', 'b/skill-up', 'b/alias', 'c/skill-up', 'prefix/bin/skill-up', 'alias-bin/skill-up', 'pkg-bin/skill-up', 'c/through-alias']) {
        const { argv } = run(join(work, entry));
        expect(argv.slice(1), entry).toEqual(ARGS);
        // The package's physical path (`cd -P`): right even where a folder on the way is a link.
        expect(argv[0], entry).toBe(realpathSync(script));
      }
      expect(realpathSync(script)).toBe(join(realpathSync(pkg), 'dist/src/cli/skill-up.cjs'));
      // Relative invocations: from the link's folder, and from the package's bin folder.
      for (const cwd of [join(work, 'c'), join(pkg, 'bin')]) expect(realpathSync(resolve(cwd, run('./skill-up', {}, cwd).argv[0]!)), cwd).toBe(realpathSync(script));
    });
  }

  it('moves NODE_EXTRA_CA_CERTS to SKILL_UP_EXTRA_CA_CERTS; unset or empty, it adds nothing', () => {
    const { work, fakeBin } = fakeInstall();
    const link = join(work, 'c/skill-up');
    const file = '/some where/ca bundle.pem';
    const moved = viaFakeNode(fakeBin, link, ['--version'], { NODE_EXTRA_CA_CERTS: file, OTHER: 'kept' }).env;
    expect(moved.has('NODE_EXTRA_CA_CERTS')).toBe(false);
    expect(moved.get('SKILL_UP_EXTRA_CA_CERTS')).toBe(file);
    expect(moved.get('OTHER')).toBe('kept');
    const unset = viaFakeNode(fakeBin, link, ['--version']).env;
    expect([unset.has('NODE_EXTRA_CA_CERTS'), unset.has('SKILL_UP_EXTRA_CA_CERTS')]).toEqual([false, false]);
    const empty = viaFakeNode(fakeBin, link, ['--version'], { NODE_EXTRA_CA_CERTS: '' }).env;
    expect([empty.get('NODE_EXTRA_CA_CERTS'), empty.has('SKILL_UP_EXTRA_CA_CERTS')]).toEqual(['', false]);
    // Only the launcher sets SKILL_UP_EXTRA_CA_CERTS: one already in the environment does not pass for the user's file.
    const stale = viaFakeNode(fakeBin, link, ['--version'], { SKILL_UP_EXTRA_CA_CERTS: '/user/own.pem' }).env;
    expect([stale.has('NODE_EXTRA_CA_CERTS'), stale.has('SKILL_UP_EXTRA_CA_CERTS')]).toEqual([false, false]);
    const staleEmpty = viaFakeNode(fakeBin, link, ['--version'], { SKILL_UP_EXTRA_CA_CERTS: '/user/own.pem', NODE_EXTRA_CA_CERTS: '' }).env;
    expect([staleEmpty.get('NODE_EXTRA_CA_CERTS'), staleEmpty.has('SKILL_UP_EXTRA_CA_CERTS')]).toEqual(['', false]);
    const both = viaFakeNode(fakeBin, link, ['--version'], { SKILL_UP_EXTRA_CA_CERTS: '/user/own.pem', NODE_EXTRA_CA_CERTS: file }).env;
    expect([both.has('NODE_EXTRA_CA_CERTS'), both.get('SKILL_UP_EXTRA_CA_CERTS')]).toEqual([false, file]);
  });

  it('runs the real CLI', async () => {
    const r = await runCli(['--version'], { bin: LAUNCHER });
    const pkg = JSON.parse(readFileSync(resolve(LAUNCHER, '../../package.json'), 'utf8')) as { version: string };
    expect(r).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: '' });
  });

  it.runIf(process.platform === 'linux')(
    "an engine sees the user's NODE_EXTRA_CA_CERTS, while skill-up's own process started without it",
    async () => {
      const ca = join(TLS_FIXTURES, 'ca.pem');
      const skill = writeSkill({
        'evals/eval.yaml': 'schema_version: v1alpha1\nengine:\n  name: env-printer\n  custom:\n    transport: local\n    response_format: text\n    local: { command: ./evals/agent.sh }\ncases:\n  files: [evals/cases/*.yaml]\n',
        'evals/agent.sh': '#!/bin/sh\necho "extra=${NODE_EXTRA_CA_CERTS-unset} moved=${SKILL_UP_EXTRA_CA_CERTS-unset}"\nsleep 1\n',
        'evals/cases/a.yaml': `input: { prompt: print }\nexpect: { must_contain: [${JSON.stringify(`extra=${ca} moved=unset`)}] }\n`,
      });
      const child = spawn(LAUNCHER, ['run', skill, '--output-dir', join(skill, '..', 'out')], { env: { ...process.env, CI: '1', NODE_EXTRA_CA_CERTS: ca } });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const closed = new Promise<number | null>((res) => child.on('close', res));
      // The launcher execs node in its own process: once its command line names the executable, /proc/<pid>/environ is what node started with.
      let environ: string[] | undefined;
      while (environ === undefined) {
        try {
          if (readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').includes('skill-up.cjs')) environ = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
        } catch {
          break; // exited
        }
        await new Promise((res) => setTimeout(res, 10));
      }
      expect(await closed, output).toBe(0);
      expect(environ).toBeDefined();
      expect(environ!.filter((v) => v.startsWith('NODE_EXTRA_CA_CERTS='))).toEqual([]);
      expect(environ!.filter((v) => v.startsWith('SKILL_UP_EXTRA_CA_CERTS='))).toEqual([`SKILL_UP_EXTRA_CA_CERTS=${ca}`]);
      expect(output).toContain('1/1 trials passed');
    },
    30_000,
  );
});
