/**
 * The previous run a `no_regression` gate compares with (`--no-regression <run>` or
 * eval.yaml `gates.no_regression.baseline`): its with_skill counts per (engine, case).
 */
import { relative } from 'node:path';
import type { PreviousRun } from '../gate/index.js';
import { loadResultDoc } from '../report/load.js';

/** A loaded previous run: the gate's counts plus where it came from. */
export type LoadedPreviousRun = PreviousRun & {
  /** Absolute path of its result.json. */
  file: string;
  skillName: string;
};

/**
 * Loads a previous run (a result.json or its iteration folder, src/report/load.ts) and counts
 * its graded with_skill jobs per (engine, case); with `errorsAsFailures` an errored job counts
 * as failed, else it is left out. @throws ResultFileError (src/report/load.ts) for a file that
 * is missing or not a result.json.
 */
export async function loadPreviousRun(file: string, errorsAsFailures: boolean): Promise<LoadedPreviousRun> {
  const { doc, file: resolved } = await loadResultDoc(file);
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
