/**
 * The path a new user takes, automated (issue 15, items 1 and 5): `npm pack` the built package,
 * `npm install -g` the tarball into a clean temporary prefix (its dependencies from the npm
 * cache or registry; no `--ignore-scripts` needed: the tarball carries its built dist), then,
 * from a folder outside the repository, run the installed `skill-up`: `--version`, `validate`
 * on a small suite, and `init` + `run` on a copy of a real public skill
 * (test/fixtures/skills/internal-comms, Apache-2.0), offline, with the reports checked. Also
 * `npm link` into another prefix; both are the sh launcher, bin/skill-up. Uses the dist that `npm test` builds (`npm pack
 * --ignore-scripts`: `prepare` would build it a second time).
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const run = promisify(execFile);

/** The environment for npm: this one without the npm_* variables of an enclosing `npm test`. */
function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k)) env[k] = v;
  return { ...env, ...extra };
}

/** Every file under `dir` (relative to ROOT, `/`-separated). */
function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(ROOT, join(d.parentPath, d.name)).split('\\').join('/'));
}

describe('npm pack → npm install -g → the installed skill-up, from outside the repository', () => {
  let work: string;
  let prefix: string;
  let bin: string;
  let packed: string[];
  let modes: Map<string, number>;

  beforeAll(async () => {
    expect(existsSync(join(ROOT, 'dist/src/cli/skill-up.bundle.cjs')), 'dist is built (npm run build)').toBe(true);
    work = mkdtempSync(join(tmpdir(), 'su-install-'));
    const pack = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT, env: npmEnv(), maxBuffer: 64 << 20 });
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string; mode: number }[] }[];
    packed = info!.files.map((f) => f.path);
    modes = new Map(info!.files.map((f) => [f.path, f.mode]));
    prefix = join(work, 'prefix');
    await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', join(work, info!.filename)], { cwd: work, env: npmEnv(), maxBuffer: 64 << 20 });
    bin = join(prefix, 'bin', 'skill-up');
  }, 180_000);

  it('the tarball holds everything the CLI reads at run time, and no sources or tests', () => {
    const needed = [
      'package.json',
      'LICENSE', // the Apache-2.0 text package.json's "license" names (npm packs LICENSE always)
      'bin/skill-up',
      'dist/src/cli/skill-up.cjs',
      'dist/src/cli/skill-up.bundle.cjs',
      'dist/src/cli/skill-up.vendor.cjs',
      'dist/src/cli/bundle-loader.cjs',
      'dist/src/cli/bin.js',
      'dist/src/config/validators.generated.cjs',
      'dist/src/report/html/templates.precompiled.cjs',
      'src/cost/prices.json',
      ...filesUnder('schemas').filter((f) => f.endsWith('.json')),
      ...filesUnder('src/report/html/templates'),
      ...filesUnder('src/report/html/assets'),
      ...readdirSync(join(ROOT, 'engines'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `engines/${d.name}/README.md`),
    ];
    expect(needed.filter((f) => !packed.includes(f))).toEqual([]);
    expect(packed.filter((f) => /^(test|bench|scripts|examples)\//.test(f) || (/\.(ts|mts|cts)$/.test(f) && !f.endsWith('.d.ts')))).toEqual([]);
    // The launcher keeps its execute bit in the tarball.
    expect(modes.get('bin/skill-up')! & 0o111).toBe(0o111);
  });

  it('puts an executable skill-up on the prefix bin, the sh launcher, that prints its version', async () => {
    expect(lstatSync(bin).isSymbolicLink()).toBe(true);
    expect(realpathSync(bin)).toBe(join(realpathSync(prefix), 'lib/node_modules/skill-up/bin/skill-up'));
    expect(statSync(bin).mode & 0o111).not.toBe(0);
    // Run as a user would: the file itself (its #! line), from a folder outside the repository.
    const { stdout } = await run(bin, ['--version'], { cwd: work });
    expect(stdout).toBe(`${VERSION}\n`);
  });

  it('validates a small suite', async () => {
    const skill = join(work, 'greeting-files');
    cpSync(join(ROOT, 'examples/greeting-files'), skill, { recursive: true });
    const { stdout } = await run(bin, ['validate', 'greeting-files'], { cwd: work });
    expect(stdout).toContain('greeting-files/evals/eval.yaml is valid (2 case(s)');
  });

  it('newcomer: init a copy of a real skill, run it offline, read the reports', async () => {
    const parent = mkdtempSync(join(work, 'newcomer-'));
    cpSync(join(ROOT, 'test/fixtures/skills/internal-comms'), join(parent, 'internal-comms'), { recursive: true });
    const init = await runCli(['init', 'internal-comms'], { cwd: parent, bin });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('next: skill-up run internal-comms\n');
    const r = await runCli(['run', 'internal-comms'], { cwd: parent, bin });
    expect(r.code, r.stderr.slice(-3000) + r.stdout.slice(-3000)).toBe(0);
    expect(r.stdout).toContain('claude_code with_skill: 6/6 trials passed');
    expect(r.stdout).toContain('claude_code without_skill: 0/6 trials passed');
    const iteration = join(parent, 'internal-comms-workspace', 'iteration-1');
    for (const f of ['result.json', 'report.html', 'report.xml', 'summary.md']) expect(existsSync(join(iteration, f)), f).toBe(true);
    const result = JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8')) as { jobs: { variant: string; status: string }[] };
    expect(result.jobs.filter((j) => j.variant === 'with_skill').every((j) => j.status === 'pass')).toBe(true);
    expect(readFileSync(join(iteration, 'report.html'), 'utf8')).toContain('internal-comms');
  }, 180_000);

  it('npm link gives a skill-up that runs this checkout', async () => {
    const linkPrefix = join(work, 'link-prefix');
    // `prepare` (the build) is skipped: it would rebuild the dist this test run already uses.
    await run('npm', ['link', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: ROOT, env: npmEnv({ NPM_CONFIG_PREFIX: linkPrefix }) });
    const linked = join(linkPrefix, 'bin', 'skill-up');
    expect(realpathSync(linked)).toBe(join(realpathSync(ROOT), 'bin/skill-up'));
    const { stdout } = await run(linked, ['--version'], { cwd: work });
    expect(stdout).toBe(`${VERSION}\n`);
  }, 60_000);
});
