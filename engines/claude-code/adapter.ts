/**
 * The Claude Code engine adapter (`engine.name: claude_code`).
 *
 * Drives the `claude` CLI (npm `@anthropic-ai/claude-code`, verified with 2.1.332) in print mode
 * with stream-json output, one process per user turn, later turns resuming the first turn's
 * session. The exact command line and environment are in README.md beside this file; the
 * facts behind them are in shared/engines/claude-code-and-codex.md §1–2.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineConfig } from '../../src/config/types.js';
import { describeFailure, readTail, runProcess, type ProcResult } from '../../src/engine/proc.js';
import { checkEngineBinary, feedLines, processError, resolveForJob } from '../../src/engine/turn.js';
import {
  EngineUnavailable,
  blankTurn,
  type EngineAdapter,
  type EngineContext,
  type EngineError,
  type TranscriptTurn,
  type TurnRequest,
} from '../../src/engine/types.js';
import { agentEnv, type EnvAllowList } from '../../src/engine/env.js';
import { StreamJsonParser, type ClaudeStreamSummary } from './parse.js';

/** npm package and executable name (also in src/engine/known.ts). */
export const CLAUDE_NPM_PACKAGE = '@anthropic-ai/claude-code';
export const CLAUDE_BIN = 'claude';

/** Prompts longer than this many bytes go to stdin instead of argv (Linux caps one argument at 128 KiB). */
const MAX_ARGV_PROMPT_BYTES = 100_000;

/**
 * Claude Code's user-level settings written into every job's private `CLAUDE_CONFIG_DIR`.
 * The built-in plugin `cc-plugin-plugin-authoring` contributes a `plugin-authoring` skill to the
 * listing the model sees even with `CLAUDE_CODE_DISABLE_BUNDLED_SKILLS=1`; disabling it leaves
 * exactly the workspace's skills in the listing (verified against 2.1.332: the request's
 * `role:"system"` message then lists only the skill under test). The other built-in plugins
 * (`cc-plugin-agents-md`, `cc-plugin-privacy`) add no skill and stay on.
 */
export const CLAUDE_SETTINGS = { enabledPlugins: { 'cc-plugin-plugin-authoring@builtin': false } } as const;

/** Variables removed from the environment when the model is scripted, because each would send
 * traffic somewhere other than the scripted server (OAuth/bearer auth, cloud providers). */
const NON_SCRIPTED_ROUTING_VARS = [
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  'CLAUDE_CODE_USE_FOUNDRY',
  'ANTHROPIC_BEDROCK_BASE_URL',
  'ANTHROPIC_VERTEX_BASE_URL',
  'ANTHROPIC_FOUNDRY_BASE_URL',
];

/**
 * What `claude` receives of skill-up's environment besides the common base (src/engine/env.ts):
 * with a real model, `ANTHROPIC_*` and `CLAUDE_*` (key, base URL, auth token, model and Claude
 * Code settings), plus `AWS_*` when `CLAUDE_CODE_USE_BEDROCK` is set and Google Cloud's
 * variables when `CLAUDE_CODE_USE_VERTEX` is set; with the scripted model nothing more.
 */
export const CLAUDE_ENV_ALLOW: EnvAllowList = {
  realModel: [/^ANTHROPIC_/, /^CLAUDE_/, 'MAX_THINKING_TOKENS', 'DISABLE_PROMPT_CACHING'],
  select: (_engine, parent) => [
    ...(parent.CLAUDE_CODE_USE_BEDROCK ? [/^AWS_/] : []),
    ...(parent.CLAUDE_CODE_USE_VERTEX ? ['GOOGLE_APPLICATION_CREDENTIALS', /^GOOGLE_CLOUD_/, 'CLOUD_ML_REGION', /^VERTEX_REGION_/] : []),
  ],
};

/** Per-job state made by `prepare`. */
export interface ClaudePrepared {
  /** Absolute path of the `claude` executable; unset when it could not be resolved. */
  bin?: string;
  /** Where `bin` came from (`SKILL_UP_CLAUDE_CODE_BIN`, PATH, cache). */
  binSource?: 'env' | 'path' | 'cache';
  /** Why the engine cannot run (every turn then ends with an error of kind `missing`). */
  missing?: string;
  /** The complete environment of every `claude` process of the job (holds no file-written secret). */
  env: Record<string, string | undefined>;
  /** `CLAUDE_CONFIG_DIR` of the job: `<homeDir>/claude-config`. */
  configDir: string;
  /** Whether the model is skill-up's scripted server. */
  scripted: boolean;
  /** Session id → that session's last `total_cost_usd` (USD), to make costs per turn. */
  totalCostBySession: Map<string, number>;
}

/** Drops a trailing `/` and `/v1`: Claude Code appends `/v1/messages` to `ANTHROPIC_BASE_URL` itself (§2.2). */
export function normaliseAnthropicBaseUrl(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/**
 * The environment of one job's `claude` processes: the allow-listed part of `ctx.baseEnv`
 * (`agentEnv` with CLAUDE_ENV_ALLOW) and the suite's `environment.env`, plus
 * `HOME=<homeDir>`, `CLAUDE_CONFIG_DIR=<homeDir>/claude-config`, `XDG_{CONFIG,CACHE,DATA,STATE}_HOME`
 * under `<homeDir>`, `IS_SANDBOX=1`, `DISABLE_TELEMETRY=1`,
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, `DISABLE_AUTOUPDATER=1`,
 * `CLAUDE_CODE_DISABLE_BUNDLED_SKILLS=1`, and:
 * - scripted model: `ANTHROPIC_BASE_URL=<ctx.modelBaseUrl>`, `ANTHROPIC_API_KEY=dummy`,
 *   `CLAUDE_CODE_MAX_RETRIES=0`, and the variables of NON_SCRIPTED_ROUTING_VARS removed;
 * - otherwise: `ANTHROPIC_BASE_URL=<engine.model.baseUrl>` when set (else the environment's),
 *   and `ANTHROPIC_API_KEY` (or other credentials) exactly as in the environment.
 *
 * @throws EngineUnavailable when the model is scripted but no server URL was given.
 */
export function buildClaudeEnv(ctx: EngineContext, configDir: string): Record<string, string | undefined> {
  const scripted = isScripted(ctx.engine);
  const env = agentEnv(ctx, CLAUDE_ENV_ALLOW);
  env.HOME = ctx.homeDir;
  env.CLAUDE_CONFIG_DIR = configDir;
  env.XDG_CONFIG_HOME = join(ctx.homeDir, '.config');
  env.XDG_CACHE_HOME = join(ctx.homeDir, '.cache');
  env.XDG_DATA_HOME = join(ctx.homeDir, '.local', 'share');
  env.XDG_STATE_HOME = join(ctx.homeDir, '.local', 'state');
  env.IS_SANDBOX = '1';
  env.DISABLE_TELEMETRY = '1';
  env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = '1';
  env.DISABLE_AUTOUPDATER = '1';
  env.CLAUDE_CODE_DISABLE_BUNDLED_SKILLS = '1';
  if (scripted) {
    if (!ctx.modelBaseUrl) throw new EngineUnavailable('claude_code: engine.model.provider is "scripted" but no scripted model server was started');
    for (const v of NON_SCRIPTED_ROUTING_VARS) delete env[v];
    env.ANTHROPIC_BASE_URL = normaliseAnthropicBaseUrl(ctx.modelBaseUrl);
    // The scripted server files each exchange under the job id this key carries.
    env.ANTHROPIC_API_KEY = ctx.jobId ? `skill-up-job:${ctx.jobId}` : 'dummy';
    env.CLAUDE_CODE_MAX_RETRIES = '0';
  } else if (ctx.engine.model.baseUrl) {
    env.ANTHROPIC_BASE_URL = normaliseAnthropicBaseUrl(ctx.engine.model.baseUrl);
  }
  return env;
}

/** True when `engine.model.provider` is `scripted`. */
export function isScripted(engine: EngineConfig): boolean {
  return engine.model.provider === 'scripted';
}

/**
 * The argv of one turn (without the executable):
 * `-p --output-format stream-json --verbose --permission-mode bypassPermissions
 *  --max-turns <N> [--model <name>] [--resume <session>] -- <prompt>`.
 * The prompt goes last behind `--` so a prompt starting with `-` is not taken for an option
 * (verified); a prompt over 100 000 bytes is left out and sent on stdin instead (`stdin` set).
 * `--max-turns` is omitted when `maxTurns` ≤ 0.
 */
export function buildClaudeArgs(opts: { prompt: string; maxTurns: number; model?: string; resume?: string }): { args: string[]; stdin?: string } {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions'];
  if (opts.maxTurns > 0) args.push('--max-turns', String(opts.maxTurns));
  if (opts.model) args.push('--model', opts.model);
  if (opts.resume) args.push('--resume', opts.resume);
  if (Buffer.byteLength(opts.prompt, 'utf8') > MAX_ARGV_PROMPT_BYTES) return { args, stdin: opts.prompt };
  args.push('--', opts.prompt);
  return { args };
}

/** Reads a stream-json file line by line into the parser (any size, bounded memory per line). */
/** Streams the output file's lines into the parser. */
function parseFile(file: string, parser: StreamJsonParser): Promise<void> {
  return feedLines(file, (line) => parser.push(line));
}

/**
 * Decides a turn's error from the process outcome and the parsed stream, in this order:
 * could not start (ENOENT/EACCES → `missing`, else `crash`), `timeout`, `cancelled`, the error
 * the stream reports (see `ClaudeStreamSummary.error`), a non-zero exit or a signal (`crash`
 * with the stderr tail), and finally an exit 0 without a `result` line (`protocol`).
 */
export function decideError(r: ProcResult, parsed: ClaudeStreamSummary, timeoutMs: number, stderrTail: string): EngineError | undefined {
  const failed = processError(r, timeoutMs, stderrTail);
  if (failed) return failed;
  if (parsed.error) return parsed.error;
  if (r.exitCode !== 0) return { kind: 'crash', message: describeFailure(r, timeoutMs, stderrTail) };
  if (!parsed.hasResult) return { kind: 'protocol', message: 'claude exited 0 without a "result" line in its stream-json output' };
  return undefined;
}


/** The adapter. One instance serves every job. */
export const claudeCodeAdapter: EngineAdapter<ClaudePrepared> = {
  name: 'claude_code',
  npmPackage: CLAUDE_NPM_PACKAGE,
  skillDirs: ['.claude/skills'],
  supportsResume: true,
  envAllow: CLAUDE_ENV_ALLOW,

  /**
   * Resolves `claude` (installing a pinned `engine.version` into the cache, with one progress
   * line on stderr) and returns the version it reports.
   * @throws EngineUnavailable when it cannot be resolved, installed or run.
   */
  async check(engine: EngineConfig): Promise<{ version?: string }> {
    return checkEngineBinary('claude_code', engine.version);
  },

  /**
   * Resolves the executable (`SKILL_UP_CLAUDE_CODE_BIN`, then the pinned version in the cache,
   * else PATH, else the newest cached version), creates `<homeDir>/claude-config` with
   * `settings.json` (CLAUDE_SETTINGS) and builds the environment (`buildClaudeEnv`). A binary
   * that cannot be found is not thrown: every turn then reports `error.kind = 'missing'`.
   * @throws EngineUnavailable when the model is scripted but `ctx.modelBaseUrl` is unset.
   */
  async prepare(ctx: EngineContext): Promise<ClaudePrepared> {
    const configDir = join(ctx.homeDir, 'claude-config');
    const env = buildClaudeEnv(ctx, configDir);
    await mkdir(configDir, { recursive: true });
    await writeFile(join(configDir, 'settings.json'), JSON.stringify(CLAUDE_SETTINGS, null, 2) + '\n');
    const prepared: ClaudePrepared = { env, configDir, scripted: isScripted(ctx.engine), totalCostBySession: new Map() };
    Object.assign(prepared, await resolveForJob('claude_code', ctx.engine.version));
    return prepared;
  },

  /**
   * Runs one turn: `claude <buildClaudeArgs>` in the workspace with the job's environment,
   * stdout → `outputs/turn-<n>.stream.jsonl`, stderr → `outputs/turn-<n>.stderr.txt` (both
   * under `ctx.outputDir`), limited to the smaller of `turn.timeoutMs` and the job deadline and
   * killed (whole process group) on `ctx.signal`. Never throws for engine failures.
   *
   * `durationMs` is the wall time of the process (spawn to exit, ms); tokens are this
   * invocation's (`result.usage`); `costUsd` is this turn's share in USD (Claude Code's
   * `total_cost_usd` is cumulative over a resumed session).
   */
  async runTurn(ctx: EngineContext, prepared: ClaudePrepared, turn: TurnRequest): Promise<TranscriptTurn> {
    const base = blankTurn(turn, { sessionId: turn.sessionId });
    if (!prepared.bin) {
      return { ...base, error: { kind: 'missing', message: prepared.missing ?? 'claude executable not found' } };
    }
    const stdoutRel = `outputs/turn-${turn.index}.stream.jsonl`;
    const stderrRel = `outputs/turn-${turn.index}.stderr.txt`;
    const stdoutFile = join(ctx.outputDir, stdoutRel);
    const stderrFile = join(ctx.outputDir, stderrRel);
    await mkdir(join(ctx.outputDir, 'outputs'), { recursive: true });

    const maxTurns = ctx.case.maxTurns;
    const { args, stdin } = buildClaudeArgs({ prompt: turn.prompt, maxTurns, model: ctx.engine.model.name, resume: turn.sessionId });
    const untilDeadline = Number.isFinite(ctx.deadline) ? ctx.deadline - Date.now() : Infinity;
    const timeoutMs = Math.max(0, Math.min(turn.timeoutMs, untilDeadline));

    const r = await runProcess(prepared.bin, args, {
      cwd: ctx.workspace,
      env: prepared.env,
      stdoutFile,
      stderrFile,
      timeoutMs,
      signal: ctx.signal,
      input: stdin,
    });

    const previous = turn.sessionId ? prepared.totalCostBySession.get(turn.sessionId) : undefined;
    const parser = new StreamJsonParser({ maxTurns: maxTurns > 0 ? maxTurns : undefined, previousTotalCostUsd: previous });
    await parseFile(stdoutFile, parser);
    const parsed = parser.finish();
    if (parsed.sessionId && parsed.totalCostUsd !== undefined) prepared.totalCostBySession.set(parsed.sessionId, parsed.totalCostUsd);

    const stderrTail = r.exitCode === 0 && !r.startError ? '' : await readTail(stderrFile, 4096);
    const error = decideError(r, parsed, timeoutMs, stderrTail);
    const turnOut: TranscriptTurn = {
      ...base,
      finalText: parsed.finalText,
      toolCalls: parsed.toolCalls,
      skillActivations: parsed.skillActivations,
      skillsListed: parsed.skillsListed,
      usage: parsed.usage,
      costUsd: parsed.costUsd,
      durationMs: Math.round(r.durationMs),
      sessionId: parsed.sessionId ?? turn.sessionId,
      exitCode: r.exitCode,
      rawFiles: [stdoutRel, stderrRel],
    };
    if (error) turnOut.error = error;
    return turnOut;
  },
};

