/**
 * `skill-up calibrate [path]`: an A/A calibration. Runs the with_skill arm of the suite with
 * 2k trials per case (through `run`, so everything a run writes is written), then analyses
 * the trials (src/calibrate/): flakiness per case, how often the verdict calls a difference
 * between two halves that cannot differ, the noise floor of the uplift, and the power table.
 * Writes calibration.json and calibration.md into the run's iteration folder.
 */
import { writeJson, writeText } from '../util/out.js';
import { dirname, join } from 'node:path';
import { calibrate, calibrationJson, DEFAULT_SPLITS, hasGradedTrials, renderCalibrationMarkdown, renderCalibrationText } from '../calibrate/index.js';
import { loadSuite } from '../config/load.js';
import { selectCases } from '../plan/plan.js';
import { loadResultDoc } from '../report/load.js';
import { trialOfJob } from '../report/result-json.js';
import type { TrialResult } from '../stats/summarise.js';
import { intFlag, numberFlag, parse, UsageError } from '../util/args.js';
import { VERSION } from '../util/version.js';

export const CALIBRATE_HELP = `Usage: skill-up calibrate [path] [options]

A/A calibration: runs ONE arm (with_skill) of the suite with 2k trials per case, splits each
case's trials into two halves that cannot differ, and measures what the with/without verdict
makes of pure noise:
  - flakiness per case (pass rate over the 2k trials, flaky flag, per-trial variance p(1-p));
  - the false-difference rate: over --splits seeded random re-splits of each case's trials into
    two equal halves, how often the verdict says improves/regresses (sound when ≤ alpha);
  - the noise floor: the 95th percentile of |uplift| over those re-splits, and the mean
    half-width of the uplift's 95% interval;
  - the fixed split (trials 1..k vs k+1..2k), which shows drift over time;
  - the power table from the observed noise: cases × trials needed to detect +10/+20/+30
    points at 80% power, and the smallest uplift the suite as it is can detect.
Writes calibration.json and calibration.md into the run's iteration folder (beside result.json).
[path] is as for \`skill-up run\`.

Options:
  --trials <k>             trials per half (the run does 2k per case; default: the suite's
                           trials, at least 2)
  --splits <n>             random re-splits, 1-100000 (default ${DEFAULT_SPLITS}; fixed seed)
  --alpha <a>              significance level of the verdicts (default 0.05)
  --case <glob>            calibrate only cases whose id matches (repeatable)
  --exclude-case <glob>    skip cases whose id matches (repeatable)
  --tag <tag>              calibrate only cases with this tag (repeatable)
  --engine <name[,name]>   engines to run (each is calibrated on its own)
  --parallelism <n>        jobs at once, 1-256
  --output-dir <dir>       root of iteration-N folders (as for run)
  --keep-workspaces        keep each job's workspace folder
  --errors-as-failures     count errored trials as failures
  -h, --help               show this help

Only with_skill runs (the run gets --no-baseline, whatever benchmark.enabled says).

Exit codes: 0 calibration completed (whatever it found); 2 config or usage error;
3 no case had a graded trial (every trial errored or was skipped); 130/143 interrupted.

Examples:
  skill-up calibrate examples/greeting-files --trials 2
  skill-up calibrate path/to/skill --tag smoke --splits 2000
`;

const OPTIONS = {
  trials: { type: 'string' },
  splits: { type: 'string' },
  alpha: { type: 'string' },
  case: { type: 'string', multiple: true },
  'exclude-case': { type: 'string', multiple: true },
  tag: { type: 'string', multiple: true },
  engine: { type: 'string', multiple: true },
  parallelism: { type: 'string' },
  'output-dir': { type: 'string' },
  'keep-workspaces': { type: 'boolean' },
  'errors-as-failures': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Flags handed to `run` unchanged (value flags repeat as given). */
const PASSTHROUGH = ['case', 'exclude-case', 'tag', 'engine', 'parallelism', 'output-dir', 'alpha'] as const;

/** k when --trials is not given: the largest trial count of the selected cases, at least 2. */
async function defaultHalf(target: string | undefined, filters: { cases?: string[]; excludeCases?: string[]; tags?: string[] }): Promise<number> {
  const { suite } = await loadSuite(target, { cwd: process.cwd() });
  const cases = selectCases(suite, filters);
  return Math.max(2, ...(cases.length ? cases.map((c) => c.trials) : [suite.trials]));
}

/** Runs the command; returns the exit code. ConfigError, UsageError and PlanError propagate to main. */
export async function calibrateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(CALIBRATE_HELP);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`calibrate takes one path, got ${positionals.length}: ${positionals.join(' ')}`);
  const splits = intFlag('splits', values.splits, 1, 100_000) ?? DEFAULT_SPLITS;
  const alpha = numberFlag('alpha', values.alpha, 1e-9, 1 - 1e-9, 'a number between 0 and 1 (e.g. 0.05)') ?? 0.05;
  const filters = { cases: values.case, excludeCases: values['exclude-case'], tags: values.tag };
  const k = intFlag('trials', values.trials, 1, 500) ?? (await defaultHalf(positionals[0], filters));

  const runArgv = [...positionals, '--trials', String(2 * k), '--no-baseline'];
  for (const flag of PASSTHROUGH) {
    const v = values[flag];
    for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) runArgv.push(`--${flag}`, x);
  }
  if (values['keep-workspaces']) runArgv.push('--keep-workspaces');
  if (values['errors-as-failures']) runArgv.push('--errors-as-failures');
  process.stderr.write(`calibrate: running with_skill with ${2 * k} trials per case (two halves of ${k})\n`);
  const { runForResult } = await import('./run.js');
  const run = await runForResult(runArgv);
  if (!run.resultFile) {
    process.stderr.write(`skill-up calibrate: the run wrote no result.json (exit code ${run.exitCode}); nothing to calibrate\n`);
    return run.exitCode === 2 || run.exitCode >= 128 ? run.exitCode : 3;
  }

  const { doc, file } = await loadResultDoc(run.resultFile);
  const names = new Map(doc.engines.map((e) => [e.name, e.display_name]));
  const trials: TrialResult[] = doc.jobs.map((j) => trialOfJob(j, names.get(j.engine) ?? j.engine));
  const baselineJobs = trials.filter((t) => t.variant === 'without_skill').length;
  if (baselineJobs) process.stderr.write(`note: ${baselineJobs} without_skill job(s) ran (benchmark.enabled in eval.yaml); calibrate uses with_skill only\n`);
  const cal = calibrate(trials, { half: k, splits, alpha, errorsAsFailures: Boolean(values['errors-as-failures']) });

  const dir = run.iterationDir ?? dirname(file);
  const jsonFile = join(dir, 'calibration.json');
  const mdFile = join(dir, 'calibration.md');
  await writeJson(jsonFile, calibrationJson(cal, { resultFile: file, toolVersion: VERSION }), { newline: true });
  await writeText(mdFile, renderCalibrationMarkdown(cal));
  process.stdout.write(renderCalibrationText(cal));
  process.stdout.write(`wrote ${jsonFile}\nwrote ${mdFile}\n`);

  if (run.exitCode === 130 || run.exitCode === 143) {
    process.stderr.write(`calibrate: the run was interrupted; the calibration covers the trials that finished\n`);
    return run.exitCode;
  }
  if (!hasGradedTrials(cal)) {
    const errors = trials.filter((t) => t.variant === 'with_skill' && t.status === 'error').length;
    const skipped = trials.filter((t) => t.variant === 'with_skill' && t.status === 'skipped').length;
    process.stderr.write(`skill-up calibrate: no case has a graded with_skill trial (${errors} error(s), ${skipped} skipped): the calibration is empty\n`);
    return 3;
  }
  const errors = trials.filter((t) => t.variant === 'with_skill' && t.status === 'error').length;
  if (errors && !values['errors-as-failures']) {
    // Errored trials are missing from the halves: the flakiness measured is of what was graded only.
    process.stderr.write(`skill-up calibrate: ${errors} with_skill trial(s) errored; the calibration covers the graded trials only and is not to be trusted (exit 3; --errors-as-failures counts them as failures)\n`);
    return 3;
  }
  return 0;
}
