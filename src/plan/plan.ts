/**
 * The plan stage: a suite and the command line's choices → the list of jobs to run.
 * A job is one case × engine × variant × trial (design.md, "The pipeline").
 */
import { compileGlob } from '../skill/files.js';
import type { CaseSpec, Suite } from '../config/types.js';
import type { Variant } from '../engine/types.js';

/** One unit of work. `id` is unique in a run and safe as a folder name. */
export interface Job {
  id: string;
  /** 0-based position in the plan. */
  index: number;
  case: CaseSpec;
  /** Canonical engine name (`custom` for a user agent). */
  engine: string;
  variant: Variant;
  /** 1-based. */
  trial: number;
}

/** What the command line may change about the plan. */
export interface PlanOptions {
  /** Case-id globs to keep (any match keeps a case); empty = all. */
  cases?: string[];
  /** Case-id globs to drop; applied after `cases`, so exclusion wins. */
  excludeCases?: string[];
  /** Keep only cases having at least one of these tags. */
  tags?: string[];
  /** Overrides every case's trial count. */
  trials?: number;
  /** Forces the `without_skill` variant (as `benchmark.enabled` does). */
  baseline?: boolean;
  /** Engine names to run (default: the suite's engines). */
  engines?: string[];
  /** `--trigger-only`: keep only trigger cases (CaseSpec.shouldTrigger); a suite without any is a PlanError. */
  triggerOnly?: boolean;
}

/** Thrown when the filters leave nothing to run; the CLI reports it as a usage error. */
export class PlanError extends Error {}

/** Selects the cases the filters keep, in suite order. */
export function selectCases(suite: Suite, opts: PlanOptions): CaseSpec[] {
  const glob = (g: string[]) => {
    try {
      return compileGlob(g);
    } catch (e) {
      throw new PlanError(`--case/--exclude-case: ${(e as Error).message}`);
    }
  };
  const keep = opts.cases?.length ? glob(opts.cases) : () => true;
  const drop = opts.excludeCases?.length ? glob(opts.excludeCases) : () => false;
  const tags = new Set(opts.tags ?? []);
  if (opts.triggerOnly && !suite.cases.some((c) => c.shouldTrigger !== undefined)) {
    throw new PlanError('--trigger-only: the suite has no trigger case (give a case `should_trigger: true|false`, or list a trigger eval set in eval.yaml `triggers: {file: evals/trigger-eval.json}`)');
  }
  return suite.cases.filter((c) => keep(c.id) && !drop(c.id) && (tags.size === 0 || c.tags.some((t) => tags.has(t))) && (!opts.triggerOnly || c.shouldTrigger !== undefined));
}

/**
 * Expands the selected cases into jobs: for each case, each engine it runs on, each variant
 * (a trigger case: `with_skill` only), each trial. Trials of both variants interleave so a drift over time (rate limits, a warm
 * cache) affects both arms alike.
 *
 * @throws PlanError when no case or no engine is left.
 */
export function planJobs(suite: Suite, opts: PlanOptions = {}): Job[] {
  const cases = selectCases(suite, opts);
  if (cases.length === 0) {
    const filters = [...(opts.cases ?? []).map((g) => `--case ${g}`), ...(opts.excludeCases ?? []).map((g) => `--exclude-case ${g}`), ...(opts.tags ?? []).map((t) => `--tag ${t}`), ...(opts.triggerOnly ? ['--trigger-only'] : [])];
    throw new PlanError(suite.cases.length === 0 ? 'the suite has no cases' : `no case matches ${filters.join(' ')} (cases: ${suite.cases.map((c) => c.id).join(', ')})`);
  }
  const engines = opts.engines?.length ? opts.engines : suite.engines.map((e) => e.name);
  const variants: Variant[] = opts.baseline || suite.benchmark.enabled ? ['with_skill', 'without_skill'] : ['with_skill'];
  const multiEngine = engines.length > 1;
  const jobs: Job[] = [];
  for (const c of cases) {
    const caseEngines = c.engines ? engines.filter((e) => c.engines!.includes(e)) : engines;
    const trials = opts.trials ?? c.trials;
    // A trigger case asks whether the installed skill is activated: without it there is nothing to activate.
    const caseVariants: Variant[] = c.shouldTrigger !== undefined ? ['with_skill'] : variants;
    for (const engine of caseEngines) {
      for (let trial = 1; trial <= trials; trial++) {
        for (const variant of caseVariants) {
          // With several engines, each gets its own tree (`<engine>/<case>/<variant>/run-k`),
          // so every engine's folder keeps skill-creator's `<case>/<variant>/run-k` layout.
          const id = [multiEngine ? engine : undefined, c.id, variant, `run-${trial}`].filter(Boolean).join('/');
          jobs.push({ id, index: jobs.length, case: c, engine, variant, trial });
        }
      }
    }
  }
  if (jobs.length === 0) throw new PlanError(`no case runs on engine(s) ${engines.join(', ')}`);
  return jobs;
}
