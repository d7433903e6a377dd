/**
 * `skill-up run [path]`: load → plan → run → grade → report, with a live progress display,
 * a crash-safe journal, and Ctrl-C handling that stops the engines and still writes reports.
 */
import { resolve as resolvePath } from 'node:path';
import type { EngineConfig } from '../config/types.js';
import type { Job, PlanOptions } from '../plan/plan.js';
import { parseShard, type ShardRecord } from '../plan/shard.js';
import { dryRunCost } from '../run/extras.js';
import { configureJudgeEngines } from '../run/grader-engines.js';
import { fitParallelism } from '../run/limits.js';
import { checkResumeSuite, eventLogTarget, loadResumeRun } from '../run/log.js';
import { loadScripts } from '../run/model.js';
import { iterationTarget } from '../run/output.js';
import { planPower } from '../run/plan-power.js';
import { planRun } from '../run/plan-run.js';
import { checkPrevious, runDecisionConfig } from '../run/previous.js';
import type { ResumeState } from '../run/resume.js';
import { loadRunSuite, prepareSpawning, runEngines, runLocation } from '../run/setup.js';
import type { RunRecord, RunSuiteOptions } from '../run/suite.js';
import type { GateOverrides } from '../gate/index.js';
import { intFlag, listFlag, numberFlag, parse, UsageError } from '../util/args.js';
import { printWarnings } from './diagnostics.js';
import { throwIfStrict } from '../config/diagnostics.js';
import { readAlibabaFlags } from './alibaba-flags.js';
import { formatsFlag, maxCostFlag } from './run-extras.js';

// What only a real run needs (the driver, the journal, the reports, the engines' modules) is
// imported below, after the dry-run exit: `run --dry-run` loads none of it (issue 13).

export const RUN_HELP = `Usage: skill-up run [path] [options]

Runs a skill's eval suite: every case, in a fresh workspace, on a real agent engine,
graded by the suite's judges. [path] is an eval.yaml, a skill folder holding
evals/eval.yaml, or omitted (walks up from the current folder to SKILL.md + evals/).

Options:
  --case <glob>            run only cases whose id matches (repeatable)
  --exclude-case <glob>    skip cases whose id matches (repeatable; wins over --case)
  --tag <tag>              run only cases with this tag (repeatable)
  --trigger-only           run only the trigger cases (\`should_trigger\`, eval.yaml \`triggers.file\`):
                           precision, recall, F1 and accuracy of the skill's activation, per engine;
                           an error (exit 2) when the suite has none
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
  --model <name>           model name for every engine of the run (overrides engine.model.name),
                           also an agent_judge's \`engine: <name of a suite engine>\` (an inline
                           judge engine map keeps its model; judge.model still applies last)
  --model-script <file>    every engine of the run talks to skill-up's scripted model with this rule
                           file (engine.model provider: scripted, script: <file>), and so does every
                           agent_judge grader (the job's engine, a named suite engine, an inline
                           engine map): offline runs, e.g. of --auto suites
  -v, -vv                  more output on stderr: -v each engine command line and every job's
                           assertions and reason; -vv also the engines' stderr, line by line
  --auto                   without an eval.yaml, run the skill's Anthropic evals/evals.json,
                           converted in memory (nothing written; see skill-up import)
  --strict                 unknown SKILL.md fields are errors (exit 2), as in skill-up validate --strict
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
  --min-trigger-precision <θ>  trigger precision to reach per engine (0.9 or 90%; Wilson interval)
  --min-trigger-recall <θ>     trigger recall to reach per engine (0.9 or 90%; Wilson interval)
  --max-tool-loop-rate <r>     highest share of with_skill jobs with a tool loop (Wilson interval over jobs)
  --max-silent-failure-rate <r>  highest share of with_skill jobs with a silent failure
  --min-claims-verified-rate <θ> lowest share of claiming with_skill jobs whose claims all held

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
  'trigger-only': { type: 'boolean' },
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
  'model-script': { type: 'string' },
  github: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  auto: { type: 'boolean' },
  strict: { type: 'boolean' },
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
  'min-trigger-precision': { type: 'string' },
  'min-trigger-recall': { type: 'string' },
  'max-tool-loop-rate': { type: 'string' },
  'max-silent-failure-rate': { type: 'string' },
  'min-claims-verified-rate': { type: 'string' },
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
  const notice = (line: string) => process.stderr.write(`${line}\n`);
  // alibaba/skill-up's -v/-vv, its case-filter names and the flags refused here (cli/alibaba-flags.ts).
  const alibaba = readAlibabaFlags(argv);
  const parsed = parse(alibaba.argv, OPTIONS);
  let values = parsed.values;
  const positionals = parsed.positionals;
  if (values.help) {
    process.stdout.write(RUN_HELP);
    return none(0);
  }
  if (positionals.length > 1) throw new UsageError(`run takes one path, got ${positionals.length}: ${positionals.join(' ')}`);
  // --resume <dir>: the plan and flags become the journal's (src/run/log.ts, src/run/resume.ts).
  let resume: ResumeState | undefined;
  if (values.resume === undefined) {
    if (values.force) throw new UsageError('--force only applies to --resume (it continues a run whose suite changed since it started)');
  } else {
    if (values.iteration !== undefined) throw new UsageError('--resume and --iteration conflict: --resume continues one iteration folder, --iteration N runs iteration-1..N afresh');
    if (values.resume.trim() === '') throw new UsageError('--resume needs the iteration folder of an interrupted run (e.g. my-skill-workspace/iteration-3)');
    const resumed = await loadResumeRun(values.resume, values);
    resume = resumed.state;
    // The journal's flags: the parser's own kinds (mergeFlags keeps each flag's stored value).
    values = resumed.flags;
    if (positionals.length === 0) positionals.push(resume.header.target);
  }
  const trials = intFlag('trials', values.trials, 1, 1000);
  const parallelismFlag = intFlag('parallelism', values.parallelism, 1, 256);
  const iterations = intFlag('iteration', values.iteration, 0, 100) ?? 0;
  const formats = formatsFlag(values.format);
  const maxCost = maxCostFlag(values['max-cost']);
  if (values['no-delete']) values['keep-workspaces'] = true;
  const keepWorkspaces = Boolean(values['keep-workspaces']);
  const shardSpec = values.shard !== undefined ? parseShard(values.shard) : undefined;
  const { suite: loaded, warnings } = await loadRunSuite(positionals[0], Boolean(values.auto), notice);
  if (values.strict) throwIfStrict(warnings);
  printWarnings(warnings);
  checkResumeSuite(resume, loaded);
  // --engine and --model choose the run's engines; the suite itself is left as loaded.
  const engines = withModelScript(runEngines(loaded, values.engine !== undefined ? listFlag(values.engine) : undefined, values.model), values['model-script']);
  // An agent_judge's engine is configured as the run's are: one named from the suite's engines
  // gets --model and --model-script, an inline one --model-script only (it names its own model).
  const suite = configureJudgeEngines(loaded, {
    suite: (e) => withModelScript(runEngines({ ...loaded, engines: [e] }, undefined, values.model), values['model-script'])[0]!,
    inline: (e) => withModelScript([e], values['model-script'])[0]!,
  });
  if (values.baseline && values['no-baseline']) throw new UsageError('--baseline and --no-baseline contradict each other: give one');
  const baseline = Boolean(values.baseline) || (suite.benchmark.enabled && !values['no-baseline']);
  const decision = await runDecisionConfig(gateFlags(values), suite, engines, baseline);
  const planOptions: PlanOptions = {
    cases: values.case,
    excludeCases: values['exclude-case'],
    tags: values.tag,
    trials,
    baseline: values.baseline,
    ...(values['trigger-only'] ? { triggerOnly: true } : {}),
  };
  // --shard: whole cases of the selected ones (src/plan/shard.ts), whatever the engines.
  const { fullPlan, jobs, shard } = planRun(suite, engines, planOptions, { baseline, ...(shardSpec ? { shard: shardSpec } : {}) });
  if (!values['dry-run']) prepareSpawning(jobs.length * Math.max(1, iterations));
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
  const { skillName, outputRoot } = await runLocation(suite, values['output-dir']);
  const eventLog = eventLogTarget(values['event-log'], outputRoot, iterations, resume, suite.skillDir);
  // A shard is checked as the whole plan: the merged run is what the no_regression gate is for.
  checkPrevious(decision, fullPlan, skillName, outputRoot, iterations, notice);
  if (values['dry-run']) {
    printPlan(engines, jobs, parallelism, shard);
    // A shard's power is the merged run's: the table is for the whole plan.
    process.stdout.write(await planPower(fullPlan, baseline, outputRoot, decision.alpha));
    process.stdout.write(await dryRunCost(engines, jobs, outputRoot, maxCost));
    return none(0);
  }
  const [{ combineExitCodes, prepareRun, runSuite }, { GraderEngineUnavailable }, { suiteDigest }, { engineNames, prepareExtras }, { closeEventLog, openEventLog, prepareRunLog }, { printRecord, printStability }] = await Promise.all([
    import('../run/suite.js'),
    import('../run/grader.js'),
    import('../config/hash.js'),
    import('../run/extras.js'),
    import('../run/log.js'),
    import('./run-print.js'),
  ]);
  let prepared;
  try {
    prepared = await prepareRun(suite, engines, outputRoot);
  } catch (e) {
    // A grader engine that cannot run would error every job it grades, after its agent ran: stop
    // now. So does a Docker runtime without its daemon or image: nothing runs on this machine instead.
    if (!(e instanceof GraderEngineUnavailable) && (e as Error).name !== 'DockerUnavailable') throw e;
    process.stderr.write(`error: ${(e as Error).message}\n`);
    return none(3);
  }
  const { hash, manifest } = await suiteDigest(suite.skillDir, [outputRoot]);
  const log = await prepareRunLog({ suite, engines, outputRoot, suiteHash: hash, manifest, flags: values, positional: positionals[0], planOptions, shard, jobs, resume, force: Boolean(values.force), notice });
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
    keepWorkspaces,
    extras,
    log,
    runOptions: { parallelism, trials: trials ?? null, baseline, argv },
  });
  const names = engineNames(engines);
  const iterate = async (target: RunSuiteOptions['target']): Promise<RunRecord> => {
    const record = await runSuite(suite, options(target));
    await printRecord(record, names, { keepWorkspaces, github: values.github, cases: suite.cases });
    return record;
  };
  openEventLog(log, eventLog, { skillName, engines, jobs: jobs.length, iterations });
  if (iterations === 0) {
    const target = resume ? { dir: resume.dir, iteration: resume.header.iteration } : await iterationTarget(outputRoot, 0);
    const r = await iterate(target);
    closeEventLog(log, [r], r.exitCode);
    return { exitCode: r.exitCode, resultFile: `${target.dir}/result.json`, iterationDir: target.dir };
  }
  const outcomes: RunRecord[] = [];
  for (let n = 1; n <= iterations; n++) {
    if (extras.budget?.stopped) {
      process.stderr.write(`iteration ${n}${n < iterations ? `..${iterations}` : ''} not run: ${extras.budget.reason}\n`);
      break;
    }
    const target = await iterationTarget(outputRoot, n);
    if (iterations > 1) process.stderr.write(`\n== iteration ${n} of ${iterations}\n`);
    const r = await iterate(target);
    outcomes.push(r);
    if (r.interrupted) break;
  }
  const exitCode = combineExitCodes(outcomes.map((o) => o.exitCode));
  if (iterations > 1) printStability(outcomes, names, exitCode);
  const last = outcomes[outcomes.length - 1]!;
  closeEventLog(log, outcomes, exitCode);
  return { exitCode, resultFile: `${last.dir}/result.json`, iterationDir: last.dir };
}

/**
 * `--model-script <file>`: copies of `engines` whose model is skill-up's scripted model with that
 * rule file (resolved against the current folder; checked with the other scripts, exit 2 when
 * missing or invalid). The model name (`--model`) is kept. An `--auto` suite has no model block
 * of its own, so this is how it runs offline. @throws UsageError for an empty value
 */
function withModelScript(engines: EngineConfig[], file: string | undefined): EngineConfig[] {
  if (file === undefined) return engines;
  if (file.trim() === '') throw new UsageError('--model-script needs the scripted model\'s rule file (e.g. --model-script evals/model.yaml)');
  const script = resolvePath(file);
  return engines.map((e) => ({ ...e, model: { ...e.model, provider: 'scripted', script } }));
}

/**
 * The gate flags as numbers (rates as fractions, uplift and margin in points); what they
 * override in eval.yaml's `gates:` is the gate stage's (src/gate/config.ts). @throws UsageError
 */
function gateFlags(values: { [k in 'alpha' | 'min-pass-rate' | 'min-uplift' | 'max-error-rate' | 'margin' | 'on-inconclusive' | 'no-regression' | 'min-trigger-precision' | 'min-trigger-recall' | 'max-tool-loop-rate' | 'max-silent-failure-rate' | 'min-claims-verified-rate']?: string } & { 'errors-as-failures'?: boolean }): GateOverrides {
  const out: GateOverrides = {
    alpha: numberFlag('alpha', values.alpha, 1e-6, 0.5, 'a significance level above 0 and at most 0.5 (e.g. 0.05)'),
    minPassRate: numberFlag('min-pass-rate', values['min-pass-rate'], 0, 1, 'a pass rate from 0 to 1 (e.g. 0.8 or 80%)', true),
    minUplift: numberFlag('min-uplift', values['min-uplift'], -100, 100, 'a number of points from -100 to 100 (e.g. 10 for +10 points)'),
    maxErrorRate: numberFlag('max-error-rate', values['max-error-rate'], 0, 1, 'a share of trials from 0 to 1 (e.g. 0.05 or 5%)', true),
    margin: numberFlag('margin', values.margin, 0, 100, 'a number of points from 0 to 100 (e.g. 10)'),
    errorsAsFailures: Boolean(values['errors-as-failures']),
    noRegression: values['no-regression'],
    minTriggerPrecision: numberFlag('min-trigger-precision', values['min-trigger-precision'], 0, 1, 'a precision from 0 to 1 (e.g. 0.9 or 90%)', true),
    minTriggerRecall: numberFlag('min-trigger-recall', values['min-trigger-recall'], 0, 1, 'a recall from 0 to 1 (e.g. 0.9 or 90%)', true),
    maxToolLoopRate: numberFlag('max-tool-loop-rate', values['max-tool-loop-rate'], 0, 1, 'a rate from 0 to 1 (e.g. 0.1 or 10%)', true),
    maxSilentFailureRate: numberFlag('max-silent-failure-rate', values['max-silent-failure-rate'], 0, 1, 'a rate from 0 to 1 (e.g. 0.1 or 10%)', true),
    minClaimsVerifiedRate: numberFlag('min-claims-verified-rate', values['min-claims-verified-rate'], 0, 1, 'a rate from 0 to 1 (e.g. 0.9 or 90%)', true),
  };
  const on = values['on-inconclusive'];
  if (on !== undefined && on !== 'pass' && on !== 'fail') throw new UsageError(`--on-inconclusive must be \`pass\` or \`fail\`, got \`${on}\``);
  if (on) out.onInconclusive = on;
  return out;
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
