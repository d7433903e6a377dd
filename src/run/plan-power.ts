/**
 * `run --dry-run`'s power table: how big an uplift this plan can detect, and how many cases
 * × trials it takes to detect +10/+20/+30 points, so a suite is sized before it is paid for.
 */
import type { Job } from '../plan/plan.js';
import { ASSUMED_NOISE, detectableUplift, estimateNoise, powerTable, type NoiseModel } from '../stats/index.js';
import { renderPowerTable } from '../report/power-table.js';
import { fromNewestIteration } from '../report/iterations.js';

/**
 * The flakiness of the newest iteration under `outputRoot` that has both variants (per case,
 * with_skill vs without_skill graded counts); null when there is none or it cannot be read.
 */
export async function observedNoise(outputRoot: string): Promise<{ noise: NoiseModel; from: string } | null> {
  return fromNewestIteration(outputRoot, (doc, file) => {
    const counts = new Map<string, { passed: number; graded: number }>();
    for (const j of doc.jobs) {
      if (j.status !== 'pass' && j.status !== 'fail') continue;
      const k = JSON.stringify([j.engine, j.case_id, j.variant]);
      const c = counts.get(k) ?? { passed: 0, graded: 0 };
      c.graded++;
      if (j.status === 'pass') c.passed++;
      counts.set(k, c);
    }
    const pairs = [...counts.entries()]
      .filter(([k]) => JSON.parse(k)[2] === 'with_skill')
      .map(([k, a]) => {
        const [e, c] = JSON.parse(k) as [string, string];
        return { a, b: counts.get(JSON.stringify([e, c, 'without_skill'])) };
      })
      .filter((p): p is { a: { passed: number; graded: number }; b: { passed: number; graded: number } } => p.b !== undefined);
    const noise = estimateNoise(pairs);
    return noise ? { noise, from: file } : null;
  });
}

/** The text `--dry-run` prints after the plan. */
export async function planPower(jobs: Job[], baseline: boolean, outputRoot: string, alpha: number): Promise<string> {
  const observed = await observedNoise(outputRoot);
  const noise = observed?.noise ?? ASSUMED_NOISE;
  const cases = new Set(jobs.map((j) => `${j.engine}\u0000${j.case.id}`)).size / Math.max(1, new Set(jobs.map((j) => j.engine)).size);
  const trials = jobs.length ? Math.max(...jobs.map((j) => j.trial)) : 0;
  const lines: string[] = ['', observed ? `Power (flakiness observed in ${observed.from}):` : 'Power (no earlier run with both variants: flakiness assumed):'];
  const d = trials ? detectableUplift(Math.round(cases), trials, noise, alpha) : null;
  lines.push(
    d === null
      ? `  this plan (${Math.round(cases)} case(s) × ${trials} trial(s)) has too few cases for any uplift to be significant at α = ${alpha}`
      : `  this plan (${Math.round(cases)} case(s) × ${trials} trial(s)) detects an uplift of ≥ ${Math.round(d * 100)} points with 80% power at α = ${alpha}`,
  );
  if (!baseline) lines.push('  (the uplift needs the without_skill arm: add --baseline)');
  lines.push(renderPowerTable(powerTable(noise, alpha), { noise, alpha, format: 'text' }));
  return `${lines.join('\n')}\n`;
}
