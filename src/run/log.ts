/**
 * The journal side of a run (issue 9, item 5): what one invocation records (its id, plan,
 * flags, a resume's split of the plan, the event log) and the iteration's journal.jsonl,
 * opened new or reopened for `--resume` (formats in src/run/resume.ts and src/run/journal.ts).
 * The flags that set these are checked in src/cli/run-resume.ts.
 */
import { join, relative } from 'node:path';
import type { EngineConfig, Suite } from '../config/types.js';
import type { DecisionConfig } from '../gate/index.js';
import type { Job } from '../plan/plan.js';
import type { EventLog } from './events.js';
import { Journal } from './journal.js';
import { JOURNAL_FORMAT, clearJobDirs, type partitionJobs, type ResumeState, type RunHeader } from './resume.js';
import type { JobResult } from './types.js';
import { VERSION } from '../cli/version.js';

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
  const { kept, toRun, errored } = log.split;
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
  notice(`resuming ${shown(dir)}: ${kept.length} of ${jobs.length} job(s) finished and kept, ${toRun.length} to run (${errored} errored, ${toRun.length - errored} unfinished)${torn}`);
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

