/**
 * The two sides ("arms") of a comparison, taken from saved runs: which trials are "old" and
 * which are "new", normalised so that the stats stage and the no-regression gate can pair
 * them by (engine, case id). Pure: result documents in, trial lists out.
 *
 * Three ways to pick the arms:
 * - `runs`: the with_skill trials of two runs (old run → new run), paired by (engine, case);
 * - `engines`: the with_skill trials of two engines of one run (engine a → engine b), paired
 *   by case id;
 * - `variants`: without_skill → with_skill of one run, per engine, paired by case id.
 *
 * Every trial of an arm is relabelled `with_skill` (the variant the gate reads) and its engine
 * is set to the comparison group (the engine name, or `a → b` in `engines` mode).
 */
import { trialOfJob, type JobJson, type ResultDoc } from '../report/result-json.js';
import type { TrialResult } from '../stats/summarise.js';

/** A result document and how to name it in messages (a path as the user gave it, relative to the cwd). */
export interface ComparedDoc {
  doc: ResultDoc;
  source: string;
}

/** How the two arms were chosen. */
export type CompareMode = 'runs' | 'engines' | 'variants';

/** One side of a comparison. */
export interface Arm {
  /** What this side is, for messages and the gate's reason: a path, or `<engine> in <path>`, or `without_skill in <path>`. */
  source: string;
  /** Skill name of the run it comes from. */
  skill: string;
  /** Iteration number of the run it comes from. */
  iteration: number;
  /** The trials, each with variant `with_skill` and engine = its comparison group. */
  trials: TrialResult[];
}

/** A comparison group: the engine of each arm whose cases are paired (the same engine except in `engines` mode). */
export interface Group {
  /** The group's key, used as the engine of every trial of both arms. */
  name: string;
  oldEngine: string;
  newEngine: string;
}

/** Both arms and their groups, in display order. */
export interface ArmPair {
  mode: CompareMode;
  old: Arm;
  new: Arm;
  groups: Group[];
  /** Engines of the run(s) left out of the comparison, and why (`variants`: no baseline arm). */
  excluded: { engine: string; reason: string }[];
}

/** The input cannot be compared this way (an engine not in the run, no baseline arm, …). The message is for the user as is. */
export class CompareInputError extends Error {}

const enginesOf = (jobs: JobJson[]) => [...new Set(jobs.map((j) => j.engine))];

function arm(d: ComparedDoc, source: string, trials: TrialResult[]): Arm {
  return { source, skill: d.doc.skill.name, iteration: d.doc.iteration, trials };
}

/** `runs` mode: the with_skill trials of `old` and `current`, groups = every engine of either run (the new run's first). */
export function armsFromRuns(old: ComparedDoc, current: ComparedDoc): ArmPair {
  const pick = (d: ComparedDoc) => d.doc.jobs.filter((j) => j.variant === 'with_skill').map((j) => trialOfJob(j));
  const oldTrials = pick(old);
  const newTrials = pick(current);
  const names = [...new Set([...newTrials.map((t) => t.engine), ...oldTrials.map((t) => t.engine)])];
  return {
    mode: 'runs',
    old: arm(old, old.source, oldTrials),
    new: arm(current, current.source, newTrials),
    groups: names.map((name) => ({ name, oldEngine: name, newEngine: name })),
    excluded: [],
  };
}

/**
 * `engines` mode: engine `a` (old) against engine `b` (new), the with_skill trials of one run.
 * @throws CompareInputError when a = b or either engine has no with_skill job in the run.
 */
export function armsFromEngines(run: ComparedDoc, a: string, b: string): ArmPair {
  if (a === b) throw new CompareInputError(`--engines needs two different engines, got \`${a}\` twice`);
  const withJobs = run.doc.jobs.filter((j) => j.variant === 'with_skill');
  const known = enginesOf(withJobs);
  for (const e of [a, b]) {
    if (!known.includes(e)) {
      throw new CompareInputError(`engine \`${e}\` has no with_skill job in ${run.source} (its engines: ${known.length ? known.join(', ') : 'none'})`);
    }
  }
  const name = `${a} → ${b}`;
  const of = (e: string) => withJobs.filter((j) => j.engine === e).map((j) => trialOfJob(j, name));
  return {
    mode: 'engines',
    old: arm(run, `${a} in ${run.source}`, of(a)),
    new: arm(run, `${b} in ${run.source}`, of(b)),
    groups: [{ name, oldEngine: a, newEngine: b }],
    excluded: [],
  };
}

/**
 * `variants` mode: without_skill (old) against with_skill (new) in one run, per engine that ran
 * both variants (an engine without a baseline arm is listed in `excluded`).
 * @throws CompareInputError when the run has no without_skill job (it ran without --baseline).
 */
export function armsFromVariants(run: ComparedDoc): ArmPair {
  const without = run.doc.jobs.filter((j) => j.variant === 'without_skill');
  if (without.length === 0) {
    throw new CompareInputError(`${run.source} has no without_skill job: the run had no baseline (rerun with --baseline, or compare two runs)`);
  }
  const baselined = new Set(without.map((j) => j.engine));
  const withAll = run.doc.jobs.filter((j) => j.variant === 'with_skill');
  const withJobs = withAll.filter((j) => baselined.has(j.engine));
  const names = [...new Set([...withJobs.map((j) => j.engine), ...without.map((j) => j.engine)])];
  return {
    mode: 'variants',
    old: arm(run, `without_skill in ${run.source}`, without.map((j) => trialOfJob(j, j.engine, 'with_skill'))),
    new: arm(run, `with_skill in ${run.source}`, withJobs.map((j) => trialOfJob(j))),
    groups: names.map((name) => ({ name, oldEngine: name, newEngine: name })),
    excluded: enginesOf(withAll)
      .filter((e) => !baselined.has(e))
      .map((engine) => ({ engine, reason: 'no without_skill job (this engine ran without a baseline)' })),
  };
}
