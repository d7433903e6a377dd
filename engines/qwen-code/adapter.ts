/**
 * The Qwen Code engine adapter (`engine.name: qwen_code`).
 *
 * Drives the `qwen` CLI (npm `@qwen-code/qwen-code`, verified with 0.24.4; a pure-JS bundle that
 * runs on Node 20 despite declaring `node>=22`) headless with `--output-format stream-json`, one
 * process per user turn, later turns resuming the first turn's session with `--resume <id>` in
 * the same workspace. The exact command line, environment and settings, and the facts behind
 * them (the captured output in samples/ and this adapter's own runs), are in README.md beside
 * this file.
 */
import { chmod, mkdir, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ProcResult } from '../../src/engine/proc.js';
import { cliEngine, decideTurnError, openaiBaseUrl, isScripted, isolatedEnv, scriptedApiKey, type CliEngineSpec, type ErrorFacts, type ProcessEnv } from '../../src/engine/cli-engine.js';
export { openaiBaseUrl };
import type { EngineContext, EngineError, TokenUsage } from '../../src/engine/types.js';
import { QwenStreamParser, type QwenSummary } from './parse.js';
import { qwenAuthType, qwenCode } from './index.js';
import { LITERAL_DOLLAR_VAR, buildQwenMcpServers } from './mcp.js';
import type { McpServerLaunch } from '../../src/engine/mcp.js';

export { qwenAuthType };
/** Model id sent to the scripted server when `engine.model.name` is unset. */
export const DEFAULT_SCRIPTED_MODEL = 'scripted-model';
/** Exit code of `qwen` when `--max-session-turns` is reached (observed with 0.24.4; no result line then). */
export const QWEN_EXIT_MAX_TURNS = 53;

/** settings.json `$version` of Qwen Code 0.24.4 (what it stamps when it migrates a file). */
export const QWEN_SETTINGS_VERSION = 4;

/** Qwen Code's per-job state (besides the executable, see `CliPrepared`). */
export interface QwenState {
  /** The complete environment of every `qwen` process of the job. */
  env: ProcessEnv;
  /** `QWEN_HOME` of the job: `<homeDir>/.qwen` (settings.json, chats per project, usage logs). */
  qwenHome: string;
  /** `--auth-type` value. */
  authType: string;
}


/**
 * `$QWEN_HOME/settings.json` of one job (no secret in it): managed auto-memory and auto-dream
 * off (otherwise a background "memory extraction" subagent makes extra model calls),
 * bundled skills off (the model's listing then holds only the workspace's and user's skills),
 * auto-update, usage statistics and telemetry off; with a scripted model also
 * `model.generationConfig.maxRetries: 0` (a scripted error is deterministic); with MCP servers
 * (`mcpServers`, the same for both variants) their `mcpServers` entries (mcp.ts).
 *
 * @throws Error when an MCP server lacks its command (stdio) or url (http).
 */
export function buildQwenSettings(scripted: boolean, mcpServers?: readonly McpServerLaunch[]): Record<string, unknown> {
  const s: Record<string, unknown> = {
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
    skills: { disabledLevels: ['bundled'] },
  };
  if (scripted) s.model = { generationConfig: { maxRetries: 0 } };
  const mcp = buildQwenMcpServers(mcpServers);
  if (mcp) {
    s.mcpServers = mcp;
    // The current schema version: without it qwen migrates the file and rewrites it (temp file +
    // rename, mode 0644), losing the 0600 the adapter gives a file that may hold secrets.
    s.$version = QWEN_SETTINGS_VERSION;
  }
  return s;
}

/** Variables removed from the environment with a scripted model: each would route or authenticate elsewhere. */
const NON_SCRIPTED_VARS = ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'OPENAI_MODEL', 'DASHSCOPE_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'GEMINI_API_KEY', 'GOOGLE_API_KEY', 'QWEN_MODEL'];

/**
 * The environment of one job's `qwen` processes: the allow-listed part of `ctx.baseEnv`
 * (`isolatedEnv`: `agentEnv` with the definition's `envAllow`, index.ts) and the suite's `environment.env`, plus `HOME=<homeDir>` (Qwen reads
 * `~/.agents/skills` through `os.homedir()`), `QWEN_HOME=<homeDir>/.qwen`,
 * `XDG_{CONFIG,CACHE,DATA,STATE}_HOME` under `<homeDir>`, `QWEN_CODE_SUPPRESS_YOLO_WARNING=1`,
 * `SKILL_UP_LITERAL_DOLLAR=$` only with MCP servers (mcp.ts: how settings.json spells a `$`), and:
 * - scripted: `OPENAI_BASE_URL=<ctx.modelBaseUrl>/v1`, `OPENAI_API_KEY=skill-up-job:<jobId>`
 *   (the server files each exchange under that job), `OPENAI_MODEL=<engine.model.name |
 *   scripted-model>`, other providers' keys and URLs removed;
 * - otherwise: `OPENAI_BASE_URL=<engine.model.baseUrl>` when set (else the environment's), and
 *   every credential exactly as in the environment (never written to a file).
 *
 * @throws EngineUnavailable when the model is scripted but no server URL was given.
 */
export function buildQwenEnv(ctx: EngineContext, qwenHome: string): ProcessEnv {
  // QWEN_CODE_UNATTENDED_RETRY would retry capacity errors for hours.
  const env = isolatedEnv(ctx, qwenCode, { drop: ['QWEN_CODE_UNATTENDED_RETRY'], dropScripted: NON_SCRIPTED_VARS });
  env.PWD = ctx.workspace; // as for OpenCode: never let an inherited PWD name another folder
  env.QWEN_HOME = qwenHome;
  env.QWEN_CODE_SUPPRESS_YOLO_WARNING = '1';
  // settings.json spells a literal `$` of an MCP server's values as `${SKILL_UP_LITERAL_DOLLAR}` (mcp.ts).
  if (ctx.mcpServers?.length) env[LITERAL_DOLLAR_VAR] = '$';
  else delete env[LITERAL_DOLLAR_VAR];
  if (isScripted(ctx.engine)) {
    env.OPENAI_BASE_URL = openaiBaseUrl(ctx.modelBaseUrl!);
    env.OPENAI_API_KEY = scriptedApiKey(ctx);
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

/**
 * A turn's error from the process outcome and the parsed output, in this order: could not start
 * (`missing` for ENOENT/EACCES, else `crash`), `timeout`, `cancelled`, the error the output
 * reports (see `QwenSummary.error`), exit code 53 or "Reached max session turns" on stderr
 * (`protocol`, `max turns reached (N)`), a non-zero exit or a signal (`crash` with the stderr
 * tail), and an exit 0 without a result line (`protocol`).
 */
export function decideQwenError(r: ProcResult, parsed: QwenSummary, timeoutMs: number, stderrTail: string, maxTurns: number): EngineError | undefined {
  return decideTurnError(r, parsed, timeoutMs, stderrTail, errorFacts(parsed, r, stderrTail, maxTurns));
}

function errorFacts(parsed: QwenSummary, r: ProcResult, stderrTail: string, maxTurns: number): ErrorFacts {
  const maxed = r.exitCode === QWEN_EXIT_MAX_TURNS || /Reached max session turns/i.test(stderrTail);
  return {
    completed: parsed.hasResult,
    noResult: 'qwen exited 0 without a "result" line in its stream-json output',
    ...(maxed ? { exitError: { kind: 'protocol', message: `max turns reached (${maxTurns > 0 ? maxTurns : '?'})` } } : {}),
  };
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


/**
 * Qwen Code's part of the lifecycle: `<homeDir>/.qwen/settings.json` (`buildQwenSettings`) and
 * the environment (`buildQwenEnv`); the vendored ripgrep made executable. Per turn `qwen
 * <buildQwenArgs>` with the prompt on stdin, stdout → `outputs/turn-<n>.stream.jsonl`. Tokens
 * are this turn's: Qwen's `result.usage` is cumulative over a resumed session, so the session's
 * last figure is carried and subtracted. Qwen Code reports no cost, so `costUsd` stays unset.
 */
export const qwenCodeSpec: CliEngineSpec<QwenState, QwenSummary, TokenUsage> = {
  stdoutName: 'stream.jsonl',
  supportsMcp: true,
  async setup(ctx) {
    const qwenHome = join(ctx.homeDir, '.qwen');
    const env = buildQwenEnv(ctx, qwenHome);
    await mkdir(qwenHome, { recursive: true });
    const settingsFile = join(qwenHome, 'settings.json');
    const mcp = Boolean(ctx.mcpServers?.length);
    await writeFile(settingsFile, JSON.stringify(buildQwenSettings(isScripted(ctx.engine), ctx.mcpServers), null, 2) + '\n', mcp ? { mode: 0o600 } : {});
    // MCP env/header values may be secrets: only the job's own user may read them.
    if (mcp) {
      await chmod(settingsFile, 0o600);
      await chmod(qwenHome, 0o700); // and should qwen still rewrite it, the folder keeps others out
    }
    return { env, qwenHome, authType: qwenAuthType(ctx.engine) };
  },
  async afterResolve(bin) {
    await fixVendoredRipgrep(bin);
    return undefined;
  },
  command: (ctx, prepared, turn) => ({
    args: buildQwenArgs({ authType: prepared.authType, maxTurns: ctx.case.maxTurns, model: isScripted(ctx.engine) ? undefined : ctx.engine.model.name, resume: turn.sessionId }),
    stdin: turn.prompt,
  }),
  parser: (_ctx, _p, turn, previous) => new QwenStreamParser({ previousCumulativeUsage: previous, resumed: turn.sessionId !== undefined }),
  carry: (parsed) => parsed.cumulativeUsage,
  errorFacts: (parsed, r, stderrTail, ctx) => errorFacts(parsed, r, stderrTail, ctx.case.maxTurns),
};

/** The adapter. One instance serves every job. */
export const qwenCodeAdapter = cliEngine(qwenCode, qwenCodeSpec);
