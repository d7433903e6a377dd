/**
 * Runs one job end to end: fresh workspace → install skill (with_skill only) → engine turns
 * → collect artifacts → grade. Never throws for the job's own failures: a broken workspace,
 * a crashing engine or a timeout become a JobResult with status `error`.
 */
import { mkdir } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { EngineConfig, JudgeSpec, Suite, TurnSpec } from '../config/types.js';
import { fillTurnTemplate } from '../config/turn-template.js';
import type { EngineAdapter, EngineContext, EngineError, Transcript, TranscriptTurn, TurnSource } from '../engine/types.js';
import { zeroUsage } from '../engine/types.js';
import type { Job } from '../plan/plan.js';
import { createWorkspace, collectArtifacts, diffSnapshots, saveChanges, snapshotWorkspace, workspaceEnv, type Workspace, type WorkspaceChanges } from '../runtime/index.js';
import type { DockerJob, DockerRun } from '../runtime/docker/runtime.js';
import type { KnownFolders } from '../runtime/changes.js';
import type { RemovalQueue } from '../runtime/removal.js';
import { applySkillInstall, skillInstallDir, type SkillInstallPlan } from '../skill/install.js';
import { evaluatePostConditionOn, captureDetail } from '../judge/index.js';
import { baselineFor, gradeFinished } from './grade.js';
import { behaviourOfJob, loopThresholdOf } from '../judge/behaviour/index.js';
import { turnText, withFullText } from '../judge/text.js';
import { boundTurnText } from '../engine/final-text.js';
import type { Assertion, Grading } from '../judge/types.js';
import type { JobEvents, JobResult, TurnResult } from './types.js';
import { droppedToolCalls, INTERRUPTED, MAX_TOOL_CALLS_PER_TURN, MAX_TOOL_IO_CHARS_PER_TURN, TOOL_PREVIEW_CHARS } from './types.js';
import { makeJobFolder, removePlantedLinks } from '../util/contain.js';
import { priceResult } from '../cost/estimate.js';
import { suiteEnvOf } from '../engine/env.js';
import { mcpDir, mcpLaunches } from './mcp.js';
import { parseMcpToolCallName } from '../engine/mcp.js';
import { redactTextFileInPlace, redactUntracked, writeJson, writeText } from '../util/out.js';
import { userSimulatorFor, type SimulatedExchange, type UserSimulator } from '../simulator/index.js';

/** A skill ready to install: where it comes from and the folder name it gets. */
export interface ResolvedSkill {
  /** The name the skill is recorded under (`skills_installed`): `skills[].target` when a bare folder name, else its SKILL.md name (else its folder's). */
  name: string;
  /**
   * `skills[].target` when it is a path (holds a `/`): the workspace-relative folder the skill
   * is installed into, posix separators. Absent: the skill goes to `<engine skill folder>/<name>`.
   */
  dir?: string;
  /** The checked file selection, computed once per run. */
  plan: SkillInstallPlan;
}

/** Everything shared by the jobs of a run. */
export interface JobEnv {
  suite: Suite;
  adapters: Map<string, EngineAdapter>;
  skills: ResolvedSkill[];
  /** Absolute path of the iteration folder. */
  iterationDir: string;
  keepWorkspaces: boolean;
  /** Parent folder for workspaces (default: the OS temp folder). */
  workspaceRoot?: string;
  baseEnv: Record<string, string | undefined>;
  modelBaseUrl?: string;
  signal: AbortSignal;
  /**
   * Where finished jobs' workspaces go to be removed (src/runtime/removal.ts): each attempt's
   * workspace is held under the job's id until the run has journaled the job's result
   * (src/run/run.ts releases it), then removed in the background. Without a queue, a job
   * removes its workspace itself before it returns.
   */
  removals?: RemovalQueue;
  /** Lifecycle events of each attempt (`--event-log`), when wanted. */
  events?: JobEvents;
  /**
   * The run's engines (chosen by `--engine`, src/run/suite.ts), which a job's engine settings
   * are taken from; default: the suite's.
   */
  engines?: EngineConfig[];
  /** `environment.type: docker`: the run's Docker runtime; each job then runs in a container of its own (src/runtime/docker/runtime.ts). */
  docker?: DockerRun;
}

/**
 * Runs `job` once (no retry). Never throws: whatever fails, the job's own failures and
 * skill-up's alike (a job folder that cannot be made, an event sink that throws, a bug), the
 * promise resolves to a JobResult, `error` with the reason. The job's per-job report files
 * (grading.json) are not written here but by the run's report listener (src/run/suite.ts).
 */
export async function runJobOnce(job: Job, env: JobEnv, attempt: number): Promise<JobResult> {
  const started = Date.now();
  const finished = { done: false };
  try {
    return await attemptJob(job, env, attempt, started, finished);
  } catch (e) {
    const result = blankResult(job, attempt, started, env.skills[0]?.name);
    result.reason = env.signal.aborted ? INTERRUPTED : `internal error of skill-up while running the job: ${(e as Error)?.message ?? String(e)}`;
    if (env.signal.aborted) result.status = 'skipped';
    result.durationMs = Date.now() - started;
    if (!finished.done) {
      try {
        env.events?.jobFinished(job, attempt, result);
      } catch {
        /* an event sink that throws must not make the job throw */
      }
    }
    return result;
  }
}

/** A JobResult before anything ran: `error`, no reason, zero usage; a trigger case's names `skill`, not yet activated. */
function blankResult(job: Job, attempt: number, started: number, skill?: string): JobResult {
  const c = job.case;
  return {
    ...(c.shouldTrigger !== undefined ? { trigger: { skill: skill ?? '', shouldTrigger: c.shouldTrigger, activated: false, query: c.turns[0]?.content.replace(/\\\{\{/g, '{{') ?? '' } } : {}),
    id: job.id,
    caseId: job.case.id,
    engine: job.engine,
    variant: job.variant,
    trial: job.trial,
    attempts: attempt,
    status: 'error',
    startedAt: new Date(started).toISOString(),
    durationMs: 0,
    engineDurationMs: 0,
    usage: zeroUsage(),
    finalMessage: '',
    turns: [],
    skillsInstalled: [],
    skillActivations: [],
    assertions: [],
    outputDir: job.id,
    artifacts: [],
  };
}

/** The body of {@link runJobOnce}; may throw for skill-up's own failures, which runJobOnce records. */
async function attemptJob(job: Job, env: JobEnv, attempt: number, started: number, finished: { done: boolean }): Promise<JobResult> {
  const events = env.events;
  events?.jobStarted(job, attempt);
  const outputDir = join(env.iterationDir, job.id);
  // A job folder that cannot be made (out of descriptors, disk full, …) makes this job an error, not the run a crash.
  const folderReady = makeJobFolder(env.iterationDir, job.id, madeFoldersOf(env)).then(
    (f) => f,
    (e: Error) => e,
  );
  const c = job.case;
  const deadline = c.timeoutSeconds > 0 ? started + c.timeoutSeconds * 1000 : Infinity;
  const jobAbort = new AbortController();
  const onRunAbort = () => jobAbort.abort();
  env.signal.addEventListener('abort', onRunAbort, { once: true });
  const deadlineTimer = Number.isFinite(deadline) ? setTimeout(() => jobAbort.abort(), deadline - started + 50) : undefined;
  const engineCfg = (env.engines ?? env.suite.engines).find((e) => e.name === job.engine) ?? env.suite.engine;
  const adapter = env.adapters.get(job.engine);
  const result = blankResult(job, attempt, started, env.skills[0]?.name);
  let ws: Workspace | undefined;
  let container: DockerJob | undefined;
  let kept: Transcript | undefined;
  /** The job folder exists and has not been swept for planted links since its last turn. */
  let unswept = false;
  try {
    const folder = await folderReady;
    if (folder instanceof Error) throw new Error(`cannot create the job folder ${outputDir}: ${folder.message}`);
    unswept = true;
    if (!adapter) throw new Error(`no adapter for engine \`${job.engine}\` in this run`);
    ws = await createWorkspace({
      root: env.workspaceRoot,
      jobId: job.id,
      context: c.context,
      skillDir: env.suite.skillDir,
      env: suiteEnvOf(env.suite, env.baseEnv),
      // In a container, the setup steps run there (below), once the container is up.
      setupSteps: env.docker ? [] : env.suite.environment.setupSteps,
      signal: jobAbort.signal,
    });
    // The installed files' states, as the install left them: the snapshot below takes them as they are.
    const known: KnownFolders = new Map();
    if (job.variant === 'with_skill') {
      for (const s of env.skills) {
        const dest = join(ws.dir, skillInstallDir(s, adapter.skillDirs[0]!));
        const applied = await applySkillInstall(s.plan, dest, { within: ws.dir });
        if (applied.states) known.set(relative(ws.dir, dest).split(sep).join('/'), applied.states);
        result.skillsInstalled.push(s.name);
      }
    }
    const ctx: EngineContext = {
      jobId: job.id,
      engine: engineCfg,
      case: c,
      variant: job.variant,
      trial: job.trial,
      workspace: ws.dir,
      homeDir: ws.homeDir,
      outputDir,
      installedSkills: result.skillsInstalled,
      baseEnv: env.baseEnv,
      suiteEnv: suiteEnvOf(env.suite, env.baseEnv),
      signal: jobAbort.signal,
      deadline,
      modelBaseUrl: env.modelBaseUrl,
      runtime: env.docker ? 'docker' : 'local',
    };
    if (c.mcpServers?.length) {
      // The same servers for both variants: only the skill differs between the arms.
      result.mcpServers = c.mcpServers.map((s) => ({ name: s.name, mode: s.mode, transport: s.transport }));
      if (!adapter.supportsMcp) throw new Error(`engine \`${job.engine}\` cannot offer MCP servers to its agent (${c.mcpServers.map((s) => `\`${s.name}\``).join(', ')}); run this case on claude_code, codex, opencode, gemini_cli or qwen_code`);
      ctx.mcpServers = await mcpLaunches(c.mcpServers, { workspace: ws.dir, jobDir: outputDir }, env.baseEnv);
    }
    const prepared = await adapter.prepare(ctx);
    if (env.docker) {
      // The container, after the adapter has made the engine's home and found its executable.
      const scripted = engineCfg.model.provider === 'scripted' && env.modelBaseUrl !== undefined;
      container = await env.docker.startJob({
        jobId: job.id,
        workspace: ws.dir,
        homeDir: ws.homeDir,
        outputDir,
        enginePaths: adapter.containerPaths?.(prepared) ?? [],
        ...(scripted ? { modelPort: Number(new URL(env.modelBaseUrl!).port) } : {}),
        signal: jobAbort.signal,
      });
      ctx.runProcess = container.runner;
      await container.setup(env.suite.environment.setupSteps, workspaceEnv(ws, suiteEnvOf(env.suite, env.baseEnv)), jobAbort.signal);
    }
    // The state before the agent ran: what it added, changed and deleted is measured against it.
    const before = await snapshotWorkspace(ws.dir, undefined, known);
    // An agent_judge's grader gets `git diff` against the workspace as it is now (src/runtime/baseline.ts);
    // committed only for such cases, in a private git folder, so other jobs stay cheap.
    const baseline = await baselineFor(c.judges, ws, jobAbort.signal);
    const transcript: Transcript = { engine: job.engine, model: engineCfg.model.name, turns: [] };
    kept = transcript;
    const turnEvents = events && { started: (i: number) => events.turnStarted(job, attempt, i), finished: (t: TurnResult) => events.turnFinished(job, attempt, t) };
    // A simulated user (`respond` turns, a scenario) answers through eval.yaml `user_simulator` (src/simulator/).
    const wantsSimulator = c.userSimulator !== undefined || c.turns.some((t) => t.respond !== undefined);
    const simulator = wantsSimulator
      ? env.suite.userSimulator
        ? userSimulatorFor(env.suite.userSimulator, { jobId: job.id, ...(env.modelBaseUrl ? { modelBaseUrl: env.modelBaseUrl } : {}), env: env.baseEnv })
        : 'this case has a simulated user but eval.yaml sets no `user_simulator`'
      : undefined;
    // A job folder made now holds nothing an agent planted: its first turn needs no scan.
    const verdict = await converse(job, adapter, ctx, prepared, transcript, result, deadline, turnEvents, folder.fresh, simulator);
    // The case deadline bounds the set-up and the agent's turns; each judge has its own limit
    // (a script's timeout_seconds, an agent_judge's per grader run), so grading is never cut by it.
    clearTimeout(deadlineTimer);
    // Before skill-up's own writes into the job folder: no link an agent planted there is followed.
    await unplant(outputDir, result, 'after the last turn');
    unswept = false;
    if (c.mcpServers?.length) markMcpCalls(transcript, c.mcpServers.map((s) => s.name));
    // Compact: read by the report and regrade, not by hand (the same data as indented).
    await writeJson(join(outputDir, 'transcript.json'), transcript, { indent: 0 });
    const changes = diffSnapshots(before, await snapshotWorkspace(ws.dir));
    await recordChanges(result, changes, ws.dir, outputDir);
    const skippedArtifacts: string[] = [];
    result.artifacts = await collectArtifacts(ws.dir, c.collectArtifacts, join(outputDir, 'outputs', 'workspace'), {
      destRoot: outputDir,
      onSkip: (rel, why) => skippedArtifacts.push(`${rel} (${why})`),
    });
    if (skippedArtifacts.length) {
      note(result, `${skippedArtifacts.length} artifact(s) not collected: ${skippedArtifacts.slice(0, 5).join(', ')}${skippedArtifacts.length > 5 ? ', …' : ''}`);
    }
    const last = [...result.turns].reverse().find((t) => t.status === 'completed' || t.status === 'failed');
    result.finalMessage = last?.finalText ?? '';
    // A large answer is a preview here; the whole text stays in the one file that holds it.
    if (last?.finalTextFile) {
      result.finalMessageFile = last.finalTextFile;
      result.finalMessageBytes = last.finalTextBytes;
    }
    await writeText(join(outputDir, 'outputs', 'response.md'), result.finalMessage);
    let grading: Grading;
    if (verdict) {
      grading = verdict;
    } else {
      const ref = (j: JudgeSpec, i: number) => ({ id: j.id ?? j.type, type: j.type, index: i + 1 });
      const graded = await gradeFinished(
        { job, result, transcript, engine: engineCfg, jobDir: outputDir, workspace: ws.dir, changes, ...(baseline ? { baseline } : {}) },
        {
          suite: env.suite,
          adapters: env.adapters,
          skills: env.skills,
          baseEnv: env.baseEnv,
          ...(env.modelBaseUrl ? { modelBaseUrl: env.modelBaseUrl } : {}),
          ...(env.workspaceRoot ? { workspaceRoot: env.workspaceRoot } : {}),
          keepWorkspaces: env.keepWorkspaces,
          runSignal: env.signal,
          jobSignal: jobAbort.signal,
          ...(events ? { observer: { started: (j: JudgeSpec, i: number) => events.judgeStarted(job, attempt, ref(j, i)), finished: (j: JudgeSpec, i: number, o: Parameters<JobEvents['judgeFinished']>[3], ms: number) => events.judgeFinished(job, attempt, ref(j, i), o, ms) } } : {}),
        },
      );
      grading = graded.grading;
      if (graded.trigger) result.trigger = graded.trigger;
      // The graders' tokens, time and cost: reported apart, never added into the agent's.
      if (grading.judge) result.judge = grading.judge;
    }
    result.status = grading.status;
    result.reason = grading.reason;
    result.assertions = grading.assertions;
    // Behaviour checks (claims, tool loops, silent failures, skill context cost): recorded on every job, never its verdict.
    result.behaviour = await behaviourOfJob({
      transcript,
      turnStatus: result.turns.map((t) => t.status),
      changes,
      skillsInstalled: result.skillsInstalled,
      jobDir: outputDir,
      jobId: job.id,
      scripted: engineCfg.model.provider === 'scripted',
      modelBaseUrl: env.modelBaseUrl,
      loopThreshold: loopThresholdOf(c.judges),
    }).catch((e: Error) => {
      note(result, `the behaviour checks could not be computed: ${e.message}`);
      return undefined;
    });
    if (!result.behaviour) delete result.behaviour;
  } catch (e) {
    result.status = 'error';
    result.reason = env.signal.aborted ? INTERRUPTED : (e as Error).message;
  } finally {
    clearTimeout(deadlineTimer);
    env.signal.removeEventListener('abort', onRunAbort);
    if (container) {
      // What the memory limit killed is the job's reason (the turn says only "killed by SIGKILL").
      // The memory limit broke the job whatever its agent then did: never a pass or a fail.
      if (container.outOfMemory) {
        result.status = 'error';
        note(result, container.outOfMemory);
      }
      const failed = await container.remove();
      if (failed) note(result, `the container ${container.container.name} could not be removed: ${failed}`);
    }
    // A job that failed before that sweep (an agent swapped its own output file for a link)
    // keeps no planted link in its folder.
    if (unswept) await unplant(outputDir, result, 'when the job ended').catch(() => undefined);
    // Graded: the raw engine output (stdout/stderr, spilled final texts, files an engine wrote
    // into outputs/ by itself such as codex's -o file) is redacted in place now, never before.
    await redactFinalTexts(outputDir, result, kept).catch(() => undefined);
    await redactUntracked(join(outputDir, 'outputs')).catch(() => undefined);
    // The mocks' call logs hold what the agent sent and got: redacted like the engine's output.
    if (c.mcpServers?.some((s) => s.mode === 'mocked')) await redactUntracked(mcpDir(outputDir)).catch(() => undefined);
    // What setup steps left in the background ends with the job (the workspace may be kept).
    ws?.stopBackground();
    // Removal is off the job's critical path and after its result is journaled (JobEnv.removals).
    if (ws && !env.keepWorkspaces) {
      if (env.removals) env.removals.hold(job.id, ws);
      else await ws.remove().catch((e: Error) => note(result, `the workspace ${ws!.dir} could not be removed: ${e.message}`));
    } else if (ws) result.workspace = ws.dir;
  }
  if (result.status === 'error' && jobAbort.signal.aborted && !env.signal.aborted && !result.reason?.includes('timed out')) {
    // The deadline struck outside an engine turn (workspace set-up).
    result.reason = `case timed out after ${c.timeoutSeconds} s (raise timeout_seconds in the case's constraints or in cases.defaults)${result.reason ? `: ${result.reason}` : ''}`;
  }
  if (env.signal.aborted && result.status === 'error') {
    // Stopped by Ctrl-C: not measured, so not counted as an error.
    result.status = 'skipped';
    result.reason = INTERRUPTED;
  }
  // Notes (planted links removed, artifacts skipped, tool calls dropped) are shown with the reason.
  if (result.notes?.length) result.reason = [result.reason, ...result.notes].filter(Boolean).join('; ');
  // The job's own time: the agent_judge graders' wall time is reported apart (`judge.durationMs`).
  result.durationMs = Math.max(0, Date.now() - started - (result.judge?.durationMs ?? 0));
  // Its cost: as reported, else estimated from its tokens and the price table (src/cost/estimate.ts).
  priceResult(result, engineCfg);
  finished.done = true;
  try {
    events?.jobFinished(job, attempt, result);
  } catch {
    /* JobEvents must not throw; one that does cannot change the job's result */
  }
  return result;
}

/** Sets `mcp: {server, tool}` on each call of a tool of `servers` (named `mcp__<server>__<tool>` by every engine's parser). */
function markMcpCalls(transcript: Transcript, servers: string[]): void {
  for (const t of transcript.turns) {
    for (const call of t.toolCalls) {
      const named = parseMcpToolCallName(call.name);
      if (named && servers.includes(named.server)) call.mcp = named;
    }
  }
}

/**
 * Counts the agent's workspace changes into the result and, when there are any, saves the
 * changed files into `outputs/changes/` (what `skill-up regrade` restores). A save that fails
 * is a note, never the job's error: the agent's work was measured.
 */
async function recordChanges(result: JobResult, changes: WorkspaceChanges, workspace: string, outputDir: string): Promise<void> {
  result.changes = { added: changes.added.length, modified: changes.modified.length, deleted: changes.deleted.length, ...(changes.truncated ? { truncated: true } : {}) };
  if (!changes.added.length && !changes.modified.length && !changes.deleted.length) return;
  try {
    const saved = await saveChanges(workspace, changes, join(outputDir, 'outputs', 'changes'), outputDir);
    if (saved.notSaved.length) note(result, `${saved.notSaved.length} changed file(s) not kept for regrading: ${saved.notSaved.slice(0, 3).map((n) => `${n.path} (${n.reason})`).join(', ')}`);
  } catch (e) {
    note(result, `the workspace changes could not be saved for regrading: ${(e as Error).message}`);
  }
}

/**
 * Redacts in place each turn's final-text file (read by the judges as the agent wrote it) and
 * makes the recorded byte lengths (`finalTextBytes`, `finalMessageBytes`) those of the redacted
 * file, so "the file's first `bytes` bytes are the whole text" stays true; transcript.json is
 * written again when a length changed. Called when the job is graded.
 */
async function redactFinalTexts(outputDir: string, result: JobResult, transcript: Transcript | undefined): Promise<void> {
  let changed = false;
  const done = new Map<string, number>();
  for (const t of transcript?.turns ?? []) {
    if (!t.finalTextFile || t.finalTextBytes === undefined) continue;
    const before = t.finalTextBytes;
    const after = done.get(t.finalTextFile) ?? (await redactTextFileInPlace(join(outputDir, t.finalTextFile), before));
    done.set(t.finalTextFile, after);
    if (after === before) continue;
    changed = true;
    t.finalTextBytes = after;
    for (const r of result.turns) if (r.index === t.index && r.finalTextFile === t.finalTextFile) r.finalTextBytes = after;
    if (result.finalMessageFile === t.finalTextFile) result.finalMessageBytes = after;
  }
  if (changed && transcript) await writeJson(join(outputDir, 'transcript.json'), transcript, { indent: 0 });
}

/**
 * Sends the case's turns. Returns a final Grading when the conversation itself decided the
 * job (an engine error, a failed post-condition, an unresolved template, a failed simulator);
 * undefined when the judges should decide. With a user simulator (`simulator`: the job's, or
 * why it has none), a `respond` turn's message is the simulator's reply, an autonomous case
 * goes on after its prompt until the simulator stops or `max_turns`, and every turn records
 * its `source` and the last one the `stopReason`.
 */
async function converse(
  job: Job,
  adapter: EngineAdapter,
  ctx: EngineContext,
  prepared: unknown,
  transcript: Transcript,
  result: JobResult,
  deadline: number,
  events?: { started(index: number): void; finished(turn: TurnResult): void },
  freshFolder = false,
  simulator?: UserSimulator | string,
): Promise<Grading | undefined> {
  const specs = job.case.turns;
  const scenario = job.case.userSimulator;
  const simulated = simulator !== undefined;
  if (typeof simulator === 'string') return { status: 'error', assertions: [], reason: simulator };
  if (simulated && !adapter.supportsResume) {
    const reason = `engine \`${job.engine}\` cannot resume a session, so a simulated user cannot answer between turns (a custom engine needs \`conversation_mode: stateful\`)`;
    return { status: 'error', assertions: [], reason };
  }
  // An engine that cannot resume gets the whole conversation as one prompt (captures need real turns).
  const flatten = !adapter.supportsResume && specs.length > 1;
  if (flatten && specs.some((t) => t.capture.length > 0)) {
    const reason = `engine \`${job.engine}\` cannot resume a session, so the ${specs.length} turns would be sent as one prompt and \`capture\` cannot work (a custom engine needs \`conversation_mode: stateful\`)`;
    return { status: 'error', assertions: [], reason };
  }
  const turns: TurnSpec[] = flatten ? [{ content: specs.map((t) => t.content).join('\n\n'), capture: [] }] : specs;
  // An autonomous case: after its prompt, simulated turns (they may stop) up to max_turns.
  const lastTurn = scenario?.autonomous ? Math.max(job.case.maxTurns, turns.length) : turns.length;
  const vars: Record<string, string> = {};
  const history: string[] = [];
  const exchanges: SimulatedExchange[] = [];
  let sessionId: string | undefined;
  const offered = new Set<string>();
  let skipping = false;
  // Why the conversation ended (recorded with a simulator only): set on every way out below.
  let stopReason: string | undefined;
  const ended = (why: string, grading?: Grading): Grading | undefined => {
    if (simulated) {
      const last = result.turns[result.turns.length - 1];
      if (last) last.stopReason = why;
      transcript.stopReason = why;
    }
    return grading;
  };
  for (let i = 0; i < lastTurn; i++) {
    const spec: TurnSpec = turns[i] ?? { content: '', capture: [] };
    const index = i + 1;
    const fromSimulator = simulated && (spec.respond !== undefined || i >= turns.length);
    const source: TurnSource | undefined = simulated ? (fromSimulator ? 'simulator' : 'case') : undefined;
    const sourced = (t: TurnResult): TurnResult => (source ? { ...t, source } : t);
    if (skipping) {
      if (i >= turns.length) break;
      result.turns.push(sourced(emptyTurn(index, fromSimulator ? '' : spec.content, 'skipped', 'skipped by an earlier post_condition (on_fail: skip_remaining)')));
      continue;
    }
    let prompt: string;
    if (fromSimulator && simulator) {
      // `{{name}}` in a respond instruction ← an earlier turn's capture, as in a turn's content.
      const filled = spec.respond ? fillTurnTemplate(spec.respond, vars) : { text: '', missing: [] as string[] };
      if (filled.missing.length) {
        const reason = `turn ${index}'s respond instruction uses {{${filled.missing.join('}}, {{')}}}, which no earlier turn captured`;
        result.turns.push(sourced(emptyTurn(index, '', 'error', reason)));
        return ended('error', { status: 'error', assertions: [], reason });
      }
      const outcome = await simulator.decide({
        turn: index,
        ...(scenario?.scenario ? { scenario: scenario.scenario } : {}),
        ...(filled.text ? { instruction: filled.text } : {}),
        history: exchanges,
        mode: spec.respond !== undefined ? 'must_reply' : 'may_stop',
        signal: ctx.signal,
        deadline,
      });
      if (outcome.action === 'error') {
        const deadlineHit = Date.now() >= deadline - 100;
        const reason = deadlineHit && outcome.timeout ? `case timed out after ${job.case.timeoutSeconds} s waiting for the user simulator in turn ${index} (raise timeout_seconds in the case's constraints or in cases.defaults)` : outcome.reason;
        result.turns.push(sourced(emptyTurn(index, '', 'error', reason)));
        const interrupted = ctx.signal.aborted && !deadlineHit;
        return ended('error', interrupted ? { status: 'skipped', assertions: [], reason: INTERRUPTED } : { status: 'error', assertions: [], reason });
      }
      if (outcome.action === 'stop') {
        stopReason = outcome.reason ? `simulator_stop: ${outcome.reason}` : 'simulator_stop';
        break;
      }
      prompt = outcome.message;
    } else {
      // `{{name}}` ← an earlier turn's capture; `\{{` ← a literal `{{` (config/turn-template.ts, as validate checks it).
      const filled = fillTurnTemplate(spec.content, vars);
      prompt = filled.text;
      if (filled.missing.length) {
        const reason = `turn ${index} uses {{${filled.missing.join('}}, {{')}}}, which no earlier turn captured`;
        result.turns.push(sourced(emptyTurn(index, prompt, 'error', reason)));
        return ended('error', { status: 'error', assertions: [], reason });
      }
    }
    history.push(prompt);
    const remaining = deadline - Date.now();
    const timeoutMs = Math.min(spec.timeoutSeconds ? spec.timeoutSeconds * 1000 : Infinity, remaining);
    // A link the agent planted (an earlier turn, or before) is removed before this turn writes raw output.
    if (index > 1 || !freshFolder) await unplant(ctx.outputDir, result, `before turn ${index}`);
    events?.started(index);
    let t: TranscriptTurn;
    try {
      t = await adapter.runTurn(ctx, prepared, { index, prompt, sessionId, history: [...history], timeoutMs });
    } catch (e) {
      events?.finished(sourced(emptyTurn(index, prompt, 'error', (e as Error).message)));
      throw e;
    }
    if (source) t.source = source;
    const dropped = boundToolCalls(t);
    // An engine prices the scripted model's made-up tokens at a real model's rates: that is
    // no cost anybody pays, so it is not reported.
    if (ctx.engine.model.provider === 'scripted') delete t.costUsd;
    // An answer over the inline limit the adapter kept in memory goes to a file now (src/engine/final-text.ts).
    await boundTurnText(t, ctx.outputDir);
    transcript.turns.push(t);
    for (const s of t.skillsListed ?? []) offered.add(s);
    result.skillsOffered = t.skillsListed || offered.size ? [...offered] : result.skillsOffered;
    accumulate(result, t);
    const turn = toTurnResult(t);
    if (source) turn.source = source;
    if (dropped) {
      turn.toolCallsDropped = dropped;
      note(result, `turn ${index}: ${dropped} tool call(s) past the first ${MAX_TOOL_CALLS_PER_TURN} were counted, not kept`);
    }
    result.turns.push(turn);
    // The turn's status is final on every way out of this block (error, post-condition, capture).
    try {
      if (t.error) {
        const reason = turnErrorReason(t.error, index, job.case.timeoutSeconds, Date.now() >= deadline - 100, spec.timeoutSeconds);
        turn.reason = reason;
        // Stopped by Ctrl-C: not measured. The job's reason is exactly `run interrupted`, which
        // `run --resume` runs again (src/run/resume.ts); the turn keeps its own wording.
        const interrupted = t.error.kind === 'cancelled' && ctx.signal.aborted && Date.now() < deadline - 100;
        return ended('error', interrupted ? { status: 'skipped', assertions: [], reason: INTERRUPTED } : { status: 'error', assertions: [], reason });
      }
      sessionId = t.sessionId ?? sessionId;
      // What the simulator reads of this turn: the message sent and the agent's final answer.
      exchanges.push({ user: prompt, agent: t.finalText });
      if (spec.postCondition) {
        const pc = await evaluatePostConditionOn(turnText(t, ctx.outputDir), spec.postCondition);
        if (!pc.passed) {
          turn.status = 'failed';
          turn.reason = 'post_condition failed';
          if (spec.postCondition.onFail === 'fail') {
            return ended('post_condition', { status: 'fail', assertions: prefix(pc.assertions, index), reason: `post_condition of turn ${index} failed` });
          }
          skipping = true;
          stopReason = 'post_condition';
        }
      }
      for (const cap of spec.capture) {
        const got = await withFullText(turnText(t, ctx.outputDir), (whole) => captureDetail(whole, cap));
        if (!got.ok || got.value === '') {
          const reason = `capture \`${cap.variable}\` found no value in turn ${index}'s answer${got.ok ? '' : `: ${got.reason}`}`;
          turn.reason = reason;
          return ended('error', { status: 'error', assertions: [], reason });
        }
        vars[cap.variable] = got.value;
      }
    } finally {
      events?.finished(turn);
    }
  }
  ended(stopReason ?? (scenario?.autonomous ? 'max_turns' : 'turns_done'));
  if (result.turns.every((t) => t.status === 'skipped')) return { status: 'skipped', assertions: [], reason: 'every turn was skipped' };
  return undefined;
}

/**
 * Names what stopped a turn and which setting to change: the case deadline
 * (`timeout_seconds` in `constraints` or `cases.defaults`), a turn's own `timeout_seconds`,
 * or the engine's (`engine.custom.timeout_seconds`).
 */
function turnErrorReason(error: EngineError, index: number, caseSeconds: number, deadlineHit: boolean, turnSeconds?: number): string {
  if (deadlineHit && (error.kind === 'timeout' || error.kind === 'cancelled')) {
    return `case timed out after ${caseSeconds} s in turn ${index} (raise timeout_seconds in the case's constraints or in cases.defaults)`;
  }
  if (error.kind === 'timeout') {
    const knob = turnSeconds ? `input.turns[${index - 1}].timeout_seconds` : "the engine's timeout_seconds";
    return `turn ${index} ${error.message} (${knob})`;
  }
  if (error.kind === 'cancelled') return `turn ${index} cancelled: run interrupted`;
  return `${error.kind === 'api' ? 'engine API error' : 'engine error'} in turn ${index}: ${error.message}`;
}

/** Per run (its JobEnv): the case and variant folders made so far (src/util/contain.ts makeJobFolder). */
const madeFolders = new WeakMap<JobEnv, Set<string>>();

function madeFoldersOf(env: JobEnv): Set<string> {
  let made = madeFolders.get(env);
  if (!made) madeFolders.set(env, (made = new Set()));
  return made;
}

/** Adds a note to the job (see JobResult.notes). */
function note(result: JobResult, text: string): void {
  (result.notes ??= []).push(text);
}

/**
 * Removes every symbolic link (and hard-linked file name) planted in the job folder
 * (src/util/contain.ts removePlantedLinks; skill-up makes none there), makes `outputs/` again
 * if it was one, and notes what was removed.
 */
async function unplant(outputDir: string, result: JobResult, when: string): Promise<void> {
  const folders = new Set<string>();
  const removed = await removePlantedLinks(outputDir, folders);
  if (!folders.has('outputs')) await mkdir(join(outputDir, 'outputs'), { recursive: true });
  if (removed.length) {
    note(result, `removed ${removed.length} symbolic or hard link(s) or special file(s) planted in the job folder ${when}: ${removed.slice(0, 5).join(', ')}${removed.length > 5 ? ', …' : ''}`);
  }
}

/**
 * Bounds what a turn keeps of its tool calls, for every engine: the first
 * MAX_TOOL_CALLS_PER_TURN calls, and inputs plus outputs up to MAX_TOOL_IO_CHARS_PER_TURN
 * characters in all (later calls keep a short preview). Returns how many calls were dropped,
 * including those the engine's parser already counted without building (droppedToolCalls).
 */
function boundToolCalls(t: TranscriptTurn): number {
  let dropped = droppedToolCalls.get(t.toolCalls) ?? 0;
  if (t.toolCalls.length > MAX_TOOL_CALLS_PER_TURN) {
    dropped += t.toolCalls.length - MAX_TOOL_CALLS_PER_TURN;
    t.toolCalls = t.toolCalls.slice(0, MAX_TOOL_CALLS_PER_TURN);
  }
  let chars = 0;
  const cut = (s: string) => `${s.slice(0, TOOL_PREVIEW_CHARS)}… [skill-up: cut, this turn's tool inputs and outputs exceed ${MAX_TOOL_IO_CHARS_PER_TURN} characters]`;
  for (const c of t.toolCalls) {
    const input = typeof c.input === 'string' ? c.input : (JSON.stringify(c.input) ?? '');
    const size = input.length + (c.output?.length ?? 0);
    if (chars + size > MAX_TOOL_IO_CHARS_PER_TURN) {
      c.input = cut(input);
      if (c.output !== undefined) c.output = cut(c.output);
      chars += TOOL_PREVIEW_CHARS * 2;
    } else chars += size;
  }
  if (dropped) (t as TranscriptTurn & { toolCallsDropped?: number }).toolCallsDropped = dropped;
  return dropped;
}

function prefix(assertions: Assertion[], turn: number): Assertion[] {
  return assertions.map((a) => ({ ...a, text: `turn ${turn} ${a.text}` }));
}

function emptyTurn(index: number, prompt: string, status: TurnResult['status'], reason: string): TurnResult {
  return { index, prompt, status, finalText: '', reason, durationMs: 0, usage: zeroUsage(), toolCalls: [], skillActivations: [] };
}

function toTurnResult(t: TranscriptTurn): TurnResult {
  return {
    index: t.index,
    prompt: t.prompt,
    status: t.error ? 'error' : 'completed',
    finalText: t.finalText,
    ...(t.finalTextFile ? { finalTextFile: t.finalTextFile, finalTextBytes: t.finalTextBytes } : {}),
    durationMs: t.durationMs,
    usage: t.usage,
    costUsd: t.costUsd,
    toolCalls: t.toolCalls.map((c) => ({ name: c.name, input: c.input, ...(c.isError ? { isError: true } : {}) })),
    skillActivations: t.skillActivations,
    skillsListed: t.skillsListed,
    ...(t.toolsOffered ? { toolsOffered: t.toolsOffered } : {}),
    ...(t.permissionMode ? { permissionMode: t.permissionMode } : {}),
    sessionId: t.sessionId,
  };
}

function accumulate(r: JobResult, t: TranscriptTurn): void {
  r.engineDurationMs += t.durationMs;
  r.usage.input += t.usage.input;
  r.usage.output += t.usage.output;
  r.usage.cacheRead += t.usage.cacheRead;
  r.usage.cacheWrite += t.usage.cacheWrite;
  if (t.costUsd !== undefined) r.costUsd = (r.costUsd ?? 0) + t.costUsd;
  r.skillActivations.push(...t.skillActivations);
}
