/**
 * The behaviour record of a job (types.ts): computed once after the turns (src/run/job.ts),
 * or again from a saved job folder (`behaviourFromSaved`, for `skill-up regrade`). Pure but
 * for reading the job's model requests.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Transcript } from '../../engine/types.js';
import { loggedRequests, settleExchangeLog, EXCHANGE_LOG_FILE } from '../../model/context-cost.js';
import type { ModelRequest } from '../../model/types.js';
import { readSavedChanges, type WorkspaceChanges } from '../../runtime/changes.js';
import { answeredTurn, claimsOf, verifyClaims, type TurnStatus } from './claims.js';
import { skillContextCost } from './context.js';
import { longestToolRun } from './loops.js';
import { shellExitsUnobservable } from './shell.js';
import { silentFailures } from './silent.js';
import { DEFAULT_LOOP_REPEATS, type JobBehaviour, type SkillContext } from './types.js';
import type { JudgeSpec } from '../../config/types.js';

export * from './types.js';
export { extractClaims, verifyClaims, pathOf, matchPath, claimsOf } from './claims.js';
export { longestToolRun } from './loops.js';
export { silentFailures, acknowledgement } from './silent.js';
export { skillContextCost, listingEntry } from './context.js';
export { isTestCommand, statedExitCode, shellExitsUnobservable } from './shell.js';

/** What {@link computeBehaviour} reads. */
export interface BehaviourInput {
  /** The turns, and the engine's name (decides whether its shell exit statuses are known: shell.ts `shellExitsUnobservable`). */
  transcript: Pick<Transcript, 'turns'> & Partial<Pick<Transcript, 'engine'>>;
  /** Per-turn status (JobResult.turns[].status); absent: derived from each turn's engine error. */
  turnStatus?: readonly TurnStatus[];
  /** The workspace changes; absent when unknown (claims about files are then unverified). */
  changes?: WorkspaceChanges;
  /** Skills installed for the job (empty for without_skill). */
  skillsInstalled: readonly string[];
  /** The job's model requests, or why they cannot be seen (a real model). */
  requests: AsyncIterable<ModelRequest> | { unobservable: string };
  /** Consecutive identical calls that make a tool loop (default DEFAULT_LOOP_REPEATS). */
  loopThreshold?: number;
}

/**
 * The tool-loop threshold a case's record uses: the smallest `no_tool_loop.max_repeats` among its
 * rule_based judges' rules (so the record, the summaries and the rule agree), else
 * DEFAULT_LOOP_REPEATS.
 */
export function loopThresholdOf(judges: readonly JudgeSpec[]): number {
  let n: number | undefined;
  for (const j of judges) {
    if (j.type !== 'rule_based') continue;
    for (const r of [...j.success, ...j.failure]) if (r.noToolLoop) n = Math.min(n ?? Infinity, r.noToolLoop.maxRepeats);
  }
  return n ?? DEFAULT_LOOP_REPEATS;
}

/** The behaviour record of one job (types.ts). Never throws for a malformed transcript part: it is skipped. */
export async function computeBehaviour(input: BehaviourInput): Promise<JobBehaviour> {
  const turns = input.transcript.turns;
  const { found, total } = claimsOf(turns, input.turnStatus);
  const claims = verifyClaims(found, { changes: input.changes, turns, engine: input.transcript.engine });
  const activated = [...new Set(turns.flatMap((t) => t.skillActivations.map((a) => a.skill)))];
  let skillContext: SkillContext;
  if ('unobservable' in input.requests) skillContext = { observed: false, reason: input.requests.unobservable };
  else skillContext = await skillContextCost(input.requests, input.skillsInstalled, activated);
  return {
    claims,
    claimsTotal: total,
    claimsVerified: claims.filter((c) => c.verified).length,
    toolLoop: longestToolRun(turns, input.loopThreshold ?? DEFAULT_LOOP_REPEATS),
    silentFailure: silentFailures(turns, (t) => answeredTurn(t, input.turnStatus), shellExitsUnobservable(input.transcript.engine)),
    skillContext,
  };
}

/** Why a job's requests are not observable when its model is not skill-up's scripted model. */
export const REAL_MODEL_UNOBSERVABLE = "unknown: the model is not skill-up's scripted model, so the requests the engine sent are not observable";

/**
 * The behaviour record of a job that just ran in this process (src/run/job.ts): its model
 * requests are read from `<jobDir>/model-requests.jsonl` once the scripted model server at
 * `modelBaseUrl` has written them all (src/model/context-cost.ts `settleExchangeLog`); with a
 * real model (`scripted` false) the skill context is "unknown".
 */
export async function behaviourOfJob(job: Omit<BehaviourInput, 'requests'> & { jobDir: string; jobId: string; scripted: boolean; modelBaseUrl?: string }): Promise<JobBehaviour> {
  const file = join(job.jobDir, EXCHANGE_LOG_FILE);
  if (job.scripted) await settleExchangeLog(file, job.modelBaseUrl, job.jobId);
  const { jobDir: _d, jobId: _i, scripted, modelBaseUrl: _u, ...input } = job;
  return computeBehaviour({ ...input, requests: scripted ? loggedRequests(file) : { unobservable: REAL_MODEL_UNOBSERVABLE } });
}

/**
 * The behaviour record of a saved job folder (`transcript.json`, `outputs/changes/changes.json`,
 * `model-requests.jsonl`), for regrading a saved run. `scripted` says whether the job ran
 * against the scripted model (else the skill context is "unknown").
 * @throws Error when transcript.json cannot be read.
 */
export async function behaviourFromSaved(jobDir: string, job: { skillsInstalled: readonly string[]; turnStatus?: readonly TurnStatus[]; scripted: boolean; changesKnown?: boolean; loopThreshold?: number }): Promise<JobBehaviour> {
  const transcript = JSON.parse(await readFile(join(jobDir, 'transcript.json'), 'utf8')) as Transcript;
  const saved = await readSavedChanges(join(jobDir, 'outputs', 'changes'));
  // No saved change list: nothing changed when the job recorded zero changes, else unknown.
  const changes: WorkspaceChanges | undefined = saved ?? (job.changesKnown ? { added: [], modified: [], deleted: [], truncated: false } : undefined);
  return computeBehaviour({
    transcript,
    turnStatus: job.turnStatus,
    changes,
    skillsInstalled: job.skillsInstalled,
    ...(job.loopThreshold !== undefined ? { loopThreshold: job.loopThreshold } : {}),
    requests: job.scripted ? loggedRequests(join(jobDir, EXCHANGE_LOG_FILE)) : { unobservable: REAL_MODEL_UNOBSERVABLE },
  });
}
