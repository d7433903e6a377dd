/**
 * The previous run a `no_regression` gate compares with (`--no-regression <run>` or
 * eval.yaml `gates.no_regression.baseline`): its with_skill counts per (engine, case), and the
 * run's gate settings with it loaded.
 */
import { relative, resolve } from 'node:path';
import type { EngineConfig, Suite } from '../config/types.js';
import { resolveGates, type DecisionConfig, type GateOverrides, type PreviousRun } from '../gate/index.js';
import type { Job } from '../plan/plan.js';
import { loadResultDoc, ResultFileError } from '../report/load.js';
import { UsageError } from '../util/args.js';

/** A loaded previous run: the gate's counts plus where it came from. */
export type LoadedPreviousRun = PreviousRun & {
  /** Absolute path of its result.json. */
  file: string;
  skillName: string;
};

/**
 * Loads a previous run (a result.json or its iteration folder, src/report/load.ts) and counts
 * its graded with_skill jobs per (engine, case); with `errorsAsFailures` an errored job counts
 * as failed, else it is left out. `from` names the flag or setting that gave `file`, for the
 * message. @throws UsageError for a file that is missing or not a result.json.
 */
export async function loadPreviousRun(file: string, errorsAsFailures: boolean, from: string): Promise<LoadedPreviousRun> {
  let loaded: Awaited<ReturnType<typeof loadResultDoc>>;
  try {
    loaded = await loadResultDoc(file);
  } catch (e) {
    if (e instanceof ResultFileError) throw new UsageError(`${from}: ${e.message}`);
    throw e;
  }
  const { doc, file: resolved } = loaded;
  const counts = new Map<string, PreviousRun['cases'][number]>();
  for (const j of doc.jobs) {
    if (j.variant !== 'with_skill') continue;
    const failed = j.status === 'fail' || (errorsAsFailures && j.status === 'error');
    if (j.status !== 'pass' && !failed) continue;
    const k = JSON.stringify([j.engine, j.case_id]);
    const c = counts.get(k) ?? { engine: j.engine, caseId: j.case_id, passed: 0, failed: 0 };
    if (j.status === 'pass') c.passed++;
    else c.failed++;
    counts.set(k, c);
  }
  return { source: relative(process.cwd(), resolved) || resolved, file: resolved, skillName: doc.skill.name, iteration: doc.iteration, cases: [...counts.values()] };
}

/**
 * The gate settings of a run (gate/config.ts `resolveGates`: eval.yaml `gates:` under the
 * command line's values), with the no_regression gate's previous run loaded up front, so a bad
 * path is a usage error before any job runs. `baseline`: the run has the without_skill arm.
 * @throws UsageError
 */
export async function runDecisionConfig(flags: GateOverrides, suite: Suite, engines: EngineConfig[], baseline: boolean): Promise<DecisionConfig> {
  const { config, previous } = resolveGates(flags, suite, { baseline, engineNames: Object.fromEntries(engines.map((e) => [e.name, e.displayName])) });
  if (previous) config.noRegression = { previous: await loadPreviousRun(previous.file, config.errorsAsFailures, previous.from), margin: previous.margin };
  return config;
}

/**
 * Refuses, before anything runs, a --no-regression run that cannot be compared (no case of
 * this plan in it) or that `--iteration N` would empty; notes through `notice` a run of
 * another skill. `jobs` is the whole plan (a shard is compared as the merged run).
 * @throws UsageError
 */
export function checkPrevious(decision: DecisionConfig, jobs: Job[], skillName: string, outputRoot: string, iterations: number, notice: (line: string) => void): void {
  // Loaded by loadPreviousRun, so it says where it came from.
  const prev: (PreviousRun & Partial<LoadedPreviousRun>) | undefined = decision.noRegression?.previous;
  if (!prev) return;
  const planned = new Set(jobs.filter((j) => j.variant === 'with_skill').map((j) => JSON.stringify([j.engine, j.case.id])));
  if (!prev.cases.some((c) => planned.has(JSON.stringify([c.engine, c.caseId])))) {
    const engines = [...new Set(prev.cases.map((c) => c.engine))].join(', ') || 'none';
    throw new UsageError(`--no-regression ${prev.source}: no graded with_skill case of that run is in this plan (same case id and engine; its engines: ${engines}): there is nothing to compare`);
  }
  if (prev.skillName && prev.skillName !== skillName) notice(`note: --no-regression ${prev.source} is a run of skill \`${prev.skillName}\`, this is \`${skillName}\`; cases are paired by id`);
  for (let n = 1; n <= iterations; n++) {
    const dir = resolve(outputRoot, `iteration-${n}`);
    if (prev.file && (prev.file === dir || prev.file.startsWith(`${dir}/`))) {
      throw new UsageError(`--iteration ${iterations} would empty ${relative(process.cwd(), dir) || dir}, which holds the --no-regression run: copy it elsewhere or use another --output-dir`);
    }
  }
}
