/**
 * The GitHub Action (action.yml) and the example workflows (examples/workflows/): they validate
 * with @action-validator/cli (the JSON Schemas of GitHub's action and workflow files); the
 * action declares the inputs and outputs the README promises; no `${{ }}` is expanded inside a
 * shell script (GitHub's script-injection rule: inputs go through environment variables); the
 * install step puts the launcher (bin/skill-up) on PATH; and the action's run step, executed
 * with bash as GitHub runs it, maps only the given inputs to flags, never evaluates an input,
 * and exits with skill-up's exit code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { LAUNCHER } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VALIDATOR = join(ROOT, 'node_modules/.bin/action-validator');
const ACTION_FILE = join(ROOT, 'action.yml');
const WORKFLOWS = readdirSync(join(ROOT, 'examples/workflows'))
  .filter((f) => /\.ya?ml$/.test(f))
  .map((f) => join(ROOT, 'examples/workflows', f));

interface Step {
  id?: string;
  name?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}
const action = parse(readFileSync(ACTION_FILE, 'utf8')) as {
  inputs: Record<string, { default?: string; description: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
};
const runStep = action.runs.steps.find((s) => s.id === 'run')!;

/** Runs the action's `run` step as GitHub does (`bash --noprofile --norc -eo pipefail {0}`) with these inputs. */
function runStepWith(inputs: Record<string, string>, extraEnv: Record<string, string> = {}, cwd = ROOT) {
  const dir = mkdtempSync(join(tmpdir(), 'su-action-'));
  const script = join(dir, 'step.sh');
  writeFileSync(script, runStep.run!);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, TMPDIR: process.env.TMPDIR ?? tmpdir(), ...extraEnv };
  // Every INPUT_* variable the step declares, from `inputs` or the input's default.
  for (const [k, v] of Object.entries(runStep.env ?? {})) {
    const m = /^\$\{\{ inputs\.([a-z-]+) \}\}$/.exec(v);
    if (m) env[k] = inputs[m[1]!] ?? action.inputs[m[1]!]!.default ?? '';
  }
  const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { cwd, env, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, dir };
}

/** A stand-in for skill-up's command (an executable, as bin/skill-up is): records its argv as JSON and exits with $FAKE_EXIT. */
function fakeCli(dir: string): { cli: string; argv: () => string[] | null } {
  const script = join(dir, 'fake-cli.mjs');
  const cli = join(dir, 'fake-cli');
  const out = join(dir, 'argv.json');
  writeFileSync(script, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(out)}, JSON.stringify(process.argv.slice(2)));\nprocess.exit(Number(process.env.FAKE_EXIT ?? 0));\n`);
  writeFileSync(cli, `#!/bin/sh\nexec node ${JSON.stringify(script)} "$@"\n`, { mode: 0o755 });
  return { cli, argv: () => (existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as string[]) : null) };
}

describe('action.yml and the example workflows', () => {
  it('validate with @action-validator/cli', () => {
    expect(WORKFLOWS.map((f) => f.slice(ROOT.length))).toEqual(['examples/workflows/nightly.yml', 'examples/workflows/pr-gate.yml']);
    for (const file of [ACTION_FILE, ...WORKFLOWS]) {
      const r = spawnSync(VALIDATOR, [file], { encoding: 'utf8' });
      expect(r.status, `${file}:\n${r.stdout}${r.stderr}`).toBe(0);
    }
  });

  it('the validator does reject a broken action (the check is not vacuous)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-action-bad-'));
    const broken = join(dir, 'action.yml');
    writeFileSync(broken, readFileSync(ACTION_FILE, 'utf8').replace(/^ {6}shell: bash\n/m, ''));
    expect(spawnSync(VALIDATOR, [broken], { encoding: 'utf8' }).status).toBe(1);
  });

  it('is a composite action with the documented inputs and outputs', () => {
    expect(action.runs.using).toBe('composite');
    for (const i of ['path', 'engines', 'trials', 'baseline', 'min-pass-rate', 'min-uplift', 'no-regression', 'shard', 'args']) expect(action.inputs, i).toHaveProperty(i);
    // Every output is the run step's output of the same name, and those are exactly what the CLI writes.
    const names = Object.keys(action.outputs);
    for (const o of ['verdict', 'pass-rate', 'uplift', 'gate', 'result', 'report']) expect(names).toContain(o);
    for (const [name, o] of Object.entries(action.outputs)) expect(o.value).toBe(`\${{ steps.run.outputs.${name} }}`);
    const src = readFileSync(join(ROOT, 'src/report/github.ts'), 'utf8');
    const written = [...src.matchAll(/^ {4}\['([a-z-]+)', /gm)].map((m) => m[1]);
    expect(new Set(written)).toEqual(new Set(names));
  });

  it('no shell script expands ${{ }} (inputs reach scripts as environment variables)', () => {
    for (const file of [ACTION_FILE, ...WORKFLOWS]) {
      const doc = parse(readFileSync(file, 'utf8'));
      const steps: Step[] = doc.runs?.steps ?? Object.values(doc.jobs as Record<string, { steps: Step[] }>).flatMap((j) => j.steps);
      for (const s of steps) {
        if (s.run) expect(s.run, `${file}: step ${s.name ?? s.id}`).not.toContain('${{');
        // github-script's script is JavaScript evaluated as text: the same rule.
        const script = (s as { with?: { script?: string } }).with?.script;
        if (script) expect(script, `${file}: step ${s.name ?? s.id}`).not.toContain('${{');
      }
    }
  });
});

describe("the action's install step (bash, as GitHub runs it; npm ci faked)", () => {
  it('puts skill-up on PATH as a link to the launcher, bin/skill-up, which runs the CLI', () => {
    const step = action.runs.steps.find((s) => s.name === 'Install skill-up')!;
    const dir = mkdtempSync(join(tmpdir(), 'su-action-install-'));
    const script = join(dir, 'step.sh');
    writeFileSync(script, step.run!);
    mkdirSync(join(dir, 'fake-npm'));
    writeFileSync(join(dir, 'fake-npm', 'npm'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const githubPath = join(dir, 'github-path.txt');
    const env = { PATH: `${join(dir, 'fake-npm')}:${process.env.PATH ?? ''}`, HOME: dir, ACTION_PATH: ROOT, RUNNER_TEMP: dir, GITHUB_PATH: githubPath };
    const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { cwd: ROOT, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const bin = readFileSync(githubPath, 'utf8').trim();
    expect(realpathSync(join(bin, 'skill-up'))).toBe(realpathSync(LAUNCHER));
    const version = spawnSync(join(bin, 'skill-up'), ['--version'], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout, version.stderr).toBe(`${pkg.version}\n`);
  });
});

describe("the action's run step (bash, as GitHub runs it)", () => {
  it('passes only the inputs that are set, then --github', () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-action-'));
    const fake = fakeCli(dir);
    const r = runStepWith({}, { SKILL_UP_CLI: fake.cli });
    expect(r.code, r.stderr).toBe(0);
    expect(fake.argv()).toEqual(['run', '--github']);
  });

  it('maps every input to its flag', () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-action-'));
    const fake = fakeCli(dir);
    const r = runStepWith(
      { path: 'skills/my skill', engines: 'claude_code,codex', trials: '5', baseline: 'true', 'min-pass-rate': '0.8', 'min-uplift': '10', 'no-regression': 'prev/iteration-3', shard: '2/3', args: '--margin 5\n  --on-inconclusive pass' },
      { SKILL_UP_CLI: fake.cli },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(fake.argv()).toEqual([
      'run',
      'skills/my skill',
      '--engine',
      'claude_code,codex',
      '--trials',
      '5',
      '--baseline',
      '--min-pass-rate',
      '0.8',
      '--min-uplift',
      '10',
      '--no-regression',
      'prev/iteration-3',
      '--shard',
      '2/3',
      '--margin',
      '5',
      '--on-inconclusive',
      'pass',
      '--github',
    ]);
    expect(r.stdout).toContain("skill-up run skills/my\\ skill --engine claude_code\\,codex");
  });

  it('never evaluates an input: no command substitution, no globbing, no workflow command in the log', () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-action-'));
    const fake = fakeCli(dir);
    const pwned = join(dir, 'pwned');
    const r = runStepWith(
      { path: `$(touch ${pwned})`, engines: `x; touch ${pwned}`, args: `* $(touch ${pwned}) \`touch ${pwned}\` 'a b'\n::error::injected` },
      { SKILL_UP_CLI: fake.cli },
      dir,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(pwned)).toBe(false);
    expect(fake.argv()).toEqual(['run', `$(touch ${pwned})`, '--engine', `x; touch ${pwned}`, '*', '$(touch', `${pwned})`, '`touch', `${pwned}\``, "'a", "b'", '::error::injected', '--github']);
    expect(r.stdout).not.toMatch(/^::/m);
  });

  it('refuses a baseline that is not true or false, before running anything', () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-action-'));
    const fake = fakeCli(dir);
    const r = runStepWith({ baseline: 'yes' }, { SKILL_UP_CLI: fake.cli });
    expect(r.code).toBe(2);
    expect(fake.argv()).toBeNull();
    expect(r.stdout).toContain('::error title=skill-up::the input baseline must be true or false');
  });

  it("exits with skill-up's exit code", () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-action-'));
    const fake = fakeCli(dir);
    for (const code of [1, 3, 4]) expect(runStepWith({}, { SKILL_UP_CLI: fake.cli, FAKE_EXIT: String(code) }).code).toBe(code);
  });

  it('with the real CLI: an inconclusive uplift gate exits 4 and sets the outputs', () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-action-'));
    const output = join(dir, 'github-output.txt');
    const r = runStepWith(
      { path: 'examples/greeting-files', trials: '1', baseline: 'true', 'min-uplift': '10', args: `--output-dir ${join(dir, 'out')}` },
      { SKILL_UP_CLI: LAUNCHER, GITHUB_OUTPUT: output, GITHUB_WORKSPACE: ROOT, CI: '1' },
    );
    expect(r.code, r.stdout + r.stderr).toBe(4);
    const text = readFileSync(output, 'utf8');
    expect(text).toMatch(/^gate=inconclusive$/m);
    expect(text).toMatch(/^exit-code=4$/m);
    expect(text).toMatch(/^verdict=inconclusive$/m);
    expect(text).toContain(`result=${join(dir, 'out', 'iteration-1', 'result.json')}\n`);
    expect(r.stdout).toMatch(/^::warning title=skill-up gate min_uplift \(greeter-agent\) inconclusive::/m);
  });
});
