/**
 * `skill-up report <result.json> [--format F]... [--output-dir DIR]`: regenerates reports from
 * a saved run (its result.json) without running anything.
 */
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { ReportFormat } from '../config/types.js';
import { didYouMean } from '../util/did-you-mean.js';
import { listFlag, parse, UsageError } from '../util/args.js';
import type { ResultDoc } from '../report/result-json.js';
import type * as DecisionTextModule from '../report/decision-text.js';
import type { verdictOf as verdictOfFn } from '../report/markdown.js';
import type { triggerLines as triggerLinesFn } from '../report/triggers.js';

// Types only: the modules themselves are loaded on demand, so `--help` loads nothing else.
type DecisionText = typeof DecisionTextModule;
type TriggerLines = typeof triggerLinesFn;
type VerdictOf = typeof verdictOfFn;

/** Every format `report` writes (the same list as src/report/write.ts REPORT_FORMATS, kept here so --help loads nothing else). */
const REPORT_FORMATS: readonly ReportFormat[] = ['json', 'junit', 'markdown', 'benchmark', 'html'];

export const REPORT_HELP = `Usage: skill-up report <result.json> [--format <format>]... [--output-dir <dir>]

Regenerates the reports of a saved run from its result.json, without running anything.
<result.json> may also be the iteration folder holding it. A folder whose run was killed
(journal.jsonl but no result.json, or a journal newer than it) is rebuilt from journal.jsonl:
every report, result.json included, with the jobs that finished (interrupted, exit code 137).

Formats (repeatable, or comma-separated):
  json        result.json (a copy, for another --output-dir)
  junit       report.xml: JUnit XML, one test case per case × variant × trial
  markdown    summary.md: outcome, gates, pass rates (95% CI clustered by case),
              uplift verdict, failures and errors (for a GitHub step summary or a
              PR comment; always under 64 KB)
  benchmark   Anthropic skill-creator files: benchmark.json and benchmark.md (one per
              engine folder when several engines ran), grading.json in every run folder,
              eval_metadata.json per case
  html        report.html: one self-contained page
Default: junit, markdown, benchmark and html (plus json when --output-dir is another folder).

Options:
  --format <format>     a format to write (repeatable)
  --output-dir <dir>    where to write (default: the folder of result.json)
  -h, --help            show this help

It also prints the run's outcome, pass rates, uplift and gates, as result.json records them.

Exit codes: 0 reports written (the run's own verdict is not applied again), 2 the input is
not a skill-up result.json or an option is wrong, 3 a requested format could not be written, or the disk refused any (full, read-only).

Examples:
  skill-up report my-skill-workspace/iteration-3/result.json
  skill-up report my-skill-workspace/iteration-3 --format markdown
  skill-up report result.json --format benchmark --format junit --output-dir /tmp/reports
  skill-up report out/iteration-1 --format markdown && cat out/iteration-1/summary.md >> "$GITHUB_STEP_SUMMARY"
`;

const OPTIONS = {
  format: { type: 'string', multiple: true },
  'output-dir': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Checks `--format` values against the known formats. @throws UsageError */
export function parseFormats(values: string[] | undefined): ReportFormat[] {
  const out: ReportFormat[] = [];
  for (const v of listFlag(values)) {
    const f = v.toLowerCase() === 'md' ? 'markdown' : v.toLowerCase() === 'xml' ? 'junit' : v.toLowerCase();
    if (!(REPORT_FORMATS as readonly string[]).includes(f)) {
      const hint = didYouMean(f, REPORT_FORMATS, { maxDistance: 3 });
      throw new UsageError(`unknown format \`${v}\` (formats: ${REPORT_FORMATS.join(', ')})${hint}`);
    }
    if (!out.includes(f as ReportFormat)) out.push(f as ReportFormat);
  }
  return out;
}

/** Runs the command; returns the exit code. */
export async function reportCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(REPORT_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('report needs the result.json of a run (e.g. my-skill-workspace/iteration-1/result.json)');
  if (positionals.length > 1) throw new UsageError(`report takes one result.json, got ${positionals.length}: ${positionals.join(' ')}`);
  const explicit = parseFormats(values.format);
  keepHeapTight();
  const { loadResultDoc, ResultFileError } = await import('../report/load.js');
  const { writeDocReports } = await import('../report/write.js');
  const { verdictOf } = await import('../report/markdown.js');
  let loaded;
  try {
    loaded = await loadResultDoc(positionals[0]!, { journal: true });
  } catch (e) {
    if (e instanceof ResultFileError) throw new UsageError(e.message);
    throw e;
  }
  const { doc, file } = loaded;
  const sourceDir = path.dirname(file);
  const outDir = values['output-dir'] ? path.resolve(values['output-dir']) : sourceDir;
  const formats: ReportFormat[] = explicit.length
    ? explicit
    : [...(outDir !== sourceDir || loaded.rebuilt ? (['json'] as const) : []), 'junit', 'markdown', 'benchmark', 'html'];
  if (loaded.rebuilt) {
    // A killed run: result.json is written too, from the journal (src/run/resume.ts rebuildFromJournal).
    if (!formats.includes('json')) formats.unshift('json');
    process.stderr.write(`note: rebuilt from ${path.join(sourceDir, 'journal.jsonl')} (${loaded.rebuilt}): the run did not finish; ${doc.jobs.length} job(s) recorded, ${doc.not_run} not run (skill-up run --resume ${path.relative(process.cwd(), sourceDir) || sourceDir} runs them)\n`);
  }
  const { written, skipped } = await writeDocReports(outDir, doc, formats, sourceDir);

  process.stdout.write(decisionLines(doc, verdictOf, await import('../report/decision-text.js'), (await import('../report/triggers.js')).triggerLines));
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  let code = 0;
  for (const s of skipped) {
    // A format asked for, or any the disk refused (a full disk must not exit 0), is an error.
    const asked = explicit.includes(s.format) || s.io === true;
    process.stderr.write(`${asked ? 'error' : 'note'}: ${s.format} not written: ${s.reason}\n`);
    if (asked) code = 3;
  }
  return code;
}

/**
 * Makes V8 collect its old generation sooner, for this process's one large document. A report
 * holds the parsed result.json (33 MB for 10,000 jobs) while each format makes and drops tens
 * of MB; with V8's own growth factor (up to 4 × the live heap) a full collection comes late, so
 * the text of result.json and earlier formats' garbage were still there at the last format:
 * measured on 10,000 jobs, peak RSS 210 MB by default, 142–153 MB with 30 %, in the same time
 * (fewer pages touched outweigh the extra collections). Read by V8 at each collection's end,
 * so it takes effect when set at run time (as src/cli/skill-up.cts sets its young generation's).
 * Exported for bench/run.mjs, whose report process mirrors this command's.
 */
export function keepHeapTight(): void {
  setFlagsFromString('--heap-growing-percent=30');
}

/**
 * The console summary of a saved run: what its exit code means (naming failing gates), per
 * engine and variant the pass rate with its 95 % interval clustered by case and the arm's
 * errors, per engine the uplift with its interval, verdict and reason, then every gate.
 */
function decisionLines(doc: ResultDoc, verdictOf: VerdictOf, t: DecisionText, triggerLines: TriggerLines): string {
  const gates = doc.gates ?? [];
  const v = verdictOf(doc.exit_code, doc.not_run, gates);
  const out = [`${v.icon} ${doc.skill.name}, iteration ${doc.iteration}: ${v.meaning}`];
  for (const x of doc.summary.variants) {
    const graded = x.passed + x.failed;
    const rate = x.pass_rate === null ? 'pass rate n/a (no graded trial)' : `pass rate ${t.rateWithCI(x.pass_rate, x.interval)} (${t.CLUSTERED_CI}, ${x.graded_cases} case(s))`;
    out.push(`${x.engine} ${x.variant}: ${rate}, ${t.errorCount(x.errors)}; ${x.passed}/${graded} graded trial(s) passed${x.skipped ? `, ${x.skipped} skipped` : ''}`);
  }
  for (const u of doc.summary.uplift) {
    const x = t.upliftText(u, doc.summary.uplift.length);
    out.push(`${u.engine} uplift: ${x.delta}`, `  verdict: ${x.verdict}: ${x.reason}`);
    out.push(`  ${x.p}; ${x.votes}`, `  ${x.rates}; ${x.errors}`);
    if (x.dropped.length) out.push(`  left out of the comparison: ${x.dropped.map((d) => `${d.caseId} (${d.reason})`).join('; ')}`);
  }
  out.push(...triggerLines(doc.triggers));
  for (const g of gates) out.push(`gate ${t.gateLabel(g)}: ${t.gateState(g.state)}: ${g.reason}`);
  return `${out.join('\n')}\n`;
}
