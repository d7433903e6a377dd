/**
 * The pipeline driver: plan → engines → run → statistics and gates → reports, for one suite.
 * `prepareRun` resolves once per invocation what every iteration shares (the engines'
 * adapters and versions, the skills to install, the scripted model's scripts); `runSuite`
 * runs one iteration into its folder: the scripted model server, SIGINT/SIGTERM, the journal,
 * the jobs (each job folder's grading.json written by the report listener as the job ends),
 * the decision (computed once, here) and the reports. The CLI (src/cli/run.ts) parses the
 * flags into these options and prints the {@link RunRecord}.
 */
import { setMaxListeners } from 'node:events';
import { randomBytes } from 'node:crypto';
import { findEngineDefinition } from '../../engines/index.js';
import { basename, isAbsolute, join, posix, relative } from 'node:path';
import type { DockerRun } from '../runtime/docker/runtime.js';
import { ConfigError } from '../config/diagnostics.js';
import { missingVersionError } from '../config/engines.js';
import type { EngineConfig, ReportFormat, Suite } from '../config/types.js';
import { partialDecision } from '../cost/partial.js';
import { afterNextProcessStart, killAllGroups, prepareProcesses } from '../engine/proc.js';
import { getAdapter, unavailableAdapter } from '../engine/registry.js';
import { EngineUnavailable, type EngineAdapter } from '../engine/types.js';
import { decide, type Decision, type DecisionConfig } from '../gate/index.js';
import type { ModelScript } from '../model/types.js';
import type { Job } from '../plan/plan.js';
import type { ShardRecord } from '../plan/shard.js';
import type { ResultDoc } from '../report/result-json.js';
import { trialsOf } from '../report/result-json.js';
import { prefetchReportModules, writeJobFiles, writeReports, type WriteResult } from '../report/write.js';
import { lintSkill } from '../skill/lint.js';
import { planSkillInstall, SkillInstallError } from '../skill/install.js';
import { RemovalQueue } from '../runtime/removal.js';
import { VERSION } from '../util/version.js';
import { finishIteration, jobHooks, type RunExtras } from './extras.js';
import type { ResolvedSkill } from './job.js';
import { graderEngines } from './grader-engines.js';
import { preflightGraderEngines } from './grader.js';
import { requiredEnvProblems } from './mcp.js';
import { openJournal, resumeOptions, type RunLog } from './log.js';
import { loadScripts, startScriptedModel } from './model.js';
import { createProgress } from './progress.js';
import { inPlanOrder } from './resume.js';
import { executeJobs, type ResultListener } from './run.js';
import type { JobResult } from './types.js';

/** A line for the console's status stream (stderr), without its newline. */
export type Notice = (line: string) => void;

const toStderr: Notice = (line) => process.stderr.write(`${line}\n`);

// planRun lives in ./plan-run.ts (a dry run plans without loading this module); re-exported for callers of the driver.
export { planRun } from './plan-run.js';

/** What every iteration of an invocation shares, resolved once by {@link prepareRun}. */
export interface PreparedRun {
  /** Engine name → its adapter; an engine that is not available gets one whose every job is an `error`. */
  adapters: Map<string, EngineAdapter>;
  /** Engine name → the version its check found (undefined when it has no check). */
  versions: Map<string, string | undefined>;
  skills: ResolvedSkill[];
  /** Engine name → the scripted model's script, for engines using `provider: scripted`. */
  scripts: Map<string, ModelScript>;
  /** `environment.type: docker`: the daemon, image and Node checked before the first job. */
  docker?: DockerRun;
}

/**
 * Gets the adapters of `engines` (checking each engine once), names each skill and checks its
 * file selection. An unavailable engine is reported through `notice` and its jobs become
 * errors; a pinned version npm does not have is a config error. The agent_judges' own engines
 * are checked too (src/run/grader.ts preflightGraderEngines). @throws ConfigError,
 * GraderEngineUnavailable when a grader engine cannot run
 */
export async function prepareRun(suite: Suite, engines: EngineConfig[], outputRoot: string, notice: Notice = toStderr): Promise<PreparedRun> {
  // Jobs will run: the spawn helper starts now, alongside the rest of the preparation.
  prepareProcesses();
  const skills = await resolveSkills(suite, outputRoot);
  // A grader engine of an agent_judge may be the run's only scripted engine: its script serves the run then.
  const scripts = await loadScripts([...engines, ...graderEngines(suite).filter((g) => !engines.some((e) => e.name === g.name))]);
  const adapters = new Map<string, EngineAdapter>();
  const versions = new Map<string, string | undefined>();
  for (const e of engines) {
    try {
      const adapter = await getAdapter(e, suite);
      versions.set(e.name, adapter.check ? (await adapter.check(e)).version : undefined);
      adapters.set(e.name, adapter);
    } catch (err) {
      if (!(err instanceof EngineUnavailable)) throw err;
      // A pinned version npm does not have is a mistake in eval.yaml: exit 2 at its line, before any job.
      const badPin = missingVersionError(suite.evalFile, e, err.message);
      if (badPin) throw badPin;
      notice(`error: ${err.message}`);
      adapters.set(e.name, unavailableAdapter(e.name, err.message));
    }
  }
  // A server's missing `required_env`, once before any job: each job offering it is then an error naming it (src/run/mcp.ts).
  for (const problem of new Set(suite.cases.flatMap((c) => requiredEnvProblems(c.mcpServers ?? [])))) notice(`error: ${problem}`);
  // The agent_judges' own engines, before any agent runs: a bad pin is exit 2, an engine that cannot run exit 3 (GraderEngineUnavailable).
  await preflightGraderEngines(suite);
  // The daemon, the image and its Node, before any job: a run that cannot have its containers
  // stops here (DockerUnavailable, exit 3), never falling back to this machine.
  const settings = suite.environment.type === 'docker' ? suite.environment.docker : undefined;
  if (!settings) return { adapters, versions, skills, scripts };
  const { prepareDockerRun } = await import('../runtime/docker/runtime.js');
  const runId = `${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const needs = engines.map((e) => ({ engine: e.name, commands: findEngineDefinition(e.name)?.imageCommands ?? [] }));
  const docker = await prepareDockerRun(settings, process.env, runId, scripts.size > 0, needs);
  const orphans = docker.orphansRemoved ? `; removed ${docker.orphansRemoved} container(s) a killed run left` : '';
  notice(`docker: ${docker.connection.engine} ${docker.connection.version} at ${docker.connection.endpoint}, image ${settings.image} (node ${docker.nodeVersion}), network ${settings.network}${orphans}`);
  return { adapters, versions, skills, scripts, docker };
}

/**
 * Names each skill (its SKILL.md name, else its folder's) and checks its file selection once
 * for the whole run; an output folder inside a skill is never installed with it.
 * @throws ConfigError for a selection that cannot be installed.
 */
async function resolveSkills(suite: Suite, outputRoot: string): Promise<ResolvedSkill[]> {
  const out: ResolvedSkill[] = [];
  for (const s of suite.skills) {
    const info = await lintSkill(s.path);
    // An output folder inside the skill must never be installed: the agent would read past gradings.
    const inside = relative(s.path, outputRoot);
    const exclude = inside && !inside.startsWith('..') && !isAbsolute(inside) ? [...s.exclude, `${inside}/**`] : s.exclude;
    try {
      // Read once for the whole run: every with_skill job installs this snapshot (src/skill/install.ts).
      const plan = await planSkillInstall({ skillDir: s.path, include: s.include, exclude, snapshot: true });
      // A target with a `/` is a workspace-relative folder; a bare one, the folder name under the engine's skill folder.
      const dir = s.target?.includes('/') ? posix.normalize(s.target).replace(/\/+$/, '') : undefined;
      out.push({ name: (dir ? undefined : s.target) ?? info.name ?? basename(s.path), ...(dir ? { dir } : {}), plan });
    } catch (e) {
      if (!(e instanceof SkillInstallError)) throw e;
      throw new ConfigError([{ file: s.path, line: 0, col: 0, path: 'skills', message: e.message, severity: 'error' }]);
    }
  }
  return out;
}

/** Everything {@link runSuite} needs besides the suite. */
export interface RunSuiteOptions {
  /** The run's engines (`--engine`, `--model` applied); the jobs' engines are among them. */
  engines: EngineConfig[];
  /** The jobs of this run, in plan order (planRun). */
  jobs: Job[];
  /** The iteration folder (exists) and its number. */
  target: { dir: string; iteration: number };
  /** 1..256 jobs at once. */
  parallelism: number;
  /** The gates (src/gate/decide.ts). */
  decision: DecisionConfig;
  /** Adapters, versions, skills and scripts (prepareRun). */
  prepared: PreparedRun;
  skillName: string;
  /** config/hash.ts fingerprint of the skill folder. */
  suiteHash: string;
  shard?: ShardRecord;
  keepWorkspaces: boolean;
  /** `--format`, the budget, verbosity (src/run/extras.ts). */
  extras: RunExtras;
  /** The journal header's plan, a resume, the event log (src/run/log.ts). */
  log: RunLog;
  /** result.json `options`: parallelism, trials (null: the suite's), baseline, argv. */
  runOptions: { parallelism: number; trials: number | null; baseline: boolean; argv: string[] };
  /** Where status lines go (default stderr). */
  notice?: Notice;
}

/** What one iteration of a run did: everything the console and calling commands show. */
export interface RunRecord {
  iteration: number;
  /** Absolute path of the iteration folder. */
  dir: string;
  /** The iteration's exit code: 130/143 interrupted, 3 a report not written, else the decision's. */
  exitCode: number;
  interrupted: boolean;
  /** Statistics and gates, computed once from `results` (adjusted for jobs not run); result.json holds the same. */
  decision: Decision;
  /** The finished jobs in plan order, a resume's kept ones included. */
  results: JobResult[];
  /** Jobs planned for this iteration. */
  planned: number;
  /** For the summary: cost lines, and why jobs were not run when it was not an interrupt. */
  costLines: string[];
  notRunReason?: string;
  /** The reports written (result.json's document among them); undefined when the folder refused result.json. */
  reports?: WriteResult & { doc: ResultDoc };
  /** Why no report could be written (disk full, folder gone), when `reports` is undefined. */
  reportError?: string;
}

/**
 * Runs every job of `options.jobs` once into `options.target.dir` and writes the reports.
 * SIGINT/SIGTERM stop the running engines (the run is then `interrupted`, exit code 130/143,
 * and the reports of the finished jobs are still written); a second one exits at once.
 * Job failures are results, never throws; @throws only for skill-up's own set-up failures
 * (the journal cannot be created, a report builder bug).
 */
export async function runSuite(suite: Suite, options: RunSuiteOptions): Promise<RunRecord> {
  const { jobs, parallelism, log, extras, prepared, engines } = options;
  const { dir, iteration } = options.target;
  const notice = options.notice ?? toStderr;
  const startedAt = log.resume ? new Date(log.resume.header.startedAt) : new Date();
  // A resume appends to the run's journal and runs only its errored and unfinished jobs.
  const { journal, kept, toRun } = await openJournal(
    log,
    { suite, engines, skillName: options.skillName, suiteHash: options.suiteHash, jobs, decision: options.decision, options: options.runOptions, versions: prepared.versions },
    dir,
    iteration,
    startedAt,
    notice,
  );
  notice(`skill-up ${VERSION}: ${jobs.length} job(s) of ${new Set(jobs.map((j) => j.case.id)).size} case(s) → ${dir}`);

  const abort = new AbortController();
  // Each of the `parallelism` workers holds at most two listeners on it at a time (its running
  // job's, src/run/job.ts, and one while it waits for budget admission or a retry's backoff,
  // src/run/run.ts / src/cost/budget.ts), each removed when done; a few spare for the run's own.
  // So the bound is real: a listener that leaks still raises MaxListenersExceededWarning.
  setMaxListeners(2 * parallelism + 8, abort.signal);
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
  const verbose = extras.verbose;
  const progress = verbose ? verbose.progress(createProgress(toRun.length)) : createProgress(toRun.length);
  // --event-log: case_started/case_completed around the display, job/turn/judge events from the jobs.
  const sinks = log.events?.iteration(iteration, jobs.length, progress);
  verbose?.install();
  extras.budget?.beginIteration();
  // The report listener: each job folder's grading.json, written once, as the job ends.
  const reportListener: ResultListener = { recorded: (_job, result) => writeJobFiles(dir, result) };
  // Finished jobs' workspaces, removed in the background once journaled; a failure is a warning line.
  const removals = new RemovalQueue({ onError: (f) => notice(`warning: could not remove the workspace ${f.path}: ${f.message}`) });
  let results: JobResult[];
  // The last workspaces' removal, which goes on while the reports are written; awaited before runSuite returns.
  let removed: Promise<void> | undefined;
  let jobsEnded = false;
  // The scripted model server's close, awaited before runSuite returns.
  let modelClosed: Promise<void> | undefined;
  try {
    const model = await startScriptedModel(prepared.scripts, dir, prepared.docker?.socketDir ? join(prepared.docker.socketDir, 'model.sock') : undefined);
    if (model) notice(`scripted model server on ${model.url} (exchanges logged per job)`);
    // Loaded while the first engine works: before its spawn they would delay it.
    afterNextProcessStart(() => prefetchReportModules(extras.formats ?? reportFormats(suite.report.formats, [])));
    try {
      results = await executeJobs({
        jobs: toRun,
        parallelism,
        leaveRemovals: true,
        journal,
        progress: sinks?.progress ?? progress,
        hooks: jobHooks(extras),
        listeners: [reportListener],
        env: {
          suite,
          engines,
          adapters: prepared.adapters,
          skills: prepared.skills,
          iterationDir: dir,
          keepWorkspaces: options.keepWorkspaces,
          // The source adapters pick an allow-list from (src/engine/env.ts); no process gets it whole.
          baseEnv: { ...process.env },
          removals,
          modelBaseUrl: model?.url,
          ...(prepared.docker ? { docker: prepared.docker } : {}),
          signal: abort.signal,
          ...(sinks ? { events: sinks.jobs } : {}),
        },
      });
      jobsEnded = true;
    } finally {
      // Its last exchange logs are flushed while the reports are written (no report reads them).
      modelClosed = model?.close();
      // Handled here so an early failure is no unhandled rejection; awaited (and thrown) below.
      modelClosed?.catch(() => undefined);
    }
  } finally {
    removed = removals.drain();
    // Thrown out of the jobs: nothing else will wait for the removals nor the server's close.
    if (!jobsEnded) await Promise.all([removed, modelClosed]);
    // Each job removes its container; one an interrupt left half-made goes here.
    await prepared.docker?.sweep();
    verbose?.uninstall();
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await journal.close();
    log.events?.iterationCompleted(iteration);
  }
  // A resume's result.json holds the kept and the new results: the jobs of an uninterrupted run.
  results = inPlanOrder(jobs, kept, results);
  const interrupted = abort.signal.aborted;
  // The statistics and gates, once: result.json and the console both read this decision.
  // Priced jobs, and the gates of a run --max-cost cut short (src/run/extras.ts, cost/partial.ts).
  const costed = finishIteration(engines, extras, decide(trialsOf(results), options.decision), jobs.length, results);
  // An interrupted run's gates cannot pass on the jobs it never ran.
  const done = new Set(results.map((r) => r.id));
  const decision = interrupted ? partialDecision(costed.decision, jobs.filter((j) => !done.has(j.id)), 'the run was interrupted') : costed.decision;
  // 128 + the signal's number, as shells report it: 130 for SIGINT, 143 for SIGTERM.
  const exitCode = interrupted ? (stoppedBy === 'SIGTERM' ? 143 : 130) : decision.exitCode;
  const endedAt = new Date();
  const record: RunRecord = {
    iteration,
    dir,
    exitCode,
    interrupted,
    decision,
    results,
    planned: jobs.length,
    costLines: costed.lines,
    ...(costed.notRunReason ? { notRunReason: costed.notRunReason } : {}),
  };
  try {
    record.reports = await writeReports(
      dir,
      {
        tool: { name: 'skill-up', version: VERSION },
        skill: { name: options.skillName, path: suite.skillDir },
        evalFile: suite.evalFile,
        suiteHash: options.suiteHash,
        ...(options.shard ? { shard: options.shard } : {}),
        iteration,
        startedAt: startedAt.toISOString(),
        endedAt: endedAt.toISOString(),
        durationMs: endedAt.getTime() - startedAt.getTime(),
        interrupted,
        notRun: jobs.length - results.length,
        ...(costed.notRunReason ? { notRunReason: costed.notRunReason } : {}),
        cost: costed.cost,
        engines: engines.map((e) => ({ ...e, resolvedVersion: prepared.versions.get(e.name) })),
        options: { ...options.runOptions, ...resumeOptions(log, options.runOptions.argv) },
        exitCode,
        decision,
      },
      results,
      extras.formats ?? reportFormats(suite.report.formats, results),
      // grading.json per job is the report listener's, written as each job ended.
      { jobFiles: false },
    );
  } catch (e) {
    // Disk full, folder gone or made read-only during the run: exit 3, no stack trace.
    if (typeof (e as NodeJS.ErrnoException).code !== 'string') throw e;
    record.reportError = `cannot write the reports in ${dir}: ${(e as Error).message}`;
    if (!interrupted) record.exitCode = 3;
    await Promise.all([removed, modelClosed]);
    return record;
  }
  // A report that could not be written (disk full, …) is exit 3, after 2 and 130/143 (README "Exit codes").
  if (record.reports.skipped.length && !interrupted) record.exitCode = 3;
  // Nothing is left half removed when the run returns (RemovalQueue.drain never rejects), and
  // every exchange is logged.
  await Promise.all([removed, modelClosed]);
  return record;
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

/** Exit code of several iterations: interrupted first, then 3 > 1 > 4 > 0. */
export function combineExitCodes(codes: number[]): number {
  for (const c of [143, 130, 3, 1, 4]) if (codes.includes(c)) return c;
  return 0;
}
