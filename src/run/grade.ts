/**
 * Grading a job whose turns are over, one way for a live run (src/run/job.ts) and for a saved
 * one (`skill-up regrade`, src/regrade/): a trigger case on the skill's activation alone
 * (src/judge/trigger.ts), every other case through `gradeJob` (expect gate, then the judges)
 * with an agent_judge's grader run through the engine layer (src/run/grader.ts).
 */
import { join } from 'node:path';
import type { EngineConfig, JudgeSpec, Suite } from '../config/types.js';
import type { EngineAdapter, Transcript } from '../engine/types.js';
import { gradeJob, type GradeOptions } from '../judge/index.js';
import { gradeTrigger } from '../judge/trigger.js';
import type { Grading } from '../judge/types.js';
import type { Job } from '../plan/plan.js';
import { commitBaseline } from '../runtime/baseline.js';
import type { WorkspaceChanges } from '../runtime/changes.js';
import { agentJudgeRunner } from './grader.js';
import type { ResolvedSkill } from './job.js';
import type { JobResult } from './types.js';

/** A job whose agent has finished: what the judges look at. */
export interface FinishedJob {
  job: Pick<Job, 'id' | 'case' | 'engine' | 'variant' | 'trial'>;
  /** Its record so far: turns, final message, skills installed/offered, activations, `trigger`. */
  result: JobResult;
  transcript: Transcript;
  /** The job's engine as the run configured it: the default grader engine. */
  engine: EngineConfig;
  /** Absolute path of the job folder. */
  jobDir: string;
  /** Absolute path of the finished workspace (live, or rebuilt from the saved changes). */
  workspace: string;
  /** What the agent changed (src/runtime/changes.ts); undefined when unknown. */
  changes?: WorkspaceChanges;
  /** The git baseline for an agent_judge's `workspace.diff`, or why there is none (src/runtime/baseline.ts). */
  baseline?: { gitDir: string; homeDir: string } | string;
}

/** What grading needs besides the job: the run's suite, adapters and model server. */
export interface GradeEnv {
  suite: Suite;
  adapters: Map<string, EngineAdapter>;
  skills: ResolvedSkill[];
  baseEnv: Record<string, string | undefined>;
  modelBaseUrl?: string;
  workspaceRoot?: string;
  keepWorkspaces: boolean;
  /** The run's signal (Ctrl-C): stops a grader. */
  runSignal: AbortSignal;
  /** The job's signal, given to the expect gate and the rule/script judges. */
  jobSignal: AbortSignal;
  /** Told when each judge starts and ends (the event log). */
  observer?: GradeOptions['observer'];
}

/**
 * Grades a finished job. Returns the grading (with the graders' spend in `grading.judge`) and,
 * for a trigger case, the trigger record to keep on the job. Never throws for a judge's own
 * failure: that is an `error` grading (src/judge/index.ts).
 */
export async function gradeFinished(f: FinishedJob, env: GradeEnv): Promise<{ grading: Grading; trigger?: JobResult['trigger'] }> {
  const { result, job } = f;
  if (result.trigger) return gradeTrigger(result.trigger, result.skillActivations, result.skillsOffered);
  const grading = await gradeJob(
    {
      case: job.case,
      transcript: f.transcript,
      finalMessage: result.finalMessage,
      ...(result.finalMessageFile ? { finalMessageFile: { path: join(f.jobDir, result.finalMessageFile), bytes: result.finalMessageBytes ?? 0 } } : {}),
      jobDir: f.jobDir,
      exitCode: f.transcript.turns.at(-1)?.exitCode ?? 0,
      workspace: f.workspace,
      transcriptPath: join(f.jobDir, 'transcript.json'),
      skillDir: env.suite.skillDir,
      turnStatus: result.turns.map((t) => t.status),
      ...(f.changes ? { changes: f.changes } : {}),
      signal: env.jobSignal,
    },
    {
      ...(env.observer ? { observer: env.observer } : {}),
      // A grader agent through the engine layer; stopped by Ctrl-C, never by the case deadline.
      agentJudge: agentJudgeRunner({
        suite: env.suite,
        adapters: env.adapters,
        job,
        engine: f.engine,
        jobDir: f.jobDir,
        skills: env.skills,
        installedSkills: result.skillsInstalled,
        baseEnv: env.baseEnv,
        ...(env.modelBaseUrl ? { modelBaseUrl: env.modelBaseUrl } : {}),
        ...(env.workspaceRoot ? { workspaceRoot: env.workspaceRoot } : {}),
        signal: env.runSignal,
        ...(typeof f.baseline === 'object' ? { baseline: f.baseline } : typeof f.baseline === 'string' ? { baselineProblem: f.baseline } : {}),
        keepWorkspaces: env.keepWorkspaces,
      }),
    },
  );
  return { grading };
}

/** Whether a case's judges want the git baseline committed before the agent runs (an agent_judge giving `workspace.diff`). */
function wantsBaseline(judges: readonly JudgeSpec[]): boolean {
  return judges.some((j) => j.type === 'agent_judge' && j.context.workspaceDiff);
}

/**
 * Commits the git baseline of a prepared workspace when the case's judges want one
 * (src/runtime/baseline.ts): its git folder, or why it could not be committed (the grader then
 * gets no diff, and says so); undefined when no judge wants it. Never throws.
 */
export async function baselineFor(judges: readonly JudgeSpec[], ws: { dir: string; homeDir: string }, signal?: AbortSignal): Promise<FinishedJob['baseline']> {
  if (!wantsBaseline(judges)) return undefined;
  return commitBaseline(ws, undefined, signal).then(
    (gitDir) => ({ gitDir, homeDir: ws.homeDir }),
    (e: Error) => `the git baseline could not be committed before the agent ran: ${e.message}`,
  );
}
