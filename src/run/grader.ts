/**
 * The run-stage half of `agent_judge`: a grader agent run through the engine layer after the
 * agent's turns (the pure half, prompts, parsing and the verdict, is src/judge/agent/).
 *
 * Per grader run r (1..`repeats`), numbered n across the job's agent_judges:
 * 1. the finished workspace is COPIED (the grader cannot change what other judges, artifact
 *    collection or the saved changes see); the skill under test is removed from the copy's
 *    engine skill folders and `judge.skills` are installed into the grader engine's;
 * 2. the context folder `.skill-up/judge/` of the copy gets the materials `judge.context` asks
 *    for: `final_message.md`, `transcript.json`, `workspace.diff` (git diff against the
 *    baseline committed before the agent ran, src/runtime/baseline.ts), `generated_files.json`,
 *    `skill/<name>/` (with_skill only), `attachments/`, and `manifest.json`;
 * 3. the grader runs as job `<job id>/judge-<n>` (so the scripted model files its requests under
 *    `<job folder>/judge-<n>/` and its `judge: true` condition holds), its raw output in
 *    `<job folder>/judge-<n>/outputs/`, each answer in `reply-<k>.txt`, its transcript in
 *    `transcript.json`; an unusable answer gets ONE correction turn (the session resumed when
 *    the engine can, else a fresh prompt carrying the answer), then the run is unusable;
 * 4. the runs combine by majority per criterion (src/judge/agent/verdict.ts).
 *
 * Limits: each grader run has its own `timeout_seconds` (0 = none); the case deadline, which
 * bounds the agent's turns, does not apply (src/run/job.ts stops it before grading). Ctrl-C
 * (the run's signal) stops a grader. Its tokens, time and cost go into the outcome's `spend`,
 * never into the agent's.
 */
import { cp, lstat, mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../config/diagnostics.js';
import { missingVersionError } from '../config/engines.js';
import type { AgentJudgeSpec, EngineConfig, Suite } from '../config/types.js';
import { suiteEnvOf } from '../engine/env.js';
import { getAdapter } from '../engine/registry.js';
import { EngineUnavailable, type EngineAdapter, type EngineContext, type TokenUsage, type Transcript, type TranscriptTurn } from '../engine/types.js';
import { zeroUsage } from '../engine/types.js';
import { estimateCost } from '../cost/estimate.js';
import type { AgentJudgeRunner } from '../judge/index.js';
import {
  agentJudgeVerdict,
  boundChanges,
  boundText,
  boundTranscript,
  combineRuns,
  CONTEXT_DIR,
  correctionPrompt,
  graderPrompt,
  MATERIAL_FILES,
  materialLines,
  parseGraderReply,
  wantedMaterials,
  type GraderRun,
  type Material,
} from '../judge/agent/index.js';
import { finalMessageText, textHead } from '../judge/text.js';
import type { JudgeOutcome } from '../judge/outcome.js';
import type { JudgeInput, JudgeSpend } from '../judge/types.js';
import type { Job } from '../plan/plan.js';
import { diffAgainstBaseline } from '../runtime/baseline.js';
import { sanitiseId } from '../runtime/workspace.js';
import { applySkillInstall, planSkillInstall } from '../skill/install.js';
import { lintSkill } from '../skill/lint.js';
import { isInside } from '../util/contain.js';
import { redactUntracked, writeJson, writeText } from '../util/out.js';
import { redactor } from '../util/redact.js';
import type { ResolvedSkill } from './job.js';
import { graderEngine } from './grader-engines.js';

/** Everything a grader run needs; no JobEnv, so `skill-up regrade` can build one for a saved job. */
export interface AgentJudgeRunnerOptions {
  suite: Suite;
  /** Adapters by engine name (the run's); the job's own engine's is used for a default grader. */
  adapters: Map<string, EngineAdapter>;
  job: Pick<Job, 'id' | 'case' | 'engine' | 'variant' | 'trial'>;
  /** The job's engine as the run configured it (`--engine`, `--model` applied): the default grader engine. */
  engine: EngineConfig;
  /** Absolute path of the job folder; grader run n writes into `<jobDir>/judge-<n>/`. */
  jobDir: string;
  /** The skills under test, as installed (with_skill): given to the grader as `skill/<name>/`. */
  skills: ResolvedSkill[];
  /** Names of the skills installed into the agent's workspace (empty in without_skill): removed from the grader's copy. */
  installedSkills: string[];
  /** skill-up's environment, the source adapters pick from (EngineContext.baseEnv). */
  baseEnv: Record<string, string | undefined>;
  /** The scripted model server's base URL, when the run has one. */
  modelBaseUrl?: string;
  /** Parent folder of the grader's workspace copies (default: the OS temp folder). */
  workspaceRoot?: string;
  /** Aborting stops the grader (Ctrl-C); the job's deadline is NOT this signal. */
  signal: AbortSignal;
  /**
   * The baseline's git folder and the workspace it was committed from (src/runtime/baseline.ts
   * `commitBaseline`), for `workspace.diff`; unset = the diff is marked unavailable, with `baselineProblem`.
   */
  baseline?: { gitDir: string; homeDir: string };
  baselineProblem?: string;
  /** Keep each grader's workspace copy (`--keep-workspaces`); default: removed when it ends. */
  keepWorkspaces?: boolean;
}

/** A grader engine's adapter, checked once per engine config (a pinned version is installed then). */
const checkedAdapters = new WeakMap<EngineConfig, Promise<EngineAdapter>>();

async function adapterFor(engine: EngineConfig, opts: AgentJudgeRunnerOptions): Promise<EngineAdapter> {
  if (engine === opts.engine) {
    const own = opts.adapters.get(opts.job.engine);
    if (own) return own;
  }
  let p = checkedAdapters.get(engine);
  if (!p) {
    p = (async () => {
      const a = await getAdapter(engine, opts.suite);
      if (a.check) await a.check(engine);
      return a;
    })();
    checkedAdapters.set(engine, p);
  }
  return p;
}

/** A grader engine that cannot run: the run stops before its first job (exit 3). */
export class GraderEngineUnavailable extends Error {}

/**
 * The preflight of the suite's grader engines (each agent_judge's own `engine`), before any
 * agent runs: each is loaded and checked once (a pinned version installed), and the adapter
 * kept for the graders. @throws ConfigError for a pinned version npm does not have (at the
 * pin's line: an inline engine's `version`, else the suite engine's), GraderEngineUnavailable
 * for an engine that cannot run (not installed, no binary), naming the judge's case.
 */
export async function preflightGraderEngines(suite: Suite): Promise<Map<string, string | undefined>> {
  const versions = new Map<string, string | undefined>();
  const seen = new Set<EngineConfig>();
  for (const c of suite.cases) {
    for (const j of c.judges) {
      if (j.type !== 'agent_judge' || !j.engine || seen.has(j.engine)) continue;
      const engine = j.engine;
      seen.add(engine);
      try {
        const a = await getAdapter(engine, suite);
        const found = a.check ? await a.check(engine) : undefined;
        versions.set(engine.displayName, found?.version);
        checkedAdapters.set(engine, Promise.resolve(a));
      } catch (e) {
        if (!(e instanceof EngineUnavailable)) throw e;
        const badPin = missingGraderVersionError(j, suite.evalFile, e.message);
        if (badPin) throw badPin;
        throw new GraderEngineUnavailable(`the grader's engine \`${engine.displayName}\` of case \`${c.id}\`'s agent_judge is not available: ${e.message}`);
      }
    }
  }
  return versions;
}

/** A pinned grader engine version npm does not have, as a config error at the pin (undefined for any other failure). */
function missingGraderVersionError(spec: AgentJudgeSpec, evalFile: string, message: string): ConfigError | undefined {
  const at = spec.engineVersionAt;
  if (!at) return spec.engine ? missingVersionError(evalFile, spec.engine, message) : undefined;
  const general = missingVersionError(evalFile, spec.engine!, message);
  if (!general) return undefined;
  // The message is the suite engine's; its place is the judge's own `version`.
  const text = general.diagnostics.find((d) => d.severity === 'error')?.message ?? message;
  return new ConfigError([{ file: at.file, line: at.line, col: at.col, path: at.path, message: text, severity: 'error' }]);
}

/**
 * Builds the AgentJudgeRunner of one job: gradeJob (src/judge/index.ts) calls it for each of
 * the case's agent_judges. Never throws for the grader's own failures: an engine that cannot
 * run, a grader that errs or answers unusably, a copy that fails are an `error` outcome (never
 * a fail), with the reason.
 */
export function agentJudgeRunner(opts: AgentJudgeRunnerOptions): AgentJudgeRunner {
  let counter = 0;
  return async (spec, input) => {
    const started = Date.now();
    const spend: JudgeSpend = { usage: zeroUsage(), durationMs: 0, runs: 0 };
    const done = (o: Omit<JudgeOutcome, 'spend' | 'usage'>, agreement?: number): JudgeOutcome => {
      spend.durationMs = Date.now() - started;
      if (agreement !== undefined && spec.repeats > 1) spend.agreement = agreement;
      return { ...o, usage: spend.usage, spend };
    };
    if (spec.criteria.length === 0) return done({ status: 'error', assertions: [], reason: 'this agent_judge has no criteria to grade' });
    const engine = graderEngine(spec, opts.engine);
    let adapter: EngineAdapter;
    try {
      adapter = await adapterFor(spec.engine ?? opts.engine, opts);
    } catch (e) {
      const why = e instanceof EngineUnavailable ? e.message : `cannot load it: ${(e as Error).message}`;
      return done({ status: 'error', assertions: [], reason: `the grader's engine \`${engine.displayName}\` is not available: ${why}` });
    }
    let diff: { text: string; truncated: boolean; bytes: number } | string | undefined;
    if (spec.context.workspaceDiff) diff = await baselineDiff(spec, input, opts);
    const runs: GraderRun[] = [];
    for (let r = 1; r <= spec.repeats; r++) {
      if (opts.signal.aborted) return done({ status: 'error', assertions: [], reason: 'cancelled' });
      const n = ++counter;
      const run = await graderRun(n, spec, input, engine, adapter, diff, opts, spend).catch((e: Error): GraderRun => ({ ok: false, reason: `grader run ${n} could not run: ${e.message}` }));
      runs.push(run);
      spend.runs++;
    }
    if (opts.signal.aborted) return done({ status: 'error', assertions: [], reason: 'cancelled' });
    const combined = combineRuns(runs, spec.criteria);
    return done(agentJudgeVerdict(combined, spec.passThreshold), combined.ok ? combined.agreement : undefined);
  };
}

/** `git diff` against the baseline, bounded by the context limits, or why there is none. */
async function baselineDiff(spec: AgentJudgeSpec, input: JudgeInput, opts: AgentJudgeRunnerOptions): Promise<{ text: string; truncated: boolean; bytes: number } | string> {
  if (!opts.baseline) return opts.baselineProblem ?? 'no baseline was committed before the agent ran';
  try {
    const d = await diffAgainstBaseline(
      { dir: input.workspace, homeDir: opts.baseline.homeDir },
      { gitDir: opts.baseline.gitDir, maxBytes: spec.context.limits.maxBytes, ...(spec.context.limits.workspaceDiffMaxLines ? { maxLines: spec.context.limits.workspaceDiffMaxLines } : {}), signal: opts.signal },
    );
    return { text: d.text, truncated: d.truncated, bytes: d.bytes };
  } catch (e) {
    return `the workspace diff could not be made: ${(e as Error).message}`;
  }
}

/** A copy of `from` at a fresh folder beside the job's workspaces; regular files, folders and links only (links copied as they are). */
async function copyWorkspace(from: string, root: string, id: string): Promise<{ dir: string; homeDir: string }> {
  await mkdir(root, { recursive: true });
  const dir = await realpath(await mkdtemp(path.join(root, `skill-up-${sanitiseId(id)}-`)));
  const homeDir = `${dir}-home`;
  await mkdir(homeDir, { mode: 0o700 });
  await cp(from, dir, {
    recursive: true,
    verbatimSymlinks: true,
    preserveTimestamps: true,
    force: true,
    filter: async (src) => {
      const st = await lstat(src).catch(() => undefined);
      return !!st && (st.isFile() || st.isDirectory() || st.isSymbolicLink());
    },
  });
  return { dir, homeDir };
}

/**
 * Removes `<dir>/<skillDir>/<name>` for every engine skill folder and installed skill, and each
 * of `paths` (workspace-relative install folders of path targets), never outside `dir`.
 */
async function removeInstalledSkills(dir: string, skillDirs: readonly string[], names: readonly string[], paths: readonly string[] = []): Promise<void> {
  for (const p of paths) {
    const abs = path.resolve(dir, p);
    if (isInside(dir, abs) && abs !== dir) await rm(abs, { recursive: true, force: true });
  }
  for (const sd of new Set(skillDirs)) {
    for (const name of names) {
      const abs = path.resolve(dir, sd, name);
      if (isInside(dir, abs) && abs !== dir) await rm(abs, { recursive: true, force: true });
    }
    // A skill folder left empty by the removal goes too (an engine may list an empty folder).
    const folder = path.resolve(dir, sd);
    const left = await readdir(folder).catch(() => undefined);
    if (left && left.length === 0 && isInside(dir, folder) && folder !== dir) await rm(folder, { recursive: true, force: true });
  }
}

/** Writes the context folder into the copy; returns the materials for the prompt and manifest. */
async function writeContext(
  copy: string,
  spec: AgentJudgeSpec,
  input: JudgeInput,
  diff: { text: string; truncated: boolean; bytes: number } | string | undefined,
  opts: AgentJudgeRunnerOptions,
): Promise<Material[]> {
  const dir = path.join(copy, CONTEXT_DIR);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const ctx = spec.context;
  const want = wantedMaterials(ctx, opts.job.variant);
  const max = ctx.limits.maxBytes;
  const materials: Material[] = [];
  // Written through the redacting writers: the grader's requests (and the scripted model's log) never carry a secret.
  const put = async (key: Material['key'], file: string, label: string, bounded: { text: string; bytes: number; originalBytes: number; truncated: boolean }) => {
    await writeText(path.join(dir, file), bounded.text);
    materials.push({ key, path: file, label, bytes: bounded.bytes, originalBytes: bounded.originalBytes, ...(bounded.truncated ? { truncated: true } : {}) });
  };
  if (want.has('final_message')) {
    const text = finalMessageText(input);
    const whole = typeof text === 'string' ? text : await textHead(text, max + 1);
    const b = boundText(whole, max);
    if (typeof text !== 'string' && text.bytes > max) Object.assign(b, { originalBytes: text.bytes, truncated: true });
    await put('final_message', MATERIAL_FILES.finalMessage, "the agent's final message", b);
  }
  if (want.has('transcript')) {
    await put('transcript', MATERIAL_FILES.transcript, "the agent's transcript: each turn's prompt, tool calls (name, input, output) and answer", boundTranscript(input.transcript, { maxBytes: max, ...(ctx.limits.transcriptMaxTurns ? { maxTurns: ctx.limits.transcriptMaxTurns } : {}) }));
  }
  if (want.has('workspace_diff') && diff !== undefined) {
    const b = typeof diff === 'string' ? boundText(`[skill-up: no diff: ${diff}]\n`, max) : { text: diff.text, bytes: Buffer.byteLength(diff.text), originalBytes: diff.bytes, truncated: diff.truncated };
    await put('workspace_diff', MATERIAL_FILES.workspaceDiff, 'git diff of the workspace as the agent left it against the workspace before the agent ran', b);
  }
  if (want.has('generated_files')) {
    await put('generated_files', MATERIAL_FILES.generatedFiles, 'the files the agent added, modified and deleted', boundChanges(input.changes, max));
  }
  if (want.has('skill_source')) {
    for (const s of opts.skills.filter((k) => opts.installedSkills.includes(k.name))) {
      const rel = `${MATERIAL_FILES.skill}/${s.name}`;
      await applySkillInstall(s.plan, path.join(dir, rel));
      materials.push({ key: 'skill_source', path: `${rel}/`, label: `the files of the skill \`${s.name}\` the agent had (SKILL.md and the rest)` });
    }
  }
  for (const a of ctx.attachments) {
    const rel = `${MATERIAL_FILES.attachments}/${path.basename(a.path)}`;
    await cp(a.path, path.join(dir, rel), { recursive: true, verbatimSymlinks: true, force: true });
    materials.push({ key: 'attachment', path: rel, label: a.label ?? 'an attachment of the suite' });
  }
  await writeJson(path.join(dir, MATERIAL_FILES.manifest), { profile: ctx.profile, materials: materials.map(manifestEntry) });
  return materials;
}

function manifestEntry(m: Material): Record<string, unknown> {
  return { key: m.key, path: m.path, label: m.label, ...(m.bytes !== undefined ? { bytes: m.bytes, original_bytes: m.originalBytes } : {}), ...(m.truncated ? { truncated: true } : {}) };
}

/** Characters of a grader's answer read from a spilled answer file. */
const MAX_REPLY_READ_BYTES = 1024 * 1024;

/** A turn's whole answer (read from its file when spilled, up to MAX_REPLY_READ_BYTES). */
async function replyText(t: TranscriptTurn, outputDir: string): Promise<string> {
  if (!t.finalTextFile) return t.finalText;
  return textHead({ preview: t.finalText, path: path.join(outputDir, t.finalTextFile), bytes: t.finalTextBytes ?? 0 }, MAX_REPLY_READ_BYTES);
}

function addUsage(into: TokenUsage, u: TokenUsage): void {
  into.input += u.input;
  into.output += u.output;
  into.cacheRead += u.cacheRead;
  into.cacheWrite += u.cacheWrite;
}

/** One grader run: copy, context, prompt, at most two turns. */
async function graderRun(
  n: number,
  spec: AgentJudgeSpec,
  input: JudgeInput,
  engine: EngineConfig,
  adapter: EngineAdapter,
  diff: { text: string; truncated: boolean; bytes: number } | string | undefined,
  opts: AgentJudgeRunnerOptions,
  spend: JudgeSpend,
): Promise<GraderRun> {
  const id = `${opts.job.id}/judge-${n}`;
  const outDir = path.join(opts.jobDir, `judge-${n}`);
  await mkdir(path.join(outDir, 'outputs'), { recursive: true });
  const ws = await copyWorkspace(input.workspace, opts.workspaceRoot ?? os.tmpdir(), id);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  opts.signal.addEventListener('abort', onAbort, { once: true });
  const deadline = spec.timeoutSeconds > 0 ? Date.now() + spec.timeoutSeconds * 1000 : Infinity;
  const timer = Number.isFinite(deadline) ? setTimeout(() => stop.abort(), deadline - Date.now() + 50) : undefined;
  const transcript: Transcript = { engine: engine.name, ...(engine.model.name ? { model: engine.model.name } : {}), turns: [] };
  try {
    // The skill under test is the agent's, not the grader's: it sees the skill's files as a material instead.
    const jobAdapter = opts.adapters.get(opts.job.engine);
    const targets = opts.skills.filter((k) => k.dir !== undefined && opts.installedSkills.includes(k.name)).map((k) => k.dir!);
    await removeInstalledSkills(ws.dir, [...(jobAdapter?.skillDirs ?? []), ...adapter.skillDirs], opts.installedSkills, targets);
    const graderSkills: string[] = [];
    for (const skillDir of spec.skills) {
      const name = (await lintSkill(skillDir)).name ?? path.basename(skillDir);
      const plan = await planSkillInstall({ skillDir, include: [], exclude: [] });
      await applySkillInstall(plan, path.join(ws.dir, adapter.skillDirs[0]!, name));
      graderSkills.push(name);
    }
    const materials = await writeContext(ws.dir, spec, input, diff, opts);
    const inline = spec.context.finalMessage && Buffer.byteLength(input.finalMessage) <= 4096 && !input.finalMessageFile ? input.finalMessage : undefined;
    // Redacted exactly as the context files are (src/util/out.ts writers): the prompt reaches the grader engine, and with it an API.
    const prompt = redactor().redact(graderPrompt({ criteria: spec.criteria, contextDir: CONTEXT_DIR, materials: materialLines(materials), ...(inline !== undefined ? { finalMessage: inline } : {}) }));
    await writeText(path.join(outDir, 'prompt.txt'), prompt);
    const ctx: EngineContext = {
      jobId: id,
      engine,
      case: { ...opts.job.case, turns: [{ content: prompt, capture: [] }], judges: [] },
      variant: opts.job.variant,
      trial: opts.job.trial,
      workspace: ws.dir,
      homeDir: ws.homeDir,
      outputDir: outDir,
      installedSkills: graderSkills,
      baseEnv: opts.baseEnv,
      suiteEnv: suiteEnvOf(opts.suite, opts.baseEnv),
      signal: stop.signal,
      deadline,
      ...(opts.modelBaseUrl ? { modelBaseUrl: opts.modelBaseUrl } : {}),
    };
    const prepared = await adapter.prepare(ctx);
    const turn = async (index: number, text: string, sessionId?: string, history: string[] = [text]): Promise<TranscriptTurn> => {
      const t = await adapter.runTurn(ctx, prepared, { index, prompt: text, history, timeoutMs: Number.isFinite(deadline) ? Math.max(0, deadline - Date.now()) : Infinity, ...(sessionId ? { sessionId } : {}) });
      // The scripted model's tokens are made up: no cost (as for the agent, src/run/job.ts).
      if (engine.model.provider === 'scripted') delete t.costUsd;
      transcript.turns.push(t);
      addUsage(spend.usage, t.usage);
      if (t.costUsd !== undefined) spend.costUsd = (spend.costUsd ?? 0) + t.costUsd;
      else {
        const est = estimateCost(engine.model.name, t.usage, { ...(engine.model.provider ? { provider: engine.model.provider } : {}) });
        if (est) {
          spend.costUsd = (spend.costUsd ?? 0) + est.usd;
          spend.costEstimated = true;
        }
      }
      return t;
    };
    // A turn error, or an engine that reported failure through its exit code (a custom engine's
    // SessionResult `exit_code`, a CLI's exit status): the run is unusable, whatever it answered.
    const failed = (t: TranscriptTurn) =>
      t.error
        ? `grader run ${n} (${engine.displayName}): ${stop.signal.aborted && !opts.signal.aborted ? `timed out after ${spec.timeoutSeconds} s (the agent_judge's timeout_seconds)` : `${t.error.kind === 'api' ? 'engine API error' : 'engine error'}: ${t.error.message}`}`
        : t.exitCode !== null && t.exitCode !== 0
          ? `grader run ${n} (${engine.displayName}): the engine reported failure (exit code ${t.exitCode}); its answer is not used`
          : undefined;
    const first = await turn(1, prompt);
    const firstError = failed(first);
    if (firstError) return { ok: false, reason: firstError };
    const reply1 = await replyText(first, outDir);
    await writeText(path.join(outDir, 'reply-1.txt'), reply1);
    const parsed1 = parseGraderReply(reply1, spec.criteria);
    if (parsed1.ok) return parsed1;
    // One bounded correction: the same session when the engine resumes it, else a fresh prompt with the answer quoted.
    const resume = adapter.supportsResume && first.sessionId !== undefined;
    const correction = redactor().redact(
      resume ? correctionPrompt({ criteria: spec.criteria, problems: parsed1.problems }) : correctionPrompt({ criteria: spec.criteria, problems: parsed1.problems, original: prompt, previousReply: reply1 }),
    );
    const second = await turn(2, correction, resume ? first.sessionId : undefined, resume ? [prompt, correction] : [correction]);
    const secondError = failed(second);
    if (secondError) return { ok: false, reason: secondError };
    const reply2 = await replyText(second, outDir);
    await writeText(path.join(outDir, 'reply-2.txt'), reply2);
    const parsed2 = parseGraderReply(reply2, spec.criteria);
    if (parsed2.ok) return parsed2;
    const rel = path.relative(opts.jobDir, outDir);
    return { ok: false, reason: `grader run ${n} answered unusably twice (${parsed2.problems.slice(0, 3).join('; ')}); its replies are in ${rel}/reply-1.txt and ${rel}/reply-2.txt` };
  } finally {
    clearTimeout(timer);
    opts.signal.removeEventListener('abort', onAbort);
    await writeJson(path.join(outDir, 'transcript.json'), transcript).catch(() => undefined);
    // Raw engine output is written as the grader wrote it; redacted now, as the agent's is (src/run/job.ts).
    await redactUntracked(path.join(outDir, 'outputs')).catch(() => undefined);
    if (!opts.keepWorkspaces) {
      await rm(ws.dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
      await rm(ws.homeDir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined);
    } else (spend.workspaces ??= []).push(ws.dir);
  }
}
