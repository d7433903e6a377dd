/**
 * The Qwen Code engine adapter (`engine.name: qwen_code`).
 *
 * Drives the `qwen` CLI (npm `@qwen-code/qwen-code`, verified with 0.24.4; a pure-JS bundle that
 * runs on Node 20 despite declaring `node>=22`) headless with `--output-format stream-json`, one
 * process per user turn, later turns resuming the first turn's session with `--resume <id>` in
 * the same workspace. The exact command line, environment and settings are in README.md beside
 * this file; the facts behind them are in shared/engines/opencode-gemini-qwen-docker.md §4 and §6
 * and in this adapter's own runs.
 */
import { chmod, mkdir, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { EngineConfig } from '../../src/config/types.js';
import { describeFailure, readTail, runProcess, type ProcResult } from '../../src/engine/proc.js';
import { checkEngineBinary, feedLines, processError, resolveForJob } from '../../src/engine/turn.js';
import {
  EngineUnavailable,
  blankTurn,
  type EngineAdapter,
  type EngineContext,
  type EngineError,
  type TokenUsage,
  type TranscriptTurn,
  type TurnRequest,
} from '../../src/engine/types.js';
import { agentEnv, type EnvAllowList } from '../../src/engine/env.js';
import { QwenStreamParser, type QwenSummary } from './parse.js';

/** npm package and executable name (also in src/engine/known.ts). */
export const QWEN_NPM_PACKAGE = '@qwen-code/qwen-code';
export const QWEN_BIN = 'qwen';
/** Model id sent to the scripted server when `engine.model.name` is unset. */
export const DEFAULT_SCRIPTED_MODEL = 'scripted-model';
/** Exit code of `qwen` when `--max-session-turns` is reached (observed with 0.24.4; no result line then). */
export const QWEN_EXIT_MAX_TURNS = 53;

/** Per-job state made by `prepare`. */
export interface QwenPrepared {
  bin?: string;
  binSource?: 'env' | 'path' | 'cache';
  /** Why the engine cannot run (every turn then ends with an error of kind `missing`). */
  missing?: string;
  /** The complete environment of every `qwen` process of the job. */
  env: Record<string, string | undefined>;
  /** `QWEN_HOME` of the job: `<homeDir>/.qwen` (settings.json, chats per project, usage logs). */
  qwenHome: string;
  /** `--auth-type` value. */
  authType: string;
  scripted: boolean;
  /** Session id → the session's cumulative `result.usage` after its last turn (tokens). */
  cumulativeUsage: Map<string, TokenUsage>;
}

/** True when `engine.model.provider` is `scripted`. */
export function isScripted(engine: EngineConfig): boolean {
  return engine.model.provider === 'scripted';
}

/** `<base>/v1` without a trailing slash (the `openai` SDK appends `/chat/completions`). */
export function openaiBaseUrl(url: string): string {
  const u = url.replace(/\/+$/, '');
  return /\/v1$/.test(u) ? u : `${u}/v1`;
}

/** `--auth-type`: `openai` for the scripted model and OpenAI-compatible providers; the provider's
 * own type when it is one Qwen Code knows (`anthropic`, `gemini`, `vertex-ai`, `qwen-oauth`, `openai-responses`). */
export function qwenAuthType(engine: EngineConfig): string {
  const p = engine.model.provider;
  if (!p || p === 'scripted') return 'openai';
  return ['openai', 'openai-responses', 'anthropic', 'qwen-oauth', 'gemini', 'vertex-ai'].includes(p) ? p : 'openai';
}

/**
 * `$QWEN_HOME/settings.json` of one job (no secret in it): managed auto-memory and auto-dream
 * off (otherwise a background "memory extraction" subagent makes extra model calls, doc §4),
 * bundled skills off (the model's listing then holds only the workspace's and user's skills),
 * auto-update, usage statistics and telemetry off; with a scripted model also
 * `model.generationConfig.maxRetries: 0` (a scripted error is deterministic).
 */
export function buildQwenSettings(scripted: boolean): Record<string, unknown> {
  const s: Record<string, unknown> = {
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
    skills: { disabledLevels: ['bundled'] },
  };
  if (scripted) s.model = { generationConfig: { maxRetries: 0 } };
  return s;
}

/**
 * What `qwen` receives of skill-up's environment besides the common base (src/engine/env.ts):
 * with a real model `OPENAI_*`, `DASHSCOPE_*` and `QWEN_*`, plus the provider's own for
 * `--auth-type anthropic` (`ANTHROPIC_*`), `gemini` (`GEMINI_*`, `GOOGLE_API_KEY`) and
 * `vertex-ai` (`GOOGLE_*`, `GEMINI_*`); with the scripted model nothing more.
 */
export const QWEN_ENV_ALLOW: EnvAllowList = {
  realModel: [/^OPENAI_/, /^DASHSCOPE_/, /^QWEN_/],
  select: (engine) => {
    const auth = qwenAuthType(engine);
    if (auth === 'anthropic') return [/^ANTHROPIC_/];
    if (auth === 'gemini') return [/^GEMINI_/, 'GOOGLE_API_KEY'];
    if (auth === 'vertex-ai') return [/^GOOGLE_/, /^GEMINI_/];
    return [];
  },
};

/** Variables removed from the environment with a scripted model: each would route or authenticate elsewhere. */
const NON_SCRIPTED_VARS = ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_MODEL', 'DASHSCOPE_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'QWEN_MODEL'];

/**
 * The environment of one job's `qwen` processes: the allow-listed part of `ctx.baseEnv`
 * (`agentEnv` with QWEN_ENV_ALLOW) and the suite's `environment.env`, plus `HOME=<homeDir>` (Qwen reads
 * `~/.agents/skills` through `os.homedir()`), `QWEN_HOME=<homeDir>/.qwen`,
 * `XDG_{CONFIG,CACHE,DATA,STATE}_HOME` under `<homeDir>`, `QWEN_CODE_SUPPRESS_YOLO_WARNING=1`, and:
 * - scripted: `OPENAI_BASE_URL=<ctx.modelBaseUrl>/v1`, `OPENAI_API_KEY=skill-up-job:<jobId>`
 *   (the server files each exchange under that job), `OPENAI_MODEL=<engine.model.name |
 *   scripted-model>`, other providers' keys and URLs removed;
 * - otherwise: `OPENAI_BASE_URL=<engine.model.baseUrl>` when set (else the environment's), and
 *   every credential exactly as in the environment (never written to a file).
 *
 * @throws EngineUnavailable when the model is scripted but no server URL was given.
 */
export function buildQwenEnv(ctx: EngineContext, qwenHome: string): Record<string, string | undefined> {
  const env = agentEnv(ctx, QWEN_ENV_ALLOW);
  env.PWD = ctx.workspace; // as for OpenCode: never let an inherited PWD name another folder
  env.HOME = ctx.homeDir;
  env.QWEN_HOME = qwenHome;
  env.XDG_CONFIG_HOME = join(ctx.homeDir, '.config');
  env.XDG_CACHE_HOME = join(ctx.homeDir, '.cache');
  env.XDG_DATA_HOME = join(ctx.homeDir, '.local', 'share');
  env.XDG_STATE_HOME = join(ctx.homeDir, '.local', 'state');
  env.QWEN_CODE_SUPPRESS_YOLO_WARNING = '1';
  delete env.QWEN_CODE_UNATTENDED_RETRY; // would retry capacity errors for hours
  if (isScripted(ctx.engine)) {
    if (!ctx.modelBaseUrl) throw new EngineUnavailable('qwen_code: engine.model.provider is "scripted" but no scripted model server was started');
    for (const v of NON_SCRIPTED_VARS) delete env[v];
    env.OPENAI_BASE_URL = openaiBaseUrl(ctx.modelBaseUrl);
    env.OPENAI_API_KEY = ctx.jobId ? `skill-up-job:${ctx.jobId}` : 'dummy';
    env.OPENAI_MODEL = ctx.engine.model.name || DEFAULT_SCRIPTED_MODEL;
  } else if (ctx.engine.model.baseUrl) {
    env.OPENAI_BASE_URL = ctx.engine.model.baseUrl;
  }
  return env;
}

/**
 * The argv of one turn (without the executable; the prompt goes on stdin, which Qwen Code reads
 * when stdin is not a terminal — so a prompt starting with `-` or of any length is taken verbatim):
 * `--auth-type <t> --output-format stream-json --yolo [--max-session-turns N] [-m <model>]
 * [--resume <session>]`. `--yolo` approves every tool (workspace writes included) on every turn;
 * `--max-session-turns` counts this process's model calls (verified: a resumed run starts at 0).
 */
export function buildQwenArgs(opts: { authType: string; maxTurns: number; model?: string; resume?: string }): string[] {
  const args = ['--auth-type', opts.authType, '--output-format', 'stream-json', '--yolo'];
  if (opts.maxTurns > 0) args.push('--max-session-turns', String(opts.maxTurns));
  if (opts.model) args.push('-m', opts.model);
  if (opts.resume) args.push('--resume', opts.resume);
  return args;
}

/** Streams the output file's lines into the parser. */
function parseFile(file: string, parser: QwenStreamParser): Promise<void> {
  return feedLines(file, (line) => parser.push(line));
}

/**
 * A turn's error from the process outcome and the parsed output, in this order: could not start
 * (`missing` for ENOENT/EACCES, else `crash`), `timeout`, `cancelled`, the error the output
 * reports (see `QwenSummary.error`), exit code 53 or "Reached max session turns" on stderr
 * (`protocol`, `max turns reached (N)`), a non-zero exit or a signal (`crash` with the stderr
 * tail), and an exit 0 without a result line (`protocol`).
 */
export function decideQwenError(r: ProcResult, parsed: QwenSummary, timeoutMs: number, stderrTail: string, maxTurns: number): EngineError | undefined {
  const failed = processError(r, timeoutMs, stderrTail);
  if (failed) return failed;
  if (parsed.error) return parsed.error;
  if (r.exitCode === QWEN_EXIT_MAX_TURNS || /Reached max session turns/i.test(stderrTail)) {
    return { kind: 'protocol', message: `max turns reached (${maxTurns > 0 ? maxTurns : '?'})` };
  }
  if (r.exitCode !== 0) return { kind: 'crash', message: describeFailure(r, timeoutMs, stderrTail) };
  if (!parsed.hasResult) return { kind: 'protocol', message: 'qwen exited 0 without a "result" line in its stream-json output' };
  return undefined;
}

/**
 * Sets the exec bit on the ripgrep binary the npm package vendors (`vendor/ripgrep/<arch>-<os>/rg`
 * beside `cli-entry.js`, which `bin` links to): npm unpacks it without one, so Qwen Code logs
 * `Ripgrep not available … EACCES` and falls back to a slower built-in grep. Best effort: an
 * install we may not change is left alone.
 */
export async function fixVendoredRipgrep(bin: string): Promise<void> {
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';
  try {
    const rg = join(dirname(await realpath(bin)), 'vendor', 'ripgrep', `${arch}-${process.platform}`, 'rg');
    const s = await stat(rg);
    if ((s.mode & 0o111) === 0) await chmod(rg, s.mode | 0o755);
  } catch {
    /* not there, or not ours to change */
  }
}


/** The adapter. One instance serves every job. */
export const qwenCodeAdapter: EngineAdapter<QwenPrepared> = {
  name: 'qwen_code',
  npmPackage: QWEN_NPM_PACKAGE,
  // Doc §4 "Skills": PROJECT_SKILL_DIRS = [".qwen", ".agents"]; `.claude/skills` is not read.
  skillDirs: ['.qwen/skills', '.agents/skills'],
  supportsResume: true,
  envAllow: QWEN_ENV_ALLOW,

  /**
   * Resolves `qwen` (installing a pinned `engine.version` into the cache) and returns the version
   * it prints.
   * @throws EngineUnavailable when it cannot be resolved, installed or run.
   */
  async check(engine: EngineConfig): Promise<{ version?: string }> {
    return checkEngineBinary('qwen_code', engine.version);
  },

  /**
   * Resolves the executable, writes `<homeDir>/.qwen/settings.json` (`buildQwenSettings`) and
   * builds the environment (`buildQwenEnv`). A binary that cannot be found is not thrown: every
   * turn then reports `error.kind = 'missing'`.
   * @throws EngineUnavailable when the model is scripted but `ctx.modelBaseUrl` is unset.
   */
  async prepare(ctx: EngineContext): Promise<QwenPrepared> {
    const qwenHome = join(ctx.homeDir, '.qwen');
    const env = buildQwenEnv(ctx, qwenHome);
    const scripted = isScripted(ctx.engine);
    await mkdir(qwenHome, { recursive: true });
    await writeFile(join(qwenHome, 'settings.json'), JSON.stringify(buildQwenSettings(scripted), null, 2) + '\n');
    const prepared: QwenPrepared = { env, qwenHome, authType: qwenAuthType(ctx.engine), scripted, cumulativeUsage: new Map() };
    Object.assign(prepared, await resolveForJob('qwen_code', ctx.engine.version));
    if (prepared.bin) await fixVendoredRipgrep(prepared.bin);
    return prepared;
  },

  /**
   * Runs one turn: `qwen <buildQwenArgs>` in the workspace with the prompt on stdin, stdout →
   * `outputs/turn-<n>.stream.jsonl`, stderr → `outputs/turn-<n>.stderr.txt` (under
   * `ctx.outputDir`), limited to the smaller of `turn.timeoutMs` and the job deadline and killed
   * (whole process group) on `ctx.signal`. Never throws for engine failures.
   *
   * `durationMs` is the process wall time (spawn to exit, ms). Tokens are this turn's: Qwen's
   * `result.usage` is cumulative over a resumed session, so the previous turn's figure is
   * subtracted. Qwen Code reports no cost, so `costUsd` stays unset.
   */
  async runTurn(ctx: EngineContext, prepared: QwenPrepared, turn: TurnRequest): Promise<TranscriptTurn> {
    const base = blankTurn(turn, { sessionId: turn.sessionId });
    if (!prepared.bin) return { ...base, error: { kind: 'missing', message: prepared.missing ?? 'qwen executable not found' } };
    const stdoutRel = `outputs/turn-${turn.index}.stream.jsonl`;
    const stderrRel = `outputs/turn-${turn.index}.stderr.txt`;
    const stdoutFile = join(ctx.outputDir, stdoutRel);
    const stderrFile = join(ctx.outputDir, stderrRel);
    await mkdir(join(ctx.outputDir, 'outputs'), { recursive: true });

    const maxTurns = ctx.case.maxTurns;
    const model = prepared.scripted ? undefined : ctx.engine.model.name;
    const args = buildQwenArgs({ authType: prepared.authType, maxTurns, model, resume: turn.sessionId });
    const untilDeadline = Number.isFinite(ctx.deadline) ? ctx.deadline - Date.now() : Infinity;
    const timeoutMs = Math.max(0, Math.min(turn.timeoutMs, untilDeadline));
    const r = await runProcess(prepared.bin, args, {
      cwd: ctx.workspace,
      env: prepared.env,
      stdoutFile,
      stderrFile,
      timeoutMs,
      signal: ctx.signal,
      input: turn.prompt,
    });

    const previous = turn.sessionId ? prepared.cumulativeUsage.get(turn.sessionId) : undefined;
    const parser = new QwenStreamParser({ previousCumulativeUsage: previous, resumed: turn.sessionId !== undefined });
    await parseFile(stdoutFile, parser);
    const parsed = parser.finish();
    if (parsed.sessionId && parsed.cumulativeUsage) prepared.cumulativeUsage.set(parsed.sessionId, parsed.cumulativeUsage);

    const stderrTail = r.exitCode === 0 && !r.startError ? '' : await readTail(stderrFile, 4096);
    const error = decideQwenError(r, parsed, timeoutMs, stderrTail, maxTurns);
    const out: TranscriptTurn = {
      ...base,
      finalText: parsed.finalText,
      toolCalls: parsed.toolCalls,
      skillActivations: parsed.skillActivations,
      usage: parsed.usage,
      durationMs: Math.round(r.durationMs),
      sessionId: parsed.sessionId ?? turn.sessionId,
      exitCode: r.exitCode,
      rawFiles: [stdoutRel, stderrRel],
    };
    if (error) out.error = error;
    return out;
  },
};
