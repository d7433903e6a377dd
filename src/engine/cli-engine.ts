/**
 * The lifecycle every CLI engine shares (one process per user turn, output on stdout as lines):
 * binary resolution and `check`, the isolated home and environment, `prepare`, the turn loop
 * (files, time limit, process supervision, parsing), error classification and the mapping of a
 * parser's summary into a `TranscriptTurn`. An engine folder supplies only its own facts as a
 * `CliEngineSpec` (command line, config files, parser, engine-specific error rules) and its
 * definition (engines/<name>/index.ts); `cliEngine(definition, spec)` makes the adapter.
 */
import { realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join, sep } from 'node:path';
import type { EngineConfig } from '../config/types.js';
import type { EngineDefinition } from './definition.js';
import { agentEnv } from './env.js';
import { describeFailure, readHead, readTail, runProcess, type ProcResult, type StderrRef } from './proc.js';
import { exchangeMark, fillOfferedFromModel, noteJobEngine } from '../model/offered.js';
import { probeVersion, resolveEngineBinary } from './resolve.js';
import { feedLines, processError, progressLine } from './turn.js';
import {
  EngineUnavailable,
  blankTurn,
  type EngineAdapter,
  type EngineContext,
  type EngineError,
  type SkillActivation,
  type TokenUsage,
  type ToolCall,
  type TranscriptTurn,
  type TurnRequest,
} from './types.js';

/** A process environment: variable → value (undefined = unset). */
export type ProcessEnv = Record<string, string | undefined>;

/**
 * What must be mounted for `bin` to run elsewhere: for an npm-installed executable
 * (`<dir>/node_modules/.bin/x`, a link into `<dir>/node_modules/<package>/…`), the folder above
 * its outermost `node_modules`, for the path as called and for its real path; any other file is
 * itself. Paths of this machine, absolute.
 */
export function packageFolders(bin: string): string[] {
  const above = (p: string): string => {
    const i = p.split(sep).indexOf('node_modules');
    return i > 0 ? p.split(sep).slice(0, i).join(sep) || sep : p;
  };
  let real = bin;
  try {
    real = realpathSync(bin);
  } catch {
    /* missing: the turn reports it */
  }
  return [...new Set([above(bin), above(real)])];
}

/** True when `engine.model.provider` is `scripted` (skill-up's scripted model server). */
export function isScripted(engine: EngineConfig): boolean {
  return engine.model.provider === 'scripted';
}

/**
 * The API key an engine sends the scripted server: `skill-up-job:<jobId>`, under which the
 * server files each exchange (src/model/log.ts), or `fallback` when the context has no job id.
 */
export function scriptedApiKey(ctx: Pick<EngineContext, 'jobId'>, fallback = 'dummy'): string {
  return ctx.jobId ? `skill-up-job:${ctx.jobId}` : fallback;
}

/** What `isolatedEnv` removes besides what the allow-list withholds. */
export interface IsolatedEnvOptions {
  /** Variables always removed (e.g. an IDE companion's connection). */
  drop?: readonly string[];
  /** Variables removed with the scripted model: each would route or authenticate elsewhere. */
  dropScripted?: readonly string[];
  /**
   * Throw when the model is scripted but no server URL was given (default true); engines whose
   * server URL goes into a config file instead check there.
   */
  requireServer?: boolean;
}

/**
 * The common part of a job's engine environment: the allow-listed part of `ctx.baseEnv`
 * (`agentEnv` with the definition's `envAllow`) and the suite's `environment.env`, with
 * `HOME=<homeDir>` and `XDG_{CONFIG,CACHE,DATA,STATE}_HOME` under it (`.config`, `.cache`,
 * `.local/share`, `.local/state`), so no engine reads or writes the user's real home. The
 * engine then sets its own variables on the result.
 * @throws EngineUnavailable when the model is scripted but `ctx.modelBaseUrl` is unset (unless `requireServer: false`).
 */
export function isolatedEnv(ctx: EngineContext, engine: Pick<EngineDefinition, 'name' | 'envAllow'>, opts: IsolatedEnvOptions = {}): ProcessEnv {
  const env = agentEnv(ctx, engine.envAllow);
  for (const v of opts.drop ?? []) delete env[v];
  env.HOME = ctx.homeDir;
  env.XDG_CONFIG_HOME = join(ctx.homeDir, '.config');
  env.XDG_CACHE_HOME = join(ctx.homeDir, '.cache');
  env.XDG_DATA_HOME = join(ctx.homeDir, '.local', 'share');
  env.XDG_STATE_HOME = join(ctx.homeDir, '.local', 'state');
  if (isScripted(ctx.engine)) {
    if (!ctx.modelBaseUrl && opts.requireServer !== false) throw noServer(engine.name);
    for (const v of opts.dropScripted ?? []) delete env[v];
  }
  return env;
}

/** `<base>/v1` without a trailing slash: OpenAI-compatible clients append `/chat/completions` themselves. */
export function openaiBaseUrl(url: string): string {
  const u = url.replace(/\/+$/, '');
  return /\/v1$/.test(u) ? u : `${u}/v1`;
}

/** The error for a scripted model without a server URL. */
export function noServer(engine: string): EngineUnavailable {
  return new EngineUnavailable(`${engine}: engine.model.provider is "scripted" but no scripted model server was started`);
}

/**
 * An engine's executable for a job (override variable, pinned version in the cache, PATH,
 * newest cached): never throws for a missing one, which every turn then reports as an `error`
 * of kind `missing` with this reason.
 */
export async function resolveForJob(def: Pick<EngineDefinition, 'name' | 'npmPackage' | 'bin'>, version: string | undefined): Promise<{ bin?: string; missing?: string }> {
  try {
    const r = await resolveEngineBinary({ npmPackage: def.npmPackage, bin: def.bin, version, engine: def.name, onProgress: progressLine });
    return { bin: r.path };
  } catch (e) {
    if (!(e instanceof EngineUnavailable)) throw e;
    return { missing: e.message };
  }
}

/**
 * The `check` of a CLI engine: resolves (installing a pinned version into the cache, with one
 * progress line), asks `requires` (when given) what else the engine needs, against
 * skill-up's own environment (`process.env`), and returns the version the executable reports.
 * @throws EngineUnavailable when it cannot be resolved, installed or run, or `requires` names a reason.
 */
export async function checkEngineBinary(
  def: Pick<EngineDefinition, 'name' | 'npmPackage' | 'bin'>,
  version: string | undefined,
  requires?: (bin: string, env: ProcessEnv) => Promise<string | undefined>,
): Promise<{ version?: string }> {
  const r = await resolveEngineBinary({ npmPackage: def.npmPackage, bin: def.bin, version, engine: def.name, onProgress: progressLine });
  const why = requires ? await requires(r.path, process.env) : undefined;
  if (why) throw new EngineUnavailable(why);
  return { version: await probeVersion(r.path) };
}

/**
 * What an engine's output parser reports for one turn: the fields `turnFromSummary` copies into
 * the `TranscriptTurn` (same names, same units), plus whatever else the engine's parser keeps.
 */
export interface ParserSummary {
  finalText: string;
  toolCalls: ToolCall[];
  skillActivations: SkillActivation[];
  /** Tokens of this turn (never cumulative). */
  usage: TokenUsage;
  skillsListed?: string[];
  /** This turn's cost in USD, when the engine reports one. */
  costUsd?: number;
  sessionId?: string;
  error?: EngineError;
  /** Names of the tools the engine offered the model, when observable. */
  toolsOffered?: string[];
  /** The engine's permission / approval mode for the turn, when observable. */
  permissionMode?: string;
}

/** A line-oriented output parser: every stdout line in order, then `finish`. */
export interface LineParser<S extends ParserSummary> {
  push(line: string): void;
  finish(): S;
}

/** The process-level facts of a turn `turnFromSummary` adds to the summary's. */
export interface TurnOutcome {
  durationMs: number;
  exitCode: number | null;
  rawFiles: string[];
  /** Session id when the summary has none (the resumed one, or one preset on the command line). */
  sessionId?: string;
  error?: EngineError;
}

/**
 * The `TranscriptTurn` of a parsed turn: `finalText`, `toolCalls`, `skillActivations`, `usage`
 * from the summary; `skillsListed`, `costUsd`, `toolsOffered`, `permissionMode` when the summary
 * has them (`cliEngine` then fills a missing `permissionMode` from the spec's hook); `sessionId`
 * from the summary, else the outcome's; `durationMs` (rounded ms), `exitCode`, `rawFiles` and
 * `error` from the outcome.
 */
export function turnFromSummary(base: TranscriptTurn, s: ParserSummary, o: TurnOutcome): TranscriptTurn {
  const out: TranscriptTurn = {
    ...base,
    finalText: s.finalText,
    toolCalls: s.toolCalls,
    skillActivations: s.skillActivations,
    usage: s.usage,
    durationMs: Math.round(o.durationMs),
    exitCode: o.exitCode,
    rawFiles: o.rawFiles,
  };
  if (s.skillsListed !== undefined) out.skillsListed = s.skillsListed;
  if (s.costUsd !== undefined) out.costUsd = s.costUsd;
  if (s.toolsOffered !== undefined) out.toolsOffered = s.toolsOffered;
  if (s.permissionMode !== undefined) out.permissionMode = s.permissionMode;
  const sessionId = s.sessionId ?? o.sessionId;
  if (sessionId !== undefined) out.sessionId = sessionId;
  else delete out.sessionId;
  if (o.error) out.error = o.error;
  return out;
}

/** The engine-specific inputs of `decideTurnError`. */
export interface ErrorFacts {
  /** Whether the output shows the turn ran to its end (a `result` line, `turn.completed`, …). */
  completed: boolean;
  /** The `protocol` message for an exit 0 that is not `completed`. */
  noResult: string;
  /** An error the engine's exit alone means, checked after the output's own error (e.g. max turns). */
  exitError?: EngineError;
  /** Appended to a timeout's message (e.g. the engine's last retry message). */
  timeoutDetail?: string;
}

/**
 * A turn's error, in this order: could not start (`missing` for ENOENT/EACCES, else `crash`),
 * `timeout` (with `timeoutDetail`), `cancelled`, stdout cut at the cap (`protocol`), the error
 * the output reports, `exitError`, a non-zero exit or a signal (`crash` with the stderr tail),
 * and an exit 0 that is not `completed` (`protocol`). Undefined when the turn succeeded.
 * `stderr` (the stderr file's job-folder-relative path and first bytes) lets a crash's message
 * carry stderr's error line and name the file (src/engine/proc.ts describeFailure).
 */
export function decideTurnError(r: ProcResult, summary: Pick<ParserSummary, 'error'>, timeoutMs: number, stderrTail: string, facts: ErrorFacts, stderr: StderrRef = {}): EngineError | undefined {
  const failed = processError(r, timeoutMs, stderrTail);
  if (failed?.kind === 'timeout' && facts.timeoutDetail) return { ...failed, message: `${failed.message}; ${facts.timeoutDetail}` };
  if (failed) return failed;
  if (summary.error) return summary.error;
  if (facts.exitError) return facts.exitError;
  if (r.exitCode !== 0) return { kind: 'crash', message: describeFailure(r, timeoutMs, stderrTail, stderr) };
  if (!facts.completed) return { kind: 'protocol', message: facts.noResult };
  return undefined;
}

/**
 * Per-job state of a CLI engine: the engine's own (`S`, made by `setup`), the executable and
 * `carried`, the per-session figures the engine reports cumulatively (session id → the last
 * turn's `C`, e.g. a total cost), which the next resumed turn's parser subtracts.
 */
export type CliPrepared<S, C = unknown> = S & {
  /** Absolute path of the executable; unset when it could not be resolved. */
  bin?: string;
  /** Why the engine cannot run (every turn then ends with an error of kind `missing`). */
  missing?: string;
  carried: Map<string, C>;
};

/** The files of one turn, job-folder-relative (`…Rel`) and absolute. */
export interface TurnFiles {
  stdoutRel: string;
  stderrRel: string;
  stdoutFile: string;
  stderrFile: string;
}

/** One turn's command line. */
export interface TurnCommand {
  /** Arguments after the executable. */
  args: string[];
  /** Text for the process's stdin (a prompt too long for argv, or one the engine reads there). */
  stdin?: string;
  /** Session id chosen for a new session (preset on the command line), used when the output has none. */
  sessionId?: string;
}

/** What an engine folder supplies to `cliEngine`: only its own facts. */
export interface CliEngineSpec<S extends { env: ProcessEnv }, Sum extends ParserSummary, C = never> {
  /** Name of the stdout file after `outputs/turn-<n>.` (e.g. `stream.jsonl`). */
  stdoutName: string;
  /** `setup` writes `ctx.mcpServers` into the engine's own configuration (engines/<name>/mcp.ts). */
  supportsMcp?: boolean;
  /**
   * Writes the job's config files into its home and returns the engine's per-job state, with
   * the complete environment of its processes (built on `isolatedEnv`).
   * @throws EngineUnavailable when the job's config makes the engine unusable (scripted without a server).
   */
  setup(ctx: EngineContext): Promise<S>;
  /**
   * What the engine needs besides its executable (e.g. `rg` on PATH): the reason it cannot run
   * with executable `bin` in environment `env`, or undefined when it can. Run by `check` (with
   * skill-up's own environment), by `skill-up engines check` and by `prepare` (with the job's).
   */
  requires?(bin: string, env: ProcessEnv): Promise<string | undefined>;
  /** After the executable resolved and `requires` passed: job set-up that needs the executable; a reason the engine still cannot run, or undefined. */
  afterResolve?(bin: string, prepared: CliPrepared<S, C>): Promise<string | undefined>;
  /** The command line of one turn (`turn.sessionId` set = resume that session). */
  command(ctx: EngineContext, prepared: CliPrepared<S, C>, turn: TurnRequest, files: TurnFiles): TurnCommand | Promise<TurnCommand>;
  /** A fresh parser for one turn; `previous` = what `carry` kept after the session's last turn. */
  parser(ctx: EngineContext, prepared: CliPrepared<S, C>, turn: TurnRequest, previous: C | undefined): LineParser<Sum>;
  /** What to keep for the session's next turn (e.g. cumulative usage), or undefined. */
  carry?(summary: Sum): C | undefined;
  /** The engine-specific inputs of `decideTurnError`. */
  errorFacts(summary: Sum, r: ProcResult, stderrTail: string, ctx: EngineContext): ErrorFacts;
  /**
   * The permission (approval) mode the job's engine runs under, described by what skill-up
   * passed it (a flag, a config value), for engines whose output does not say: used when the
   * parser's summary has no `permissionMode`, so every engine's turns record one.
   */
  permissionMode?(ctx: EngineContext, prepared: CliPrepared<S, C>): string;
  /** Adds what only the engine knows to the finished turn (files beside stdout, …). */
  afterTurn?(ctx: EngineContext, prepared: CliPrepared<S, C>, turn: TurnRequest, out: TranscriptTurn, summary: Sum): Promise<TranscriptTurn>;
}

/** Bytes of stderr quoted in a failed turn's error message. */
const STDERR_TAIL_BYTES = 4096;
/** Bytes of stderr's start searched for the error line of a failed turn (a long stack trace pushes it out of the tail). */
const STDERR_HEAD_BYTES = 8192;

/** The adapter of a CLI engine: its definition's facts, `spec`'s hooks and the shared lifecycle. */
export function cliEngine<S extends { env: ProcessEnv }, Sum extends ParserSummary, C = never>(
  def: EngineDefinition,
  spec: CliEngineSpec<S, Sum, C>,
): EngineAdapter<CliPrepared<S, C>> {
  const requires = spec.requires?.bind(spec);
  return {
    name: def.name,
    skillDirs: [...def.skillDirs],
    supportsResume: def.supportsResume,
    supportsMcp: spec.supportsMcp ?? false,
    envAllow: def.envAllow,

    /**
     * Resolves the executable (installing a pinned `engine.version` into the cache, with one
     * progress line on stderr), checks what else the engine needs (`spec.requires`, against
     * skill-up's own environment) and returns the version the executable reports.
     * @throws EngineUnavailable when it cannot be resolved, installed or run, or a requirement is unmet.
     */
    check: (engine) => checkEngineBinary(def, engine.version, requires),

    /** `spec.requires`: what the engine needs besides its executable (`skill-up engines check` asks). */
    ...(requires ? { unmetRequirement: requires } : {}),

    /**
     * `spec.setup` (config files, environment), then the executable (`SKILL_UP_<ENGINE>_BIN`,
     * the pinned version in the cache, PATH, the newest cached version). A binary that cannot be
     * found is not thrown: every turn then reports `error.kind = 'missing'`.
     * @throws EngineUnavailable when the model is scripted but `ctx.modelBaseUrl` is unset.
     */
    async prepare(ctx) {
      const state = await spec.setup(ctx);
      const prepared = { ...state, carried: new Map<string, C>(), ...(await resolveForJob(def, ctx.engine.version)) } as CliPrepared<S, C>;
      // The scripted model server files this job's requests under this engine (src/model/offered.ts).
      noteJobEngine(ctx.modelBaseUrl, ctx.jobId, def.name);
      if (prepared.bin && requires) {
        const why = await requires(prepared.bin, prepared.env);
        if (why) prepared.missing = why;
      }
      if (prepared.bin && !prepared.missing && spec.afterResolve) {
        const why = await spec.afterResolve(prepared.bin, prepared);
        if (why) prepared.missing = why;
      }
      return prepared;
    },

    /** The executable's installed package (its npm install folder), for a container ({@link packageFolders}). */
    containerPaths: (prepared) => (prepared.bin ? packageFolders(prepared.bin) : []),

    /**
     * Runs one turn: `<bin> <spec.command>` in the workspace with the job's environment, stdout
     * → `outputs/turn-<n>.<stdoutName>`, stderr → `outputs/turn-<n>.stderr.txt` (under
     * `ctx.outputDir`), limited to the smaller of `turn.timeoutMs` and the job deadline and
     * killed (whole process group) on `ctx.signal`. `durationMs` is the process's wall time
     * (spawn to exit, ms). Never throws for engine failures.
     */
    async runTurn(ctx, prepared, turn) {
      const base = blankTurn(turn, { sessionId: turn.sessionId });
      if (!prepared.bin || prepared.missing) {
        return { ...base, error: { kind: 'missing', message: prepared.missing ?? `${def.bin} executable not found` } };
      }
      const stdoutRel = `outputs/turn-${turn.index}.${spec.stdoutName}`;
      const stderrRel = `outputs/turn-${turn.index}.stderr.txt`;
      const files: TurnFiles = { stdoutRel, stderrRel, stdoutFile: join(ctx.outputDir, stdoutRel), stderrFile: join(ctx.outputDir, stderrRel) };
      await mkdir(join(ctx.outputDir, 'outputs'), { recursive: true });

      const cmd = await spec.command(ctx, prepared, turn, files);
      const untilDeadline = Number.isFinite(ctx.deadline) ? ctx.deadline - Date.now() : Infinity;
      const timeoutMs = Math.max(0, Math.min(turn.timeoutMs, untilDeadline));
      const exchangesBefore = exchangeMark(ctx.modelBaseUrl, ctx.jobId);
      const r = await (ctx.runProcess ?? runProcess)(prepared.bin, cmd.args, {
        cwd: ctx.workspace,
        env: prepared.env,
        stdoutFile: files.stdoutFile,
        stderrFile: files.stderrFile,
        timeoutMs,
        signal: ctx.signal,
        input: cmd.stdin,
      });

      const previous = turn.sessionId !== undefined ? prepared.carried.get(turn.sessionId) : undefined;
      const parser = spec.parser(ctx, prepared, turn, previous);
      await feedLines(files.stdoutFile, (line) => parser.push(line));
      const summary = parser.finish();
      const sessionId = summary.sessionId ?? turn.sessionId ?? cmd.sessionId;
      const kept = spec.carry?.(summary);
      if (sessionId !== undefined && kept !== undefined) prepared.carried.set(sessionId, kept);

      const stderrTail = r.exitCode === 0 && !r.startError ? '' : await readTail(files.stderrFile, STDERR_TAIL_BYTES);
      const stderrHead = stderrTail ? (await readHead(files.stderrFile, STDERR_HEAD_BYTES)).text : undefined;
      const stderr: StderrRef = { file: stderrRel, ...(stderrHead !== undefined ? { head: stderrHead } : {}) };
      const error = decideTurnError(r, summary, timeoutMs, stderrTail, spec.errorFacts(summary, r, stderrTail, ctx), stderr);
      const out = turnFromSummary(base, summary, { durationMs: r.durationMs, exitCode: r.exitCode, rawFiles: [stdoutRel, stderrRel], sessionId, error });
      if (out.permissionMode === undefined && spec.permissionMode) out.permissionMode = spec.permissionMode(ctx, prepared);
      // Skills and tools the engine's own output does not report: from the requests it sent the scripted model.
      fillOfferedFromModel(out, ctx.modelBaseUrl, ctx.jobId, exchangesBefore);
      return spec.afterTurn ? spec.afterTurn(ctx, prepared, turn, out, summary) : out;
    },
  };
}
