/**
 * The merge stage (src/merge/), pure: result documents of a plan split into shards are merged
 * back and compared with the document of the same jobs run unsharded; every refusal of
 * checkShards has one message naming the inputs.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EngineConfig } from '../../src/config/types.js';
import { costNotes } from '../../src/cost/result.js';
import { decide, type DecisionConfig } from '../../src/gate/index.js';
import { checkShards, combine, MergeError, orderJobs, withoutShardFlag, type ShardInput } from '../../src/merge/index.js';
import { planJobs, selectCases, type Job } from '../../src/plan/plan.js';
import { shardJobs, type ShardRecord } from '../../src/plan/shard.js';
import { buildResultJson, trialsOf, type ResultDoc } from '../../src/report/result-json.js';
import type { JobResult } from '../../src/run/types.js';
import { makeCase, makeResult, makeSuite } from '../run/helpers.js';

const HASH = `sha256:${'a'.repeat(64)}`;
const custom: EngineConfig = { name: 'custom', displayName: 'agent', model: {}, kwargs: {} };
const codex: EngineConfig = { name: 'codex', displayName: 'codex', version: '0.50.0', model: { provider: 'scripted' }, kwargs: {} };

/** A status that depends on the job only (as a deterministic agent's would). */
function statusOf(j: Job): JobResult['status'] {
  const u = createHash('sha256').update(j.id).digest().readUInt32BE(0) / 2 ** 32;
  const p = j.variant === 'with_skill' ? 0.75 : 0.35;
  return u < 0.04 ? 'error' : u < p ? 'pass' : 'fail';
}

function resultOf(j: Job, allPass = false): JobResult {
  return makeResult({ id: j.id, caseId: j.case.id, engine: j.engine, variant: j.variant, trial: j.trial, status: allPass ? 'pass' : statusOf(j), outputDir: j.id, durationMs: 1000 + j.trial, usage: { input: 7, output: 3, cacheRead: 1, cacheWrite: 0 }, costUsd: 0.01 });
}

const CONFIG: DecisionConfig = { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0.1, minPassRate: 0.5, minUplift: 0.1, onInconclusive: 'pass', engineNames: { custom: 'agent', codex: 'codex' } };

function docOf(jobs: Job[], opts: { shard?: ShardRecord; hash?: string; started?: string; ended?: string; trials?: number | null; engines?: EngineConfig[]; config?: DecisionConfig; allPass?: boolean } = {}): ResultDoc {
  const results = jobs.map((j) => resultOf(j, opts.allPass));
  const decision = decide(trialsOf(results), opts.config ?? CONFIG);
  return buildResultJson(
    {
      tool: { name: 'skill-up', version: '0.1.0' },
      skill: { name: 's', path: '/tmp/s' },
      evalFile: '/tmp/s/evals/eval.yaml',
      suiteHash: opts.hash ?? HASH,
      ...(opts.shard ? { shard: opts.shard } : {}),
      iteration: 1,
      startedAt: opts.started ?? '2026-01-01T00:00:00.000Z',
      endedAt: opts.ended ?? '2026-01-01T00:10:00.000Z',
      durationMs: 600_000,
      interrupted: false,
      notRun: 0,
      // As run writes it (src/run/extras.ts finishIteration): the cost notes over the run's jobs.
      cost: { notes: costNotes(opts.engines ?? [custom, codex], results) },
      engines: opts.engines ?? [custom, codex],
      options: { parallelism: 4, trials: opts.trials ?? null, baseline: true, argv: ['s', '--baseline', '--shard', `${opts.shard?.index}/${opts.shard?.count}`] },
      exitCode: decision.exitCode,
      decision,
    },
    results,
  );
}

const cases = Array.from({ length: 11 }, (_, i) => makeCase(`case-${String.fromCharCode(97 + ((i * 7) % 11))}`, { trials: 1 + (i % 3), ...(i === 4 ? { engines: ['codex'] } : {}) }));
const suite = makeSuite(cases, { engines: [custom, codex], engine: custom, benchmark: { enabled: true } });
const full = planJobs(suite, { baseline: true });

/** The plan split into `n` shards, each as the document its run writes. */
function shards(n: number, start = Date.parse('2026-01-01T00:00:00.000Z'), extra: { allPass?: boolean; config?: DecisionConfig } = {}): ShardInput[] {
  return Array.from({ length: n }, (_, i) => {
    const { jobs, record } = shardJobs(selectCases(suite, { baseline: true }), full, { index: i + 1, count: n }, { variants: 2 });
    const started = new Date(start + i * 60_000).toISOString();
    const ended = new Date(start + i * 60_000 + 300_000).toISOString();
    return { doc: docOf(jobs, { shard: record, started, ended, ...extra }), source: `out/shard-${i + 1}/iteration-1`, file: `/w/out/shard-${i + 1}/iteration-1/result.json` };
  });
}

/** A document without the fields that differ by construction (times, paths, the merge block). */
function comparable(d: ResultDoc) {
  const { summary, gates, decision, totals, cost, jobs, exit_code, engines, not_run, interrupted } = d;
  return { summary, gates, decision, totals, cost, jobs, exit_code, engines, not_run, interrupted };
}

describe('merge (pure): shards → the unsharded run', () => {
  it('has the job set, statistics, gates and exit code of the unsharded run, for 1 to 11 shards', () => {
    const unsharded = docOf(full);
    for (const n of [1, 2, 3, 4, 11]) {
      const plan = checkShards(shards(n));
      const merged = combine(plan, { iteration: 7, tool: { name: 'skill-up', version: '0.1.0' } });
      expect(comparable(merged.doc), `n = ${n}`).toEqual(comparable(unsharded));
      expect(merged.doc.jobs.map((j) => j.id)).toEqual(full.map((j) => j.id));
      expect(merged.doc.iteration).toBe(7);
      expect(merged.doc.shard).toBeUndefined();
      expect(merged.doc.merge).toMatchObject({ count: n, partial: false, missing_shards: [], missing_cases: [] });
      expect(merged.doc.merge!.shards.map((s) => s.index)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    }
  });

  it('orders the jobs as the plan does (case in suite order, engine, trial, variant), whatever the order of the inputs', () => {
    const given = shards(3).reverse();
    const plan = checkShards(given);
    expect(plan.shards.map((s) => s.shard.index)).toEqual([1, 2, 3]);
    expect(orderJobs(plan).map((j) => j.id)).toEqual(full.map((j) => j.id));
    expect(full.slice(0, 4).map((j) => j.id)).toEqual([
      `custom/${cases[0]!.id}/with_skill/run-1`,
      `custom/${cases[0]!.id}/without_skill/run-1`,
      `codex/${cases[0]!.id}/with_skill/run-1`,
      `codex/${cases[0]!.id}/without_skill/run-1`,
    ]);
  });

  it('takes the earliest start and the latest end; duration is the wall span; argv loses --shard', () => {
    const merged = combine(checkShards(shards(3)), { iteration: 1, tool: { name: 'skill-up', version: '0.1.0' } }).doc;
    expect(merged.started_at).toBe('2026-01-01T00:00:00.000Z');
    expect(merged.ended_at).toBe('2026-01-01T00:07:00.000Z');
    expect(merged.duration_ms).toBe(420_000);
    expect((merged.options as { argv: string[] }).argv).toEqual(['s', '--baseline']);
    expect(withoutShardFlag(['a', '--shard=1/2', '--shard', '2/2', 'b'])).toEqual(['a', 'b']);
  });

  it('with allowPartial, merges what is there and lists the missing shard and its cases', () => {
    const all = shards(3);
    const plan = checkShards([all[0]!, all[2]!], { allowPartial: true });
    expect(plan.missingShards).toEqual([2]);
    expect(plan.missingCases).toEqual(all[1]!.doc.shard!.cases);
    const merged = combine(plan, { iteration: 1, tool: { name: 'skill-up', version: '0.1.0' } }).doc;
    expect(merged.merge).toMatchObject({ partial: true, missing_shards: [2], missing_cases: all[1]!.doc.shard!.cases });
    expect(merged.jobs).toHaveLength(all[0]!.doc.jobs.length + all[2]!.doc.jobs.length);
  });

  it('gates a partial merge as run gates a run cut short: a pass that rests on left-out cases is inconclusive', () => {
    const config: DecisionConfig = { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0 };
    const all = shards(3, undefined, { allPass: true, config });
    const whole = combine(checkShards(all), { iteration: 1, tool: { name: 'skill-up', version: '0.1.0' } });
    expect(whole.decision.gates.map((g) => [g.name, g.state])).toEqual([['max_error_rate', 'pass'], ['all_trials_passed', 'pass']]);
    expect(whole.decision.exitCode).toBe(0);
    const part = combine(checkShards([all[0]!, all[1]!], { allowPartial: true }), { iteration: 1, tool: { name: 'skill-up', version: '0.1.0' } });
    expect(part.decision.gates.map((g) => [g.name, g.state])).toEqual([['max_error_rate', 'pass'], ['all_trials_passed', 'inconclusive']]);
    expect(part.decision.gates[1]!.reason).toMatch(/did not run \(shard\(s\) 3\/3 not merged \(--allow-partial\)\), so not every planned trial passed$/);
    expect(part.decision.exitCode).toBe(4);
    expect(part.doc.exit_code).toBe(4);
    expect(part.doc.gates[1]!.state).toBe('inconclusive');
  });
});

describe('checkShards refusals', () => {
  const refuse = (inputs: ShardInput[], pattern: RegExp, allowPartial = false) => {
    let err: unknown;
    try {
      checkShards(inputs, { allowPartial });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MergeError);
    expect((err as Error).message).not.toContain('\n');
    expect((err as Error).message).toMatch(pattern);
  };
  const edit = (s: ShardInput, f: (d: ResultDoc) => void, as?: string): ShardInput => {
    const doc = structuredClone(s.doc);
    f(doc);
    return { ...s, doc, ...(as ? { source: as, file: `/w/${as}/result.json` } : {}) };
  };

  it('a missing shard, naming it and its cases', () => {
    const [a, b, c] = shards(3);
    refuse([a!, c!], new RegExp(`^shard\\(s\\) 2/3 missing \\(case\\(s\\) ${b!.doc.shard!.cases.join(', ')} not in any given folder; given: out/shard-1/iteration-1 \\(shard 1/3\\), out/shard-3/iteration-1 \\(shard 3/3\\)\\); give every shard, or --allow-partial`));
  });

  it('a shard given twice, or two copies of one shard', () => {
    const [a, b, c] = shards(3);
    refuse([a!, b!, c!, a!], /^out\/shard-1\/iteration-1 is given twice: give each shard once$/);
    refuse([a!, b!, c!, { ...a!, source: 'copy/iteration-1', file: '/w/copy/iteration-1/result.json' }], /^out\/shard-1\/iteration-1 and copy\/iteration-1 are both shard 1\/3: give each shard once$/);
  });

  it('shards of different suites', () => {
    const [a, b, c] = shards(3);
    refuse([a!, edit(b!, (d) => (d.suite_hash = `sha256:${'b'.repeat(64)}`)), c!], /^out\/shard-1\/iteration-1 and out\/shard-2\/iteration-1 are shards of different suites \(suite_hash sha256:aaaaaaaaaaaa… vs sha256:bbbbbbbbbbbb…: the skill folder changed/);
    refuse([a!, edit(b!, (d) => delete d.suite_hash), c!], /^out\/shard-2\/iteration-1 records no suite_hash/);
  });

  it('shards of different splits, plans or options', () => {
    const [a, b, c] = shards(3);
    const four = shards(4);
    refuse([a!, four[1]!], /belong to different splits \(n = 3 vs 4\)/);
    refuse([a!, edit(b!, (d) => d.shard!.plan_cases.push('extra')), c!], /split different plans \(case\(s\) extra only in out\/shard-2\/iteration-1's plan\); run every shard with the same --case/);
    refuse([a!, edit(b!, (d) => ((d.options as { trials: number }).trials = 5)), c!], /were run with different options \(trials \(--trials\): null in out\/shard-1\/iteration-1, 5 in out\/shard-2\/iteration-1\)/);
    refuse([a!, edit(b!, (d) => ((d.options as { baseline: boolean }).baseline = false)), c!], /different options \(baseline/);
    refuse([a!, edit(b!, (d) => (d.engines[1]!.resolved_version = '0.51.0')), c!], /different options \(engine codex: .*"resolved_version":null.* in out\/shard-1\/iteration-1, .*"resolved_version":"0\.51\.0".* in out\/shard-2/);
    refuse([a!, edit(b!, (d) => d.engines.pop()), c!], /different options \(engines: custom, codex in out\/shard-1\/iteration-1, custom in out\/shard-2\/iteration-1\)/);
    refuse([a!, edit(b!, (d) => (d.decision.config.min_pass_rate = 0.9)), c!], /different options \(gate setting min_pass_rate: 0\.5 in out\/shard-1\/iteration-1, 0\.9 in out\/shard-2\/iteration-1\)/);
  });

  it('not a shard, or already merged', () => {
    const [a, b] = shards(2);
    refuse([a!, edit(b!, (d) => delete d.shard, 'plain')], /^plain is not a shard: its result\.json has no `shard`/);
    const merged = combine(checkShards([a!, b!]), { iteration: 1, tool: { name: 'skill-up', version: '0.1.0' } }).doc;
    refuse([a!, { doc: merged, source: 'merged', file: '/w/merged/result.json' }], /^merged is already a merged run \(of 2 shard\(s\)\)/);
  });

  it('edited shards: a case in two shards, a job outside its shard, a folder outside the run', () => {
    const [a, b, c] = shards(3);
    const stolen = a!.doc.shard!.cases[0]!;
    refuse([a!, edit(b!, (d) => d.shard!.cases.push(stolen)), c!], new RegExp(`both hold case ${stolen}`));
    refuse([a!, edit(b!, (d) => d.jobs.push(a!.doc.jobs[0]!)), c!], new RegExp(`out/shard-2/iteration-1 \\(shard 2/3\\) has job ${a!.doc.jobs[0]!.id.replace(/[/]/g, '\\/')} of case ${stolen}, which is not one of its shard's cases`));
    refuse([a!, edit(b!, (d) => (d.jobs[0]!.output_dir = '../../etc')), c!], /its folder `\.\.\/\.\.\/etc` outside the run folder/);
  });

  it('an interrupted shard unless allowPartial', () => {
    const [a, b, c] = shards(3);
    const cut = edit(b!, (d) => {
      d.interrupted = true;
      d.not_run = 3;
    });
    refuse([a!, cut, c!], /^out\/shard-2\/iteration-1 \(shard 2\/3\) was interrupted: 3 job\(s\) not run; run that shard again, or --allow-partial/);
    const plan = checkShards([a!, cut, c!], { allowPartial: true });
    expect(plan.interrupted.map((s) => s.shard.index)).toEqual([2]);
    const merged = combine(plan, { iteration: 1, tool: { name: 'skill-up', version: '0.1.0' } }).doc;
    expect(merged).toMatchObject({ interrupted: true, not_run: 3, merge: { partial: true, missing_shards: [] } });
  });

  it('nothing to merge', () => {
    refuse([], /^merge needs the folders of the shards/);
  });
});
