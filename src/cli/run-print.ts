/**
 * What `skill-up run` prints after an iteration (also `merge` and `regrade`): the summary, the
 * files written, the stability over iterations. Apart from src/cli/run.ts so that a dry run,
 * which prints none of it, loads none of the report modules behind it.
 */
import type { Suite } from '../config/types.js';
import type { Decision, GateResult } from '../gate/index.js';
import { behaviourConsoleLines } from '../report/behaviour.js';
import { judgeSpendLines } from '../report/judge-spend.js';
import { jobJson } from '../report/result-json.js';
import { triggerLines } from '../report/triggers.js';
import type { RunRecord } from '../run/suite.js';
import { formatP, type Uplift } from '../stats/index.js';

/**
 * Prints one iteration's record: the summary (from the record's decision, the one result.json
 * holds), the files written, the kept workspaces, the formats not written; then on GitHub
 * Actions (or --github) its annotations, step summary and outputs (src/report/github.ts).
 */
export async function printRecord(r: RunRecord, names: Map<string, string>, opts: { keepWorkspaces: boolean; github?: boolean; cases: Suite['cases'] }): Promise<void> {
  if (r.reportError) process.stderr.write(`error: ${r.reportError}\n`);
  const behaviourLines = behaviourConsoleLines(r.results.map(jobJson), (e) => names.get(e) ?? e);
  const judgeLines = judgeSpendLines(r.results.map(jobJson), (e) => names.get(e) ?? e);
  printSummary(r.decision, r.results.length, r.planned, names, r.exitCode, { costLines: r.costLines, notRunReason: r.notRunReason, behaviourLines, judgeLines });
  if (!r.reports) return;
  const { written, skipped, doc } = r.reports;
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  if (opts.keepWorkspaces) process.stdout.write(`kept ${r.results.filter((x) => x.workspace).length} workspace(s); each job's path is \`workspace\` in result.json\n`);
  const graderCopies = r.results.reduce((n, x) => n + (x.judge?.workspaces?.length ?? 0), 0);
  if (opts.keepWorkspaces && graderCopies) process.stdout.write(`kept ${graderCopies} grader workspace(s) (agent_judge's copies); each job's are \`judge.workspaces\` in result.json\n`);
  for (const s of skipped) process.stderr.write(`error: report format \`${s.format}\` not written: ${s.reason}\n`);
  const { publishRun } = await import('../report/github.js');
  for (const p of await publishRun(opts.github, doc, { cases: opts.cases, dir: r.dir, written })) process.stderr.write(`warning: ${p}\n`);
}

function pct(x: number): string {
  return `${(x * 100).toFixed(0)}%`;
}

function points(x: number): string {
  const r = Math.round(x * 100);
  return `${r >= 0 ? '+' : ''}${r}`;
}

const VERDICT: Record<Uplift['verdict'], string> = {
  improves: 'the skill improves results',
  regresses: 'the skill makes results worse',
  inconclusive: 'inconclusive',
};

const STATE: Record<GateResult['state'], string> = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE' };

/**
 * Prints, per engine and variant, the pass rate with its case-clustered 95% interval and the
 * arm's errors; per engine the uplift with its interval, the verdict and why; the dropped cases;
 * then every gate and what the exit code means.
 */
export function printSummary(d: Decision, ran: number, planned: number, names: Map<string, string>, exitCode: number, extra: { costLines?: string[]; notRunReason?: string; behaviourLines?: string[]; judgeLines?: string[] } = {}): void {
  const out = process.stdout;
  const name = (e: string) => names.get(e) ?? e;
  out.write('\n');
  for (const v of d.stats.variants) {
    const graded = v.passed + v.failed;
    const rate = v.interval && v.passRate !== null ? `${pct(v.passRate)} [95% CI ${pct(v.interval.low)}–${pct(v.interval.high)}, clustered by case]` : 'n/a (no graded trial)';
    const extra = [`${v.errors} error(s)`, v.skipped ? `${v.skipped} skipped` : ''].filter(Boolean).join(', ');
    out.write(`${name(v.engine)} ${v.variant}: ${v.passed}/${graded} trials passed, pass rate ${rate}, ${extra}\n`);
  }
  for (const u of d.stats.uplift) {
    if (u.passRateDelta === null || !u.interval) {
      out.write(`${name(u.engine)} uplift: n/a: ${u.reason}\n`);
    } else {
      out.write(
        `${name(u.engine)} uplift: ${points(u.passRateDelta)} points [95% CI ${points(u.interval.low)} to ${points(u.interval.high)}] over ${u.comparedCases} case(s) ` +
          `(with_skill ${pct(u.withRate!)} vs without_skill ${pct(u.withoutRate!)}; permutation p=${formatP(u.pAdjusted)}): ${VERDICT[u.verdict]}\n`,
      );
      out.write(`  ${u.reason}\n`);
      out.write(`  cases: ${u.wins} better, ${u.ties} same, ${u.losses} worse; errors: with_skill ${u.errors.with.errors}/${u.errors.with.trials}, without_skill ${u.errors.without.errors}/${u.errors.without.trials}\n`);
    }
    if (u.dropped.length) {
      const shown = u.dropped.slice(0, 10).map((x) => `${x.caseId} (${x.reason})`).join('; ');
      out.write(`  left out of the comparison: ${shown}${u.dropped.length > 10 ? `; and ${u.dropped.length - 10} more` : ''}\n`);
    }
  }
  for (const l of triggerLines(d.triggers, name)) out.write(`${l}\n`);
  for (const l of extra.behaviourLines ?? []) out.write(`${l}\n`);
  for (const l of extra.costLines ?? []) out.write(`${l}\n`);
  // What the agent_judge graders spent, apart from the agents' figures (src/report/judge-spend.ts).
  for (const l of extra.judgeLines ?? []) out.write(`${l}\n`);
  if (ran < planned) out.write(`${planned - ran} job(s) not run${extra.notRunReason ? `: ${extra.notRunReason} (a partial run: the gates decide on what ran)` : ' (interrupted)'}\n`);
  out.write('gates:\n');
  for (const g of d.gates) out.write(`  ${STATE[g.state].padEnd(12)} ${g.name}${g.engine ? ` (${name(g.engine)})` : ''}: ${g.reason}\n`);
  const mapped = d.gates.some((g) => g.state === 'inconclusive') && d.config.onInconclusive && !d.gates.some((g) => g.state === 'fail') && exitCode === d.exitCode;
  out.write(`exit code ${exitCode}: ${mapped ? `a gate is inconclusive, counted as ${d.config.onInconclusive === 'pass' ? 'passed' : 'failed'} (--on-inconclusive ${d.config.onInconclusive})` : exitMeaning(exitCode)}\n`);
}

/** What an exit code of `skill-up run` means (README "Exit codes"). */
export function exitMeaning(code: number): string {
  switch (code) {
    case 0:
      return 'every gate passed';
    case 1:
      return 'a gate failed';
    case 3:
      return 'errors above the allowed rate (an engine or the harness broke; errors are never counted as passes or fails)';
    case 4:
      return 'a gate is inconclusive: the data cannot decide (more cases or trials; --on-inconclusive pass|fail maps it)';
    case 130:
      return 'interrupted (SIGINT)';
    case 143:
      return 'interrupted (SIGTERM)';
    default:
      return `exit code ${code}`;
  }
}

/** Per case and engine, the with_skill statuses across iterations, then the verdict and gates per iteration, and `exitCode`, the iterations' combined. */
export function printStability(outcomes: RunRecord[], names: Map<string, string>, exitCode: number): void {
  const out = process.stdout;
  out.write(`\nstability over ${outcomes.length} iteration(s):\n`);
  const rows = new Map<string, string[]>();
  outcomes.forEach((o, i) => {
    for (const c of o.decision.stats.cases) {
      if (c.variant !== 'with_skill') continue;
      const key = `${names.get(c.engine) ?? c.engine} ${c.caseId}`;
      const row = rows.get(key) ?? new Array<string>(outcomes.length).fill('-');
      const graded = c.passed + c.failed;
      row[i] = graded === 0 ? (c.errors ? 'ERROR' : 'SKIP') : c.failed === 0 ? 'PASS' : c.passed === 0 ? 'FAIL' : `${c.passed}/${graded}`;
      rows.set(key, row);
    }
  });
  for (const [key, row] of rows) {
    const stable = new Set(row).size === 1;
    out.write(`  ${key.padEnd(40)} ${row.join(' ')}${stable ? '' : '  (unstable)'}\n`);
  }
  const engines = [...new Set(outcomes.flatMap((o) => o.decision.stats.uplift.map((u) => u.engine)))];
  for (const e of engines) {
    const verdicts = outcomes.map((o) => o.decision.stats.uplift.find((u) => u.engine === e)?.verdict ?? '-');
    out.write(`  verdict (${names.get(e) ?? e}): ${verdicts.join(', ')}\n`);
  }
  out.write(`  exit codes: ${outcomes.map((o) => o.exitCode).join(', ')} → ${exitCode}\n`);
}
