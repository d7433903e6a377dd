/**
 * `skill-up run --shard i/n` and `skill-up merge`, end to end through the built CLI with the
 * deterministic random agent (test/fixtures/random-agent): a suite run unsharded and as three
 * shards merged back gives exactly the same job set, statistics and gates; merging a shard
 * twice, shards of two different suites, or an incomplete set is refused with one message.
 *
 * The agent's draws depend on the iteration number of the output folder, so every run below
 * writes `iteration-1` under its own root.
 */
import { appendFileSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { uniformCases, writeRandomSuite } from '../fixtures/random-agent/suite.mjs';
import { runCli, type CliRun } from './helpers.js';

// result.json read back as plain JSON: the fields are checked by the assertions themselves.
type Doc = Record<string, any>;

const GATES = ['--min-pass-rate', '0.5', '--min-uplift', '5', '--max-error-rate', '0.2', '--on-inconclusive', 'pass'];
const read = (dir: string): Doc => JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));

/** The statistics with the figures that depend on wall time left out. */
function untimed(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v, (k, x) => (/duration/.test(k) ? undefined : x)));
}

/** A refusal: exit 2, nothing on stdout, one line on stderr matching `what`, no stack trace. */
function expectRefused(r: CliRun, what: RegExp): void {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('internal error');
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^skill-up (merge|run): /);
  expect(lines[0]).toMatch(what);
}

describe('skill-up run --shard and skill-up merge (built CLI, random agent)', () => {
  let dir: string;
  let skill: string;
  let full: string;
  const shard: string[] = [];
  let shardRuns: CliRun[] = [];
  let unshardedRun: CliRun;

  const run = (args: string[], cwd?: string) => runCli(args, { env: { RANDOM_AGENT_SEED: '3' }, ...(cwd ? { cwd } : {}) });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'su-merge-'));
    // 14 cases with pass rates from 20% to 98% with the skill, 10% to 62% without; one errors now and then.
    const cases = uniformCases(14, (i: number) => `pass_with=${20 + i * 6} pass_without=${10 + i * 4}${i === 5 ? ' error_with=30' : ''}`);
    skill = writeRandomSuite(dir, { cases, trials: 3, benchmark: true, formats: ['json', 'junit', 'html'] });
    unshardedRun = await run(['run', skill, '--output-dir', join(dir, 'full'), ...GATES]);
    full = join(dir, 'full', 'iteration-1');
    shardRuns = [];
    for (let i = 1; i <= 3; i++) {
      shardRuns.push(await run(['run', skill, '--output-dir', join(dir, `shard-${i}`), '--shard', `${i}/3`, ...GATES]));
      shard.push(join(dir, `shard-${i}`, 'iteration-1'));
    }
  }, 120_000);

  it('a shard runs whole cases, records its part in result.json, and --dry-run shows it', async () => {
    expect([0, 1, 3, 4]).toContain(unshardedRun.code);
    for (const r of shardRuns) expect(r.stderr).not.toContain('internal error');
    const docs = shard.map(read);
    const plan = read(full).jobs.map((j: Doc) => j.case_id).filter((c: string, i: number, a: string[]) => a.indexOf(c) === i);
    for (const [i, d] of docs.entries()) {
      expect(d.shard).toMatchObject({ index: i + 1, count: 3, plan_cases: plan });
      expect(new Set(d.jobs.map((j: Doc) => j.case_id))).toEqual(new Set(d.shard.cases));
      // Every variant and trial of each of its cases: 2 variants × 3 trials.
      expect(d.jobs).toHaveLength(d.shard.cases.length * 6);
      expect(d.suite_hash).toBe(read(full).suite_hash);
    }
    expect(docs.flatMap((d) => d.shard.cases).sort()).toEqual([...plan].sort());
    expect(docs.map((d) => d.shard.cases.length)).toEqual([5, 5, 4]);

    const dry = await run(['run', skill, '--shard', '2/3', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`Shard 2/3: 5 of the plan's 14 case(s): ${docs[1]!.shard.cases.join(', ')}\n`);
    expect(dry.stdout).toContain('Would run 30 job(s)');
  });

  it('merging the three shards gives the job set, statistics, gates and exit code of the unsharded run', async () => {
    const out = join(dir, 'merged');
    const r = await run(['merge', ...shard.reverse(), '--output-dir', out]);
    shard.reverse();
    expect(r.stderr).not.toContain('internal error');
    expect(r.stderr).toMatch(/^skill-up \S+: merging 3 of 3 shard\(s\): 84 job\(s\) of 14 case\(s\) → .*merged\/iteration-1\n$/);
    expect(r.code).toBe(unshardedRun.code);
    const m = read(join(out, 'iteration-1'));
    const u = read(full);
    expect(m.jobs.map((j: Doc) => [j.id, j.status, j.case_id, j.engine, j.variant, j.trial, j.final_message])).toEqual(u.jobs.map((j: Doc) => [j.id, j.status, j.case_id, j.engine, j.variant, j.trial, j.final_message]));
    expect(untimed(m.summary)).toEqual(untimed(u.summary));
    expect(m.gates).toEqual(u.gates);
    expect(m.decision).toEqual(u.decision);
    expect(m.exit_code).toBe(u.exit_code);
    expect(m.totals).toEqual(u.totals);
    expect(m.cost).toEqual(u.cost);
    expect(m.suite_hash).toBe(u.suite_hash);
    expect(m.engines).toEqual(u.engines);
    expect(m.options).toMatchObject({ trials: null, baseline: true });
    expect(m.options.argv).not.toContain('--shard');
    // The verdict and gates printed are the unsharded run's, line for line.
    const decisionLines = (s: string) => s.split('\n').filter((l) => /^(random-agent (with_skill|without_skill|uplift): |  (p = |cases: )|  (PASS|FAIL|INCONCLUSIVE) +\w+|exit code \d)/.test(l));
    expect(decisionLines(r.stdout).length).toBeGreaterThan(6);
    expect(decisionLines(r.stdout)).toEqual(decisionLines(unshardedRun.stdout));
    // Some figure really differs between a shard and the whole: the merge did recompute.
    expect(untimed(read(shard[0]!).summary)).not.toEqual(untimed(u.summary));
    expect(m.merge).toMatchObject({ count: 3, partial: false, missing_shards: [], missing_cases: [] });
    expect(m.merge.shards.map((s: Doc) => [s.index, s.source, s.jobs])).toEqual(shard.map((s, i) => [i + 1, s, read(s).jobs.length]));
    expect(m.started_at).toBe(shard.map((s) => read(s).started_at).sort()[0]);
    expect(m.ended_at).toBe(shard.map((s) => read(s).ended_at).sort()[2]);
    // Every report, and every job folder with its files.
    for (const f of ['result.json', 'report.xml', 'summary.md', 'benchmark.json', 'benchmark.md', 'report.html']) expect(r.stdout).toContain(`wrote ${join(out, 'iteration-1', f)}\n`);
    for (const j of m.jobs) {
      expect(existsSync(join(out, 'iteration-1', j.output_dir, 'transcript.json')) || j.status === 'error', j.id).toBe(true);
      expect(existsSync(join(out, 'iteration-1', j.output_dir, 'grading.json')), j.id).toBe(true);
    }
    expect(readFileSync(join(out, 'iteration-1', 'report.xml'), 'utf8').match(/<testcase /g)).toHaveLength(readFileSync(join(full, 'report.xml'), 'utf8').match(/<testcase /g)!.length);
    const bm = JSON.parse(readFileSync(join(out, 'iteration-1', 'benchmark.json'), 'utf8'));
    const bu = JSON.parse(readFileSync(join(full, 'benchmark.json'), 'utf8'));
    expect(bm.runs.map((x: Doc) => [x.eval_name, x.configuration, x.run_number, x.result.pass_rate])).toEqual(bu.runs.map((x: Doc) => [x.eval_name, x.configuration, x.run_number, x.result.pass_rate]));
    // The merged run is a valid run for the other commands.
    const rep = await run(['report', join(out, 'iteration-1'), '--format', 'markdown']);
    expect(rep.code, rep.stderr).toBe(0);
    const cmp = await run(['compare', full, join(out, 'iteration-1')]);
    expect(cmp.stdout).toMatch(/0 regressed, 0 improved, 14 unchanged/);
  });

  it('by default writes the next iteration beside the first shard', async () => {
    const r = await run(['merge', ...shard]);
    expect(r.stderr).not.toContain('internal error');
    expect(existsSync(join(dir, 'shard-1', 'iteration-2', 'result.json'))).toBe(true);
    expect(read(join(dir, 'shard-1', 'iteration-2')).iteration).toBe(2);
  });

  it('refuses a shard given twice, two copies of one shard, and a missing shard; nothing is written', async () => {
    const out = join(dir, 'refused');
    expectRefused(await run(['merge', shard[0]!, shard[1]!, shard[2]!, shard[0]!, '--output-dir', out]), /is given twice: give each shard once/);
    const copy = join(dir, 'copy-of-1', 'iteration-1');
    cpSync(shard[0]!, copy, { recursive: true });
    expectRefused(await run(['merge', shard[0]!, copy, shard[1]!, shard[2]!, '--output-dir', out]), /shard-1\/iteration-1 and .*copy-of-1\/iteration-1 are both shard 1\/3: give each shard once/);
    const cases2 = read(shard[1]!).shard.cases.join(', ');
    const missing = await run(['merge', shard[0]!, shard[2]!, '--output-dir', out]);
    expectRefused(missing, new RegExp(`shard\\(s\\) 2/3 missing \\(case\\(s\\) ${cases2} not in any given folder; .*\\); give every shard, or --allow-partial to merge these`));
    expectRefused(await run(['merge', full, shard[1]!, '--output-dir', out]), /full\/iteration-1 is not a shard: its result\.json has no `shard`/);
    expectRefused(await run(['merge', join(dir, 'shard-1'), '--output-dir', out]), /shard-1: is a folder without result\.json; .*give the shard's own, e\.g\. .*shard-1\/iteration-\d\)/);
    expectRefused(await run(['merge', '--output-dir', out]), /merge needs the shards' run folders/);
    expect(existsSync(out)).toBe(false);
  });

  it('--allow-partial merges what is there, says what is missing and records it', async () => {
    const out = join(dir, 'partial');
    const r = await run(['merge', shard[0]!, shard[2]!, '--output-dir', out, '--allow-partial']);
    expect([0, 1, 3, 4]).toContain(r.code);
    const cases2 = read(shard[1]!).shard.cases;
    expect(r.stderr).toContain(`note: partial merge (--allow-partial): shard(s) 2/3 missing; case(s) ${cases2.join(', ')} are not in this run`);
    const m = read(join(out, 'iteration-1'));
    expect(m.merge).toMatchObject({ partial: true, missing_shards: [2], missing_cases: cases2 });
    expect(m.jobs).toHaveLength(read(shard[0]!).jobs.length + read(shard[2]!).jobs.length);
    expect(m.exit_code).toBe(r.code);
  });

  it('refuses shards of two different suites (SKILL.md edited in between), of other options, or of another split', async () => {
    // A copy of the suite elsewhere is the same suite (the hash is over relative paths and contents) …
    const copyRoot = mkdtempSync(join(tmpdir(), 'su-merge-copy-'));
    const copy = join(copyRoot, 'random-skill');
    cpSync(skill, copy, { recursive: true });
    const same = await run(['run', copy, '--output-dir', join(copyRoot, 'same-2'), '--shard', '2/3', ...GATES]);
    expect(same.stderr).not.toContain('internal error');
    const ok = await run(['merge', shard[0]!, join(copyRoot, 'same-2', 'iteration-1'), shard[2]!, '--output-dir', join(copyRoot, 'merged')]);
    expect(ok.code, ok.stderr).toBe(unshardedRun.code);
    expect(untimed(read(join(copyRoot, 'merged', 'iteration-1')).summary)).toEqual(untimed(read(full).summary));
    // … an edited one is not.
    appendFileSync(join(copy, 'SKILL.md'), '\nOne more line.\n');
    await run(['run', copy, '--output-dir', join(copyRoot, 'edited-2'), '--shard', '2/3', ...GATES]);
    expectRefused(
      await run(['merge', shard[0]!, join(copyRoot, 'edited-2', 'iteration-1'), shard[2]!, '--output-dir', join(copyRoot, 'no')]),
      /shard-1\/iteration-1 and .*edited-2\/iteration-1 are shards of different suites \(suite_hash sha256:[0-9a-f]{12}… vs sha256:[0-9a-f]{12}…: the skill folder changed between the runs\)/,
    );
    await run(['run', skill, '--output-dir', join(copyRoot, 'trials-2'), '--shard', '2/3', '--trials', '2', ...GATES]);
    expectRefused(
      await run(['merge', shard[0]!, join(copyRoot, 'trials-2', 'iteration-1'), shard[2]!, '--output-dir', join(copyRoot, 'no')]),
      /were run with different options \(trials \(--trials\): null in .*shard-1\/iteration-1, 2 in .*trials-2\/iteration-1\)/,
    );
    await run(['run', skill, '--output-dir', join(copyRoot, 'gate'), '--shard', '2/3', ...GATES, '--alpha', '0.1']);
    expectRefused(await run(['merge', shard[0]!, join(copyRoot, 'gate', 'iteration-1'), shard[2]!, '--output-dir', join(copyRoot, 'no')]), /different options \(gate setting alpha: 0\.05 in .*, 0\.1 in .*gate\/iteration-1\)/);
    await run(['run', skill, '--output-dir', join(copyRoot, 'four'), '--shard', '2/4', ...GATES]);
    expectRefused(await run(['merge', shard[0]!, join(copyRoot, 'four', 'iteration-1'), '--output-dir', join(copyRoot, 'no')]), /\(shard 1\/3\) and .*four\/iteration-1 \(shard 2\/4\) belong to different splits \(n = 3 vs 4\)/);
    expect(existsSync(join(copyRoot, 'no'))).toBe(false);
  }, 60_000);

  it('refuses bad --shard values and more shards than cases with one message (exit 2)', async () => {
    for (const v of ['0/3', '4/3', '3', '1/1001', 'a/b']) expectRefused(await run(['run', skill, '--shard', v, '--dry-run']), /--shard must be i\/n with 1 ≤ i ≤ n ≤ 1000/);
    expectRefused(await run(['run', skill, '--shard', '15/15', '--dry-run']), /--shard 15\/15: the plan has 14 case\(s\), fewer than 15 shards.*use at most --shard i\/14/);
    expectRefused(await run(['run', skill, '--shard', '2/2', '--case', 'c01', '--dry-run']), /--shard 2\/2: the plan has 1 case\(s\)/);
  });

  it('documents merge and --shard in --help', async () => {
    const top = await run(['--help']);
    expect(top.stdout).toMatch(/^ {2}merge <run folder>\.\.\. +put the shards of `run --shard i\/n` back together/m);
    const help = await run(['merge', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: skill-up merge <run folder>\.\.\. \[--output-dir <dir>\] \[--allow-partial\]/);
    expect(help.stdout).toContain('--allow-partial');
    const runHelp = await run(['run', '--help']);
    expect(runHelp.stdout).toMatch(/--shard <i\/n> +run only part i of n/);
    expect(readdirSync(dir)).toContain('full');
  });
});
