/**
 * Cost, `--max-cost`, the dry-run estimate and alibaba/skill-up's run flags (`--format`,
 * `--model`, `--no-delete`, `-v`/`-vv`, the unsupported ones) through the built CLI, with a
 * custom agent whose tokens and reported cost the test sets (test/fixtures/cost-agent).
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { writeCostSuite } from '../fixtures/cost-agent/suite.mjs';
import { runCli, type CliRun } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8'));
const validateResult = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, validateFormats: false }).compile(schema);

const root = () => mkdtempSync(join(tmpdir(), 'su-cost-'));
const readResult = (out: string, iteration = 1) => JSON.parse(readFileSync(join(out, `iteration-${iteration}`, 'result.json'), 'utf8'));
const run = (skill: string, out: string, args: string[], env: Record<string, string> = {}) => runCli(['run', skill, '--output-dir', out, ...args], { env });

function expectValid(doc: unknown): void {
  expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
}

/** A usage error: exit 2, nothing on stdout, one line on stderr matching `what`, no stack trace. */
function expectUsageError(r: CliRun, what: RegExp): void {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('unknown option');
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(what);
}

describe('skill-up run: cost and --max-cost (built CLI)', () => {
  it('--max-cost stops scheduling once spent + the next job would pass it: the rest are not run, the run is partial, exit 4', async () => {
    const dir = root();
    const skill = writeCostSuite(dir, { cases: 5 });
    const out = join(dir, 'out');
    const r = await run(skill, out, ['--max-cost', '1'], { COST_AGENT_USD: '0.3' });
    expect(r.code, r.stdout + r.stderr).toBe(4);
    // The first job teaches the cost ($0.30); then 0.60, 0.90 fit, a fourth would make 1.20.
    expect(r.stderr).toContain('--max-cost $1.00 reached: spent $0.90 + the next job ~$0.30 would pass it; no new job starts');
    expect(r.stdout).toContain('2 job(s) not run: --max-cost $1.00 reached (a partial run: the gates decide on what ran)');
    expect(r.stdout).toContain('cost-agent cost: with_skill $0.90');
    expect(r.stdout).toMatch(/^  INCONCLUSIVE all_trials_passed: 3 of 3 graded with_skill trial\(s\) passed .*; but 2 with_skill job\(s\) did not run \(--max-cost \$1\.00 reached\), so not every planned trial passed$/m);
    expect(r.stdout).toContain('exit code 4: ');
    const doc = readResult(out);
    expectValid(doc);
    expect(doc.totals.jobs).toBe(3);
    expect(doc.not_run).toBe(2);
    expect(doc.not_run_reason).toBe('--max-cost $1.00 reached');
    expect(doc.interrupted).toBe(false);
    expect(doc.exit_code).toBe(4);
    expect(doc.cost.budget).toEqual({ max_usd: 1, spent_usd: expect.closeTo(0.9, 9), stopped: true, not_run: 2 });
    expect(doc.jobs.map((j: { cost_usd: number }) => j.cost_usd)).toEqual([0.3, 0.3, 0.3]);
    expect(doc.jobs.some((j: { cost_estimated?: boolean }) => j.cost_estimated)).toBe(false);
    expect(doc.totals.cost_usd).toBeCloseTo(0.9, 9);
    const md = readFileSync(join(out, 'iteration-1/summary.md'), 'utf8');
    expect(md).toContain('2 not run (--max-cost $1.00 reached)');
    expect(md).toContain('⚠️ Partial run: 2 job(s) not run: --max-cost $1.00 reached.');
    // --on-inconclusive maps the partial run's 4 like any inconclusive gate; a budget that fits changes nothing.
    expect((await run(skill, join(dir, 'out-pass'), ['--max-cost', '1', '--on-inconclusive', 'pass'], { COST_AGENT_USD: '0.3' })).code).toBe(0);
    const fits = await run(skill, join(dir, 'out-fits'), ['--max-cost', '5'], { COST_AGENT_USD: '0.3' });
    expect(fits.code).toBe(0);
    expect(fits.stdout).not.toContain('not run');
    expect(readResult(join(dir, 'out-fits')).cost.budget).toEqual({ max_usd: 5, spent_usd: expect.closeTo(1.5, 9), stopped: false, not_run: 0 });
    // The budget is the whole command's: once reached, later iterations are not started.
    const iters = await run(skill, join(dir, 'out-iter'), ['--iteration', '3', '--max-cost', '0.5'], { COST_AGENT_USD: '0.3' });
    expect(iters.code).toBe(4);
    expect(iters.stderr).toContain('iteration 2..3 not run: --max-cost $0.50 reached');
    expect(readdirSync(join(dir, 'out-iter'))).toEqual(['iteration-1']);
    expect(readResult(join(dir, 'out-iter')).not_run).toBe(4);
  });

  it('estimates costs from tokens for a model in the price table, marked estimated in every report; --dry-run then estimates the next run from it', async () => {
    const dir = root();
    // claude-haiku-4-5: $1 per million input, $5 per million output → 1M + 100k tokens = $1.50 a job.
    const skill = writeCostSuite(dir, { cases: 2, benchmark: true, model: { provider: 'anthropic', name: 'claude-haiku-4-5' }, formats: ['json', 'junit', 'html'] });
    const out = join(dir, 'out');
    const r = await run(skill, out, []);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('cost-agent cost: with_skill ~$3.00 (estimated), without_skill ~$3.00 (estimated)');
    expect(r.stdout).toContain('total cost: ~$6.00 (estimated)');
    expect(r.stdout).toMatch(/cost note: cost-agent: 4 of 4 job cost\(s\) estimated from tokens at claude-haiku-4-5 prices, as published by Anthropic \(https:\/\/www\.anthropic\.com\/pricing#api\) as of \d{4}-\d{2}; src\/cost\/prices\.json/);
    const doc = readResult(out);
    expectValid(doc);
    for (const j of doc.jobs) expect([j.cost_usd, j.cost_estimated]).toEqual([1.5, true]);
    expect(doc.totals).toMatchObject({ cost_usd: 6, cost_estimated: true });
    expect(doc.cost.notes[0]).toContain('estimated from tokens at claude-haiku-4-5 prices');
    const md = readFileSync(join(out, 'iteration-1/summary.md'), 'utf8');
    expect(md).toContain(' · ~$6.00 (estimated)');
    expect(md).toMatch(/\| with_skill \|.*\| ~\$3\.00 \(estimated\) \|$/m);
    const html = readFileSync(join(out, 'iteration-1/report.html'), 'utf8');
    expect(html).toContain('<dd>~$6.00 (estimated)</dd>');
    expect(html).toContain('<td class="num">~$3.00 (estimated)</td>');
    const xml = readFileSync(join(out, 'iteration-1/report.xml'), 'utf8');
    expect(xml).toContain('<property name="cost" value="~$3.00 (estimated)"/>');
    expect(xml).toContain('<property name="cost.total_usd" value="6"/>');
    const bench = JSON.parse(readFileSync(join(out, 'iteration-1/benchmark.json'), 'utf8'));
    expect(bench.statistics.configurations.with_skill).toMatchObject({ cost_usd: 3, cost_estimated: true });

    const dry = await run(skill, out, ['--dry-run', '--max-cost', '4']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      "Cost: ≈ $6.00 for 4 job(s) (from iteration-1 of this suite: mean $1.50 per job for cost-agent with_skill, $1.50 for cost-agent without_skill; that run's costs were themselves estimated from tokens)",
    );
    expect(dry.stdout).toContain('  above --max-cost $4.00: about 2 of 4 job(s) would run before scheduling stops');
    expect(readdirSync(out)).toEqual(['iteration-1']); // a dry run writes nothing
    const fresh = await run(skill, join(dir, 'elsewhere'), ['--dry-run']);
    expect(fresh.stdout).toContain('Cost: no estimate: no earlier iteration of this suite recorded a cost');
  });

  it('an unknown model gets no estimate and says so; the scripted model has no cost and the budget cannot bind', async () => {
    const dir = root();
    const unknown = writeCostSuite(dir, { name: 'unknown-skill', cases: 1, model: { name: 'my-local-llama' } });
    const u = await run(unknown, join(dir, 'out-u'), []);
    expect(u.code, u.stdout + u.stderr).toBe(0);
    expect(u.stdout).toContain("cost note: cost-agent: the engine reported no cost; no estimate: model `my-local-llama` is not in skill-up's price table (src/cost/prices.json)");
    expect(readResult(join(dir, 'out-u')).jobs[0].cost_usd).toBeUndefined();

    const scripted = writeCostSuite(dir, { name: 'scripted-skill', cases: 3, model: { provider: 'scripted', name: 'claude-sonnet-4-5', script: 'evals/model.yaml' } });
    writeFileSync(join(scripted, 'evals/model.yaml'), 'rules:\n  - reply: [ { say: "hi" } ]\n');
    // The agent reports $5 a job, but a scripted model's tokens are made up: no cost is kept.
    const s = await run(scripted, join(dir, 'out-s'), ['--max-cost', '0.01'], { COST_AGENT_USD: '5' });
    expect(s.code, s.stdout + s.stderr).toBe(0);
    expect(s.stderr.match(/--max-cost \$0\.01: the scripted model has no cost, so the budget cannot bind/g)).toHaveLength(1);
    expect(s.stdout).toContain('cost note: cost-agent: no cost: scripted model');
    const doc = readResult(join(dir, 'out-s'));
    expect(doc.totals.jobs).toBe(3);
    expect(doc.not_run).toBe(0);
    expect(doc.totals.cost_usd).toBeUndefined();
    expect(doc.cost.notes).toEqual(['cost-agent: no cost: scripted model (its tokens are made up)']);
  });
});

describe("skill-up run: alibaba/skill-up's run flags (built CLI)", () => {
  it('--format junit writes result.json and report.xml only (no summary.md, no benchmark files even with both variants)', async () => {
    const dir = root();
    const skill = writeCostSuite(dir, { cases: 2, benchmark: true, formats: ['json', 'junit', 'html'] });
    const out = join(dir, 'out');
    const r = await run(skill, out, ['--format', 'junit']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const files = readdirSync(join(out, 'iteration-1')).filter((f) => f.includes('.'));
    expect(files.sort()).toEqual(['journal.jsonl', 'report.xml', 'result.json']);
    expect(r.stdout.match(/^wrote /gm)).toHaveLength(2);
    const both = await run(skill, join(dir, 'out2'), ['--format', 'html', '--format', 'md,xml']);
    expect(both.code).toBe(0);
    expect(readdirSync(join(dir, 'out2/iteration-1')).filter((f) => f.includes('.')).sort()).toEqual(['journal.jsonl', 'report.html', 'report.xml', 'result.json', 'summary.md']);
    expectUsageError(await run(skill, join(dir, 'out3'), ['--format', 'pdf']), /unknown format `pdf`/);
  });

  it("--model reaches the engine (SessionInput's model, result.json, the price used); --no-delete keeps the workspaces", async () => {
    const dir = root();
    const skill = writeCostSuite(dir, { cases: 2, model: { provider: 'openai', name: 'gpt-4o' } });
    const out = join(dir, 'out');
    const r = await run(skill, out, ['--model', 'gpt-4.1', '--no-delete']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('kept 2 workspace(s)');
    const doc = readResult(out);
    expect(doc.engines[0].model).toEqual({ provider: 'openai', name: 'gpt-4.1' });
    for (const j of doc.jobs) {
      expect(existsSync(j.workspace), j.workspace).toBe(true);
      expect(JSON.parse(readFileSync(join(j.workspace, 'model.txt'), 'utf8'))).toMatchObject({ provider: 'openai', name: 'gpt-4.1' });
      // gpt-4.1: $2 per million input, $8 per million output → 1M + 100k = $2.80.
      expect(j.cost_usd).toBeCloseTo(2.8, 9);
    }
    expect(doc.jobs[0].final_message).toBe('done c01 with model gpt-4.1');
    expectUsageError(await run(skill, join(dir, 'o2'), ['--model', ' ']), /--model needs a model name/);
  });

  it('-v prints each engine command line and every job’s assertions; -vv also the engine’s stderr, line by line', async () => {
    const dir = root();
    const skill = writeCostSuite(dir, { cases: 1 });
    const quiet = await run(skill, join(dir, 'q'), []);
    expect(quiet.stderr).not.toContain('$ node');
    expect(quiet.stderr).not.toContain('stderr: ');
    const v = await run(skill, join(dir, 'v'), ['-v'], { COST_AGENT_USD: '0.125' });
    expect(v.code, v.stderr).toBe(0);
    expect(v.stderr).toMatch(/^\[c01\/with_skill\/run-1\] \$ node \S+agent\.mjs \S+session-input\.json {3}\(in \S+\)$/m);
    expect(v.stderr).toMatch(/^\[c01\/with_skill\/run-1\] PASS \(\d+\.\ds, 1 attempt\(s\), 1100000 tokens, \$0\.13\)$/m);
    expect(v.stderr).toContain('  ✓ files_exist: ok.txt: ');
    expect(v.stderr).not.toContain('stderr: cost-agent');
    for (const flags of [['-vv'], ['--verbose=2'], ['-v', '--verbose']]) {
      const vv = await run(skill, join(dir, `vv-${flags.join('')}`), flags);
      expect(vv.code, vv.stderr).toBe(0);
      expect(vv.stderr).toContain('[c01/with_skill/run-1] stderr: cost-agent stderr line for c01');
      expect(vv.stderr).toContain('[c01/with_skill/run-1] $ node ');
    }
  });

  it('alibaba/skill-up run flags with no meaning here exit 2 naming the flag; its case-filter names work', async () => {
    const dir = root();
    const skill = writeCostSuite(dir, { cases: 2 });
    const out = join(dir, 'out');
    for (const args of [['--runtime', 'docker'], ['--runtime-kwarg', 'a=b'], ['--rk', 'a=b'], ['--engine-kwarg', 'a=b'], ['--ek=a=b'], ['--provider', 'openai'], ['--api-key', 'not-a-real-key']]) {
      const flag = args[0]!.split('=')[0]!;
      const r = await run(skill, out, args);
      expectUsageError(r, new RegExp(`^skill-up run: ${flag} \\(an alibaba/skill-up run flag\\) is not supported by skill-up: `));
      expect(r.stderr).not.toContain('not-a-real-key');
    }
    expect(existsSync(out)).toBe(false);
    const only = await run(skill, out, ['--include-case-name', 'c0*', '--exclude-case-name', 'c02']);
    expect(only.code, only.stderr).toBe(0);
    expect(readResult(out).jobs.map((j: { case_id: string }) => j.case_id)).toEqual(['c01']);
    expectUsageError(await run(skill, out, ['--max-cost', 'lots']), /--max-cost must be an amount in USD above 0/);
  });
});

