/**
 * The console summary of a comparison: the verdict, per group the paired figures, the cases
 * that changed (at most `maxCases` per group, regressions first) and every gate.
 */
import type { Comparison } from './compare.js';
import { CHANGE_TEXT, groupExtras, groupLine, modeText, sideText, verdictText } from './format.js';

/** Control characters replaced by `?`, so a hostile case id cannot move the cursor or clear the terminal. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const plain = (s: string) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');

/**
 * Formats the comparison for a terminal. Pure.
 * @param maxCases changed cases listed per group (default 50); the rest are counted.
 * @returns lines ending in `\n`.
 */
export function comparisonText(c: Comparison, maxCases = 50): string {
  const v = verdictText(c);
  const out: string[] = [];
  out.push(`${v.icon} compare (${modeText(c)}): ${v.title}: ${v.meaning}`);
  out.push(`old: ${plain(c.old.source)} (${plain(c.old.skill)}, iteration ${c.old.iteration}, ${c.old.trials} trial(s))`);
  out.push(`new: ${plain(c.new.source)} (${plain(c.new.skill)}, iteration ${c.new.iteration}, ${c.new.trials} trial(s))`);
  for (const g of c.groups) {
    const extras = groupExtras(g);
    out.push(`${plain(g.name)}: ${groupLine(g)}${extras ? `; ${extras}` : ''}`);
    const changed = c.cases.filter((x) => x.engine === g.name && x.change !== 'unchanged');
    for (const x of changed.slice(0, maxCases)) {
      out.push(`  ${CHANGE_TEXT[x.change].padEnd(12)} ${plain(x.caseId)}: ${sideText(x.before)} → ${sideText(x.after)}`);
    }
    if (changed.length > maxCases) out.push(`  … and ${changed.length - maxCases} more changed case(s) (see --markdown, --html or --json)`);
  }
  for (const x of c.excluded) out.push(`${plain(x.engine)}: not compared: ${plain(x.reason)}`);
  for (const g of c.gates) {
    out.push(`${g.state === 'pass' ? '✓' : g.state === 'fail' ? '✗' : '?'} ${g.name}${g.engine ? ` ${plain(g.engine)}` : ''}: ${g.state.toUpperCase()}: ${plain(g.reason)}`);
  }
  return out.map((l) => `${l}\n`).join('');
}
