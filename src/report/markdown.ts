/**
 * summary.md: a short Markdown summary of a run for a GitHub step summary
 * (`$GITHUB_STEP_SUMMARY`) or a pull-request comment, built from the result.json document.
 *
 * Contents, in order: the outcome (✅/❌/❔ and what the exit code means, naming the gates that
 * failed or could not decide), the gates table (gate, engine, threshold, figure, interval,
 * state, reason: what the exit code was decided on), one table row per engine and variant (mean
 * case pass rate with its 95 % interval clustered by case, the arm's errors next to it, cases,
 * graded trials, skips, mean duration, mean tokens, cost), per engine the uplift (points with
 * its clustered interval, the three-state verdict and its reason, p, wins/ties/losses, per-arm
 * rates over the compared cases, errors per arm, dropped cases), the MCP servers offered per arm
 * when any job had some (flagged when the two arms of a case differ), the with_skill cases that
 * failed (first failed assertion and its evidence, truncated), the errors with their reasons,
 * then the baseline's failures folded in a `<details>` block.
 *
 * The output is always at most `maxBytes` UTF-8 bytes (default 60,000: under GitHub's
 * 65,536-character limit for a comment, with room to spare): details that do not fit are
 * dropped and replaced by a note naming how many were left out. Text from engines and judges
 * is put on one line, cut, and escaped so it cannot break the table or inject HTML.
 */
import { CLUSTERED_CI, gateCells, gateLabel, passRateNote, rateWithCI, upliftText } from './decision-text.js';
import { triggerMarkdown } from './triggers.js';
import { behaviourMarkdown } from './behaviour.js';
import { judgeCostText } from './judge-spend.js';
import { mcpOffers } from './mcp-servers.js';
import type { JobJson, ResultDoc, ResultGate } from './result-json.js';
import { armCost, costByArm, costTotal, formatCost, type ArmCost } from '../cost/totals.js';

/** Options of {@link buildSummaryMarkdown}. */
export interface SummaryOptions {
  /** Upper bound of the output size in UTF-8 bytes. Default 60,000. */
  maxBytes?: number;
  /** Characters kept of one piece of evidence or reason. Default 300. */
  evidenceChars?: number;
}

export const SUMMARY_MAX_BYTES = 60_000;

/** The parts of a gate {@link verdictOf} needs (a result.json `gates` entry). */
export type VerdictGate = Pick<ResultGate, 'name' | 'engine' | 'state' | 'reason'>;

/**
 * What the exit code of a run means (README "Exit codes"), in terms of its gates: 0 every
 * gate passed, 1 a gate failed, 3 errors above the allowed rate, 4 a gate inconclusive,
 * 130/143 interrupted. With the run's `gates` (result.json `gates`), the failing or
 * inconclusive gates are named; without them the meaning is the exit code's alone.
 */
export function verdictOf(exitCode: number, notRun = 0, gates: readonly VerdictGate[] = []): { icon: string; title: string; meaning: string } {
  const named = (state: VerdictGate['state']) => gates.filter((g) => g.state === state).map((g) => gateLabel(g));
  const list = (xs: string[]) => (xs.length ? `: ${xs.join(', ')}` : '');
  const failed = named('fail');
  const open = named('inconclusive');
  switch (exitCode) {
    case 0:
      return open.length
        ? { icon: '✅', title: 'passed', meaning: `no gate failed (exit code 0); inconclusive gates count as passed (--on-inconclusive pass)${list(open)}` }
        : { icon: '✅', title: 'passed', meaning: 'every gate passed (exit code 0)' };
    case 1:
      return failed.length || !open.length
        ? { icon: '❌', title: 'failed', meaning: `a gate failed (exit code 1)${list(failed)}` }
        : { icon: '❌', title: 'failed', meaning: `a gate was inconclusive and inconclusive gates count as failed (--on-inconclusive fail; exit code 1)${list(open)}` };
    case 2:
      return { icon: '❌', title: 'usage error', meaning: 'the command line or the configuration was wrong (exit code 2)' };
    case 3: {
      const g = gates.find((x) => x.name === 'max_error_rate' && x.state === 'fail');
      return { icon: '❌', title: 'too many errors', meaning: `errors above the allowed rate (exit code 3)${g ? `: ${g.reason}` : ''}; an error is the harness or an engine breaking, never counted as a failure` };
    }
    case 4:
      return { icon: '❔', title: 'inconclusive', meaning: `a gate is inconclusive: the data cannot decide it (exit code 4)${list(open)}` };
    case 130:
    case 143:
      return { icon: '⚠️', title: 'interrupted', meaning: `the run was interrupted (exit code ${exitCode}: ${exitCode === 130 ? 'SIGINT' : 'SIGTERM'})${notRun ? `; ${notRun} job(s) not run` : ''}` };
    case 137:
      return { icon: '⚠️', title: 'killed', meaning: `the run was killed before it finished (exit code 137); these reports were rebuilt from its journal.jsonl${notRun ? `; ${notRun} job(s) not run` : ''} (skill-up run --resume <folder> runs them)` };
    default:
      return { icon: '❌', title: `exit code ${exitCode}`, meaning: `skill-up exited with code ${exitCode}` };
  }
}

/** One line, at most `max` characters, with Markdown and HTML specials escaped. */
export function mdText(s: string, max = 300): string {
  const one = s.replace(/\s+/g, ' ').trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return cut.replace(/[\\`*_{}[\]<>|#~!&]/g, (c) => `\\${c}`);
}

/** An inline code span: one line, at most `max` characters, backticks replaced (a span cannot escape them). */
export function codeSpan(s: string, max = 160): string {
  const one = s.replace(/\s+/g, ' ').trim().replace(/`/g, "'");
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return `\`${cut}\``;
}

function duration(ms: number | null): string {
  if (ms === null) return '—';
  return ms < 1000 ? `${Math.round(ms)} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 60_000).toFixed(1)} min`;
}

function tokens(n: number | null): string {
  if (n === null) return '—';
  return n >= 10_000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(0);
}

/** Builds summary.md. Pure. */
export function buildSummaryMarkdown(doc: ResultDoc, opts: SummaryOptions = {}): string {
  const maxBytes = opts.maxBytes ?? SUMMARY_MAX_BYTES;
  const ev = opts.evidenceChars ?? 300;
  const display = new Map<string, string>();
  for (const e of doc.engines) if (!display.has(e.name)) display.set(e.name, e.display_name);
  const engineName = (n: string) => {
    const d = display.get(n);
    return d && d !== n ? `${d} (${n})` : n;
  };

  const gates = doc.gates ?? [];
  const v = verdictOf(doc.exit_code, doc.not_run, gates.map((g) => ({ ...g, engine: g.engine === null ? null : engineName(g.engine) })));
  const head: string[] = [];
  head.push(`## ${v.icon} skill-up: ${mdText(doc.skill.name, 100)} ${v.title}`, '');
  head.push(`${mdText(`${v.meaning[0]!.toUpperCase()}${v.meaning.slice(1)}`, 1000)}.`, '');
  const t = doc.totals;
  const facts = [
    `${t.jobs} job(s)`,
    `${t.pass} passed`,
    `${t.fail} failed`,
    `${t.error} error(s)`,
    ...(t.skipped ? [`${t.skipped} skipped`] : []),
    ...(doc.not_run ? [`${doc.not_run} not run${doc.not_run_reason ? ` (${mdText(doc.not_run_reason, 200)})` : ''}`] : []),
    `iteration ${doc.iteration}`,
    duration(doc.duration_ms),
    `${tokens(t.tokens.total)} tokens`,
    ...(costTotal(doc.jobs).usd !== null ? [formatCost(costTotal(doc.jobs))] : []),
    // The agent_judge graders, never inside the agents' tokens and cost above.
    ...(t.judge ? [`judges: ${t.judge.runs} grader run(s), ${tokens(t.judge.tokens.total)} tokens, ${duration(t.judge.duration_ms)}, ${judgeCostText({ costUsd: t.judge.cost_usd, costEstimated: !!t.judge.cost_estimated })} (not in the tokens or cost)`] : []),
  ];
  head.push(facts.join(' · '), '');
  if (doc.not_run && doc.not_run_reason) head.push(`> ⚠️ Partial run: ${doc.not_run} job(s) not run: ${mdText(doc.not_run_reason, 200)}. The gates decide on what ran; a gate that would pass only because jobs did not run is inconclusive.`, '');
  head.push(...gatesTable(gates, engineName));
  head.push(...variantsTable(doc.summary.variants, engineName, costByArm(doc.jobs)));
  for (const u of doc.summary.uplift) head.push(...upliftLines(u, doc.summary.uplift.length, engineName));
  head.push(...mcpMarkdown(doc.jobs, engineName));
  head.push(...triggerMarkdown(doc.triggers, engineName));
  head.push(...behaviourMarkdown(doc.jobs, engineName));

  // Details: failures of with_skill per case, errors per case and reason, baseline failures.
  const failedWith = failuresByCase(doc.jobs.filter((j) => j.variant === 'with_skill' && j.status === 'fail'));
  const failedWithout = failuresByCase(doc.jobs.filter((j) => j.variant === 'without_skill' && j.status === 'fail'));
  const errors = errorsByReason(doc.jobs.filter((j) => j.status === 'error'));

  const sections: { title: string[]; items: string[]; close?: string[]; what: string }[] = [];
  if (failedWith.length) sections.push({ title: ['### Failed cases (with_skill)', ''], items: failedWith.map((f) => failureLine(f, engineName, ev)), what: 'failed case(s)' });
  if (errors.length) sections.push({ title: ['### Errors', ''], items: errors.map((e) => errorLine(e, engineName, ev)), what: 'error group(s)' });
  if (failedWithout.length) {
    sections.push({
      title: ['<details><summary>Failed cases without the skill (baseline)</summary>', ''],
      items: failedWithout.map((f) => failureLine(f, engineName, ev)),
      close: ['', '</details>'],
      what: 'baseline failure(s)',
    });
  }

  return fit(head, sections, maxBytes);
}

const STATE_ICON: Record<string, string> = { pass: '✅', fail: '❌', inconclusive: '❔' };

/** The gates as a table: what the exit code was decided on, separate from the uplift verdict. */
function gatesTable(gates: ResultDoc['gates'], engineName: (n: string) => string): string[] {
  if (!gates.length) return [];
  const out = ['### Gates', '', '| Gate | Engine | Threshold | Figure | 95% interval | State | Reason |', '|---|---|---|---|---|---|---|'];
  for (const g of gates) {
    const c = gateCells(g, engineName);
    out.push(`| \`${c.name}\` | ${mdText(c.engine, 80)} | ${mdText(c.threshold)} | ${mdText(c.figure)} | ${mdText(c.interval)} | ${STATE_ICON[g.state] ?? ''} ${c.state} | ${mdText(c.reason, 500)} |`);
  }
  out.push('');
  return out;
}

/** One row per engine and variant: the mean case pass rate with its case-clustered interval, and the arm's errors next to it. */
function variantsTable(variants: ResultDoc['summary']['variants'], engineName: (n: string) => string, arms: ArmCost[] = []): string[] {
  if (!variants.length) return [];
  const anyCost = variants.some((x) => x.cost_usd !== null);
  const out = [
    `| Engine | Variant | Pass rate [${CLUSTERED_CI}] | Errors | Cases | Passed / graded | Trials | Skipped | Mean duration | Mean tokens${anyCost ? ' | Cost' : ''} |`,
    `|---|---|---|---|---|---|---|---|---|---${anyCost ? '|---' : ''}|`,
  ];
  for (const x of variants) {
    const rate = mdText(rateWithCI(x.pass_rate, x.interval));
    // Marked "(estimated)" when any job's cost in the arm was estimated from tokens (src/cost/).
    const arm = armCost(arms, x.engine, x.variant);
    const cost = anyCost ? ` | ${arm.usd !== null ? formatCost(arm, { coverage: true }) : x.cost_usd === null ? '—' : `$${x.cost_usd.toFixed(2)}`}` : '';
    out.push(
      `| ${mdText(engineName(x.engine), 80)} | ${x.variant} | ${rate} | ${x.errors} | ${x.graded_cases}/${x.cases} | ${x.passed}/${x.passed + x.failed} | ${x.trials} | ${x.skipped} | ${duration(x.mean_duration_ms)} | ${tokens(x.mean_tokens)}${cost} |`,
    );
  }
  out.push('', `_${mdText(passRateNote(), 1000)} Cases: graded / with trials._`, '');
  return out;
}

/** Rows of the summary's MCP table, at most. */
const MAX_MCP_ROWS = 20;
/** Cases whose arms differ named in the summary's MCP warning, at most. */
const MAX_MCP_DIFFERENCES = 10;

/**
 * summary.md's section `MCP servers offered`: a table of the servers per arm, and a warning
 * naming the cases whose arms were offered different servers. No lines when no job had servers.
 */
function mcpMarkdown(jobs: readonly JobJson[], engineName: (e: string) => string): string[] {
  const m = mcpOffers(jobs);
  if (!m) return [];
  const out = ['### MCP servers offered', ''];
  out.push(m.baseline ? '| Cases | with_skill | without_skill |' : '| Cases | with_skill |', m.baseline ? '|---|---|---|' : '|---|---|');
  for (const r of m.rows.slice(0, MAX_MCP_ROWS)) {
    out.push(`| ${r.differs ? '⚠️ ' : ''}${mdText(r.cases, 400)} | ${mdText(r.withSkill, 400)} |${m.baseline ? ` ${mdText(r.withoutSkill, 400)} |` : ''}`);
  }
  if (m.rows.length > MAX_MCP_ROWS) out.push('', `_… ${m.rows.length - MAX_MCP_ROWS} more row(s) not shown (see result.json \`jobs[].mcp_servers\`)._`);
  out.push('');
  if (m.differences.length) {
    const named = m.differences.slice(0, MAX_MCP_DIFFERENCES).map((d) => `**${mdText(d.caseId, 120)}** (${mdText(engineName(d.engine), 60)}): ${mdText(d.text, 400)}`);
    const more = m.differences.length > MAX_MCP_DIFFERENCES ? `; … and ${m.differences.length - MAX_MCP_DIFFERENCES} more` : '';
    out.push(
      `> ⚠️ **The arms were offered different MCP servers** in ${m.differences.length} case(s): ${named.join('; ')}${more}. Both variants of a case should be offered the same servers; in these cases the difference between the arms is not only the skill.`,
      '',
    );
  }
  return out;
}

const MAX_DROPPED = 10;

/** The uplift of one engine: the difference with its interval and the verdict, then why, p, votes, per-arm rates and errors, and dropped cases. */
function upliftLines(u: ResultDoc['summary']['uplift'][number], engines: number, engineName: (n: string) => string): string[] {
  const x = upliftText(u, engines);
  const out = [`**Uplift (${mdText(engineName(u.engine), 80)})**: ${mdText(x.delta)} · verdict: **${x.verdict}**`, ''];
  out.push(`- Why: ${mdText(x.reason, 1000)}`, `- ${mdText(x.rates)}`, `- ${mdText(x.p)}`, `- Cases: ${mdText(x.votes)}`, `- ${mdText(`${x.errors[0]!.toUpperCase()}${x.errors.slice(1)}`)}`);
  if (x.dropped.length) {
    const shown = x.dropped.slice(0, MAX_DROPPED).map((d) => `**${mdText(d.caseId, 120)}** (${mdText(d.reason, 200)})`);
    const more = x.dropped.length > MAX_DROPPED ? `; … and ${x.dropped.length - MAX_DROPPED} more (see result.json)` : '';
    out.push(`- Left out of the comparison (${x.dropped.length}): ${shown.join('; ')}${more}`);
  }
  out.push('');
  return out;
}

interface CaseFailures {
  engine: string;
  caseId: string;
  variant: string;
  failed: JobJson[];
}

function failuresByCase(jobs: JobJson[]): CaseFailures[] {
  const out = new Map<string, CaseFailures>();
  for (const j of jobs) {
    const key = `${j.engine}\u0000${j.case_id}`;
    const f = out.get(key) ?? { engine: j.engine, caseId: j.case_id, variant: j.variant, failed: [] };
    f.failed.push(j);
    out.set(key, f);
  }
  return [...out.values()];
}

function failureLine(f: CaseFailures, engineName: (n: string) => string, ev: number): string {
  const first = f.failed[0]!;
  const assertion = first.assertions.find((a) => !a.passed);
  const trials = f.failed.map((j) => `#${j.trial}`).join(', ');
  const what = assertion
    ? `${codeSpan(assertion.text)}: ${mdText(assertion.evidence, ev)}`
    : mdText(first.reason ?? 'failed without a failed assertion', ev);
  return `- **${mdText(f.caseId, 120)}** (${mdText(engineName(f.engine), 60)}; trial ${trials} failed) — ${what}`;
}

interface ErrorGroup {
  engine: string;
  caseId: string;
  variant: string;
  reason: string;
  trials: number[];
}

function errorsByReason(jobs: JobJson[]): ErrorGroup[] {
  const out = new Map<string, ErrorGroup>();
  for (const j of jobs) {
    const reason = j.reason ?? 'no reason recorded';
    const key = `${j.engine}\u0000${j.case_id}\u0000${j.variant}\u0000${reason}`;
    const g = out.get(key) ?? { engine: j.engine, caseId: j.case_id, variant: j.variant, reason, trials: [] };
    g.trials.push(j.trial);
    out.set(key, g);
  }
  return [...out.values()];
}

function errorLine(e: ErrorGroup, engineName: (n: string) => string, ev: number): string {
  return `- **${mdText(e.caseId, 120)}** ${e.variant} (${mdText(engineName(e.engine), 60)}; trial ${e.trials.map((t) => `#${t}`).join(', ')}) — ${mdText(e.reason, ev)}`;
}

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * Joins the head and as many detail lines as fit in `maxBytes`; what does not fit is replaced
 * by one note per section. The head itself is cut on a line boundary if it alone is too big.
 */
function fit(head: string[], sections: { title: string[]; items: string[]; close?: string[]; what: string }[], maxBytes: number): string {
  const footer = '\n_Full details: result.json, report.xml and benchmark.md in the run folder._\n';
  const noteRoom = 200; // room kept for one "… N more" note
  const budget = maxBytes - bytes(footer);
  const out: string[] = [];
  let used = 0;
  const push = (line: string) => {
    out.push(line);
    used += bytes(line) + 1;
  };
  for (const line of head) {
    if (used + bytes(line) + 1 > budget - noteRoom) {
      push('_… summary truncated to stay under the size limit._');
      return `${out.join('\n')}\n${footer}`;
    }
    push(line);
  }
  for (const s of sections) {
    const titleSize = s.title.reduce((a, l) => a + bytes(l) + 1, 0) + (s.close ?? []).reduce((a, l) => a + bytes(l) + 1, 0);
    if (used + titleSize + noteRoom > budget) {
      push(`_… ${s.items.length} ${s.what} not shown (size limit)._`);
      continue;
    }
    for (const l of s.title) push(l);
    const closeSize = (s.close ?? []).reduce((a, l) => a + bytes(l) + 1, 0);
    let shown = 0;
    for (const item of s.items) {
      if (used + bytes(item) + 1 + closeSize + noteRoom > budget) break;
      push(item);
      shown++;
    }
    if (shown < s.items.length) push(`- _… and ${s.items.length - shown} more ${s.what} not shown (size limit; see result.json)._`);
    for (const l of s.close ?? []) push(l);
    push('');
  }
  return `${out.join('\n').trimEnd()}\n${footer}`;
}
