/**
 * `skill-up run --resume <iteration folder>` and `skill-up report` on a killed run, both from
 * the folder's `journal.jsonl` (src/run/journal.ts):
 *
 * - the journal header holds the plan: the suite (eval file, suite hash, a per-file manifest),
 *   the command line's flags (paths made absolute), the engines and the gate settings;
 * - a resume loads the same suite with the same flags, refuses a changed suite unless
 *   `--force` (naming the files that changed), plans the same jobs, keeps every job whose last
 *   journal line is finished (pass, fail, or skipped by the suite itself), runs the errored and
 *   missing ones again, appends to the same journal, and writes the reports into the same
 *   folder: result.json then holds exactly the jobs of an uninterrupted run;
 * - a folder without result.json (the run was killed) is rebuilt from the journal alone.
 */
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { suiteDigest } from '../config/hash.js';
import { incompleteDecision } from '../cost/partial.js';
import { decide, DEFAULT_DECISION, type DecisionConfig } from '../gate/index.js';
import type { Job } from '../plan/plan.js';
import { buildResultJson, trialsOf, type ResultDoc, type RunMeta } from '../report/result-json.js';
import { readJournal, type JournalContents, type JournalHeader } from './journal.js';
import { wasInterrupted, type JobResult } from './types.js';

/** The journal's format version (the header's `format`). */
export const JOURNAL_FORMAT = 1;

/** The exit code recorded for a run rebuilt from its journal: it was killed (128 + SIGKILL). */
export const KILLED_EXIT_CODE = 137;

/** A folder that cannot be resumed or rebuilt; the message is for the user as is (exit code 2). */
export class ResumeError extends Error {}

/** An engine as the header keeps it: what result.json's `engines` shows. */
export interface HeaderEngine {
  name: string;
  displayName: string;
  version?: string;
  resolvedVersion?: string;
  model: { provider?: string; name?: string };
}

/** The journal's first line as `skill-up run` writes it. */
export interface RunHeader extends JournalHeader {
  format: typeof JOURNAL_FORMAT;
  /** The invocation id (the event log's `invocation_id`). */
  runId: string;
  tool: { name: string; version: string };
  skill: { name: string; path: string };
  evalFile: string;
  suiteHash: string;
  /** Relative path → digest of every file the suite hash covers (absent for very large skill folders). */
  manifest?: Record<string, string>;
  iteration: number;
  /** Jobs planned. */
  jobs: number;
  /** The plan options given to planJobs, and the engines run. */
  plan: Record<string, unknown>;
  /** The command line's flags, paths absolute (without the flags of one invocation: see INVOCATION_FLAGS). */
  flags: Record<string, unknown>;
  /** What the suite was loaded from (absolute). */
  target: string;
  cwd: string;
  engines: HeaderEngine[];
  /** result.json `options`. */
  options: Record<string, unknown>;
  /** The gate settings, the previous run of --no-regression included. */
  decision: DecisionConfig;
}

/** Flags of one invocation, never stored in the journal nor taken from it. */
export const INVOCATION_FLAGS = ['resume', 'force', 'event-log', 'help', 'dry-run', 'iteration'];
/** Flags a resume may change: they do not change what is measured (speed, kept workspaces, report output). */
export const RESUME_FREE_FLAGS = ['parallelism', 'keep-workspaces', 'no-delete', 'format', 'github'];
/** Flags holding a path, stored absolute. */
const PATH_FLAGS = ['output-dir', 'no-regression'];

/** The command line's flags as the header stores them. */
export function storedFlags(values: Record<string, unknown>, cwd = process.cwd()): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined || INVOCATION_FLAGS.includes(k)) continue;
    out[k] = PATH_FLAGS.includes(k) && typeof v === 'string' && v.trim() !== '' ? path.resolve(cwd, v) : v;
  }
  return out;
}

/** How a flag's value reads in a message. */
function flagText(name: string, v: unknown): string {
  if (v === undefined || v === false) return `no --${name}`;
  if (v === true) return `--${name}`;
  return `--${name} ${Array.isArray(v) ? v.join(',') : String(v)}`;
}

/**
 * The flags of a resume: the journal's, with `given` flags that may change
 * ({@link RESUME_FREE_FLAGS}, {@link INVOCATION_FLAGS}) taken as given; any other flag given
 * must equal the journal's. `fixed` values (the output folder) win over both.
 * @throws ResumeError naming every flag that differs.
 */
export function mergeFlags(stored: Record<string, unknown>, given: Record<string, unknown>, fixed: Record<string, unknown> = {}): Record<string, unknown> {
  const base = { ...stored, ...fixed };
  const norm = storedFlags(given);
  const diffs: string[] = [];
  for (const [k, v] of Object.entries(norm)) {
    if (RESUME_FREE_FLAGS.includes(k)) continue;
    if (JSON.stringify(v) !== JSON.stringify(base[k])) diffs.push(`${flagText(k, v)} (the journal's run: ${flagText(k, base[k])})`);
  }
  if (diffs.length) {
    throw new ResumeError(`--resume continues the run recorded in the journal, with its plan and flags; these differ: ${diffs.join('; ')}. Drop them (a different plan is a new run)`);
  }
  const out: Record<string, unknown> = { ...base };
  for (const k of [...RESUME_FREE_FLAGS, ...INVOCATION_FLAGS]) if (given[k] !== undefined) out[k] = given[k];
  return out;
}

/** A journal loaded for a resume. */
export interface ResumeState extends JournalContents {
  /** The iteration folder (absolute). */
  dir: string;
  journalFile: string;
  header: RunHeader;
  /** The suite hash and manifest the kept results were measured on (the last forced resume's, else the header's). */
  suiteHash: string;
  manifest?: Record<string, string>;
}

/** Reads `<dir>/journal.jsonl` for a resume. @throws ResumeError with one clear message */
export async function loadResume(dir: string): Promise<ResumeState> {
  const abs = path.resolve(dir);
  const st = await stat(abs).catch(() => undefined);
  if (!st) throw new ResumeError(`--resume ${dir}: not found; give the iteration folder of an interrupted run (e.g. my-skill-workspace/iteration-3)`);
  if (!st.isDirectory()) {
    throw new ResumeError(`--resume ${dir}: is a file; give the iteration folder that holds journal.jsonl${path.basename(abs) === 'journal.jsonl' || path.basename(abs) === 'result.json' ? ` (${path.dirname(dir) || '.'})` : ''}`);
  }
  const journalFile = path.join(abs, 'journal.jsonl');
  if (!(await stat(journalFile).catch(() => undefined))) throw new ResumeError(`--resume ${dir}: has no journal.jsonl, so there is no run to continue (only an iteration folder written by skill-up run can be resumed)`);
  const j = await readJournal(journalFile);
  if (!j.header) throw new ResumeError(`--resume ${dir}: journal.jsonl has no run header on its first line (it is damaged or not skill-up's), so the plan to continue is unknown`);
  const h = j.header as RunHeader;
  if (h.format !== JOURNAL_FORMAT || !h.flags || !h.target || !h.suiteHash) {
    throw new ResumeError(`--resume ${dir}: journal.jsonl was written by an older skill-up and does not record the plan; \`skill-up report ${dir}\` still rebuilds its reports`);
  }
  const forced = [...j.resumes].reverse().find((r) => r.forced === true);
  return {
    ...j,
    dir: abs,
    journalFile,
    header: h,
    suiteHash: (forced?.suiteHash as string | undefined) ?? h.suiteHash,
    manifest: (forced ? (forced.manifest as Record<string, string> | undefined) : h.manifest) ?? undefined,
  };
}

/**
 * Relative path → short digest of each file the suite hash covers (the walk of
 * src/config/hash.ts: same skipped folders, symlinks by target, the executable bit), so a
 * refused resume can say which files changed. Undefined for very large folders (over 2,000
 * files or 64 MB) and when the folder cannot be read.
 */
export async function suiteManifest(skillDir: string, exclude: string[] = []): Promise<Record<string, string> | undefined> {
  try {
    return (await suiteDigest(skillDir, exclude)).manifest;
  } catch {
    return undefined;
  }
}

/** What changed between two manifests, e.g. `changed: evals/cases/a.yaml; added: evals/cases/b.yaml`; undefined when unknown. */
export function describeSuiteChange(before?: Record<string, string>, after?: Record<string, string>): string | undefined {
  if (!before || !after) return undefined;
  const list = (xs: string[]) => (xs.length > 8 ? `${xs.slice(0, 8).join(', ')} and ${xs.length - 8} more` : xs.join(', '));
  const changed = Object.keys(after).filter((k) => k in before && before[k] !== after[k]);
  const added = Object.keys(after).filter((k) => !(k in before));
  const removed = Object.keys(before).filter((k) => !(k in after));
  const parts = [changed.length ? `changed: ${list(changed)}` : '', added.length ? `added: ${list(added)}` : '', removed.length ? `removed: ${list(removed)}` : ''].filter(Boolean);
  return parts.length ? parts.join('; ') : undefined;
}

/**
 * A journal result counts as finished, and is kept by a resume, when it was measured: pass,
 * fail, or skipped by the suite itself (every turn skipped). Errors, and jobs stopped by an
 * interrupt (`skipped`, reason `run interrupted`), are run again.
 */
export function isFinished(r: JobResult): boolean {
  return r.status === 'pass' || r.status === 'fail' || (r.status === 'skipped' && !wasInterrupted(r));
}

/** The journal result of `job`: same id, and the same case, engine, variant and trial. */
function resultOf(job: Job, latest: Map<string, JobResult>): JobResult | undefined {
  const r = latest.get(job.id);
  return r && r.caseId === job.case.id && r.engine === job.engine && r.variant === job.variant && r.trial === job.trial ? r : undefined;
}

/**
 * Splits the plan into the finished jobs' results (kept, plan order) and the jobs to run: those
 * stopped by an interrupt (`interrupted`), errored for another reason (`errored`), or missing.
 */
export function partitionJobs(jobs: Job[], latest: Map<string, JobResult>): { kept: JobResult[]; toRun: Job[]; errored: number; interrupted: number } {
  const kept: JobResult[] = [];
  const toRun: Job[] = [];
  let errored = 0;
  let interrupted = 0;
  for (const job of jobs) {
    const r = resultOf(job, latest);
    if (r && isFinished(r)) kept.push(r);
    else {
      if (r && wasInterrupted(r)) interrupted++;
      else if (r) errored++;
      toRun.push(job);
    }
  }
  return { kept, toRun, errored, interrupted };
}

/** Kept and fresh results in plan order (a fresh result wins). */
export function inPlanOrder(jobs: Job[], kept: JobResult[], fresh: JobResult[]): JobResult[] {
  const by = new Map<string, JobResult>();
  for (const r of kept) by.set(r.id, r);
  for (const r of fresh) by.set(r.id, r);
  return jobs.flatMap((j) => (by.has(j.id) ? [by.get(j.id)!] : []));
}

/** Empties the folders of jobs about to run again, so no file of the earlier attempt is mistaken for theirs. */
export async function clearJobDirs(dir: string, jobs: Job[]): Promise<void> {
  for (const j of jobs) {
    if (path.isAbsolute(j.id) || j.id.split(/[\\/]/).includes('..')) continue;
    await rm(path.join(dir, j.id), { recursive: true, force: true });
  }
}

/**
 * The result.json document of a run known only from its journal (it was killed): the header
 * gives the run's metadata; the jobs are the last line of each job id; `interrupted` is true,
 * `not_run` the planned jobs without a line, the exit code {@link KILLED_EXIT_CODE}, the ending
 * time the last job's end; the gates are decided again with the header's settings.
 * @throws ResumeError when the journal has no header.
 */
export async function rebuildFromJournal(dir: string): Promise<ResultDoc> {
  const file = path.join(dir, 'journal.jsonl');
  const j = await readJournal(file);
  if (!j.header) throw new ResumeError(`${file}: has no run header on its first line, so the run cannot be rebuilt from it`);
  const h = j.header as Partial<RunHeader> & JournalHeader;
  const results = [...j.latest.values()];
  const last = j.resumes.at(-1);
  const planned = Number(last?.jobs ?? h.jobs ?? results.length);
  const startedAt = h.startedAt;
  let ended = Date.parse(startedAt) || 0;
  for (const r of results) ended = Math.max(ended, (Date.parse(r.startedAt) || 0) + r.durationMs);
  for (const r of j.resumes) ended = Math.max(ended, Date.parse(r.at) || 0);
  const engines: HeaderEngine[] = h.engines?.length ? h.engines : [...new Set(results.map((r) => r.engine))].map((name) => ({ name, displayName: name, model: {} }));
  const iteration = Number(h.iteration ?? /iteration-(\d+)$/.exec(path.resolve(dir))?.[1] ?? 1) || 1;
  const meta: RunMeta = {
    tool: h.tool ?? { name: 'skill-up', version: 'unknown' },
    skill: h.skill ?? { name: path.basename(path.dirname(path.resolve(dir))).replace(/-workspace$/, ''), path: h.evalFile ? path.dirname(path.dirname(String(h.evalFile))) : '' },
    evalFile: String(h.evalFile ?? ''),
    ...(((last?.suiteHash as string | undefined) ?? h.suiteHash) ? { suiteHash: (last?.suiteHash as string | undefined) ?? h.suiteHash } : {}),
    ...(h.plan && typeof h.plan === 'object' && (h.plan as { shard?: unknown }).shard ? { shard: (h.plan as { shard: RunMeta['shard'] }).shard } : {}),
    iteration,
    startedAt,
    endedAt: new Date(ended).toISOString(),
    durationMs: Math.max(0, ended - (Date.parse(startedAt) || ended)),
    interrupted: true,
    notRun: Math.max(0, planned - results.length),
    engines: (engines.length ? engines : [{ name: 'unknown', displayName: 'unknown', model: {} }]) as RunMeta['engines'],
    options: { ...(h.options ?? {}), ...(j.resumes.length ? { resumed: j.resumes.length } : {}), rebuilt_from_journal: true },
    exitCode: KILLED_EXIT_CODE,
    decision: incompleteDecision(decide(trialsOf(results), h.decision ?? DEFAULT_DECISION), Math.max(0, planned - results.length), 'the run was killed'),
  };
  return buildResultJson(meta, results);
}
