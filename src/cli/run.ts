/**
 * `skill-up run [path]`: load → plan → run → grade → report, with a live progress display,
 * a crash-safe journal, and Ctrl-C handling that stops the engines and still writes reports.
 */
import { setMaxListeners } from 'node:events';
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { loadSuite } from '../config/load.js';
import { suiteHash } from '../config/hash.js';
import { partialDecision } from '../cost/partial.js';
import { canonicalEngineName, missingVersionError, unknownEngineMessage } from '../config/engines.js';
import type { Suite } from '../config/types.js';
import { getAdapter, unavailableAdapter } from '../engine/registry.js';
import { EngineUnavailable, type EngineAdapter } from '../engine/types.js';
import { killAllGroups } from '../engine/proc.js';
import { prepareSuiteEnv, SuiteEnvError } from '../engine/env.js';
import { planJobs, selectCases, type Job, type PlanOptions } from '../plan/plan.js';
import { parseShard, shardJobs, type ShardRecord } from '../plan/shard.js';
import { writeReports } from '../report/write.js';
import { githubEnabled, publishToGithub } from '../report/github.js';
import type { ReportFormat } from '../config/types.js';
import { lintSkill } from '../skill/lint.js';
import { planSkillInstall, SkillInstallError } from '../skill/install.js';
import { ConfigError } from '../config/diagnostics.js';
import type { ResolvedSkill } from '../run/job.js';
import { createIterationDir, defaultOutputRoot, OutputDirError, resetIterationDir } from '../run/output.js';
import { fitParallelism } from '../run/limits.js';
import { createProgress } from '../run/progress.js';
import { executeJobs } from '../run/run.js';
import { loadScripts, startScriptedModel } from '../run/model.js';
import type { JobResult } from '../run/types.js';
import { formatP, type Uplift } from '../stats/index.js';
import { decide, DEFAULT_DECISION, DEFAULT_REGRESSION_MARGIN, type Decision, type DecisionConfig, type GateResult, type PreviousRun } from '../gate/index.js';
import { trialsOf } from '../report/result-json.js';
import { intFlag, listFlag, numberFlag, parse, UsageError } from './args.js';
import { printWarnings } from './diagnostics.js';
import { VERSION } from './version.js';
import { readAlibabaFlags } from './alibaba-flags.js';
import { checkResumeSuite, endEvents, eventLogTarget, inPlanOrder, openJournal, prepareRunLog, resumeOptions, startEvents, startResume, type RunLog } from './run-resume.js';
import { applyModelOverride, dryRunCost, finishIteration, formatsFlag, jobHooks, maxCostFlag, prepareExtras, type RunExtras } from './run-extras.js';

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
 * written, for commands built on a run (`calibrate`). @throws ConfigError, UsageError
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
  const formats = formatsFlag(values.format as string[] | undefined);
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
  const engineNames = listFlag(values.engine as string[] | undefined);
  applyEngineOverride(suite, engineNames, values.engine !== undefined);
  applyModelOverride(suite, values.model);
  if (values.baseline && values['no-baseline']) throw new UsageError('--baseline and --no-baseline contradict each other: give one');
  if (values['no-baseline']) suite.benchmark.enabled = false;
  const baseline = Boolean(values.baseline) || suite.benchmark.enabled;
  const decision = await decisionConfigOf(values, suite, baseline);
  const planOptions: PlanOptions = {
    cases: values.case as string[] | undefined,
    excludeCases: values['exclude-case'] as string[] | undefined,
    tags: values.tag as string[] | undefined,
    trials,
    baseline: values.baseline,
  };
  const fullPlan = planJobs(suite, planOptions);
  // --shard: whole cases of the selected ones (src/plan/shard.ts), whatever the engines.
  const sharded = shardSpec ? shardJobs(selectCases(suite, planOptions), fullPlan, shardSpec, { trials, variants: baseline ? 2 : 1 }) : undefined;
  const jobs = sharded?.jobs ?? fullPlan;
  const planned = new Set(jobs.map((j) => j.case.id));
  for (const c of suite.cases) {
    if (c.engines && !planned.has(c.id) && c.engines.every((e) => !suite.engines.some((x) => x.name === e))) {
      process.stderr.write(`note: case \`${c.id}\` runs only on ${c.engines.join(', ')}, which this run does not include\n`);
    }
  }
  // Checked against the open-file limit (run/limits.ts): lowered with a warning, or refused (exit 3).
  const fitted = fitParallelism(parallelismFlag ?? suite.parallelism);
  if (fitted.error) {
    process.stderr.write(`error: ${fitted.error}\n`);
    return none(3);
  }
  if (fitted.warning) process.stderr.write(`warning: ${fitted.warning}\n`);
  const parallelism = fitted.parallelism;
  const scripts = await loadScripts(suite);
  const skillName = (await lintSkill(suite.skillDir)).name ?? basename(suite.skillDir);
  const outputRoot = values['output-dir'] ? resolve(values['output-dir']) : defaultOutputRoot(suite.skillDir, skillName);
  const eventLog = eventLogTarget(values['event-log'], outputRoot, iterations, resume, suite.skillDir);
  // A shard is checked as the whole plan: the merged run is what the no_regression gate is for.
  checkPrevious(decision, fullPlan, skillName, outputRoot, iterations);
  if (values['dry-run']) {
    printPlan(suite, jobs, parallelism, sharded?.record);
    // A shard's power is the merged run's: the table is for the whole plan.
    await printPlanPower(fullPlan, baseline, outputRoot, decision.alpha);
    process.stdout.write(await dryRunCost(suite, jobs, outputRoot, maxCost));
    return none(0);
  }
  const skills = await resolveSkills(suite, outputRoot);
  const adapters = new Map<string, EngineAdapter>();
  const versions = new Map<string, string | undefined>();
  for (const e of suite.engines) {
    try {
      const adapter = await getAdapter(e, suite);
      versions.set(e.name, adapter.check ? (await adapter.check(e)).version : undefined);
      adapters.set(e.name, adapter);
    } catch (err) {
      if (!(err instanceof EngineUnavailable)) throw err;
      // A pinned version npm does not have is a mistake in eval.yaml: exit 2 at its line, before any job.
      const badPin = missingVersionError(suite.evalFile, e, err.message);
      if (badPin) throw badPin;
      process.stderr.write(`error: ${err.message}\n`);
      adapters.set(e.name, unavailableAdapter(e.name, err.message));
    }
  }
  const hash = await suiteHash(suite.skillDir, [outputRoot]);
  const log = await prepareRunLog({ suite, outputRoot, suiteHash: hash, values, positional: positionals[0], planOptions, shard: sharded?.record, jobs, resume });
  const extras = await prepareExtras(suite, outputRoot, { formats, maxCost, verbose: alibaba.verbose });
  const ctx: IterationContext = { argv, values, suite, suiteHash: hash, shard: sharded?.record, jobs, parallelism, trials, baseline, decision, scripts, skillName, skills, adapters, versions, extras, log };
  startEvents(log, eventLog, { skillName, suite, jobs: jobs.length, iterations });
  if (iterations === 0) {
    const dir = resume ? { dir: resume.dir, iteration: resume.header.iteration } : await usableOutput(outputRoot, () => createIterationDir(outputRoot));
    const r = await runIteration(ctx, dir);
    endEvents(log, [r], r.exitCode);
    return { exitCode: r.exitCode, resultFile: `${dir.dir}/result.json`, iterationDir: dir.dir };
  }
  const outcomes: IterationOutcome[] = [];
  for (let n = 1; n <= iterations; n++) {
    if (extras.budget?.stopped) {
      process.stderr.write(`iteration ${n}${n < iterations ? `..${iterations}` : ''} not run: ${extras.budget.reason}\n`);
      break;
    }
    const dir = await usableOutput(outputRoot, () => resetIterationDir(outputRoot, n));
    if (iterations > 1) process.stderr.write(`\n== iteration ${n} of ${iterations}\n`);
    const r = await runIteration(ctx, dir);
    outcomes.push(r);
    if (r.interrupted) break;
  }
  if (iterations > 1) printStability(outcomes, new Map(suite.engines.map((e) => [e.name, e.displayName])));
  const last = outcomes[outcomes.length - 1]!;
  endEvents(log, outcomes, combineExitCodes(outcomes.map((o) => o.exitCode)));
  return { exitCode: combineExitCodes(outcomes.map((o) => o.exitCode)), resultFile: `${last.dir}/result.json`, iterationDir: last.dir };
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

/** Everything one iteration needs, resolved once for the whole run. */
interface IterationContext {
  argv: string[];
  values: { 'keep-workspaces'?: boolean; github?: boolean };
  suite: Suite;
  /** config/hash.ts fingerprint of the skill folder. */
  suiteHash: string;
  /** `--shard i/n`: which part of the plan this run is (result.json `shard`). */
  shard?: ShardRecord;
  /** --format, --max-cost, -v (cli/run-extras.ts). */
  extras: RunExtras;
  jobs: Job[];
  parallelism: number;
  trials: number | undefined;
  baseline: boolean;
  decision: DecisionConfig;
  scripts: Awaited<ReturnType<typeof loadScripts>>;
  skillName: string;
  skills: ResolvedSkill[];
  adapters: Map<string, EngineAdapter>;
  versions: Map<string, string | undefined>;
  /** The journal header's plan, a resume, the event log (cli/run-resume.ts). */
  log: RunLog;
}

/** One iteration's outcome. */
interface IterationOutcome {
  iteration: number;
  dir: string;
  exitCode: number;
  interrupted: boolean;
  decision: Decision;
}

/** Runs every job once into `dir`, writes the reports and prints the summary. */
async function runIteration(ctx: IterationContext, target: { dir: string; iteration: number }): Promise<IterationOutcome> {
  const { suite, jobs, parallelism, values } = ctx;
  const { dir, iteration } = target;
  const startedAt = ctx.log.resume ? new Date(ctx.log.resume.header.startedAt) : new Date();
  const runOptions = { parallelism, trials: ctx.trials ?? null, baseline: ctx.baseline, argv: ctx.argv };
  // A resume appends to the run's journal and runs only its errored and unfinished jobs.
  const { journal, kept, toRun } = await openJournal(ctx.log, { ...ctx, options: runOptions }, dir, iteration, startedAt);
  process.stderr.write(`skill-up ${VERSION}: ${jobs.length} job(s) of ${new Set(jobs.map((j) => j.case.id)).size} case(s) → ${dir}\n`);

  const abort = new AbortController();
  // Every running job listens to it (up to 256): not a leak, so no MaxListenersExceededWarning.
  setMaxListeners(0, abort.signal);
  let interrupts = 0;
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts++;
    stoppedBy ??= sig;
    if (interrupts > 1) {
      killAllGroups();
      process.exit(sig === 'SIGTERM' ? 143 : 130);
    }
    const again = sig === 'SIGINT' ? ' (press Ctrl-C again to quit at once)' : '';
    process.stderr.write(`\n${sig}: stopping running engines and writing reports for finished jobs${again}\n`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const verbose = ctx.extras.verbose;
  const progress = verbose ? verbose.progress(createProgress(toRun.length)) : createProgress(toRun.length);
  // --event-log: case_started/case_completed around the display, job/turn/judge events from the jobs.
  const sinks = ctx.log.events?.iteration(iteration, jobs.length, progress);
  verbose?.install();
  ctx.extras.budget?.beginIteration();
  let results: JobResult[] = [];
  const model = await startScriptedModel(ctx.scripts, dir);
  if (model) process.stderr.write(`scripted model server on ${model.url} (exchanges logged per job)\n`);
  try {
    results = await executeJobs({
      jobs: toRun,
      parallelism,
      journal,
      progress: sinks?.progress ?? progress,
      hooks: jobHooks(ctx.extras),
      env: {
        suite,
        adapters: ctx.adapters,
        skills: ctx.skills,
        iterationDir: dir,
        keepWorkspaces: Boolean(values['keep-workspaces']),
        // The source adapters pick an allow-list from (src/engine/env.ts); no process gets it whole.
        baseEnv: { ...process.env },
        cleanups: [],
        modelBaseUrl: model?.url,
        signal: abort.signal,
        ...(sinks ? { events: sinks.jobs } : {}),
      },
    });
  } finally {
    await model?.close();
    verbose?.uninstall();
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await journal.close();
    ctx.log.events?.iterationCompleted(iteration);
  }
  // A resume's result.json holds the kept and the new results: the jobs of an uninterrupted run.
  results = inPlanOrder(jobs, kept, results);
  const interrupted = abort.signal.aborted;
  // Priced jobs, and the gates of a run --max-cost cut short (cli/run-extras.ts, cost/partial.ts).
  const costed = finishIteration(suite, ctx.extras, decide(trialsOf(results), ctx.decision), jobs.length, results);
  // An interrupted run's gates cannot pass on the jobs it never ran.
  const done = new Set(results.map((r) => r.id));
  const decision = interrupted ? partialDecision(costed.decision, jobs.filter((j) => !done.has(j.id)), 'the run was interrupted') : costed.decision;
  // 128 + the signal's number, as shells report it: 130 for SIGINT, 143 for SIGTERM.
  const exitCode = interrupted ? (stoppedBy === 'SIGTERM' ? 143 : 130) : decision.exitCode;
  const endedAt = new Date();
  const reports = await writeReports(
    dir,
    {
      tool: { name: 'skill-up', version: VERSION },
      skill: { name: ctx.skillName, path: suite.skillDir },
      evalFile: suite.evalFile,
      suiteHash: ctx.suiteHash,
      ...(ctx.shard ? { shard: ctx.shard } : {}),
      iteration,
      startedAt: startedAt.toISOString(),
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - startedAt.getTime(),
      interrupted,
      notRun: jobs.length - results.length,
      ...(costed.notRunReason ? { notRunReason: costed.notRunReason } : {}),
      cost: costed.cost,
      engines: suite.engines.map((e) => ({ ...e, resolvedVersion: ctx.versions.get(e.name) })),
      options: { ...runOptions, ...resumeOptions(ctx.log, ctx.argv) },
      exitCode,
      decision,
    },
    results,
    ctx.extras.formats ?? reportFormats(suite.report.formats, results),
  ).catch((e: NodeJS.ErrnoException) => {
    // Disk full, folder gone or made read-only during the run: one line and exit 3, no stack trace.
    if (typeof e.code !== 'string') throw e;
    process.stderr.write(`error: cannot write the reports in ${dir}: ${e.message}\n`);
    return undefined;
  });
  if (!reports) {
    printSummary(decision, results.length, jobs.length, new Map(suite.engines.map((e) => [e.name, e.displayName])), 3, { costLines: costed.lines, notRunReason: costed.notRunReason });
    return { iteration, dir, exitCode: interrupted ? exitCode : 3, interrupted, decision };
  }
  const { written, skipped, doc } = reports;
  // A report that could not be written (disk full, …) is exit 3, after 2 and 130/143 (README "Exit codes").
  const finalCode = skipped.length && !interrupted ? 3 : exitCode;
  printSummary(decision, results.length, jobs.length, new Map(suite.engines.map((e) => [e.name, e.displayName])), finalCode, { costLines: costed.lines, notRunReason: costed.notRunReason });
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  if (values['keep-workspaces']) process.stdout.write(`kept ${results.filter((r) => r.workspace).length} workspace(s); each job's path is \`workspace\` in result.json\n`);
  for (const s of skipped) process.stderr.write(`error: report format \`${s.format}\` not written: ${s.reason}\n`);
  if (githubEnabled(values.github)) {
    // GitHub Actions (or --github): annotations on stdout, step summary and outputs (src/report/github.ts).
    const gh = await publishToGithub(doc, { cases: suite.cases, dir, written });
    for (const p of gh.problems) process.stderr.write(`warning: ${p}\n`);
  }
  return { iteration, dir, exitCode: finalCode, interrupted, decision };
}

/**
 * The gate settings of a run: eval.yaml `gates:` overridden field by field by the flags.
 * Loads the --no-regression run up front, so a bad path is a usage error before any job runs.
 * @throws UsageError for a bad value, a flag that needs another, or an unreadable previous run.
 */
async function decisionConfigOf(values: Record<string, unknown>, suite: Suite, baseline: boolean): Promise<DecisionConfig> {
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
  const onInconclusive = (on as 'pass' | 'fail' | undefined) ?? g.onInconclusive;
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
  const out: DecisionConfig = { alpha, errorsAsFailures, maxErrorRate, engineNames: Object.fromEntries(suite.engines.map((e) => [e.name, e.displayName])) };
  if (minPassRate !== undefined) out.minPassRate = minPassRate;
  if (upliftPoints !== undefined) out.minUplift = upliftPoints / 100;
  if (onInconclusive) out.onInconclusive = onInconclusive;
  if (previousPath) {
    const previous = await loadPreviousRun(previousPath, errorsAsFailures, previousFrom);
    out.noRegression = { previous, margin: marginPoints !== undefined ? marginPoints / 100 : DEFAULT_REGRESSION_MARGIN };
  }
  return out;
}

/** A previous run's with_skill counts per (engine, case), from its jobs. @throws UsageError */
export async function loadPreviousRun(file: string, errorsAsFailures: boolean, from: string): Promise<PreviousRun & { file: string; skillName: string }> {
  const { loadResultDoc, ResultFileError } = await import('../report/load.js');
  try {
    const { doc, file: resolved } = await loadResultDoc(file);
    const counts = new Map<string, PreviousRun['cases'][number]>();
    for (const j of doc.jobs) {
      if (j.variant !== 'with_skill') continue;
      const failed = j.status === 'fail' || (errorsAsFailures && j.status === 'error');
      if (j.status !== 'pass' && !failed) continue;
      const k = JSON.stringify([j.engine, j.case_id]);
      const c = counts.get(k) ?? { engine: j.engine, caseId: j.case_id, passed: 0, failed: 0 };
      if (j.status === 'pass') c.passed++;
      else c.failed++;
      counts.set(k, c);
    }
    return { source: relative(process.cwd(), resolved) || resolved, file: resolved, skillName: doc.skill.name, iteration: doc.iteration, cases: [...counts.values()] };
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
  const prev = decision.noRegression?.previous as (PreviousRun & { file?: string; skillName?: string }) | undefined;
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

/** Exit code of several iterations: interrupted first, then 3 > 1 > 4 > 0. */
export function combineExitCodes(codes: number[]): number {
  for (const c of [143, 130, 3, 1, 4]) if (codes.includes(c)) return c;
  return 0;
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
 * Formats a run writes: the suite's, plus `markdown` (summary.md) always, plus `benchmark`
 * when the run has both variants (a with/without comparison is what benchmark.json is for).
 */
export function reportFormats(configured: ReportFormat[], results: JobResult[]): ReportFormat[] {
  const out = new Set<ReportFormat>(configured);
  out.add('markdown');
  const variants = new Set(results.map((r) => r.variant));
  if (variants.has('with_skill') && variants.has('without_skill')) out.add('benchmark');
  return [...out];
}

/** `--engine a,b` replaces the suite's engines; names must be among the suite's (or its base engine renamed). */
function applyEngineOverride(suite: Suite, names: string[], given: boolean): void {
  if (names.length === 0) {
    if (given) throw new UsageError('--engine needs at least one engine name (e.g. --engine claude_code,codex)');
    return;
  }
  const known = new Map(suite.engines.map((e) => [e.name, e]));
  known.set(suite.engine.displayName, suite.engine);
  const seen = new Set<string>();
  suite.engines = names.flatMap((n) => {
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
  suite.engine = suite.engines[0]!;
}

/** Names each skill and checks its file selection once for the whole run. @throws ConfigError */
async function resolveSkills(suite: Suite, outputRoot: string): Promise<ResolvedSkill[]> {
  const out: ResolvedSkill[] = [];
  for (const s of suite.skills) {
    const info = await lintSkill(s.path);
    // An output folder inside the skill must never be installed: the agent would read past gradings.
    const inside = relative(s.path, outputRoot);
    const exclude = inside && !inside.startsWith('..') && !isAbsolute(inside) ? [...s.exclude, `${inside}/**`] : s.exclude;
    try {
      const plan = await planSkillInstall({ skillDir: s.path, include: s.include, exclude });
      out.push({ name: s.target ?? info.name ?? basename(s.path), plan });
    } catch (e) {
      if (!(e instanceof SkillInstallError)) throw e;
      throw new ConfigError([{ file: s.path, line: 0, col: 0, path: 'skills', message: e.message, severity: 'error' }]);
    }
  }
  return out;
}

function printPlan(suite: Suite, jobs: Job[], parallelism: number, shard?: ShardRecord): void {
  const out = process.stdout;
  if (shard) out.write(`Shard ${shard.index}/${shard.count}: ${shard.cases.length} of the plan's ${shard.plan_cases.length} case(s): ${shard.cases.join(', ')}\n`);
  out.write(`Would run ${jobs.length} job(s) at parallelism ${parallelism} on ${suite.engines.map((e) => e.displayName).join(', ')}:\n`);
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
function printStability(outcomes: IterationOutcome[], names: Map<string, string>): void {
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
