/**
 * The gates and exit codes of `skill-up run`, end to end through the built CLI, with an agent
 * that passes at random (test/fixtures/random-agent): every pass or fail is a deterministic
 * function of (seed, iteration, case, variant, trial), so each expectation below is exact,
 * and the pass percentages in the case prompts make the true effect known.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caseYaml, uniformCases, writeRandomSuite } from '../fixtures/random-agent/suite.mjs';
import { runCli, type CliRun } from './helpers.js';

type Case = { id: string; prompt: string; expectFile?: string };
interface Gate { name: string; engine: string | null; threshold: number | null; figure: number | null; interval: { low: number; high: number } | null; state: string; reason: string }

function root(): string {
  return mkdtempSync(join(tmpdir(), 'su-gates-'));
}

function readResult(out: string, iteration = 1) {
  return JSON.parse(readFileSync(join(out, `iteration-${iteration}`, 'result.json'), 'utf8'));
}

function gate(doc: { gates: Gate[] }, name: string): Gate {
  const g = doc.gates.find((x) => x.name === name);
  if (!g) throw new Error(`no gate ${name} in ${JSON.stringify(doc.gates.map((x) => x.name))}`);
  return g;
}

/** The printed line of a gate: `  STATE  name (engine): reason`. */
function gateLine(r: CliRun, name: string): string {
  const line = r.stdout.split('\n').find((l) => new RegExp(`^  (PASS|FAIL|INCONCLUSIVE) +${name}\\b`).test(l));
  if (!line) throw new Error(`no printed gate ${name} in:\n${r.stdout}`);
  return line;
}

/** A run that did not crash: no internal error, no stack trace, the exit line printed. */
function expectClean(r: CliRun): void {
  expect(r.stderr).not.toContain('internal error');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('warning: report format');
  expect(r.stdout).toContain(`exit code ${r.code}: `);
}

/** A usage or config error: exit 2, one message on stderr naming `what`, nothing run, no stack trace. */
function expectUsageError(r: CliRun, what: string | RegExp): void {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('internal error');
  expect(r.stderr).not.toContain('job(s) of');
  const lines = r.stderr.trim().split('\n').filter((l) => !/^\d+ error\(s\)$/.test(l));
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(what);
}

const run = (skill: string, out: string, args: string[], seed = 0) => runCli(['run', skill, '--output-dir', out, ...args], { env: { RANDOM_AGENT_SEED: String(seed) } });

/** 18 cases that always pass and 2 that never do: with_skill pass rate 90%, no randomness. */
const NINETY: Case[] = uniformCases(20, (i: number) => `pass_with=${i <= 18 ? 100 : 0}`);

describe('skill-up run gates (built CLI, random agent)', () => {
  it('an A/A suite never passes --min-uplift 10; a real uplift (30% → 90%) does', async () => {
    const dir = root();
    const aa = writeRandomSuite(dir, { name: 'aa-skill', cases: uniformCases(20, 'pass_with=50 pass_without=50'), trials: 3 });
    const seen: number[] = [];
    for (let seed = 1; seed <= 6; seed++) {
      const out = join(dir, `aa-out-${seed}`);
      const r = await run(aa, out, ['--baseline', '--min-uplift', '10'], seed);
      expectClean(r);
      expect([1, 4], r.stdout).toContain(r.code);
      const doc = readResult(out);
      expect(doc.exit_code).toBe(r.code);
      const g = gate(doc, 'min_uplift');
      expect(g.state).toBe(r.code === 1 ? 'fail' : 'inconclusive');
      expect(g.threshold).toBeCloseTo(0.1, 9);
      expect(g.interval!.low).toBeLessThan(0.1);
      expect(gateLine(r, 'min_uplift')).toMatch(r.code === 1 ? /^  FAIL/ : /^  INCONCLUSIVE/);
      // An A/A difference is never called an improvement at α = 0.05 by these seeds.
      expect(doc.summary.uplift[0].verdict).not.toBe('improves');
      expect(doc.totals.jobs).toBe(120);
      seen.push(r.code!);
    }
    expect(seen).toHaveLength(6);

    const real = writeRandomSuite(dir, { name: 'uplift-skill', cases: uniformCases(20, 'pass_with=90 pass_without=30'), trials: 3 });
    const out = join(dir, 'uplift-out');
    const r = await run(real, out, ['--baseline', '--min-uplift', '10'], 1);
    expectClean(r);
    expect(r.code, r.stdout).toBe(0);
    expect(gateLine(r, 'min_uplift')).toMatch(/^  PASS +min_uplift \(random-agent\): uplift \+\d+ points \[\+\d+, \+\d+\] .* is at least \+10 points$/);
    expect(r.stdout).toMatch(/uplift: \+\d+ points \[95% CI \+\d+ to \+\d+\] over 20 case\(s\).*: the skill improves results/);
    expect(r.stdout).toContain('exit code 0: every gate passed');
    const doc = readResult(out);
    const g = gate(doc, 'min_uplift');
    expect(g.state).toBe('pass');
    expect(g.interval!.low).toBeGreaterThanOrEqual(0.1);
    expect(g.figure).toBeGreaterThan(0.4);
    expect(doc.summary.uplift[0].verdict).toBe('improves');
    expect(doc.summary.uplift[0].p).toBeLessThan(0.05);
  }, 120_000);

  it('--min-pass-rate: PASS → 0, FAIL → 1, INCONCLUSIVE → 4; --on-inconclusive maps 4 to 0 or 1', async () => {
    const dir = root();
    const skill = writeRandomSuite(dir, { cases: NINETY, trials: 3 });
    const cases: [string[], number, string][] = [
      [['--min-pass-rate', '0.5'], 0, 'pass'],
      [['--min-pass-rate', '99%'], 1, 'fail'],
      [['--min-pass-rate', '0.9'], 4, 'inconclusive'],
      [['--min-pass-rate', '0.9', '--on-inconclusive', 'pass'], 0, 'inconclusive'],
      [['--min-pass-rate', '0.9', '--on-inconclusive', 'fail'], 1, 'inconclusive'],
    ];
    let n = 0;
    for (const [args, code, state] of cases) {
      const out = join(dir, `out-${n++}`);
      const r = await run(skill, out, args);
      expectClean(r);
      expect(r.code, `${args.join(' ')}\n${r.stdout}`).toBe(code);
      const line = gateLine(r, 'min_pass_rate');
      expect(line).toMatch(new RegExp(`^  ${state.toUpperCase()} +min_pass_rate \\(random-agent\\): with_skill pass rate 90% \\[\\d+%, \\d+%\\]`));
      const doc = readResult(out);
      expect(doc.exit_code).toBe(code);
      const g = gate(doc, 'min_pass_rate');
      expect(g.state).toBe(state);
      expect(g.figure).toBeCloseTo(0.9, 9);
      expect(g.interval!.low).toBeLessThan(0.9);
      expect(g.interval!.high).toBeGreaterThan(0.9);
      // No statistical gate → no default all_trials_passed gate beside it.
      expect(doc.gates.map((x: Gate) => x.name)).toEqual(['max_error_rate', 'min_pass_rate']);
      if (state === 'inconclusive') expect(r.stdout).toContain(code === 4 ? 'exit code 4: a gate is inconclusive' : `exit code ${code}: `);
    }
    // Without any gate flag the default gate is "every with_skill trial passed": 2 cases failed.
    const out = join(dir, 'out-default');
    const r = await run(skill, out, []);
    expect(r.code).toBe(1);
    expect(gateLine(r, 'all_trials_passed')).toMatch(/^  FAIL +all_trials_passed: 54 of 60 graded with_skill trial\(s\) passed/);
  }, 120_000);

  it('errored with_skill trials (a crash, garbage output) → exit 3, counted; --max-error-rate 50% and --errors-as-failures change that', async () => {
    const dir = root();
    const cases: Case[] = [
      { id: 'crashes', prompt: 'pass_with=100 pass_without=100 error_with=100 error_mode=exit' },
      { id: 'garbles', prompt: 'pass_with=100 pass_without=100 error_with=100 error_mode=garbage' },
      { id: 'flaky-crash', prompt: 'pass_with=100 pass_without=100 error_with=50' },
      ...uniformCases(17, 'pass_with=100 pass_without=100'),
    ];
    const skill = writeRandomSuite(dir, { cases, trials: 2 });

    const out = join(dir, 'out-default');
    const r = await run(skill, out, ['--baseline']);
    expectClean(r);
    expect(r.code, r.stdout).toBe(3);
    const doc = readResult(out);
    const errored = doc.jobs.filter((j: { status: string }) => j.status === 'error');
    const errors = errored.length;
    expect(errors).toBeGreaterThanOrEqual(4);
    expect(errors).toBeLessThanOrEqual(6);
    expect(new Set(errored.map((j: { variant: string }) => j.variant))).toEqual(new Set(['with_skill']));
    expect(errored.filter((j: { case_id: string }) => j.case_id === 'crashes')).toHaveLength(2);
    expect(errored.filter((j: { case_id: string }) => j.case_id === 'garbles')).toHaveLength(2);
    const reasonOf = (id: string) => errored.find((j: { case_id: string }) => j.case_id === id).reason;
    expect(reasonOf('crashes')).toMatch(/exited with code 1: random-agent: simulated crash/);
    expect(reasonOf('garbles')).toMatch(/stdout: not a SessionResult JSON.*it starts with: this is not a SessionResult/);
    expect(doc.totals.error).toBe(errors);
    const w = doc.summary.variants.find((v: { variant: string }) => v.variant === 'with_skill');
    const wo = doc.summary.variants.find((v: { variant: string }) => v.variant === 'without_skill');
    expect(w.errors).toBe(errors);
    expect(wo.errors).toBe(0);
    expect(w.passed).toBe(40 - errors);
    expect(w.failed).toBe(0);
    const eg = gate(doc, 'max_error_rate');
    expect(eg.state).toBe('fail');
    expect(eg.figure).toBeCloseTo(errors / 40, 9); // per arm: the with_skill arm is the worst
    expect(gateLine(r, 'max_error_rate')).toContain(`${errors} of 80 trial(s) errored; worst arm random-agent with_skill: ${errors} of 40`);
    expect(r.stdout).toContain('exit code 3: errors above the allowed rate');
    expect(r.stdout).toContain(`with_skill: ${40 - errors}/${40 - errors} trials passed`);
    expect(r.stdout).toContain(`${errors} error(s)`);

    const tolerant = join(dir, 'out-tolerant');
    const t = await run(skill, tolerant, ['--baseline', '--max-error-rate', '50%']);
    expectClean(t);
    expect(t.code, t.stdout).toBe(0); // the graded trials all passed, the errors are within the allowed rate
    expect(gate(readResult(tolerant), 'max_error_rate').state).toBe('pass');
    expect(gate(readResult(tolerant), 'all_trials_passed').state).toBe('pass');

    const worst = join(dir, 'out-worst');
    const f = await run(skill, worst, ['--baseline', '--max-error-rate', '50%', '--errors-as-failures']);
    expectClean(f);
    expect(f.code, f.stdout).toBe(1);
    const fdoc = readResult(worst);
    expect(fdoc.summary.options.errors_as_failures).toBe(true);
    const fw = fdoc.summary.variants.find((v: { variant: string }) => v.variant === 'with_skill');
    expect(fw.failed).toBe(errors);
    expect(fw.passed).toBe(40 - errors);
    expect(gate(fdoc, 'all_trials_passed').state).toBe('fail');
    expect(gateLine(f, 'all_trials_passed')).toContain(`${40 - errors} of 40 graded with_skill trial(s) passed`);
    expect(gateLine(f, 'max_error_rate')).toContain(`${errors} of 80 trial(s) errored, counted as failures (--errors-as-failures)`);
    expect(fw.errors).toBe(errors); // still counted and shown
    // Counted as failures, errors no longer trip the error gate: exit 1 even at the default --max-error-rate 0.
    const alone = join(dir, 'out-worst-alone');
    const a = await run(skill, alone, ['--baseline', '--errors-as-failures']);
    expect(a.code, a.stdout).toBe(1);
    expect(gate(readResult(alone), 'max_error_rate').state).toBe('pass');
    expect(readResult(alone).totals.error).toBe(errors);
  }, 120_000);

  it('--no-regression <previous iteration folder>: a case broken between two runs fails the gate and is named; an unchanged run passes', async () => {
    const dir = root();
    const skill = writeRandomSuite(dir, { cases: uniformCases(20, 'pass_with=100'), trials: 4 });
    const out = join(dir, 'out');
    expect((await run(skill, out, [])).code).toBe(0);
    // Break c07 on purpose: its expected file is renamed in the case file.
    writeFileSync(join(skill, 'evals/cases/c07.yaml'), caseYaml({ prompt: 'pass_with=100', expectFile: 'renamed.txt' }));
    const r = await run(skill, out, ['--no-regression', join(out, 'iteration-1')]);
    expectClean(r);
    expect(r.code, r.stdout).toBe(1);
    const line = gateLine(r, 'no_regression');
    expect(line).toMatch(/^  FAIL +no_regression \(random-agent\): pass rate -5 points .*iteration-1\/result\.json over 20 case\(s\); one-sided p = .* regressed \(c07 100%→0%\)$/);
    const doc = readResult(out, 2);
    const g = gate(doc, 'no_regression');
    expect(g.state).toBe('fail');
    expect(g.reason).toContain('c07 100%→0%');
    expect(g.figure).toBeCloseTo(-0.05, 9);
    expect(g.threshold).toBeCloseTo(-0.1, 9);
    expect(doc.decision.config.no_regression.margin).toBeCloseTo(0.1, 9);
    // The default all-trials gate is replaced by the statistical one.
    expect(doc.gates.map((x: Gate) => x.name)).toEqual(['max_error_rate', 'no_regression']);

    const steady = writeRandomSuite(dir, { name: 'steady-skill', cases: uniformCases(20, 'pass_with=100'), trials: 3 });
    const sout = join(dir, 'steady-out');
    expect((await run(steady, sout, [])).code).toBe(0);
    const s = await run(steady, sout, ['--no-regression', join(sout, 'iteration-1'), '--margin', '10']);
    expectClean(s);
    expect(s.code, s.stdout).toBe(0);
    expect(gateLine(s, 'no_regression')).toMatch(/^  PASS +no_regression \(random-agent\): pass rate \+0 points \[-\d+, \+\d+\] .* no drop larger than 10 points$/);
    const sg = gate(readResult(sout, 2), 'no_regression');
    expect(sg.state).toBe('pass');
    expect(sg.interval!.low).toBeGreaterThanOrEqual(-0.1);
    // A result.json path works as well as its folder.
    const again = await run(steady, sout, ['--no-regression', join(sout, 'iteration-1', 'result.json')]);
    expect(again.code).toBe(0);
  }, 120_000);

  it('eval.yaml `gates:` works like the flags, and the flags override it', async () => {
    const dir = root();
    const skill = writeRandomSuite(dir, { cases: NINETY, trials: 3, gates: '{ min_pass_rate: 0.99 }' });
    const out = join(dir, 'out');
    const r = await run(skill, out, []);
    expectClean(r);
    expect(r.code, r.stdout).toBe(1);
    expect(gateLine(r, 'min_pass_rate')).toMatch(/^  FAIL .* is below 99%$/);
    expect(readResult(out).decision.config.min_pass_rate).toBeCloseTo(0.99, 9);
    const o = await run(skill, out, ['--min-pass-rate', '0.5']);
    expect(o.code, o.stdout).toBe(0);
    expect(gateLine(o, 'min_pass_rate')).toMatch(/^  PASS .* is at least 50%$/);
    expect(readResult(out, 2).decision.config.min_pass_rate).toBeCloseTo(0.5, 9);

    // on_inconclusive in the file; --on-inconclusive wins.
    const inc = writeRandomSuite(dir, { name: 'inc-skill', cases: NINETY, trials: 3, gates: '{ min_pass_rate: 0.9, on_inconclusive: pass }' });
    const iout = join(dir, 'inc-out');
    expect((await run(inc, iout, [])).code).toBe(0);
    expect(gate(readResult(iout), 'min_pass_rate').state).toBe('inconclusive');
    expect((await run(inc, iout, ['--on-inconclusive', 'fail'])).code).toBe(1);

    // min_uplift with benchmark.enabled (no --baseline needed), and max_error_rate / errors_as_failures.
    const up = writeRandomSuite(dir, { name: 'up-skill', cases: uniformCases(20, 'pass_with=90 pass_without=30'), trials: 3, benchmark: true, gates: '{ min_uplift: 10 }' });
    const uout = join(dir, 'up-out');
    const u = await run(up, uout, [], 1);
    expect(u.code, u.stdout).toBe(0);
    expect(gate(readResult(uout), 'min_uplift').state).toBe('pass');
    expect((await run(up, uout, ['--min-uplift', '90'], 1)).code).toBe(1);

    const errCases: Case[] = [{ id: 'crashes', prompt: 'pass_with=100 error_with=100' }, ...uniformCases(9, 'pass_with=100')];
    const err = writeRandomSuite(dir, { name: 'err-skill', cases: errCases, trials: 2, gates: '{ max_error_rate: 0.5 }' });
    const eout = join(dir, 'err-out');
    expect((await run(err, eout, [])).code).toBe(0);
    expect((await run(err, eout, ['--max-error-rate', '0'])).code).toBe(3);
    const eaf = writeRandomSuite(dir, { name: 'eaf-skill', cases: errCases, trials: 2, gates: '{ max_error_rate: 0.5, errors_as_failures: true }' });
    const fout = join(dir, 'eaf-out');
    expect((await run(eaf, fout, [])).code).toBe(1);

    // no_regression.baseline is relative to the skill folder.
    const nr = writeRandomSuite(dir, { name: 'nr-skill', cases: uniformCases(20, 'pass_with=100'), trials: 4 });
    const nout = join(dir, 'nr-out');
    expect((await run(nr, nout, [])).code).toBe(0);
    writeFileSync(join(nr, 'evals/eval.yaml'), readFileSync(join(nr, 'evals/eval.yaml'), 'utf8') + 'gates:\n  no_regression:\n    baseline: ../nr-out/iteration-1\n    margin: 10\n');
    writeFileSync(join(nr, 'evals/cases/c03.yaml'), caseYaml({ prompt: 'pass_with=100', expectFile: 'renamed.txt' }));
    const n = await run(nr, nout, []);
    expect(n.code, n.stdout).toBe(1);
    expect(gate(readResult(nout, 2), 'no_regression').reason).toContain('c03 100%→0%');
  }, 180_000);

  it('bad gate values are usage or config errors: exit 2, one clear message, no stack trace', async () => {
    const dir = root();
    const skill = writeRandomSuite(dir, { cases: uniformCases(2, 'pass_with=100'), trials: 1 });
    const out = join(dir, 'out');
    const notResult = join(dir, 'other.json');
    writeFileSync(notResult, JSON.stringify({ name: 'not a run', version: 1 }));
    const flagCases: [string[], RegExp][] = [
      [['--min-pass-rate', '1.5'], /^skill-up run: --min-pass-rate must be a pass rate from 0 to 1 .*got `1\.5`/],
      [['--min-pass-rate', 'abc'], /^skill-up run: --min-pass-rate must be a pass rate from 0 to 1 .*got `abc`/],
      [['--min-uplift', '10'], /^skill-up run: --min-uplift needs the without_skill arm: add --baseline/],
      [['--margin', '5'], /^skill-up run: --margin is the tolerance of --no-regression/],
      // (a missing path under this test's folder: /nonexistent itself may exist on a shared machine)
      [['--no-regression', join(dir, 'nonexistent')], /^skill-up run: --no-regression: \/.*\/nonexistent: not found; expected a skill-up result\.json/],
      [['--no-regression', dir], /^skill-up run: --no-regression: \/.*: is a folder without result\.json; expected a skill-up result\.json/],
      [['--no-regression', notResult], /^skill-up run: --no-regression: .*other\.json: is a JSON object with `name`, `version`, not a skill-up result\.json/],
      [['--no-regression', join(skill, 'evals/eval.yaml')], /^skill-up run: --no-regression: .*eval\.yaml: not valid JSON/],
      [['--on-inconclusive', 'maybe'], /^skill-up run: --on-inconclusive must be `pass` or `fail`, got `maybe`/],
      [['--alpha', '0'], /^skill-up run: --alpha must be a significance level above 0 and at most 0\.5 .*got `0`/],
      [['--max-error-rate', '2'], /^skill-up run: --max-error-rate must be a share of trials from 0 to 1 .*got `2`/],
    ];
    for (const [args, message] of flagCases) expectUsageError(await run(skill, out, args), message);
    expect(existsSync(out)).toBe(false);

    const yamlCases: [string, RegExp][] = [
      ['{ min_pass_rate: 2 }', /^.*evals\/eval\.yaml:\d+:\d+: gates\.min_pass_rate: expected a number from 0 to 1, got a number `2`$/],
      ['{ unknown_gate: 1 }', /^.*evals\/eval\.yaml:\d+:\d+: gates\.unknown_gate: unknown key `unknown_gate`; expected one of `min_pass_rate`/],
      ['{ on_inconclusive: maybe }', /^.*evals\/eval\.yaml:\d+:\d+: gates\.on_inconclusive: /],
      ['{ min_uplift: 10 }', /^skill-up run: gates\.min_uplift of .*evals\/eval\.yaml needs the without_skill arm: add --baseline/],
    ];
    for (const [gates, message] of yamlCases) {
      const bad = writeRandomSuite(mkdtempSync(join(dir, 'yaml-')), { cases: uniformCases(2, 'pass_with=100'), trials: 1, gates });
      const r = await run(bad, out, []);
      expectUsageError(r, message);
      // The file:line points at the `gates:` line (the last line of eval.yaml).
      const m = /eval\.yaml:(\d+):/.exec(r.stderr);
      if (m) expect(readFileSync(join(bad, 'evals/eval.yaml'), 'utf8').split('\n')[Number(m[1]) - 1]).toMatch(/^gates:/);
    }
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it('--iteration 3 empties and rewrites iteration-1..3 and prints a stability summary; --dry-run prints a power table and runs nothing', async () => {
    const dir = root();
    const skill = writeRandomSuite(dir, { cases: uniformCases(8, 'pass_with=60 pass_without=40'), trials: 2 });
    const out = join(dir, 'out');
    for (const n of [1, 2]) {
      mkdirSync(join(out, `iteration-${n}`, 'stale-case'), { recursive: true });
      writeFileSync(join(out, `iteration-${n}`, 'stale.txt'), 'from an earlier run\n');
    }
    const r = await run(skill, out, ['--baseline', '--iteration', '3', '--min-pass-rate', '0.5']);
    expectClean(r);
    expect(readdirSync(out).sort()).toEqual(['iteration-1', 'iteration-2', 'iteration-3']);
    const codes: number[] = [];
    for (const n of [1, 2, 3]) {
      expect(existsSync(join(out, `iteration-${n}`, 'stale.txt'))).toBe(false);
      expect(existsSync(join(out, `iteration-${n}`, 'stale-case'))).toBe(false);
      const doc = readResult(out, n);
      expect(doc.iteration).toBe(n);
      expect(doc.totals.jobs).toBe(32);
      codes.push(doc.exit_code);
    }
    // The iterations draw afresh (the agent's seed includes the iteration number).
    const statuses = [1, 2, 3].map((n) => readResult(out, n).jobs.map((j: { status: string }) => j.status).join(','));
    expect(new Set(statuses).size).toBeGreaterThan(1);
    expect(r.stdout).toContain('stability over 3 iteration(s):');
    expect(r.stdout).toMatch(/^ {2}random-agent c01 +\S+ \S+ \S+/m);
    expect(r.stdout).toContain('(unstable)');
    expect(r.stdout).toMatch(/^ {2}verdict \(random-agent\): (improves|regresses|inconclusive), (improves|regresses|inconclusive), (improves|regresses|inconclusive)$/m);
    const worst = [3, 1, 4].find((c) => codes.includes(c)) ?? 0;
    expect(r.stdout).toContain(`exit codes: ${codes.join(', ')} → ${worst}`);
    expect(r.code).toBe(worst);

    const dryOut = join(dir, 'dry-out');
    const d = await run(skill, dryOut, ['--baseline', '--dry-run', '--min-uplift', '10']);
    expect(d.code, d.stderr).toBe(0);
    expect(d.stderr).not.toMatch(/^\s+at /m);
    expect(d.stdout).toContain('Would run 32 job(s) at parallelism 8 on random-agent:');
    expect(d.stdout).toMatch(/this plan \(8 case\(s\) × 2 trial\(s\)\) detects an uplift of/);
    expect(d.stdout).toMatch(/^ {2}uplift +1 trial +3 trials +5 trials +10 trials$/m);
    expect(d.stdout).toMatch(/^ {2}\+10 points +\d+ +\d+ +\d+ +\d+$/m);
    expect(d.stdout).not.toContain('gates:');
    expect(existsSync(dryOut)).toBe(false);
  }, 120_000);
});
