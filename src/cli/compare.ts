/**
 * `skill-up compare <old> <new>` (or `<run> --engines a,b`, `<run> --variants`): parses the
 * arguments, loads the result documents, runs the comparison stage (src/compare/) and prints
 * or writes its renderings. The exit code is the comparison's (gate rules: 0, 1, 3, 4).
 */
import { statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { listFlag, numberFlag, parse, UsageError } from '../util/args.js';

export const COMPARE_HELP = `Usage: skill-up compare <old> <new> [options]
       skill-up compare <run> --engines <a>,<b> [options]
       skill-up compare <run> --variants [options]

Compares the with_skill pass rates of two saved runs case by case (paired by engine and
case id) and decides whether the new run regressed, with the same no_regression gate as
\`skill-up run --no-regression\`. Each argument is a result.json or the iteration folder
holding it. The figures are recomputed from the runs' jobs.

  --engines a,b   compare two engines of one run instead (a is old, b is new; by case id)
  --variants      compare without_skill (old) with with_skill (new) in one run

Per case: the pass rate before → after with its trial counts, and a label (regressed,
improved, unchanged, new case, removed case, not graded). Per engine: the mean change with
its 95% case-clustered interval and an exact two-sided paired permutation test over cases.

Options:
  --margin <points>        largest drop that still passes (default 10)
  --alpha <a>              significance level (default 0.05)
  --max-error-rate <r>     share of the new side's compared trials allowed to error
                           (default 0; above it: exit 3)
  --errors-as-failures     count error trials as failures in both runs
  --on-inconclusive <x>    exit code for an inconclusive verdict: pass (0) or fail (1); default 4
  --markdown <file>        write Markdown for a PR comment (always under 60 KB)
  --html <file>            write a self-contained HTML page
  --json <file>            write the comparison as JSON
  -h, --help               show this help

Exit codes: 0 no regression (any drop is proven smaller than the margin), 1 a regression is
proven (the regressed cases are named), 2 bad input or option, 3 the new run has errors above
--max-error-rate, 4 inconclusive (the data cannot decide; more cases or trials would).

Examples:
  skill-up compare my-skill-workspace/iteration-1 my-skill-workspace/iteration-2
  skill-up compare main/result.json pr/result.json --margin 5 --markdown comment.md
  skill-up compare nightly/iteration-7 --engines claude_code,codex --html diff.html
  skill-up compare my-skill-workspace/iteration-3 --variants --json uplift.json
`;

const OPTIONS = {
  engines: { type: 'string' },
  variants: { type: 'boolean' },
  margin: { type: 'string' },
  alpha: { type: 'string' },
  'max-error-rate': { type: 'string' },
  'errors-as-failures': { type: 'boolean' },
  'on-inconclusive': { type: 'string' },
  markdown: { type: 'string' },
  html: { type: 'string' },
  json: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Loads one result.json (or iteration folder); its display name is relative to the cwd. @throws UsageError */
async function load(arg: string) {
  const { loadResultDoc, ResultFileError } = await import('../report/load.js');
  try {
    const { doc, file } = await loadResultDoc(arg);
    return { doc, source: path.relative(process.cwd(), file) || file };
  } catch (e) {
    if (e instanceof ResultFileError) throw new UsageError(e.message);
    throw e;
  }
}

/** Writes `text` to `file` (creating its folder), secrets redacted. @throws UsageError naming the flag when it cannot. */
async function put(flag: string, file: string, text: string): Promise<string> {
  const { redact, secretValues } = await import('../report/redact.js');
  const { writeText } = await import('../util/out.js');
  const target = path.resolve(file);
  try {
    await mkdir(path.dirname(target), { recursive: true });
    await writeText(target, redact(text, secretValues()));
  } catch (e) {
    throw new UsageError(`--${flag} ${file}: cannot write: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return target;
}

/**
 * Refuses an empty output path, one path for two outputs, and an output that would overwrite
 * an input run (a result.json given, or the one inside a given iteration folder).
 * @throws UsageError
 */
function checkOutputs(values: Record<string, unknown>, inputs: string[]): void {
  const taken = new Map<string, string>();
  for (const p of inputs) {
    const abs = path.resolve(p);
    let isDir = false;
    try {
      isDir = statSync(abs).isDirectory();
    } catch {
      // Loading has already said what is wrong with a missing input.
    }
    taken.set(isDir ? path.join(abs, 'result.json') : abs, `the input run ${p}`);
  }
  for (const flag of ['markdown', 'html', 'json']) {
    const v = values[flag];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.trim() === '') throw new UsageError(`--${flag} needs a file name, got an empty value`);
    const abs = path.resolve(v);
    const other = taken.get(abs);
    if (other) throw new UsageError(`--${flag} ${v} would overwrite ${other}: write it elsewhere`);
    taken.set(abs, `--${flag}`);
  }
}

/** Runs the command; returns the exit code. */
export async function compareCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(COMPARE_HELP);
    return 0;
  }
  const engines = values.engines !== undefined ? listFlag([values.engines]) : undefined;
  if (engines && values.variants) throw new UsageError('--engines and --variants are two different comparisons: give one');
  if (engines && engines.length !== 2) throw new UsageError(`--engines needs exactly two engines, old then new (e.g. --engines claude_code,codex), got \`${values.engines}\``);
  const single = engines !== undefined || values.variants === true;
  if (single && positionals.length !== 1) {
    throw new UsageError(`${engines ? '--engines' : '--variants'} compares inside one run: give one result.json, got ${positionals.length}${positionals.length ? `: ${positionals.join(' ')}` : ''}`);
  }
  if (!single && positionals.length !== 2) {
    throw new UsageError(
      positionals.length < 2
        ? `compare needs the old and the new run (two result.json files or iteration folders), got ${positionals.length}; or one run with --engines a,b or --variants`
        : `compare takes two runs, got ${positionals.length}: ${positionals.join(' ')}`,
    );
  }
  const marginPoints = numberFlag('margin', values.margin, 0, 100, 'a number of points from 0 to 100 (e.g. 10)');
  const alpha = numberFlag('alpha', values.alpha, 1e-6, 0.5, 'a significance level above 0 and at most 0.5 (e.g. 0.05)');
  const maxErrorRate = numberFlag('max-error-rate', values['max-error-rate'], 0, 1, 'a share of trials from 0 to 1 (e.g. 0.05 or 5%)', true);
  const on = values['on-inconclusive'];
  if (on !== undefined && on !== 'pass' && on !== 'fail') throw new UsageError(`--on-inconclusive must be \`pass\` or \`fail\`, got \`${on}\``);

  const { DEFAULT_DECISION, DEFAULT_REGRESSION_MARGIN } = await import('../gate/decide.js');
  const c = await import('../compare/index.js');
  let pair;
  try {
    if (engines) pair = c.armsFromEngines(await load(positionals[0]!), engines[0]!, engines[1]!);
    else if (values.variants) pair = c.armsFromVariants(await load(positionals[0]!));
    else pair = c.armsFromRuns(await load(positionals[0]!), await load(positionals[1]!));
  } catch (e) {
    if (e instanceof c.CompareInputError) throw new UsageError(e.message);
    throw e;
  }
  const comparison = c.compareArms(pair, {
    alpha: alpha ?? DEFAULT_DECISION.alpha,
    margin: marginPoints !== undefined ? marginPoints / 100 : DEFAULT_REGRESSION_MARGIN,
    maxErrorRate: maxErrorRate ?? DEFAULT_DECISION.maxErrorRate,
    errorsAsFailures: values['errors-as-failures'] === true,
    ...(on ? { onInconclusive: on } : {}),
  });

  checkOutputs(values, positionals);
  const written: string[] = [];
  if (values.markdown) written.push(await put('markdown', values.markdown, c.comparisonMarkdown(comparison)));
  if (values.html) written.push(await put('html', values.html, c.comparisonHtml(comparison)));
  if (values.json) written.push(await put('json', values.json, `${JSON.stringify(c.comparisonJson(comparison), null, 2)}\n`));
  process.stdout.write(c.comparisonText(comparison));
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  return comparison.exitCode;
}
