/**
 * The comparison as Markdown for a pull-request comment or a GitHub step summary: the verdict,
 * one table row per group (pass rate old → new, change with its 95 % interval, case counts, the
 * paired test, the gate), every gate's reason, the changed cases (regressions first), then the
 * unchanged cases folded in a `<details>` block.
 *
 * The output is at most `maxBytes` UTF-8 bytes (default 60,000, under GitHub's 65,536-character
 * comment limit): case rows that do not fit are left out and counted in a note. Every text that
 * comes from a run (engine names, case ids, paths, gate reasons) is put on one line and escaped
 * with the report's `mdText` / `codeSpan`, so it cannot break a table or inject HTML.
 */
import { codeSpan, mdText, SUMMARY_MAX_BYTES } from '../report/markdown.js';
import { formatP } from '../stats/summarise.js';
import type { CaseChange, Comparison } from './compare.js';
import { CHANGE_TEXT, modeText, pct, pts, sideText, verdictText } from './format.js';

/** Options of {@link comparisonMarkdown}. */
export interface CompareMarkdownOptions {
  /** Upper bound of the output size in UTF-8 bytes. Default 60,000. */
  maxBytes?: number;
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');
const STATE_ICON = { pass: '✅', fail: '❌', inconclusive: '⚠️' } as const;

function caseRow(x: CaseChange, withChange: boolean): string {
  const change = withChange ? ` ${CHANGE_TEXT[x.change]}${x.delta !== null ? ` (${pts(x.delta)} points)` : ''} |` : '';
  return `| ${mdText(x.engine, 80)} | ${mdText(x.caseId, 200)} |${change} ${mdText(sideText(x.before))} | ${mdText(sideText(x.after))} |`;
}

/** Builds the Markdown. Pure. */
export function comparisonMarkdown(c: Comparison, opts: CompareMarkdownOptions = {}): string {
  const maxBytes = opts.maxBytes ?? SUMMARY_MAX_BYTES;
  const v = verdictText(c);
  const head: string[] = [];
  head.push(`## ${v.icon} skill-up compare: ${v.title}`, '');
  head.push(`${v.meaning[0]!.toUpperCase()}${v.meaning.slice(1)}.`, '');
  const side = (a: Comparison['old']) => `${codeSpan(a.source)} (${mdText(a.skill, 100)}, iteration ${a.iteration}, ${a.trials} trial(s))`;
  head.push(`Compares the ${modeText(c)}: **old** ${side(c.old)} → **new** ${side(c.new)}.`, '');

  head.push(
    '| Engine | Paired cases | Pass rate old → new | Change, points [95% CI by case] | Regressed | Improved | Unchanged | New | Removed | Not graded | Paired test p | Gate |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const g of c.groups) {
    const gate = c.gates.find((x) => x.name === 'no_regression' && x.engine === g.name);
    const ci = g.interval ? ` [${pts(g.interval.low)}, ${pts(g.interval.high)}]` : '';
    const k = g.counts;
    head.push(
      `| ${mdText(g.name, 80)} | ${g.pairedCases} | ${pct(g.oldRate)} → ${pct(g.newRate)} | ${pts(g.delta)}${ci} | ${k.regressed} | ${k.improved} | ${k.unchanged} | ${k.new} | ${k.removed} | ${k.not_graded} | ${g.pAdjusted === null ? '—' : formatP(g.pAdjusted)} | ${gate ? `${STATE_ICON[gate.state]} ${gate.state}` : '—'} |`,
    );
  }
  for (const x of c.excluded) head.push('', `${mdText(x.engine, 80)}: not compared: ${mdText(x.reason)}.`);
  head.push('', '### Gates', '');
  for (const g of c.gates) head.push(`- ${STATE_ICON[g.state]} **${g.name}**${g.engine ? ` · ${mdText(g.engine, 80)}` : ''}: ${g.state.toUpperCase()}: ${mdText(g.reason, 1000)}`);
  head.push('');

  const changed = c.cases.filter((x) => x.change !== 'unchanged');
  const unchanged = c.cases.filter((x) => x.change === 'unchanged');
  const foot = (left: number) => (left ? [`_${left} case row(s) left out to stay under ${Math.floor(maxBytes / 1000)} KB; \`skill-up compare --json\` or \`--html\` lists every case._`, ''] : []);
  const reserve = bytes(foot(c.cases.length).join('\n')) + 2;
  let used = bytes(head.join('\n')) + reserve;
  const body: string[] = [];
  let left = 0;
  const add = (lines: string[]) => {
    const n = bytes(lines.join('\n')) + 1;
    if (used + n > maxBytes) return false;
    body.push(...lines);
    used += n;
    return true;
  };
  if (changed.length && add(['### Changed cases', '', '| Engine | Case | Change | Old | New |', '|---|---|---|---|---|'])) {
    for (const [i, x] of changed.entries()) {
      if (!add([caseRow(x, true)])) {
        left += changed.length - i;
        break;
      }
    }
    add(['']);
  } else left += changed.length;
  const open = [`<details><summary>${unchanged.length} unchanged case(s)</summary>`, '', '| Engine | Case | Old | New |', '|---|---|---|---|'];
  if (unchanged.length && used + bytes(open.join('\n')) + bytes('\n</details>\n') + 2 <= maxBytes) {
    add(open);
    used += bytes('\n</details>\n') + 2; // the closing lines are always written
    for (const [i, x] of unchanged.entries()) {
      if (!add([caseRow(x, false)])) {
        left += unchanged.length - i;
        break;
      }
    }
    body.push('', '</details>', '');
  } else left += unchanged.length;
  const text = [...head, ...body, ...foot(left)].join('\n');
  return bytes(text) <= maxBytes ? text : cut(text, maxBytes);
}

/** Last resort when even the head does not fit (thousands of groups): whole lines up to the limit, then a note. */
function cut(text: string, maxBytes: number): string {
  const note = '\n\n_Cut to stay under the size limit; `skill-up compare --json` has everything._\n';
  const out: string[] = [];
  let used = bytes(note);
  for (const line of text.split('\n')) {
    used += bytes(line) + 1;
    if (used > maxBytes) break;
    out.push(line);
  }
  return out.join('\n') + note;
}
