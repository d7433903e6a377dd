/**
 * The parts of `skill-up run` about the journal, `--resume`/`--force` and `--event-log`
 * (issue 9, items 5 and 6), kept here so cli/run.ts only calls them. The work itself is in
 * src/run/journal.ts, src/run/resume.ts and src/run/events.ts.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import type { EngineConfig, Suite } from '../config/types.js';
import type { Job, PlanOptions } from '../plan/plan.js';
import { EventLog, EventLogError, checkEventLogPath, type ForbiddenPath } from '../run/events.js';
import type { RunLog } from '../run/log.js';
import { ResumeError, describeSuiteChange, loadResume, mergeFlags, partitionJobs, storedFlags, suiteManifest, type ResumeState } from '../run/resume.js';
import { UsageError } from './args.js';
import { VERSION } from './version.js';

export type { RunLog };

const shown = (p: string) => relative(process.cwd(), p) || p;

/**
 * `--resume <dir>`: loads the folder's journal and makes `values` and `positionals` the
 * recorded run's (flags given must agree, see src/run/resume.ts `mergeFlags`).
 * @throws UsageError for a folder that cannot be resumed, a conflicting flag, or `--force` alone.
 */
export async function startResume(values: Record<string, unknown>, positionals: string[]): Promise<ResumeState | undefined> {
  if (values.resume === undefined) {
    if (values.force) throw new UsageError('--force only applies to --resume (it continues a run whose suite changed since it started)');
    return undefined;
  }
  if (values.iteration !== undefined) throw new UsageError('--resume and --iteration conflict: --resume continues one iteration folder, --iteration N runs iteration-1..N afresh');
  if (String(values.resume).trim() === '') throw new UsageError('--resume needs the iteration folder of an interrupted run (e.g. my-skill-workspace/iteration-3)');
  try {
    const state = await loadResume(String(values.resume));
    const merged = mergeFlags(state.header.flags, values, { 'output-dir': dirname(state.dir) });
    for (const k of Object.keys(values)) delete values[k];
    Object.assign(values, merged);
    if (positionals.length === 0) positionals.push(state.header.target);
    return state;
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
 * nor inside a folder `--iteration N` empties. @throws UsageError
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
 * resume), the header's plan and flags, and for a resume the suite check and the split of the
 * plan. @throws UsageError for a changed suite without `--force`.
 */
export async function prepareRunLog(opts: {
  suite: Suite;
  /** The run's engines (`--engine`). */
  engines: EngineConfig[];
  outputRoot: string;
  suiteHash: string;
  values: Record<string, unknown>;
  positional: string | undefined;
  planOptions: PlanOptions;
  shard?: unknown;
  jobs: Job[];
  resume?: ResumeState;
}): Promise<RunLog> {
  const { suite, resume } = opts;
  const manifest = await suiteManifest(suite.skillDir, [opts.outputRoot]);
  const log: RunLog = {
    runId: randomUUID(),
    plan: { ...opts.planOptions, engines: opts.engines.map((e) => e.name), ...(opts.shard ? { shard: opts.shard } : {}) },
    flags: storedFlags(opts.values),
    target: opts.positional ? resolve(opts.positional) : suite.skillDir,
    ...(manifest ? { manifest } : {}),
  };
  if (!resume) return log;
  if (opts.suiteHash !== resume.suiteHash) {
    const what = describeSuiteChange(resume.manifest, manifest) ?? `suite hash ${resume.suiteHash.slice(0, 19)}… is now ${opts.suiteHash.slice(0, 19)}…`;
    if (!opts.values.force) {
      throw new UsageError(
        `--resume ${shown(resume.dir)}: the suite changed since that run started (${what}), so finished and new jobs would measure different suites; ` +
          'restore it, start a new run without --resume, or add --force to keep the finished jobs anyway',
      );
    }
    process.stderr.write(`warning: --force: resuming although the suite changed (${what}); the kept jobs were measured on the earlier suite\n`);
  }
  log.resume = resume;
  log.split = partitionJobs(opts.jobs, resume.latest);
  return log;
}

/**
 * Opens `--event-log` (now, just before the first job: a path that cannot be written is a
 * usage error, exit 2) and announces the run. An exit without {@link endEvents} (an internal
 * error, a second Ctrl-C) still writes `run_finished`.
 */
export function startEvents(log: RunLog, file: string | undefined, opts: { skillName: string; engines: EngineConfig[]; jobs: number; iterations: number }): void {
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

/** `run_finished` after the last iteration. */
export function endEvents(log: RunLog, outcomes: { interrupted: boolean }[], exitCode: number): void {
  const events = log.events;
  if (!events) return;
  log.events = undefined;
  events.finish(outcomes.some((o) => o.interrupted) ? 'CANCELLED' : 'COMPLETED', exitCode);
}
