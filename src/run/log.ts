/**
 * The journal side of a run (issue 9, items 5 and 6): what one invocation records (its id,
 * plan, flags, a resume's split of the plan, the `--event-log`), the resumed run it continues,
 * and the iteration's journal.jsonl, opened new or reopened for `--resume` (formats in
 * src/run/resume.ts, src/run/journal.ts and src/run/events.ts). The flags are read in
 * src/cli/run.ts.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import type { EngineConfig, Suite } from '../config/types.js';
import type { DecisionConfig } from '../gate/index.js';
import type { Job, PlanOptions } from '../plan/plan.js';
import { UsageError } from '../util/args.js';
import { checkEventLogPath, EventLog, EventLogError, type ForbiddenPath } from './events.js';
import { Journal } from './journal.js';
import { JOURNAL_FORMAT, clearJobDirs, describeSuiteChange, loadResume, mergeFlags, partitionJobs, ResumeError, storedFlags, suiteManifest, type ResumeState, type RunHeader } from './resume.js';
import type { JobResult } from './types.js';
import { VERSION } from '../util/version.js';

const shown = (p: string) => relative(process.cwd(), p) || p;

/** The journal and event-log side of one invocation of `run`. */
export interface RunLog {
  /** The invocation id: the journal header's `runId`, the event log's `invocation_id`. */
  runId: string;
  /** What the header records of the plan: the plan options, the engines, the shard. */
  plan: Record<string, unknown>;
  flags: Record<string, unknown>;
  target: string;
  manifest?: Record<string, string>;
  resume?: ResumeState;
  /** A resume's split of the plan: finished jobs kept, the others to run. */
  split?: ReturnType<typeof partitionJobs>;
  events?: EventLog;
}

/** Everything `openJournal` writes into a new header. */
export interface HeaderParts {
  suite: Suite;
  /** The run's engines (`--engine`, `--model` applied). */
  engines: EngineConfig[];
  skillName: string;
  suiteHash: string;
  jobs: Job[];
  decision: DecisionConfig;
  options: Record<string, unknown>;
  versions: Map<string, string | undefined>;
}

/**
 * Opens the iteration's journal: a new one with the full header, or for a resume the
 * existing one (a torn last line cut off) with a `resume` line, after emptying the folders of
 * the jobs that run again. Returns the journal, the kept results and the jobs to run.
 */
export async function openJournal(log: RunLog, parts: HeaderParts, dir: string, iteration: number, startedAt: Date, notice: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<{ journal: Journal; kept: JobResult[]; toRun: Job[] }> {
  const file = join(dir, 'journal.jsonl');
  const { suite, jobs } = parts;
  if (!log.resume || !log.split) {
    const header: RunHeader = {
      type: 'run',
      format: JOURNAL_FORMAT,
      startedAt: startedAt.toISOString(),
      runId: log.runId,
      tool: { name: 'skill-up', version: VERSION },
      skill: { name: parts.skillName, path: suite.skillDir },
      evalFile: suite.evalFile,
      suiteHash: parts.suiteHash,
      ...(log.manifest ? { manifest: log.manifest } : {}),
      iteration,
      jobs: jobs.length,
      plan: log.plan,
      flags: log.flags,
      target: log.target,
      cwd: process.cwd(),
      engines: parts.engines.map((e) => ({
        name: e.name,
        displayName: e.displayName,
        ...(e.version ? { version: e.version } : {}),
        ...(parts.versions.get(e.name) ? { resolvedVersion: parts.versions.get(e.name) } : {}),
        model: { ...(e.model.provider ? { provider: e.model.provider } : {}), ...(e.model.name ? { name: e.model.name } : {}) },
      })),
      options: parts.options,
      decision: parts.decision,
    };
    return { journal: await Journal.create(file, header), kept: [], toRun: jobs };
  }
  const { kept, toRun, errored, interrupted } = log.split;
  const forced = parts.suiteHash !== log.resume.suiteHash;
  await clearJobDirs(dir, toRun);
  const journal = await Journal.reopen(file);
  await journal.write({
    type: 'resume',
    at: new Date().toISOString(),
    runId: log.runId,
    suiteHash: parts.suiteHash,
    ...(forced ? { forced: true, ...(log.manifest ? { manifest: log.manifest } : {}) } : {}),
    jobs: jobs.length,
    kept: kept.length,
    toRun: toRun.length,
  });
  const torn = log.resume.tornTail ? '; the torn last line of journal.jsonl was dropped' : log.resume.badLines ? `; ${log.resume.badLines} unreadable journal line(s) skipped` : '';
  notice(`resuming ${shown(dir)}: ${kept.length} of ${jobs.length} job(s) finished and kept, ${toRun.length} to run (${errored} errored, ${interrupted ? `${interrupted} stopped by the interrupt, ` : ''}${toRun.length - errored - interrupted} unfinished)${torn}`);
  return { journal, kept, toRun };
}

/** result.json `options` of a resumed run: the original command line, and how it was resumed. */
export function resumeOptions(log: RunLog | undefined, argv: string[]): Record<string, unknown> {
  if (!log?.resume || !log.split) return {};
  const h = log.resume.header;
  return {
    ...(Array.isArray(h.options?.argv) ? { argv: h.options.argv } : {}),
    resumed: { times: log.resume.resumes.length + 1, kept_jobs: log.split.kept.length, argv },
  };
}


/**
 * `--resume <dir>`: loads the folder's journal and merges the recorded run's flags with
 * `flags` (those given must agree, src/run/resume.ts `mergeFlags`; `--output-dir` becomes the
 * folder's parent). Returns the state and the flags the run goes on with.
 * @throws UsageError for a folder that cannot be resumed or a conflicting flag.
 */
export async function loadResumeRun(dir: string, flags: Record<string, unknown>): Promise<{ state: ResumeState; flags: Record<string, unknown> }> {
  try {
    const state = await loadResume(dir);
    return { state, flags: mergeFlags(state.header.flags, flags, { 'output-dir': dirname(state.dir) }) };
  } catch (e) {
    if (e instanceof ResumeError) throw new UsageError(e.message);
    throw e;
  }
}

/** A resume must load the same eval file. @throws UsageError */
export function checkResumeSuite(resume: ResumeState | undefined, suite: Suite): void {
  if (resume && resolve(suite.evalFile) !== resolve(resume.header.evalFile)) {
    throw new UsageError(`--resume ${shown(resume.dir)}: that run is of ${shown(resume.header.evalFile)}, not ${shown(suite.evalFile)}; give its path or none`);
  }
}

/**
 * Checks `--event-log` before anything runs: not the resumed run's journal or result.json,
 * nor inside a folder `--iteration N` empties, nor inside the skill. Returns the absolute path.
 * @throws UsageError
 */
export function eventLogTarget(file: string | undefined, outputRoot: string, iterations: number, resume?: ResumeState, skillDir?: string): string | undefined {
  if (file === undefined) return undefined;
  const forbidden: ForbiddenPath[] = [];
  // Inside the skill folder the log would be installed with the skill and change the suite hash.
  if (skillDir) forbidden.push({ path: skillDir, folder: true, why: `lies inside the skill folder ${shown(skillDir)} (it would be installed with the skill and change the suite); write it elsewhere` });
  for (let n = 1; n <= iterations; n++) {
    const dir = join(outputRoot, `iteration-${n}`);
    forbidden.push({ path: dir, folder: true, why: `lies inside ${shown(dir)}, which --iteration ${iterations} empties before it runs; write it elsewhere` });
  }
  if (resume) for (const f of ['journal.jsonl', 'result.json']) forbidden.push({ path: join(resume.dir, f), folder: false, why: `would overwrite the resumed run's ${f}` });
  try {
    return checkEventLogPath(file, forbidden);
  } catch (e) {
    if (e instanceof EventLogError) throw new UsageError(e.message);
    throw e;
  }
}

/**
 * The run log of this invocation: the manifest of the suite (for "what changed" on a later
 * resume), the header's plan and flags (`flags`: the command line's values, stored as
 * src/run/resume.ts `storedFlags` keeps them), the target, and for a resume the suite check
 * and the split of the plan. `force`: resume although the suite changed (said through `notice`).
 * @throws UsageError for a changed suite without `force`.
 */
export async function prepareRunLog(opts: {
  suite: Suite;
  /** The run's engines (`--engine`). */
  engines: EngineConfig[];
  outputRoot: string;
  suiteHash: string;
  /** The suite's manifest when the caller has it (config/hash.ts `suiteDigest`); read here otherwise. */
  manifest?: Record<string, string>;
  flags: Record<string, unknown>;
  /** The path the run was given (undefined: the suite's skill folder). */
  positional: string | undefined;
  planOptions: PlanOptions;
  shard?: unknown;
  jobs: Job[];
  resume?: ResumeState;
  force: boolean;
  notice: (line: string) => void;
}): Promise<RunLog> {
  const { suite, resume } = opts;
  const manifest = 'manifest' in opts ? opts.manifest : await suiteManifest(suite.skillDir, [opts.outputRoot]);
  const log: RunLog = {
    runId: randomUUID(),
    plan: { ...opts.planOptions, engines: opts.engines.map((e) => e.name), ...(opts.shard ? { shard: opts.shard } : {}) },
    flags: storedFlags(opts.flags),
    target: opts.positional ? resolve(opts.positional) : suite.skillDir,
    ...(manifest ? { manifest } : {}),
  };
  if (!resume) return log;
  if (opts.suiteHash !== resume.suiteHash) {
    const what = describeSuiteChange(resume.manifest, manifest) ?? `suite hash ${resume.suiteHash.slice(0, 19)}… is now ${opts.suiteHash.slice(0, 19)}…`;
    if (!opts.force) {
      throw new UsageError(
        `--resume ${shown(resume.dir)}: the suite changed since that run started (${what}), so finished and new jobs would measure different suites; ` +
          'restore it, start a new run without --resume, or add --force to keep the finished jobs anyway',
      );
    }
    opts.notice(`warning: --force: resuming although the suite changed (${what}); the kept jobs were measured on the earlier suite`);
  }
  log.resume = resume;
  log.split = partitionJobs(opts.jobs, resume.latest);
  return log;
}

/**
 * Opens `--event-log` `file` (now, just before the first job: a path that cannot be written is
 * a usage error, exit 2) and announces the run. An exit without {@link closeEventLog} (an
 * internal error, a second Ctrl-C) still writes `run_finished`.
 * @throws UsageError
 */
export function openEventLog(log: RunLog, file: string | undefined, opts: { skillName: string; engines: EngineConfig[]; jobs: number; iterations: number }): void {
  if (!file) return;
  let events: EventLog;
  try {
    events = EventLog.open(file, log.runId);
  } catch (e) {
    if (e instanceof EventLogError) throw new UsageError(e.message);
    throw e;
  }
  log.events = events;
  events.runStarted({
    skillName: opts.skillName,
    engines: opts.engines.map((e) => e.displayName),
    taskTotal: opts.jobs * Math.max(1, opts.iterations),
    iterationsTotal: Math.max(1, opts.iterations),
    version: VERSION,
    ...(log.resume ? { reused: log.split?.kept ?? [], resumedRunId: log.resume.header.runId } : {}),
  });
  events.executing();
  process.once('exit', (code) => {
    if (log.events) events.finish(code === 130 || code === 143 ? 'CANCELLED' : 'ERROR', code);
  });
}

/** `run_finished` after the last iteration: CANCELLED when one was interrupted, else COMPLETED. */
export function closeEventLog(log: RunLog, outcomes: { interrupted: boolean }[], exitCode: number): void {
  const events = log.events;
  if (!events) return;
  log.events = undefined;
  events.finish(outcomes.some((o) => o.interrupted) ? 'CANCELLED' : 'COMPLETED', exitCode);
}
