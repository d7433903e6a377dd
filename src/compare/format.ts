/**
 * Shared wording and number formats of the comparison's console, Markdown and HTML output, so
 * the three read the same. Plain text: each renderer escapes for its own format.
 */
import { formatP } from '../stats/summarise.js';
import type { CaseSide, ChangeLabel, Comparison, CompareVerdict, GroupComparison } from './compare.js';

/** A proportion as a whole percentage (`0.667` → `67%`); `—` for null. */
export const pct = (x: number | null) => (x === null ? '—' : `${Math.round(x * 100)}%`);

/** A difference of proportions as signed points (`-0.5` → `-50`); `—` for null. */
export const pts = (x: number | null) => (x === null ? '—' : `${x >= 0 ? '+' : '-'}${Math.abs(Math.round(x * 100))}`);

/** One arm of a case: `2/3 (67%)`, with errors and skips when any; `—` when absent, `no graded trial` when none was graded. */
export function sideText(s: CaseSide | null): string {
  if (!s) return '—';
  const extra = [s.errors ? `${s.errors} error(s)` : '', s.skipped ? `${s.skipped} skipped` : ''].filter(Boolean).join(', ');
  const graded = s.passed + s.failed;
  const core = graded ? `${s.passed}/${graded} (${pct(s.passRate)})` : 'no graded trial';
  return extra ? `${core}, ${extra}` : core;
}

/** A change label for people. */
export const CHANGE_TEXT: Record<ChangeLabel, string> = {
  regressed: 'regressed',
  improved: 'improved',
  unchanged: 'unchanged',
  new: 'new case',
  removed: 'removed case',
  not_graded: 'not graded',
};

/** The overall outcome: an icon, a title and what the exit code means. */
export function verdictText(c: Comparison): { icon: string; title: string; meaning: string } {
  const map: Record<CompareVerdict, { icon: string; title: string; meaning: string }> = {
    no_regression: { icon: '✅', title: 'no regression', meaning: 'every gate passed: no drop larger than the margin' },
    regression: { icon: '❌', title: 'regression', meaning: 'the new run is significantly worse' },
    errors: { icon: '❌', title: 'errors', meaning: 'too many trials of the new run errored to judge it (errors are neither passes nor fails)' },
    inconclusive: { icon: '⚠️', title: 'inconclusive', meaning: 'the data can neither prove a regression nor rule out one larger than the margin (more cases or trials decide it)' },
  };
  const v = map[c.verdict];
  const mapped = c.verdict === 'inconclusive' && c.options.onInconclusive ? ` (--on-inconclusive ${c.options.onInconclusive})` : '';
  return { ...v, meaning: `${v.meaning}; exit code ${c.exitCode}${mapped}` };
}

/** One line on a group's paired figures, e.g. `83% → 67% (-17 points [95% CI -45, +8, clustered by case]) over 6 paired case(s): …; two-sided paired permutation test p = 0.5`. */
export function groupLine(g: GroupComparison): string {
  if (g.pairedCases === 0 || g.delta === null) return 'no case was graded on both sides';
  const ci = g.interval ? ` [95% CI ${pts(g.interval.low)}, ${pts(g.interval.high)}, clustered by case]` : '';
  const p = g.p === null ? '' : `; two-sided paired permutation test p = ${formatP(g.pAdjusted ?? g.p)}${g.pAdjusted !== null && g.pAdjusted !== g.p ? ` (Holm-adjusted; unadjusted ${formatP(g.p)})` : ''}`;
  const k = g.counts;
  return `${pct(g.oldRate)} → ${pct(g.newRate)} (${pts(g.delta)} points${ci}) over ${g.pairedCases} paired case(s): ${k.regressed} regressed, ${k.improved} improved, ${k.unchanged} unchanged${p}`;
}

/** Other case counts of a group (new, removed, not graded), or '' when none. */
export function groupExtras(g: GroupComparison): string {
  const k = g.counts;
  return [k.new ? `${k.new} new` : '', k.removed ? `${k.removed} removed` : '', k.not_graded ? `${k.not_graded} not graded` : ''].filter(Boolean).join(', ');
}

/** What was compared with what. */
export function modeText(c: Comparison): string {
  return c.mode === 'runs' ? 'with_skill pass rates of two runs' : c.mode === 'engines' ? 'with_skill pass rates of two engines in one run' : 'without_skill → with_skill in one run';
}
