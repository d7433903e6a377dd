/**
 * A calibration for people: a compact console summary and calibration.md. Figures in points
 * (a fraction × 100), pass rates in percent. Pure.
 */
import { renderPowerTable } from '../report/power-table.js';
import { formatP } from '../stats/summarise.js';
import { minimumDecisiveCases } from '../stats/tests.js';
import type { Calibration, CaseFlakiness, EngineCalibration } from './analyse.js';

/** Cases listed on the console per engine (calibration.md lists all). */
export const CONSOLE_CASES = 20;

const pts = (x: number) => `${Math.round(x * 100)}`;
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${pts(Math.abs(x))}`;
const pct = (x: number, digits = 0) => `${(x * 100).toFixed(digits)}%`;

function title(e: EngineCalibration): string {
  const trials = Math.max(0, ...e.cases.map((c) => c.trials));
  return `A/A calibration of ${e.engine} (${e.variant}): ${e.cases.length} case(s) × ${trials} trial(s); halves: trials 1–${e.half} and ${e.half + 1}–${2 * e.half}`;
}

/** The summary sentences of one engine, one per line, without list markers. */
export function findings(e: EngineCalibration): string[] {
  const f = e.falseDifferences;
  const out: string[] = [];
  const v = e.meanTrialVariance;
  out.push(`Flakiness: ${e.flakyCases} of ${e.gradedCases} graded case(s) flaky; mean per-trial variance p(1−p) of one arm = ${v === null ? "n/a" : v.toFixed(3)} (0 = deterministic, 0.25 = coin flip)`);
  if (f.rate === null || !f.interval) {
    out.push('False differences: not measured (no case has 2 graded trials to split)');
  } else {
    const verdict = f.sound ? `sound (expected ≤ α = ${pct(f.alpha, 0)})` : `ABOVE α = ${pct(f.alpha, 0)}: the verdict finds differences that are not there`;
    const dirs = f.count ? ` (${f.improves} improves, ${f.regresses} regresses)` : '';
    out.push(
      `False differences: ${f.count} of ${f.splits} A/A re-splits called a difference${dirs} at α = ${f.alpha}: ` +
        `${pct(f.rate, 1)} [95% CI ${pct(f.interval.low, 1)}–${pct(f.interval.high, 1)}], ${verdict}`,
    );
  }
  const n = e.noiseFloor;
  if (n.uplift !== null) {
    const hw = n.meanHalfWidth === null ? '' : `; the uplift's 95% interval spans ±${pts(n.meanHalfWidth)} points on average`;
    out.push(`Noise floor: |uplift| ≤ ${pts(n.uplift)} points in ${pct(n.quantile)} of A/A re-splits${hw}`);
  }
  const s = e.fixedSplit;
  out.push(
    `Fixed split (trials 1–${e.half} vs ${e.half + 1}–${2 * e.half}): ` +
      (s.uplift === null ? s.reason : `${signed(s.uplift)} points over ${s.comparedCases} case(s), p = ${formatP(s.p)}, ${s.verdict}`),
  );
  const p = e.power;
  const size = `${p.cases} case(s) × ${p.trials} trial(s)`;
  out.push(
    p.detectableUplift === null
      ? `Smallest detectable uplift (${size}): none; at α = ${p.alpha} at least ${minimumDecisiveCases(p.alpha)} cases must differ for any result to be significant`
      : `Smallest detectable uplift (${size}, ${pct(p.power)} power): ${pts(p.detectableUplift)} points`,
  );
  return out;
}

/** Flaky cases first (most variable first), then the rest in suite order. */
function ordered(cases: CaseFlakiness[]): CaseFlakiness[] {
  return cases.map((c, i) => [c, i] as const).sort((a, b) => (b[0].trialVariance ?? -1) - (a[0].trialVariance ?? -1) || a[1] - b[1]).map(([c]) => c);
}

function caseRow(c: CaseFlakiness): string[] {
  const rate = c.passRate === null ? 'n/a' : pct(c.passRate);
  const extra = [c.errors ? `${c.errors} error(s)` : '', c.skipped ? `${c.skipped} skipped` : ''].filter(Boolean).join(', ');
  return [
    c.caseId,
    `${c.passed}/${c.graded}`,
    rate,
    c.flaky ? 'flaky' : '',
    c.trialVariance === null ? 'n/a' : c.trialVariance.toFixed(2),
    `${c.halves.a.passed}/${c.halves.a.graded}; ${c.halves.b.passed}/${c.halves.b.graded}`,
    extra,
  ];
}

const HEADER = ['case', 'passed', 'rate', 'flaky', 'p(1−p)', 'halves A; B', 'not graded'];
const ALIGN = [':---', '---:', '---:', ':---', '---:', ':---', ':---'];

/** The case table's columns: the `not graded` one only when some case has errors or skips. */
function columns(e: EngineCalibration): number {
  return e.cases.some((c) => c.errors || c.skipped) ? HEADER.length : HEADER.length - 1;
}

/** The console summary of a calibration. Ends with a newline. */
export function renderCalibrationText(c: Calibration): string {
  const out: string[] = [];
  for (const e of c.engines) {
    out.push('', title(e));
    const shown = ordered(e.cases).slice(0, CONSOLE_CASES);
    const n = columns(e);
    const rows = [HEADER, ...shown.map(caseRow)].map((r) => r.slice(0, n));
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    const right = new Set([1, 2, 4]);
    for (const r of rows) out.push(`  ${r.map((x, i) => (right.has(i) ? x.padStart(widths[i]!) : x.padEnd(widths[i]!))).join('  ')}`.trimEnd());
    if (e.cases.length > shown.length) out.push(`  … ${e.cases.length - shown.length} more case(s) in calibration.md`);
    out.push(...findings(e));
    out.push(renderPowerTable(e.power.rows, { noise: e.power.noise, alpha: e.power.alpha, power: e.power.power, format: 'text' }).trimEnd());
  }
  return `${out.join('\n')}\n`;
}

const md = (s: string) => s.replace(/\|/g, '\\|');

/** calibration.md: every engine's findings, its full case table and its power table. */
export function renderCalibrationMarkdown(c: Calibration): string {
  const out: string[] = ['# A/A calibration', '', `${c.splits} seeded re-splits (seed ${c.seed}) per engine, α = ${c.alpha}${c.errorsAsFailures ? ', errors counted as failures' : ''}.`];
  for (const e of c.engines) {
    out.push('', `## ${md(title(e).replace(/^A\/A calibration of /, ''))}`, '');
    out.push(...findings(e).map((f) => `- ${md(f)}`), '');
    const n = columns(e);
    out.push(`| ${HEADER.slice(0, n).join(' | ')} |`, `|${ALIGN.slice(0, n).join('|')}|`);
    for (const c of ordered(e.cases)) out.push(`| ${caseRow(c).slice(0, n).map(md).join(' | ')} |`);
    out.push('', renderPowerTable(e.power.rows, { noise: e.power.noise, alpha: e.power.alpha, power: e.power.power, format: 'markdown' }).trimEnd());
  }
  return `${out.join('\n')}\n`;
}
