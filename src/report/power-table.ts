/**
 * The power table as text for the console or as Markdown: per uplift to detect (rows) and
 * trials per case and arm (columns), the cases a with/without comparison needs
 * (stats/power.ts `powerTable`), followed by one line stating the noise assumed: the
 * flakiness observed in a run, or skill-up's pessimistic default before any run
 * (`ASSUMED_NOISE`). Used by `skill-up calibrate` and `skill-up run --dry-run`. Pure.
 */
import type { NoiseModel, PowerRow } from '../stats/power.js';

/** Options of {@link renderPowerTable}. */
export interface PowerTableOptions {
  /** The noise model the rows were computed with (its `source` sets the assumption line). */
  noise: NoiseModel;
  /** Two-sided significance level the rows were computed at. */
  alpha: number;
  /** Power the rows were computed at. Default 0.8. */
  power?: number;
  format: 'text' | 'markdown';
}

const points = (fraction: number) => `+${Math.round(fraction * 100)} points`;
const cell = (n: number | null) => (n === null ? '>10,000' : String(n));
const trialsLabel = (m: number) => `${m} trial${m === 1 ? '' : 's'}`;
const num = (x: number) => Number(x.toPrecision(2)).toString();

/** The one-line statement of the noise the table assumes. */
export function noiseAssumption(noise: NoiseModel): string {
  const sd = Math.round(Math.sqrt(noise.caseVariance) * 100);
  if (noise.source === 'assumed') {
    return (
      `Assumes no data yet: every trial a coin flip (per-trial variance ${num(noise.trialVariance)}, both arms) and per-case uplifts ` +
      `spreading with SD ${sd} points; pessimistic on purpose, \`skill-up calibrate\` measures the suite's own flakiness.`
    );
  }
  return (
    `Assumes the flakiness observed: per-trial variance ${num(noise.trialVariance)} (p(1−p) of one trial, summed over the two arms, mean over cases; a coin flip in both arms is 0.5) ` +
    `and per-case differences spreading with SD ${sd} points beyond trial noise.`
  );
}

/**
 * Renders `rows` (from `powerTable`) as an aligned console table (`text`) or a Markdown table
 * (`markdown`): a caption, the table, and the assumption line. Cells are case counts;
 * `>10,000` where no suite size up to 10,000 cases suffices. Ends with a newline.
 */
export function renderPowerTable(rows: PowerRow[], opts: PowerTableOptions): string {
  const power = opts.power ?? 0.8;
  const trials = [...new Set(rows.flatMap((r) => Object.keys(r.casesNeeded).map(Number)))].sort((a, b) => a - b);
  const caption = `Cases needed to detect an uplift (${Math.round(power * 100)}% power, α = ${opts.alpha}, paired permutation test over cases), by trials per case and arm:`;
  const header = ['uplift', ...trials.map(trialsLabel)];
  const body = rows.map((r) => [points(r.uplift), ...trials.map((m) => cell(r.casesNeeded[m] ?? null))]);
  const assumption = noiseAssumption(opts.noise);
  if (opts.format === 'markdown') {
    const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
    const rule = `|${header.map((_, i) => (i === 0 ? ':---' : '---:')).join('|')}|`;
    return [caption, '', line(header), rule, ...body.map(line), '', `_${assumption}_`, ''].join('\n');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`.trimEnd();
  return [caption, line(header), ...body.map(line), assumption, ''].join('\n');
}
