import { describe, expect, it } from 'vitest';
import { planJobs, PlanError } from '../../src/plan/plan.js';
import { makeCase, makeSuite } from './helpers.js';

describe('planJobs', () => {
  const suite = makeSuite([
    makeCase('greet-hello', { tags: ['smoke'], trials: 2 }),
    makeCase('greet-bye', { tags: ['slow'] }),
    makeCase('other'),
  ]);

  it('expands case × variant × trial, with_skill only by default', () => {
    const jobs = planJobs(suite);
    expect(jobs.map((j) => j.id)).toEqual(['greet-hello/with_skill/run-1', 'greet-hello/with_skill/run-2', 'greet-bye/with_skill/run-1', 'other/with_skill/run-1']);
    expect(jobs.map((j) => j.index)).toEqual([0, 1, 2, 3]);
  });

  it('adds interleaved without_skill jobs with --baseline and overrides trials', () => {
    const jobs = planJobs(suite, { baseline: true, trials: 2, cases: ['other'] });
    expect(jobs.map((j) => `${j.variant}#${j.trial}`)).toEqual(['with_skill#1', 'without_skill#1', 'with_skill#2', 'without_skill#2']);
  });

  it('filters by case glob, exclusion (which wins) and tag', () => {
    expect(planJobs(suite, { cases: ['greet-*'], excludeCases: ['*-bye'] }).map((j) => j.case.id)).toEqual(['greet-hello', 'greet-hello']);
    expect(planJobs(suite, { tags: ['slow'] }).map((j) => j.case.id)).toEqual(['greet-bye']);
  });

  it('names the filters and the known cases when nothing matches', () => {
    expect(() => planJobs(suite, { cases: ['nope*'] })).toThrow(new PlanError('no case matches --case nope* (cases: greet-hello, greet-bye, other)'));
  });

  it('puts the engine in the job id when several engines run, and honours a case restriction', () => {
    const e2 = { name: 'codex', displayName: 'codex', model: {}, kwargs: {} };
    const s = makeSuite([makeCase('a'), makeCase('b', { engines: ['codex'] })], { engines: [makeSuite([]).engine, e2] });
    expect(planJobs(s).map((j) => j.id)).toEqual(['custom/a/with_skill/run-1', 'codex/a/with_skill/run-1', 'codex/b/with_skill/run-1']);
  });
});
