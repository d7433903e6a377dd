/**
 * `skill-up merge <run folder>… [--output-dir DIR] [--allow-partial]`: puts the shards of
 * `skill-up run --shard i/n` back together into one run folder (src/merge/: the checks, the
 * combining; this file parses, copies the job folders, writes the reports and prints).
 */
import { readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parse, UsageError } from '../util/args.js';
import { VERSION } from '../util/version.js';
import type { ShardInput } from '../merge/index.js';

export const MERGE_HELP = `Usage: skill-up merge <run folder>... [--output-dir <dir>] [--allow-partial]

Puts the shards of one sharded run (\`skill-up run --shard i/n\`, e.g. on n machines) back
together: a new iteration-N folder holding every shard's job folders, a result.json whose jobs
are their union in plan order (case in suite order, engine, trial, variant), and the
statistics, gates and reports (report.xml, summary.md, benchmark.json, report.html) computed
anew over the union with the shards' gate settings: the same as one unsharded run of those
jobs. A <run folder> is a shard's iteration folder or its result.json.

Refused (exit code 2, nothing written):
  - shards of different suites (result.json suite_hash: the skill folder changed in between);
  - shards of different plans or options: cases selected, --shard n, trials, baseline,
    engines and their versions, gate settings;
  - a shard given twice, or two shards holding the same case;
  - a missing or interrupted shard, unless --allow-partial.

Options:
  --output-dir <dir>       root of the merged iteration-N folder (default: the folder holding
                           the first shard's iteration folder, e.g. out/shard-1 → out/shard-1/iteration-2)
  --allow-partial          merge even when shards are missing or were interrupted: prints what
                           is missing and records it in result.json (merge.partial,
                           merge.missing_shards, merge.missing_cases); a gate that would pass
                           only because cases were left out is inconclusive
  --no-regression <run>    where the shards' no_regression baseline is, when the path they
                           recorded does not resolve from the current folder
  -h, --help               show this help

started_at / ended_at of the merged run are the earliest start and the latest end of the
shards; duration_ms is the wall span between them (each shard's own is in merge.shards).

Exit codes: 2 the folders cannot be merged, or a usage error; otherwise the merged run's gates,
as for \`skill-up run\`: 3 errors above the allowed rate; 1 a gate failed; 4 a gate
inconclusive; 0 every gate passed.

Examples:
  skill-up run my-skill --shard 1/3 --output-dir out/shard-1      # machine 1; 2/3 and 3/3 elsewhere
  skill-up merge out/shard-1/iteration-1 out/shard-2/iteration-1 out/shard-3/iteration-1 --output-dir out/merged
  skill-up merge shards/*/iteration-1 --allow-partial
`;

const OPTIONS = {
  'output-dir': { type: 'string' },
  'allow-partial': { type: 'boolean' },
  'no-regression': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the command; returns the exit code. UsageError and OutputDirError propagate to main (exit 2). */
export async function mergeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(MERGE_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('merge needs the shards\' run folders (e.g. skill-up merge out/shard-1/iteration-1 out/shard-2/iteration-1)');
  if (values['output-dir'] !== undefined && values['output-dir'].trim() === '') throw new UsageError('--output-dir needs a folder, got an empty value');
  const { loadResultDoc, ResultFileError } = await import('../report/load.js');
  const { checkShards, combine, copyJobDirs, listSome, MergeError } = await import('../merge/index.js');
  type Input = ShardInput;

  const inputs: Input[] = [];
  for (const p of positionals) {
    try {
      const { doc, file } = await loadResultDoc(p);
      inputs.push({ doc, file, source: p });
    } catch (e) {
      if (e instanceof ResultFileError) throw new UsageError(`${e.message}${await iterationHint(p)}`);
      throw e;
    }
  }
  let plan;
  try {
    plan = checkShards(inputs, { allowPartial: Boolean(values['allow-partial']) });
  } catch (e) {
    if (e instanceof MergeError) throw new UsageError(e.message);
    throw e;
  }
  const first = plan.shards[0]!;
  const config = first.doc.decision.config;
  const given = values['no-regression'];
  if (given !== undefined && !config.no_regression) throw new UsageError('--no-regression: the shards were run without a no_regression gate, and merge decides with the shards\' own gate settings only');
  let previous;
  if (config.no_regression) {
    const { loadPreviousRun } = await import('../run/previous.js');
    const from = given !== undefined ? '--no-regression' : `the shards' no_regression baseline \`${config.no_regression.baseline}\``;
    try {
      previous = await loadPreviousRun(resolve(given ?? config.no_regression.baseline), config.errors_as_failures, from);
    } catch (e) {
      if (e instanceof UsageError && given === undefined) throw new UsageError(`${e.message} (looked for from the current folder); give its location with --no-regression <run>`);
      throw e;
    }
  }

  const { createIterationDir } = await import('../run/output.js');
  const root = values['output-dir'] ? resolve(values['output-dir']) : dirname(dirname(first.file));
  const target = await createIterationDir(root);
  const jobs = plan.shards.reduce((n, s) => n + s.doc.jobs.length, 0);
  const cases = plan.shards.reduce((n, s) => n + s.shard.cases.length, 0);
  process.stderr.write(`skill-up ${VERSION}: merging ${plan.shards.length} of ${plan.count} shard(s): ${jobs} job(s) of ${cases} case(s) → ${target.dir}\n`);
  for (const n of plan.notes) process.stderr.write(`note: ${n}\n`);
  if (plan.missingShards.length) {
    process.stderr.write(
      `note: partial merge (--allow-partial): shard(s) ${listSome(plan.missingShards.map((i) => `${i}/${plan.count}`))} missing; ` +
        `case(s) ${listSome(plan.missingCases)} are not in this run (result.json merge.missing_shards, merge.missing_cases)\n`,
    );
  }
  for (const s of plan.interrupted) process.stderr.write(`note: partial merge (--allow-partial): ${s.source} (shard ${s.shard.index}/${s.shard.count}) did not run ${s.doc.not_run} job(s)${s.doc.interrupted ? ' (interrupted)' : s.doc.not_run_reason ? ` (${s.doc.not_run_reason})` : ''}\n`);
  for (const s of plan.shards) {
    const { missing } = await copyJobDirs(dirname(s.file), target.dir, s.doc.jobs.map((j) => j.output_dir));
    if (missing.length) process.stderr.write(`note: ${missing.length} job folder(s) of ${s.source} are missing (${listSome(missing, 3)}): the merged reports have no transcript for them\n`);
  }

  const merged = combine(plan, { iteration: target.iteration, tool: { name: 'skill-up', version: VERSION }, ...(previous ? { previous } : {}) });
  const { writeDocReports } = await import('../report/write.js');
  const { written, skipped } = await writeDocReports(target.dir, merged.doc, ['json', 'junit', 'markdown', 'benchmark', 'html']);
  const { printSummary } = await import('./run-print.js');
  const names = new Map(merged.doc.engines.map((e) => [e.name, e.display_name]));
  const { costConsoleLines } = await import('../cost/result.js');
  const costLines = costConsoleLines(merged.jobs.map((j) => ({ engine: j.engine, variant: j.variant, cost_usd: j.cost_usd, cost_estimated: j.cost_estimated })), merged.doc.cost.notes, names);
  printSummary(merged.decision, merged.jobs.length, merged.jobs.length, names, merged.decision.exitCode, { costLines });
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  for (const s of skipped) process.stderr.write(`warning: report format \`${s.format}\` not written: ${s.reason}\n`);
  return merged.decision.exitCode;
}

/** For a folder that holds iteration-N folders instead of a result.json: which to give. */
async function iterationHint(p: string): Promise<string> {
  try {
    const names = (await readdir(p)).filter((n) => /^iteration-\d+$/.test(n)).sort((a, b) => Number(a.slice(10)) - Number(b.slice(10)));
    if (names.length === 0) return '';
    return ` (it holds ${names.length} iteration folder(s): give the shard's own, e.g. ${join(p, names[names.length - 1]!)})`;
  } catch {
    return '';
  }
}
