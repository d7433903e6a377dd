// compare: skill-up against promptfoo on the same 200 tests, whole processes, alternating the
// two commands in one call (issue 13). Each test runs the same command (`echo done`) and checks
// that its output contains "done": in skill-up a case of a custom local engine (a fresh
// workspace per job with the skill installed, must_contain), in promptfoo a test of the exec
// provider with a `contains` assertion. Both at parallelism 8, caches off, every report of
// each tool's default written. Prints wall time, user/system CPU and peak RSS (the largest
// process of each tree, from /usr/bin/time when present) per round, the medians, and the
// skill-up/promptfoo wall ratio with its target.
//
// promptfoo is installed into bench/promptfoo/node_modules on first use (`npm install` there,
// about a minute; BENCH_SKIP_PROMPTFOO=1 skips the comparison). BENCH_COMPARE_ROUNDS (default 5).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeAtExit } from './scratch.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..');
/**
 * The `skill-up` command as a user runs it: the package's bin, a POSIX sh launcher (bin/skill-up)
 * that starts Node on dist/src/cli/skill-up.cjs without reading NODE_EXTRA_CA_CERTS at start.
 */
export const LAUNCHER = join(repo, 'bin/skill-up');
const TIME = '/usr/bin/time';

/** Median of numbers. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** Installs promptfoo into bench/promptfoo when missing; its executable path. */
async function promptfooBin() {
  const folder = join(here, 'promptfoo');
  const bin = join(folder, 'node_modules/.bin/promptfoo');
  if (existsSync(bin)) return bin;
  console.log('installing promptfoo into bench/promptfoo (bench only, about a minute) …');
  await new Promise((res, rej) =>
    execFile('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: folder, maxBuffer: 16 << 20 }, (e, _o, err) => (e ? rej(new Error(`npm install in bench/promptfoo failed: ${err}`)) : res())),
  );
  return bin;
}

/**
 * Runs `cmd args` to its end as one measured process tree: wall ms, user/sys CPU s and the peak
 * RSS in MB of the largest process of the tree (GNU time's %M), or of the top process sampled
 * from /proc when GNU time is missing.
 */
export function measure(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const useTime = existsSync(TIME);
    const marker = '@@bench ';
    const [file, argv] = useTime ? [TIME, ['-f', `${marker}%e %U %S %M`, cmd, ...args]] : [cmd, args];
    const t0 = performance.now();
    const child = spawn(file, argv, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    let peakKb = 0;
    const sample = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch { /* gone */ }
    }, 10);
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(sample);
      const wall = performance.now() - t0;
      const line = err.split('\n').find((l) => l.startsWith(marker));
      if (line) {
        const [, u, s, m] = line.slice(marker.length).split(' ').map(Number);
        resolve({ code, wall, user: u, sys: s, rssMb: m / 1024, out, err });
      } else {
        resolve({ code, wall, user: NaN, sys: NaN, rssMb: peakKb / 1024, out, err });
      }
    });
  });
}

/** Writes the skill-up suite and the promptfoo config of the same `n` tests under `root`. */
function writeSuites(root, n, parallelism) {
  const skill = join(root, 'compare-skill');
  mkdirSync(join(skill, 'evals/cases'), { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), '---\nname: compare-skill\ndescription: A skill used only to compare harnesses.\n---\n\n# Compare\n');
  writeFileSync(join(skill, 'evals/eval.yaml'), `schema_version: v1alpha1
engine:
  name: echo
  custom:
    transport: local
    response_format: text
    local: { command: echo, args: [done] }
cases:
  files: [evals/cases/*.yaml]
  parallelism: ${parallelism}
trials: 1
`);
  for (let i = 0; i < n; i++) writeFileSync(join(skill, `evals/cases/case-${i}.yaml`), `input:\n  prompt: "job ${i}"\nexpect:\n  must_contain: [done]\n`);
  const pf = join(root, 'promptfoo');
  mkdirSync(pf, { recursive: true });
  const tests = Array.from({ length: n }, (_, i) => `  - vars: { i: ${i} }\n    assert:\n      - type: contains\n        value: done`).join('\n');
  writeFileSync(join(pf, 'promptfooconfig.yaml'), `description: compare\nprompts:\n  - 'job {{i}}'\nproviders:\n  - id: 'exec: echo done'\ntests:\n${tests}\n`);
  return { skill, pf };
}

/** The comparison; returns the rows it printed (for the summary). */
export async function benchCompare() {
  const N = 200;
  const P = 8;
  const ROUNDS = Number(process.env.BENCH_COMPARE_ROUNDS ?? 5);
  const bin = await promptfooBin();
  const version = JSON.parse(readFileSync(join(here, 'promptfoo/node_modules/promptfoo/package.json'), 'utf8')).version;
  const root = mkdtempSync(join(tmpdir(), 'skill-up-bench-compare-'));
  const { skill, pf } = writeSuites(root, N, P);
  const home = join(root, 'home');
  mkdirSync(home);
  const env = { ...process.env, HOME: home, PROMPTFOO_DISABLE_TELEMETRY: '1', PROMPTFOO_DISABLE_UPDATE: '1', PROMPTFOO_CACHE_ENABLED: 'false', NO_COLOR: '1',
    // Its debug/error log files: with them on, 0.121 often dies at exit (winston: write after end).
    PROMPTFOO_DISABLE_DEBUG_LOG: '1', PROMPTFOO_DISABLE_ERROR_LOG: '1' };
  const runSkillUp = (k) => measure(LAUNCHER, ['run', skill, '--output-dir', join(root, `su-${k}`)], { env, cwd: root });
  const runPromptfoo = (k) => measure(bin, ['eval', '-c', join(pf, 'promptfooconfig.yaml'), '--no-cache', '-j', String(P), '--no-progress-bar', '-o', join(root, `pf-${k}.json`)], { env, cwd: pf });
  // One untimed round each: promptfoo creates its database on first use, Node warms the disk cache.
  for (const [what, r] of [['skill-up', await runSkillUp('warm')], ['promptfoo', await runPromptfoo('warm')]]) {
    if (r.code !== 0) throw new Error(`${what} failed in the warm-up round (exit ${r.code}):\n${r.err.slice(-2000)}`);
  }
  const su = [];
  const pfr = [];
  for (let k = 0; k < ROUNDS; k++) {
    // Alternate which goes first, so neither always runs on a warmer machine.
    const order = k % 2 ? ['pf', 'su'] : ['su', 'pf'];
    for (const o of order) {
      if (o === 'su') su.push(await runSkillUp(k));
      else pfr.push(await runPromptfoo(k));
    }
  }
  // Each round's output stays until every round has run: deleting thousands of files just before
  // the next measured command makes that command's own file creation slow on ext4 without a
  // journal (these machines: inode allocation skips, one buffer lookup each, every inode freed in
  // the last 1–6 minutes), which would charge the benchmark's clean-up to whichever tool runs next.
  const bad = [...su, ...pfr].find((r) => r.code !== 0);
  if (bad) throw new Error(`a compared run failed (exit ${bad.code}):\n${bad.err.slice(-2000)}`);
  const row = (name, rs) => {
    const m = (f) => median(rs.map(f));
    return `${name.padEnd(22)} ${`${(m((r) => r.wall) / 1000).toFixed(2)} s`.padStart(8)}  ${m((r) => r.user).toFixed(2).padStart(6)} ${m((r) => r.sys).toFixed(2).padStart(6)}  ${`${m((r) => r.rssMb).toFixed(0)} MB`.padStart(8)}   [${rs.map((r) => (r.wall / 1000).toFixed(2)).join(', ')}]`;
  };
  const ratio = median(su.map((r) => r.wall)) / median(pfr.map((r) => r.wall));
  const rss = median(su.map((r) => r.rssMb));
  console.log(`\n== compare: the same ${N} tests, skill-up vs promptfoo ${version}, parallelism ${P}, ${ROUNDS} alternating rounds, whole processes ==`);
  console.log('each test: run `echo done`, check the output contains "done" (skill-up: a fresh workspace per job, the skill installed, every default report)');
  console.log(`${'tool'.padEnd(22)} ${'wall'.padStart(8)}  ${'user'.padStart(6)} ${'sys'.padStart(6)}  ${'peak RSS'.padStart(8)}   [wall per round]`);
  console.log(row('skill-up', su));
  console.log(row(`promptfoo ${version}`, pfr));
  console.log(`skill-up / promptfoo wall     ${ratio.toFixed(2)}  (target ≤ 0.50)`);
  console.log(`skill-up peak RSS             ${rss.toFixed(0)} MB  (target ≤ 100 MB; the largest process of the tree)`);
  removeAtExit(root);
  return { ratio, rss };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchCompare();
