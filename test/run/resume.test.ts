import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { planJobs } from '../../src/plan/plan.js';
import { Journal } from '../../src/run/journal.js';
import {
  describeSuiteChange,
  inPlanOrder,
  isFinished,
  loadResume,
  mergeFlags,
  partitionJobs,
  rebuildFromJournal,
  ResumeError,
  storedFlags,
  suiteManifest,
  KILLED_EXIT_CODE,
} from '../../src/run/resume.js';
import { suiteHash } from '../../src/config/hash.js';
import { makeCase, makeResult, makeSuite } from './helpers.js';

const ROOT = join(import.meta.dirname, '../..');
const validateResult = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, validateFormats: false }).compile(JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8')));
const tmp = () => mkdtempSync(join(tmpdir(), 'su-resume-'));

describe('resume: flags', () => {
  it('stores flags without the invocation-only ones, paths absolute', () => {
    const s = storedFlags({ trials: '2', 'output-dir': 'out', 'no-regression': 'prev/iteration-1', resume: 'x', force: true, 'event-log': 'e', 'dry-run': true, iteration: '2', case: ['a*'] }, '/w');
    expect(s).toEqual({ trials: '2', 'output-dir': '/w/out', 'no-regression': '/w/prev/iteration-1', case: ['a*'] });
  });

  it('takes the journal flags, accepts equal ones and the free ones, refuses different ones naming each', () => {
    const stored = { trials: '2', baseline: true, engine: ['a', 'b'], parallelism: '4', 'output-dir': '/old/root' };
    const merged = mergeFlags(stored, { resume: '/r/iteration-1', trials: '2', parallelism: '1', 'keep-workspaces': true }, { 'output-dir': '/r' });
    expect(merged).toEqual({ trials: '2', baseline: true, engine: ['a', 'b'], parallelism: '1', 'keep-workspaces': true, 'output-dir': '/r', resume: '/r/iteration-1' });
    expect(() => mergeFlags(stored, { trials: '3', engine: ['a'], 'no-baseline': true })).toThrow(ResumeError);
    try {
      mergeFlags(stored, { trials: '3', engine: ['a'], 'no-baseline': true });
    } catch (e) {
      expect((e as Error).message).toContain("--trials 3 (the journal's run: --trials 2)");
      expect((e as Error).message).toContain("--engine a (the journal's run: --engine a,b)");
      expect((e as Error).message).toContain("--no-baseline (the journal's run: no --no-baseline)");
    }
    // An --output-dir elsewhere than the resumed folder's is refused too.
    expect(() => mergeFlags(stored, { 'output-dir': '/other' }, { 'output-dir': '/r' })).toThrow(/--output-dir \/other/);
  });
});

describe('resume: which jobs run again', () => {
  const suite = makeSuite([makeCase('a', { trials: 2 }), makeCase('b', { trials: 2 })]);
  const jobs = planJobs(suite);

  it('keeps pass, fail and a suite skip; reruns errors, interrupted and missing jobs; checks the whole identity', () => {
    expect(isFinished(makeResult({ status: 'skipped', reason: 'every turn was skipped' }))).toBe(true);
    expect(isFinished(makeResult({ status: 'skipped', reason: 'run interrupted' }))).toBe(false);
    expect(isFinished(makeResult({ status: 'error' }))).toBe(false);
    const r = (id: string, over = {}) => {
      const j = jobs.find((x) => x.id === id)!;
      return makeResult({ id, caseId: j.case.id, trial: j.trial, ...over });
    };
    const latest = new Map([
      ['a/with_skill/run-1', r('a/with_skill/run-1')],
      ['a/with_skill/run-2', r('a/with_skill/run-2', { status: 'error' })],
      ['b/with_skill/run-1', r('b/with_skill/run-1', { status: 'fail' })],
      // Same id, another trial: not this job's result.
      ['b/with_skill/run-2', r('b/with_skill/run-2', { trial: 7 })],
    ]);
    const { kept, toRun, errored } = partitionJobs(jobs, latest);
    expect(kept.map((x) => x.id)).toEqual(['a/with_skill/run-1', 'b/with_skill/run-1']);
    expect(toRun.map((x) => x.id)).toEqual(['a/with_skill/run-2', 'b/with_skill/run-2']);
    expect(errored).toBe(1);
    // An interrupted job runs again too, counted as stopped by the interrupt, not as an error.
    const withStop = new Map([...latest, ['b/with_skill/run-2', r('b/with_skill/run-2', { status: 'skipped', reason: 'run interrupted' })]]);
    const split = partitionJobs(jobs, withStop);
    expect([split.toRun.map((x) => x.id), split.errored, split.interrupted]).toEqual([['a/with_skill/run-2', 'b/with_skill/run-2'], 1, 1]);
    const fresh = toRun.map((j) => makeResult({ id: j.id, caseId: j.case.id, trial: j.trial }));
    expect(inPlanOrder(jobs, kept, fresh).map((x) => x.id)).toEqual(jobs.map((j) => j.id));
  });
});

describe('resume: the suite manifest', () => {
  it('lists what changed, was added and removed; skips what the suite hash skips', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'evals/cases'), { recursive: true });
    mkdirSync(join(dir, 'node_modules/x'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), 'a');
    writeFileSync(join(dir, 'evals/cases/one.yaml'), '1');
    writeFileSync(join(dir, 'evals/cases/two.yaml'), '2');
    writeFileSync(join(dir, 'node_modules/x/i.js'), 'x');
    symlinkSync('SKILL.md', join(dir, 'link.md'));
    const before = (await suiteManifest(dir, [join(dir, 'out')]))!;
    expect(Object.keys(before).sort()).toEqual(['SKILL.md', 'evals/cases/one.yaml', 'evals/cases/two.yaml', 'link.md']);
    const hashBefore = await suiteHash(dir, [join(dir, 'out')]);
    mkdirSync(join(dir, 'out'));
    writeFileSync(join(dir, 'out/result.json'), '{}');
    writeFileSync(join(dir, 'node_modules/x/i.js'), 'y');
    expect(await suiteManifest(dir, [join(dir, 'out')])).toEqual(before);
    writeFileSync(join(dir, 'evals/cases/one.yaml'), '1!');
    writeFileSync(join(dir, 'evals/cases/three.yaml'), '3');
    chmodSync(join(dir, 'evals/cases/two.yaml'), 0o755);
    writeFileSync(join(dir, 'gone.txt'), '');
    const after = (await suiteManifest(dir, [join(dir, 'out')]))!;
    expect(await suiteHash(dir, [join(dir, 'out')])).not.toBe(hashBefore);
    delete after['gone.txt'];
    const { ['SKILL.md']: _dropped, ...withoutSkill } = after;
    expect(describeSuiteChange(before, withoutSkill)).toBe('changed: evals/cases/one.yaml, evals/cases/two.yaml; added: evals/cases/three.yaml; removed: SKILL.md');
    expect(describeSuiteChange(before, before)).toBeUndefined();
    expect(describeSuiteChange(undefined, before)).toBeUndefined();
  });
});

describe('resume: loading a folder', () => {
  it('names what is wrong: no folder, a file, no journal, no header, an old journal', async () => {
    const dir = tmp();
    await expect(loadResume(join(dir, 'nope'))).rejects.toThrow(/not found/);
    writeFileSync(join(dir, 'result.json'), '{}');
    await expect(loadResume(join(dir, 'result.json'))).rejects.toThrow(/is a file; give the iteration folder/);
    await expect(loadResume(dir)).rejects.toThrow(/has no journal.jsonl/);
    writeFileSync(join(dir, 'journal.jsonl'), `${JSON.stringify({ type: 'job', result: makeResult() })}\n`);
    await expect(loadResume(dir)).rejects.toThrow(/no run header on its first line/);
    writeFileSync(join(dir, 'journal.jsonl'), `${JSON.stringify({ type: 'run', startedAt: 'x', evalFile: '/e', jobs: 1 })}\n`);
    await expect(loadResume(dir)).rejects.toThrow(/older skill-up.*`skill-up report/);
  });
});

describe('resume: rebuilding a killed run from its journal', () => {
  it('gives a schema-valid result.json: the last result per job, interrupted, not_run, exit 137, the header gates', async () => {
    const dir = join(tmp(), 'demo-workspace', 'iteration-4');
    mkdirSync(dir, { recursive: true });
    const j = await Journal.create(join(dir, 'journal.jsonl'), {
      type: 'run',
      format: 1,
      startedAt: '2026-01-01T00:00:00.000Z',
      runId: '00000000-0000-4000-8000-000000000000',
      tool: { name: 'skill-up', version: '9.9.9' },
      skill: { name: 'demo', path: '/s' },
      evalFile: '/s/evals/eval.yaml',
      suiteHash: `sha256:${'a'.repeat(64)}`,
      iteration: 4,
      jobs: 5,
      plan: {},
      flags: {},
      target: '/s',
      cwd: '/',
      engines: [{ name: 'custom', displayName: 'agent', model: { name: 'm' } }],
      options: { parallelism: 2, trials: null, baseline: false, argv: ['/s'] },
      decision: { alpha: 0.05, errorsAsFailures: false, maxErrorRate: 0.5, minPassRate: 0.5 },
    });
    await j.append(makeResult({ id: 'a/with_skill/run-1', caseId: 'a', status: 'error', startedAt: '2026-01-01T00:00:01.000Z' }));
    await j.append(makeResult({ id: 'b/with_skill/run-1', caseId: 'b', startedAt: '2026-01-01T00:00:02.000Z', durationMs: 3000 }));
    await j.write({ type: 'resume', at: '2026-01-01T00:01:00.000Z', jobs: 5 });
    await j.append(makeResult({ id: 'a/with_skill/run-1', caseId: 'a', status: 'pass', startedAt: '2026-01-01T00:01:01.000Z', durationMs: 1000 }));
    await j.close();
    const doc = await rebuildFromJournal(dir);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(doc.jobs.map((x) => [x.id, x.status])).toEqual([['a/with_skill/run-1', 'pass'], ['b/with_skill/run-1', 'pass']]);
    expect(doc).toMatchObject({ iteration: 4, interrupted: true, not_run: 3, exit_code: KILLED_EXIT_CODE, started_at: '2026-01-01T00:00:00.000Z', ended_at: '2026-01-01T00:01:02.000Z', suite_hash: `sha256:${'a'.repeat(64)}` });
    expect(doc.tool.version).toBe('9.9.9');
    expect(doc.engines).toEqual([{ name: 'custom', display_name: 'agent', model: { provider: null, name: 'm' } }]);
    expect(doc.options).toMatchObject({ parallelism: 2, rebuilt_from_journal: true, resumed: 1 });
    expect(doc.decision.config).toMatchObject({ min_pass_rate: 0.5, max_error_rate: 0.5 });
    expect(doc.gates.map((g) => g.name)).toContain('min_pass_rate');
  });

  it('report reads a journal newer than result.json only when it holds attempts result.json lacks', async () => {
    const { loadResultDoc } = await import('../../src/report/load.js');
    const { utimesSync } = await import('node:fs');
    const dir = join(tmp(), 'iteration-1');
    mkdirSync(dir);
    const file = join(dir, 'journal.jsonl');
    writeFileSync(file, `${JSON.stringify({ type: 'run', startedAt: '2026-01-01T00:00:00.000Z', evalFile: '/s/evals/eval.yaml', jobs: 2 })}\n${JSON.stringify({ type: 'job', result: makeResult({ id: 'a/with_skill/run-1', caseId: 'a' }) })}\n`);
    const first = await loadResultDoc(dir, { journal: true });
    expect(first.rebuilt).toBe('no result.json');
    writeFileSync(join(dir, 'result.json'), JSON.stringify(first.doc));
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'result.json'), old, old);
    // Nothing new in the journal, yet it is newer (a copied folder): result.json stands.
    expect((await loadResultDoc(dir, { journal: true })).rebuilt).toBeUndefined();
    // A killed resume appended an attempt: the journal wins.
    appendFileSync(file, `${JSON.stringify({ type: 'job', result: makeResult({ id: 'b/with_skill/run-1', caseId: 'b' }) })}\n`);
    const second = await loadResultDoc(dir, { journal: true });
    expect(second.rebuilt).toBe('newer than result.json');
    expect(second.doc.jobs.map((j) => j.id)).toEqual(['a/with_skill/run-1', 'b/with_skill/run-1']);
    // Without the option (compare, --no-regression) result.json is read as it is.
    expect((await loadResultDoc(dir)).doc.jobs).toHaveLength(1);
  });

  it('rebuilds an older journal (header without the plan) with defaults from the folder', async () => {
    const dir = join(tmp(), 'old-skill-workspace', 'iteration-2');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'journal.jsonl'), `${JSON.stringify({ type: 'run', startedAt: '2026-01-01T00:00:00.000Z', evalFile: '/s/evals/eval.yaml', jobs: 2 })}\n${JSON.stringify({ type: 'job', result: makeResult() })}\n`);
    const doc = await rebuildFromJournal(dir);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(doc).toMatchObject({ iteration: 2, not_run: 1, skill: { name: 'old-skill' }, engines: [{ name: 'custom' }] });
  });
});
