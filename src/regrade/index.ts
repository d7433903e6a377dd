/**
 * `skill-up regrade`: the judges run again on a saved run, the agents do not. A saved job keeps
 * what grading needs (src/run/job.ts): `transcript.json`, the final message, the turns in
 * result.json, and the files the agent changed (`outputs/changes/`, src/runtime/changes.ts).
 * Each job's workspace is rebuilt as the run prepared it (the case's fixture, inline files, git
 * set-up, setup steps, the skill in with_skill), the git baseline committed when an agent_judge
 * wants a diff, and the agent's changes applied on top; then the CURRENT suite's expect gate and
 * judges grade it (a changed rubric is the point) and the behaviour checks are recomputed. The
 * result is a new iteration folder beside the saved one, with every report, and the gates
 * decided anew with the saved run's gate settings.
 *
 * Kept as graded (copied, not regraded): jobs the conversation decided (an engine error, a
 * post_condition with `on_fail: fail`, a missing capture), skipped jobs, and jobs whose case is
 * no longer in the suite. Each is counted in result.json `regrade`.
 */
import { rm, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import pLimit from 'p-limit';
import type { CaseSpec, EngineConfig, Suite } from '../config/types.js';
import type { Transcript } from '../engine/types.js';
import { decide, type Decision } from '../gate/index.js';
import { behaviourFromSaved, loopThresholdOf } from '../judge/behaviour/index.js';
import { decisionConfigOf } from '../merge/combine.js';
import { copyJobDirs } from '../merge/copy.js';
import { buildResultJson, jobResultOf, trialsOf, type ResultDoc, type RunMeta } from '../report/result-json.js';
import { writeDocReports, writeJobFiles } from '../report/write.js';
import { readSavedChanges, restoreChanges, type WorkspaceChanges } from '../runtime/changes.js';
import { createWorkspace, type Workspace } from '../runtime/index.js';
import { applySkillInstall, skillInstallDir } from '../skill/install.js';
import { suiteEnvOf } from '../engine/env.js';
import { costNotes } from '../cost/result.js';
import { baselineFor, gradeFinished } from '../run/grade.js';
import { createIterationDir } from '../run/output.js';
import { loadPreviousRun } from '../run/previous.js';
import { prepareRun, reportFormats, type PreparedRun } from '../run/suite.js';
import { loadScripts, startScriptedModel } from '../run/model.js';
import type { JobResult } from '../run/types.js';
import { VERSION } from '../util/version.js';

/** What `regrade` was asked to do. */
export interface RegradeOptions {
  /** The saved run: loaded result.json and its path. */
  doc: ResultDoc;
  file: string;
  /** The suite as it is now (its judges grade); loaded by the caller. */
  suite: Suite;
  /** The saved run's engines as they ran (names, models), rebuilt by the caller from the suite. */
  engines: EngineConfig[];
  /** Root of the new iteration folder (default: the folder holding the saved iteration). */
  outputRoot?: string;
  /** Jobs graded at once (default 4). */
  parallelism?: number;
  keepWorkspaces?: boolean;
  /** Where the no_regression gate's baseline is, when the path the run recorded does not resolve. */
  noRegression?: string;
  signal: AbortSignal;
  notice: (line: string) => void;
  /** Told as each job is graded: its id, status and whether it was regraded. */
  progress?: (result: JobResult, regraded: boolean) => void;
}

/** How many jobs were graded again, and those kept as they were graded, with the reason. */
export interface RegradeRecord {
  /** result.json of the saved run, as given. */
  from: string;
  regraded: number;
  kept: { id: string; reason: string }[];
}

/** The regraded run. */
export interface RegradeResult {
  dir: string;
  iteration: number;
  doc: ResultDoc;
  decision: Decision;
  results: JobResult[];
  record: RegradeRecord;
  /** Report files written. */
  written: string[];
  /** Report formats that could not be written, with the reason. */
  skipped: { format: string; reason: string }[];
}

/**
 * Why a saved job cannot be graded again (kept as graded), or undefined when it can. A verdict
 * the conversation reached (an engine error, a failing post_condition, a missing capture) did
 * not come from the judges, so regrading cannot change it.
 */
export function keptReason(r: JobResult, c: CaseSpec | undefined): string | undefined {
  if (!c) return `case \`${r.caseId}\` is no longer in the suite`;
  if (r.status === 'skipped') return 'the job was skipped';
  if (r.turns.length === 0 || r.turns.some((t) => t.status === 'error')) return 'the agent did not finish (the engine or a turn failed): nothing to grade';
  const failedTurn = r.turns.find((t) => t.status === 'failed');
  if (failedTurn && c.turns[failedTurn.index - 1]?.postCondition?.onFail === 'fail') return `turn ${failedTurn.index}'s post_condition decided it`;
  if (r.turns.every((t) => t.status === 'skipped')) return 'every turn was skipped';
  if (Boolean(r.trigger) !== (c.shouldTrigger !== undefined)) return 'the case changed between a trigger case and a task case: run it again';
  return undefined;
}

/**
 * Regrades a saved run into a new iteration folder. Never throws for one job's failure: a job
 * whose workspace cannot be rebuilt is an `error` with the reason (the saved verdict is gone
 * with the old rubric, and an error is never a fail).
 * @throws Error when the new folder or its reports cannot be written.
 */
export async function regradeRun(opts: RegradeOptions): Promise<RegradeResult> {
  const { doc, suite, engines } = opts;
  const sourceDir = dirname(opts.file);
  const root = opts.outputRoot ?? dirname(sourceDir);
  // Before the new folder: an agent_judge engine that cannot run stops the regrade (GraderEngineUnavailable).
  const prepared = await prepareRun(suite, engines, root, opts.notice);
  const target = await createIterationDir(root);
  const { missing } = await copyJobDirs(sourceDir, target.dir, doc.jobs.map((j) => j.output_dir));
  const missingDirs = new Set(missing);
  const record: RegradeRecord = { from: opts.file, regraded: 0, kept: [] };
  const scripts = prepared.scripts.size ? prepared.scripts : await loadScripts(engines);
  const model = await startScriptedModel(scripts, target.dir);
  const started = new Date();
  let results: JobResult[];
  try {
    const limit = pLimit(Math.max(1, opts.parallelism ?? 4));
    results = await Promise.all(
      doc.jobs.map((j) =>
        limit(async () => {
          const saved = jobResultOf(j);
          const c = suite.cases.find((x) => x.id === saved.caseId);
          const why = missingDirs.has(j.output_dir) ? 'its job folder is not in the saved run' : keptReason(saved, c);
          if (why || opts.signal.aborted) {
            record.kept.push({ id: saved.id, reason: why ?? 'regrade interrupted' });
            opts.progress?.(saved, false);
            return saved;
          }
          const out = await regradeJob(saved, c!, { ...opts, prepared, dir: target.dir, modelBaseUrl: model?.url });
          record.regraded++;
          opts.progress?.(out, true);
          return out;
        }),
      ),
    );
  } finally {
    await model?.close();
  }
  record.kept.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let previous;
  const nr = doc.decision.config.no_regression;
  if (nr) previous = await loadPreviousRun(opts.noRegression ?? nr.baseline, doc.decision.config.errors_as_failures, opts.noRegression ? '--no-regression' : `the run's no_regression baseline \`${nr.baseline}\``);
  const decision = decide(trialsOf(results), decisionConfigOf(doc, previous));
  const ended = new Date();
  const meta: RunMeta = {
    tool: { name: 'skill-up', version: VERSION },
    skill: doc.skill,
    evalFile: suite.evalFile,
    ...(doc.suite_hash ? { suiteHash: doc.suite_hash } : {}),
    regrade: { from: record.from, regraded: record.regraded, kept: record.kept },
    iteration: target.iteration,
    startedAt: started.toISOString(),
    endedAt: ended.toISOString(),
    durationMs: ended.getTime() - started.getTime(),
    interrupted: opts.signal.aborted,
    notRun: doc.not_run,
    ...(doc.not_run_reason ? { notRunReason: doc.not_run_reason } : {}),
    cost: { notes: costNotes(engines, results) },
    engines,
    options: doc.options,
    exitCode: decision.exitCode,
    decision,
  };
  const built = buildResultJson(meta, results);
  // The engines as the agents ran them (versions found then), not as this process resolved them.
  built.engines = doc.engines;
  const written = await writeDocReports(target.dir, built, ['json', ...reportFormats(suite.report.formats, results)], target.dir, { jobFiles: false });
  return { dir: target.dir, iteration: target.iteration, doc: built, decision, results, record, written: written.written, skipped: written.skipped };
}

/** Grades one saved job again in `dir` (its copied job folder); see {@link regradeRun}. */
async function regradeJob(
  saved: JobResult,
  c: CaseSpec,
  opts: RegradeOptions & { prepared: PreparedRun; dir: string; modelBaseUrl?: string },
): Promise<JobResult> {
  const result: JobResult = { ...saved, assertions: [] };
  for (const k of ['judge', 'notes', 'reason', 'behaviour'] as const) delete result[k];
  const jobDir = join(opts.dir, saved.outputDir);
  await clearOldGrading(jobDir);
  const engine = opts.engines.find((e) => e.name === saved.engine) ?? opts.suite.engine;
  const adapter = opts.prepared.adapters.get(saved.engine);
  let ws: Workspace | undefined;
  try {
    const transcript = JSON.parse(await readFile(join(jobDir, 'transcript.json'), 'utf8')) as Transcript;
    const job = { id: saved.id, case: c, engine: saved.engine, variant: saved.variant, trial: saved.trial };
    let changes: WorkspaceChanges | undefined;
    let baseline: { gitDir: string; homeDir: string } | string | undefined;
    let workspace = '';
    if (!result.trigger) {
      if (!adapter) throw new Error(`engine \`${saved.engine}\` of the saved run is not in the suite now`);
      ws = await createWorkspace({
        jobId: saved.id,
        context: c.context,
        skillDir: opts.suite.skillDir,
        env: suiteEnvOf(opts.suite, process.env),
        setupSteps: opts.suite.environment.setupSteps,
        signal: opts.signal,
      });
      workspace = ws.dir;
      if (saved.variant === 'with_skill') {
        for (const s of opts.prepared.skills) if (saved.skillsInstalled.includes(s.name)) await applySkillInstall(s.plan, join(ws.dir, skillInstallDir(s, adapter.skillDirs[0]!)));
      }
      baseline = await baselineFor(c.judges, ws, opts.signal);
      const changesDir = join(jobDir, 'outputs', 'changes');
      const kept = await readSavedChanges(changesDir);
      if (kept) {
        const lost = await restoreChanges(changesDir, kept, ws.dir);
        changes = { added: kept.added, modified: kept.modified, deleted: kept.deleted, truncated: kept.truncated };
        if (lost.length) note(result, `${lost.length} changed file(s) could not be restored: ${lost.slice(0, 3).map((l) => `${l.path} (${l.reason})`).join(', ')}`);
      } else if (saved.changes && saved.changes.added + saved.changes.modified + saved.changes.deleted === 0) {
        changes = { added: [], modified: [], deleted: [], truncated: Boolean(saved.changes.truncated) };
      } else {
        note(result, 'the run kept no record of the workspace changes (a run of an older skill-up): the workspace is graded as prepared');
      }
    }
    const { grading, trigger } = await gradeFinished(
      { job, result, transcript, engine, jobDir, workspace, ...(changes ? { changes } : {}), ...(baseline ? { baseline } : {}) },
      {
        suite: opts.suite,
        adapters: opts.prepared.adapters,
        skills: opts.prepared.skills,
        baseEnv: { ...process.env },
        ...(opts.modelBaseUrl ? { modelBaseUrl: opts.modelBaseUrl } : {}),
        keepWorkspaces: Boolean(opts.keepWorkspaces),
        runSignal: opts.signal,
        jobSignal: opts.signal,
      },
    );
    if (trigger) result.trigger = trigger;
    if (grading.judge) result.judge = grading.judge;
    result.status = grading.status;
    result.reason = grading.reason;
    result.assertions = grading.assertions;
    const behaviour = await behaviourFromSaved(jobDir, {
      skillsInstalled: saved.skillsInstalled,
      turnStatus: saved.turns.map((t) => t.status),
      scripted: engine.model.provider === 'scripted',
      changesKnown: changes !== undefined,
      loopThreshold: loopThresholdOf(c.judges),
    }).catch(() => undefined);
    if (behaviour) result.behaviour = behaviour;
  } catch (e) {
    result.status = 'error';
    result.reason = `cannot regrade: ${(e as Error).message}`;
  } finally {
    if (ws && !opts.keepWorkspaces) await ws.remove().catch(() => undefined);
    else if (ws) result.workspace = ws.dir;
  }
  const notes = result.notes;
  if (notes?.length) result.reason = [result.reason, ...notes].filter(Boolean).join('; ');
  await writeJobFiles(opts.dir, result);
  return result;
}

/** The saved grading's own files in a copied job folder (grader runs `judge-<n>/`, grading.json): the new grading writes its own. */
async function clearOldGrading(jobDir: string): Promise<void> {
  const entries = await readdir(jobDir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    if ((e.isDirectory() && /^judge-\d+$/.test(e.name)) || e.name === 'grading.json' || e.name === 'ungraded.json') await rm(join(jobDir, e.name), { recursive: true, force: true });
  }
}

function note(result: JobResult, text: string): void {
  (result.notes ??= []).push(text);
}
