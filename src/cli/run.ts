/**
 * `skill-up run [path]`: load → plan → run → grade → report, with a live progress display,
 * a crash-safe journal, and Ctrl-C handling that stops the engines and still writes reports.
 */
import { basename, relative, resolve } from 'node:path';
import { loadSuite } from '../config/load.js';
import { suiteHash } from '../config/hash.js';
import { canonicalEngineName, unknownEngineMessage } from '../config/engines.js';
import type { EngineConfig, Suite } from '../config/types.js';
import { prepareSuiteEnv, SuiteEnvError } from '../engine/env.js';
import type { Job, PlanOptions } from '../plan/plan.js';
import { parseShard, type ShardRecord } from '../plan/shard.js';
import { githubEnabled, publishToGithub } from '../report/github.js';
import { lintSkill } from '../skill/lint.js';
import { createIterationDir, defaultOutputRoot, OutputDirError, resetIterationDir } from '../run/output.js';
import { fitParallelism } from '../run/limits.js';
import { loadScripts } from '../run/model.js';
import { dryRunCost, engineNames, prepareExtras } from '../run/extras.js';
import type { LoadedPreviousRun } from '../run/previous.js';
import { combineExitCodes, planRun, prepareRun, reportFormats, runSuite, type RunRecord, type RunSuiteOptions } from '../run/suite.js';
import { formatP, type Uplift } from '../stats/index.js';
import { DEFAULT_DECISION, DEFAULT_REGRESSION_MARGIN, type Decision, type DecisionConfig, type GateResult, type PreviousRun } from '../gate/index.js';
import { intFlag, listFlag, numberFlag, parse, UsageError } from './args.js';
import { printWarnings } from './diagnostics.js';
import { readAlibabaFlags } from './alibaba-flags.js';
import { checkResumeSuite, endEvents, eventLogTarget, prepareRunLog, startEvents, startResume } from './run-resume.js';
import { formatsFlag, maxCostFlag, withModel } from './run-extras.js';

/** Re-exported for the commands and tests that knew them here. */
export { combineExitCodes, reportFormats };

export const RUN_HELP = `Usage: skill-up run [path] [options]

Runs a skill's eval suite: every case, in a fresh workspace, on a real agent engine,
graded by the suite's judges. [path] is an eval.yaml, a skill folder holding
evals/eval.yaml, or omitted (walks up from the current folder to SKILL.md + evals/).

Options:
  --case <glob>            run only cases whose id matches (repeatable)
  --exclude-case <glob>    skip cases whose id matches (repeatable; wins over --case)
  --tag <tag>              run only cases with this tag (repeatable)
  --trials <n>             trials per case and variant (overrides the suite)
  --baseline               also run every case without the skill (as benchmark.enabled)
  --no-baseline            run only with_skill, even when eval.yaml has benchmark.enabled
  --engine <name[,name]>   engines to run (overrides the suite's engine)
  --parallelism <n>        jobs at once, 1-256 (default: cases.parallelism)
  --shard <i/n>            run only part i of n (whole cases, the same split on every machine);
                           put the parts back together with skill-up merge
  --output-dir <dir>       root of iteration-N folders (default: <skill>-workspace beside the skill)
  --keep-workspaces        keep each job's workspace folder for inspection (alias: --no-delete)
  --github                 GitHub Actions output even outside GITHUB_ACTIONS=true: ::error/::warning
                           annotations per failed case and gate; summary.md appended to
                           $GITHUB_STEP_SUMMARY and step outputs to $GITHUB_OUTPUT when those are set
  --iteration <n>          0 (default): write the next free iteration-N; N > 0: run N times into
                           iteration-1..N (each emptied first) and print a stability summary
  --resume <dir>           continue an interrupted or killed run in its iteration folder, from its
                           journal.jsonl: finished jobs are kept, errored and unfinished ones run
                           again, reports are rewritten there; the plan and flags are the run's own
  --force                  with --resume: continue even though the suite changed since the run began
  --event-log <file>       write the run's events (run, iteration, case, job, turn, judge started and
                           finished) to <file> as JSON Lines; schema: schemas/events.schema.json
  --dry-run                print the plan, the power table (cases × trials to detect an uplift) and the
                           cost estimate from the newest earlier iteration with costs, and exit
  --max-cost <usd>         stop starting jobs once spent + running jobs' estimates + the next job's
                           would pass it; the rest are not run (the run is partial: see README)
  --format <f[,f]>         report formats of this run instead of report.formats: json, junit, html,
                           markdown, benchmark (repeatable; result.json is always written)
  --model <name>           model name for every engine of the run (overrides engine.model.name)
  -v, -vv                  more output on stderr: -v each engine command line and every job's
                           assertions and reason; -vv also the engines' stderr, line by line
  --auto                   without an eval.yaml, run the skill's Anthropic evals/evals.json,
                           converted in memory (nothing written; see skill-up import)
  -h, --help               show this help

Gates (each PASS, FAIL or INCONCLUSIVE, decided on 95% intervals; eval.yaml \`gates:\` sets them too):
  --min-pass-rate <θ>      with_skill pass rate to reach (0.8 or 80%)
  --min-uplift <points>    uplift to reach, in points (needs --baseline)
  --no-regression <run>    compare with a previous result.json or iteration folder, case by case
  --margin <points>        largest drop --no-regression still passes (default 10)
  --max-error-rate <r>     share of trials allowed to error (default 0; above it: exit 3)
  --on-inconclusive <x>    exit code for an inconclusive gate: pass (0) or fail (1); default 4
  --errors-as-failures     count errored trials as failures (the worst-case view)
  --alpha <a>              significance level of the verdict and the regression test (default 0.05)

Reports: result.json always. Without --format also summary.md, report.xml and the others in
report.formats, and benchmark.json, benchmark.md and per-run grading.json (Anthropic
skill-creator files) when \`benchmark\` is in report.formats or the run has both variants;
with --format exactly the formats given.

Without --min-pass-rate, --min-uplift or --no-regression the gate is "every with_skill trial
passed" (alibaba/skill-up's). The verdict (improves / regresses / inconclusive, an exact paired
permutation test over cases) is printed separately and does not set the exit code.

Exit codes, first match wins: 2 config or usage error; 130/143 interrupted (SIGINT/SIGTERM);
3 errors above --max-error-rate; 1 a gate failed; 4 a gate inconclusive; 0 every gate passed.
A run cut short by --max-cost is gated on what ran, but a gate that would pass only because jobs
did not run is inconclusive (all_trials_passed with with_skill jobs not run: exit 4).

Cost: a job's cost is the engine's own figure, else an estimate from its tokens and skill-up's
price table (src/cost/prices.json), shown as "~$0.42 (estimated)"; the scripted model has none.
alibaba/skill-up's --include-case-name / --exclude-case-name are --case / --exclude-case here;
its --provider, --api-key, --runtime, --runtime-kwarg/--rk and --engine-kwarg/--ek exit 2.

Examples:
  skill-up run                                  # the skill around the current folder
  skill-up run examples/greeting-files --trials 3 --baseline
  skill-up run path/to/evals/eval.yaml --case 'greet-*' --parallelism 4
  skill-up run --tag smoke --dry-run
  skill-up run --model claude-sonnet-4-5 --max-cost 5 --format junit,html -v
  skill-up run --auto path/to/skill-with-evals-json
`;

const OPTIONS = {
  case: { type: 'string', multiple: true },
  'exclude-case': { type: 'string', multiple: true },
  tag: { type: 'string', multiple: true },
  trials: { type: 'string' },
  baseline: { type: 'boolean' },
  'no-baseline': { type: 'boolean' },
  engine: { type: 'string', multiple: true },
  parallelism: { type: 'string' },
  shard: { type: 'string' },
  'output-dir': { type: 'string' },
  'keep-workspaces': { type: 'boolean' },
  'no-delete': { type: 'boolean' },
  'max-cost': { type: 'string' },
  format: { type: 'string', multiple: true },
  model: { type: 'string' },
  github: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  auto: { type: 'boolean' },
  iteration: { type: 'string' },
  resume: { type: 'string' },
  force: { type: 'boolean' },
  'event-log': { type: 'string' },
  'min-pass-rate': { type: 'string' },
  'min-uplift': { type: 'string' },
  'no-regression': { type: 'string' },
  margin: { type: 'string' },
  'max-error-rate': { type: 'string' },
  'on-inconclusive': { type: 'string' },
  'errors-as-failures': { type: 'boolean' },
  alpha: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the command; returns the process exit code. ConfigError and UsageError propagate to main. */
export async function runCommand(argv: string[]): Promise<number> {
  return (await runForResult(argv)).exitCode;
}

/** What {@link runForResult} returns: the exit code and where the (last) iteration's result.json went. */
export interface RunOutcome {
  exitCode: number;
  /** Absolute path of result.json; null when nothing ran (help, dry run). */
  resultFile: string | null;
  iterationDir: string | null;
}

/**
 * Runs exactly like `skill-up run <argv>` (printing included) and says where result.json was
 * written, for commands built on a run (`calibrate`). Parses the flags into the driver's
 * options (src/run/suite.ts), calls `runSuite` once per iteration and prints each RunRecord.
 * @throws ConfigError, UsageError
 */
export async function runForResult(argv: string[]): Promise<RunOutcome> {
  const none = (exitCode: number): RunOutcome => ({ exitCode, resultFile: null, iterationDir: null });
  // alibaba/skill-up's -v/-vv, its case-filter names and the flags refused here (cli/alibaba-flags.ts).
  const alibaba = readAlibabaFlags(argv);
  const { values, positionals } = parse(alibaba.argv, OPTIONS);
  if (values.help) {
    process.stdout.write(RUN_HELP);
    return none(0);
  }
  if (positionals.length > 1) throw new UsageError(`run takes one path, got ${positionals.length}: ${positionals.join(' ')}`);
  // --resume <dir>: the plan and flags become the journal's (cli/run-resume.ts, run/resume.ts).
  const resume = await startResume(values, positionals);
  const trials = intFlag('trials', values.trials, 1, 1000);
  const parallelismFlag = intFlag('parallelism', values.parallelism, 1, 256);
  const iterations = intFlag('iteration', values.iteration, 0, 100) ?? 0;
  const formats = formatsFlag(values.format);
  const maxCost = maxCostFlag(values['max-cost']);
  if (values['no-delete']) values['keep-workspaces'] = true;
  const shardSpec = values.shard !== undefined ? parseShard(values.shard) : undefined;
  const { suite, warnings } = await loadForRun(positionals[0], Boolean(values.auto));
  // environment.env expanded; every value the suite hands to processes becomes a secret to redact.
  try {
    prepareSuiteEnv(suite);
  } catch (e) {
    if (e instanceof SuiteEnvError) throw new UsageError(e.message);
    throw e;
  }
  printWarnings(warnings);
  checkResumeSuite(resume, suite);
  // --engine and --model choose the run's engines; the suite itself is left as loaded.
  const engines = withModel(selectEngines(suite, listFlag(values.engine), values.engine !== undefined), values.model);
  if (values.baseline && values['no-baseline']) throw new UsageError('--baseline and --no-baseline contradict each other: give one');
  if (values['no-baseline']) suite.benchmark.enabled = false;
  const baseline = Boolean(values.baseline) || suite.benchmark.enabled;
  const decision = await decisionConfigOf(values, suite, engines, baseline);
  const planOptions: PlanOptions = {
    cases: values.case,
    excludeCases: values['exclude-case'],
    tags: values.tag,
    trials,
    baseline: values.baseline,
  };
  // --shard: whole cases of the selected ones (src/plan/shard.ts), whatever the engines.
  const { fullPlan, jobs, shard } = planRun(suite, engines, planOptions, shardSpec && { spec: shardSpec, variants: baseline ? 2 : 1 });
  // Checked against the open-file limit (run/limits.ts): lowered with a warning, or refused (exit 3).
  const fitted = fitParallelism(parallelismFlag ?? suite.parallelism);
  if (fitted.error) {
    process.stderr.write(`error: ${fitted.error}\n`);
    return none(3);
  }
  if (fitted.warning) process.stderr.write(`warning: ${fitted.warning}\n`);
  const parallelism = fitted.parallelism;
  // Scripts are checked before a dry run too: a broken script is a config error either way.
  await loadScripts(engines);
  const skillName = (await lintSkill(suite.skillDir)).name ?? basename(suite.skillDir);
  const outputRoot = values['output-dir'] ? resolve(values['output-dir']) : defaultOutputRoot(suite.skillDir, skillName);
  const eventLog = eventLogTarget(values['event-log'], outputRoot, iterations, resume, suite.skillDir);
  // A shard is checked as the whole plan: the merged run is what the no_regression gate is for.
  checkPrevious(decision, fullPlan, skillName, outputRoot, iterations);
  if (values['dry-run']) {
    printPlan(engines, jobs, parallelism, shard);
    // A shard's power is the merged run's: the table is for the whole plan.
    await printPlanPower(fullPlan, baseline, outputRoot, decision.alpha);
    process.stdout.write(await dryRunCost(engines, jobs, outputRoot, maxCost));
    return none(0);
  }
  const prepared = await prepareRun(suite, engines, outputRoot);
  const hash = await suiteHash(suite.skillDir, [outputRoot]);
  const log = await prepareRunLog({ suite, engines, outputRoot, suiteHash: hash, values, positional: positionals[0], planOptions, shard, jobs, resume });
  const extras = await prepareExtras(engines, outputRoot, { formats, maxCost, verbose: alibaba.verbose });
  const options = (target: RunSuiteOptions['target']): RunSuiteOptions => ({
    engines,
    jobs,
    target,
    parallelism,
    decision,
    prepared,
    skillName,
    suiteHash: hash,
    ...(shard ? { shard } : {}),
    keepWorkspaces: Boolean(values['keep-workspaces']),
    extras,
    log,
    runOptions: { parallelism, trials: trials ?? null, baseline, argv },
  });
  const names = engineNames(engines);
  const iterate = async (target: RunSuiteOptions['target']): Promise<RunRecord> => {
    const record = await runSuite(suite, options(target));
    await printRecord(record, names, { keepWorkspaces: Boolean(values['keep-workspaces']), github: values.github, cases: suite.cases });
    return record;
  };
  startEvents(log, eventLog, { skillName, engines, jobs: jobs.length, iterations });
  if (iterations === 0) {
    const target = resume ? { dir: resume.dir, iteration: resume.header.iteration } : await usableOutput(outputRoot, () => createIterationDir(outputRoot));
    const r = await iterate(target);
    endEvents(log, [r], r.exitCode);
    return { exitCode: r.exitCode, resultFile: `${target.dir}/result.json`, iterationDir: target.dir };
  }
  const outcomes: RunRecord[] = [];
  for (let n = 1; n <= iterations; n++) {
    if (extras.budget?.stopped) {
      process.stderr.write(`iteration ${n}${n < iterations ? `..${iterations}` : ''} not run: ${extras.budget.reason}\n`);
      break;
    }
    const target = await usableOutput(outputRoot, () => resetIterationDir(outputRoot, n));
    if (iterations > 1) process.stderr.write(`\n== iteration ${n} of ${iterations}\n`);
    const r = await iterate(target);
    outcomes.push(r);
    if (r.interrupted) break;
  }
  if (iterations > 1) printStability(outcomes, names);
  const last = outcomes[outcomes.length - 1]!;
  const exitCode = combineExitCodes(outcomes.map((o) => o.exitCode));
  endEvents(log, outcomes, exitCode);
  return { exitCode, resultFile: `${last.dir}/result.json`, iterationDir: last.dir };
}

/**
 * Runs `f` on the output root; any file-system error (a write-only or unreadable folder,
 * EACCES, ENOSPC …) becomes an OutputDirError: one message naming the folder, exit code 2
 * (the folder is the user's choice and nothing ran yet), never a stack trace.
 */
async function usableOutput<T>(root: string, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof OutputDirError || typeof (e as NodeJS.ErrnoException).code !== 'string') throw e;
    throw new OutputDirError(`cannot use the output folder ${root}: ${(e as Error).message}`);
  }
}

/**
 * Prints one iteration's record: the summary (from the record's decision, the one result.json
 * holds), the files written, the kept workspaces, the formats not written; and on GitHub
 * Actions (or --github) its annotations, step summary and outputs (src/report/github.ts).
 */
async function printRecord(r: RunRecord, names: Map<string, string>, opts: { keepWorkspaces: boolean; github?: boolean; cases: Suite['cases'] }): Promise<void> {
  if (r.reportError) process.stderr.write(`error: ${r.reportError}\n`);
  printSummary(r.decision, r.results.length, r.planned, names, r.exitCode, { costLines: r.costLines, notRunReason: r.notRunReason });
  if (!r.reports) return;
  const { written, skipped, doc } = r.reports;
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  if (opts.keepWorkspaces) process.stdout.write(`kept ${r.results.filter((x) => x.workspace).length} workspace(s); each job's path is \`workspace\` in result.json\n`);
  for (const s of skipped) process.stderr.write(`error: report format \`${s.format}\` not written: ${s.reason}\n`);
  if (githubEnabled(opts.github)) {
    const gh = await publishToGithub(doc, { cases: opts.cases, dir: r.dir, written });
    for (const p of gh.problems) process.stderr.write(`warning: ${p}\n`);
  }
}

/**
 * The gate settings of a run: eval.yaml `gates:` overridden field by field by the flags.
 * Loads the --no-regression run up front, so a bad path is a usage error before any job runs.
 * @throws UsageError for a bad value, a flag that needs another, or an unreadable previous run.
 */
async function decisionConfigOf(values: Record<string, unknown>, suite: Suite, engines: EngineConfig[], baseline: boolean): Promise<DecisionConfig> {
  const v = values as Record<string, string | boolean | undefined>;
  const str = (k: string) => v[k] as string | undefined;
  const g = suite.gates;
  const alpha = numberFlag('alpha', str('alpha'), 1e-6, 0.5, 'a significance level above 0 and at most 0.5 (e.g. 0.05)') ?? g.alpha ?? DEFAULT_DECISION.alpha;
  const minPassRate = numberFlag('min-pass-rate', str('min-pass-rate'), 0, 1, 'a pass rate from 0 to 1 (e.g. 0.8 or 80%)', true) ?? g.minPassRate;
  const upliftPoints = numberFlag('min-uplift', str('min-uplift'), -100, 100, 'a number of points from -100 to 100 (e.g. 10 for +10 points)') ?? g.minUplift;
  const maxErrorRate = numberFlag('max-error-rate', str('max-error-rate'), 0, 1, 'a share of trials from 0 to 1 (e.g. 0.05 or 5%)', true) ?? g.maxErrorRate ?? DEFAULT_DECISION.maxErrorRate;
  const marginPoints = numberFlag('margin', str('margin'), 0, 100, 'a number of points from 0 to 100 (e.g. 10)') ?? g.noRegression?.margin;
  const on = str('on-inconclusive');
  if (on !== undefined && on !== 'pass' && on !== 'fail') throw new UsageError(`--on-inconclusive must be \`pass\` or \`fail\`, got \`${on}\``);
  const onInconclusive = (on) ?? g.onInconclusive;
  const errorsAsFailures = Boolean(v['errors-as-failures']) || Boolean(g.errorsAsFailures);
  if (upliftPoints !== undefined && !baseline) {
    // Name where the gate came from: the flag, or eval.yaml's `gates.min_uplift`.
    const from = str('min-uplift') !== undefined ? '--min-uplift' : `gates.min_uplift of ${relative(process.cwd(), suite.evalFile) || suite.evalFile}`;
    throw new UsageError(`${from} needs the without_skill arm: add --baseline (or benchmark.enabled: true in eval.yaml)`);
  }
  if (str('no-regression') !== undefined && str('no-regression')!.trim() === '') throw new UsageError('--no-regression needs a previous result.json or its iteration folder, got an empty value');
  const previousPath = str('no-regression') ? resolve(str('no-regression')!) : g.noRegression?.baseline;
  const previousFrom = str('no-regression') ? '--no-regression' : `gates.no_regression.baseline of ${relative(process.cwd(), suite.evalFile) || suite.evalFile}`;
  if (str('margin') !== undefined && !previousPath) throw new UsageError('--margin is the tolerance of --no-regression: give --no-regression <previous result.json> too');
  const out: DecisionConfig = { alpha, errorsAsFailures, maxErrorRate, engineNames: Object.fromEntries(engines.map((e) => [e.name, e.displayName])) };
  if (minPassRate !== undefined) out.minPassRate = minPassRate;
  if (upliftPoints !== undefined) out.minUplift = upliftPoints / 100;
  if (onInconclusive) out.onInconclusive = onInconclusive;
  if (previousPath) {
    const previous = await loadPreviousRun(previousPath, errorsAsFailures, previousFrom);
    out.noRegression = { previous, margin: marginPoints !== undefined ? marginPoints / 100 : DEFAULT_REGRESSION_MARGIN };
  }
  return out;
}

/**
 * A previous run's with_skill counts per (engine, case) (src/run/previous.ts); `from` names
 * the flag or setting that gave `file`, for the message. @throws UsageError
 */
export async function loadPreviousRun(file: string, errorsAsFailures: boolean, from: string): Promise<LoadedPreviousRun> {
  const [{ loadPreviousRun: load }, { ResultFileError }] = await Promise.all([import('../run/previous.js'), import('../report/load.js')]);
  try {
    return await load(file, errorsAsFailures);
  } catch (e) {
    if (e instanceof ResultFileError) throw new UsageError(`${from}: ${e.message}`);
    throw e;
  }
}

/**
 * Refuses, before anything runs, a --no-regression run that cannot be compared (no case of
 * this plan in it) or that `--iteration N` would empty; notes a run of another skill.
 * @throws UsageError
 */
function checkPrevious(decision: DecisionConfig, jobs: Job[], skillName: string, outputRoot: string, iterations: number): void {
  // Loaded by loadPreviousRun, so it says where it came from.
  const prev: (PreviousRun & Partial<LoadedPreviousRun>) | undefined = decision.noRegression?.previous;
  if (!prev) return;
  const planned = new Set(jobs.filter((j) => j.variant === 'with_skill').map((j) => JSON.stringify([j.engine, j.case.id])));
  if (!prev.cases.some((c) => planned.has(JSON.stringify([c.engine, c.caseId])))) {
    const engines = [...new Set(prev.cases.map((c) => c.engine))].join(', ') || 'none';
    throw new UsageError(`--no-regression ${prev.source}: no graded with_skill case of that run is in this plan (same case id and engine; its engines: ${engines}): there is nothing to compare`);
  }
  if (prev.skillName && prev.skillName !== skillName) process.stderr.write(`note: --no-regression ${prev.source} is a run of skill \`${prev.skillName}\`, this is \`${skillName}\`; cases are paired by id\n`);
  for (let n = 1; n <= iterations; n++) {
    const dir = resolve(outputRoot, `iteration-${n}`);
    if (prev.file && (prev.file === dir || prev.file.startsWith(`${dir}/`))) {
      throw new UsageError(`--iteration ${iterations} would empty ${relative(process.cwd(), dir) || dir}, which holds the --no-regression run: copy it elsewhere or use another --output-dir`);
    }
  }
}

/**
 * The suite to run: `loadSuite` as usual; with `--auto`, a skill that has no eval.yaml but an
 * Anthropic `evals/evals.json` runs that file, converted in memory.
 */
async function loadForRun(target: string | undefined, auto: boolean) {
  if (!auto) return loadSuite(target, { cwd: process.cwd() });
  const { resolveAutoTarget, loadEvalsJsonSuite } = await import('../import/auto.js');
  const found = resolveAutoTarget(target, process.cwd());
  if (found.kind === 'yaml') return loadSuite(found.target, { cwd: process.cwd() });
  const loaded = await loadEvalsJsonSuite(found.file);
  const judged = loaded.suite.cases.filter((c) => c.judges.some((j) => j.type === 'agent_judge')).length;
  process.stderr.write(
    `--auto: no eval.yaml; running ${found.file} (Anthropic evals.json, converted in memory: ${loaded.suite.cases.length} case(s)` +
      `${judged ? `, ${judged} with agent_judge criteria, graded \`error\` by this version` : ''}; \`skill-up import\` writes it as eval.yaml)\n`,
  );
  return loaded;
}

/**
 * `--engine a,b`: the run's engines, in the order given, without changing `suite`. Names must
 * be among the suite's (or its base engine renamed: another engine keeps the model settings,
 * not the version pin). Without the flag, the suite's engines. @throws UsageError
 */
function selectEngines(suite: Suite, names: string[], given: boolean): EngineConfig[] {
  if (names.length === 0) {
    if (given) throw new UsageError('--engine needs at least one engine name (e.g. --engine claude_code,codex)');
    return suite.engines;
  }
  const known = new Map(suite.engines.map((e) => [e.name, e]));
  known.set(suite.engine.displayName, suite.engine);
  const seen = new Set<string>();
  return names.flatMap((n) => {
    const canonical = canonicalEngineName(n) ?? n;
    if (seen.has(canonical)) return [];
    seen.add(canonical);
    const found = known.get(n) ?? known.get(canonical);
    if (found) return [found];
    if (!canonicalEngineName(n)) throw new UsageError(`--engine ${n}: ${unknownEngineMessage(n)}`);
    if (suite.engine.name === 'custom') throw new UsageError(`--engine ${n}: this suite defines a custom engine \`${suite.engine.displayName}\`; other engines need their own engine block`);
    // Another engine keeps the model settings but not the pin, which names the suite engine's version.
    return [{ ...suite.engine, name: canonical, displayName: canonical, version: undefined, custom: undefined }];
  });
}

function printPlan(engines: EngineConfig[], jobs: Job[], parallelism: number, shard?: ShardRecord): void {
  const out = process.stdout;
  if (shard) out.write(`Shard ${shard.index}/${shard.count}: ${shard.cases.length} of the plan's ${shard.plan_cases.length} case(s): ${shard.cases.join(', ')}\n`);
  out.write(`Would run ${jobs.length} job(s) at parallelism ${parallelism} on ${engines.map((e) => e.displayName).join(', ')}:\n`);
  const byCase = new Map<string, Job[]>();
  for (const j of jobs) byCase.set(j.case.id, [...(byCase.get(j.case.id) ?? []), j]);
  for (const [id, js] of byCase) {
    const variants = [...new Set(js.map((j) => j.variant))].join(' + ');
    const trials = Math.max(...js.map((j) => j.trial));
    const engines = [...new Set(js.map((j) => j.engine))].join(', ');
    out.write(`  ${id.padEnd(32)} ${variants} × ${trials} trial(s) on ${engines}  (${js.length} job(s))\n`);
  }
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
export function printSummary(d: Decision, ran: number, planned: number, names: Map<string, string>, exitCode: number, extra: { costLines?: string[]; notRunReason?: string } = {}): void {
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
  for (const l of extra.costLines ?? []) out.write(`${l}\n`);
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

/** Per case and engine, the with_skill statuses across iterations, then the verdict and gates per iteration. */
function printStability(outcomes: RunRecord[], names: Map<string, string>): void {
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
  out.write(`  exit codes: ${outcomes.map((o) => o.exitCode).join(', ')} → ${combineExitCodes(outcomes.map((o) => o.exitCode))}\n`);
}

/**
 * `--dry-run`: the power table for this plan. The noise comes from the newest iteration under
 * the output root when one exists (its with/without case counts), else from ASSUMED_NOISE.
 */
async function printPlanPower(jobs: Job[], baseline: boolean, outputRoot: string, alpha: number): Promise<void> {
  const { planPower } = await import('./plan-power.js');
  process.stdout.write(await planPower(jobs, baseline, outputRoot, alpha));
}
