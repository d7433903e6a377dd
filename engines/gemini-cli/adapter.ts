/**
 * The Gemini CLI engine adapter (`engine.name: gemini_cli`).
 *
 * Drives the `gemini` CLI (npm `@google/gemini-cli`, verified with 0.61.0) headless with
 * stream-json output, one process per user turn; the first turn presets the session id
 * (`--session-id`), later turns `--resume` it. The exact command line, environment and
 * settings are in README.md beside this file; the facts behind them are there, in the captured
 * output in samples/ and in the package's own docs
 * (`bundle/docs/cli/headless.md`, `cli/skills.md`, `reference/configuration.md`), each
 * re-checked against the real binary by adapter.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcResult } from '../../src/engine/proc.js';
import { cliEngine, decideTurnError, isScripted, isolatedEnv, scriptedApiKey, type CliEngineSpec, type ErrorFacts, type ProcessEnv } from '../../src/engine/cli-engine.js';
import type { EngineContext, EngineError } from '../../src/engine/types.js';
import { GeminiStreamParser, type GeminiRawStats, type GeminiStreamSummary } from './parse.js';
import { geminiCli } from './index.js';
import { LITERAL_DOLLAR_VAR, buildGeminiMcpServers, type GeminiMcpServerSettings } from './mcp.js';

/** `--approval-mode` of every turn: `yolo` runs every tool without asking (headless, the turn has no one to ask). */
export const GEMINI_APPROVAL_MODE = 'yolo';

/** Prompts longer than this many bytes go to stdin instead of argv (Linux caps one argument at 128 KiB). */
const MAX_ARGV_PROMPT_BYTES = 100_000;

/** Model passed as `-m` with a scripted model when `engine.model.name` is unset. Any name
 * works against the scripted server; passing one always skips the CLI's model-router call. */
export const DEFAULT_SCRIPTED_MODEL = 'gemini-2.5-flash';

/** Skills Gemini CLI 0.61.0 always lists (bundled in the package); disabled so the model's
 * listing holds only the skills under test. */
export const BUILTIN_SKILLS = ['skill-creator', 'antigravity-support'] as const;

/** Variables removed from the environment when the model is scripted, because each would pick
 * another auth method or send traffic somewhere other than the scripted server. */
const NON_SCRIPTED_ROUTING_VARS = [
  'GOOGLE_API_KEY',
  'GOOGLE_GENAI_USE_VERTEXAI',
  'GOOGLE_GENAI_USE_GCA',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_CLOUD_PROJECT_ID',
  'GOOGLE_CLOUD_LOCATION',
  'GOOGLE_CLOUD_QUOTA_PROJECT',
  'GOOGLE_CLOUD_UNIVERSE_DOMAIN',
  'GOOGLE_CLOUD_ACCESS_TOKEN',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_VERTEX_BASE_URL',
  'GEMINI_CLI_USE_COMPUTE_ADC',
  'GEMINI_API_KEY_AUTH_MECHANISM',
  'GEMINI_CLI_CUSTOM_HEADERS',
  'CODE_ASSIST_ENDPOINT',
  'CODE_ASSIST_API_VERSION',
  'CLOUD_SHELL',
  'GEMINI_MODEL',
];

/** Variables always removed: an IDE companion's connection (a run must not talk to the
 * user's editor) and system-prompt overrides meant for the user's own sessions. */
const ALWAYS_DROPPED_VARS = [
  'GEMINI_CLI_IDE_SERVER_PORT',
  'GEMINI_CLI_IDE_WORKSPACE_PATH',
  'GEMINI_CLI_IDE_PID',
  'GEMINI_CLI_IDE_AUTH_TOKEN',
  'GEMINI_CLI_IDE_SERVER_STDIO_COMMAND',
  'GEMINI_CLI_IDE_SERVER_STDIO_ARGS',
  'GEMINI_CLI_TRUSTED_FOLDERS_PATH',
  'GEMINI_SYSTEM_MD',
  'GEMINI_WRITE_SYSTEM_MD',
];

/** Gemini CLI's per-job state (besides the executable, see `CliPrepared`). */
export interface GeminiState {
  /** The complete environment of every `gemini` process of the job (holds no file-written secret). */
  env: ProcessEnv;
  /** `GEMINI_CLI_HOME` of the job (= `HOME` = `ctx.homeDir`); gemini keeps its state in `<it>/.gemini/`. */
  geminiHome: string;
  /** The settings written to `<geminiHome>/.gemini/settings.json`. */
  settings: GeminiSettings;
  /** `-m` value: `engine.model.name`, else DEFAULT_SCRIPTED_MODEL when scripted, else none (the CLI's default routing). */
  model?: string;
}

/** The user-level settings.json of a job (keys from bundle/docs/reference/configuration.md). */
export interface GeminiSettings {
  security: { auth?: { selectedType: string }; folderTrust: { enabled: boolean } };
  privacy: { usageStatisticsEnabled: boolean };
  telemetry: { enabled: boolean };
  general: {
    enableAutoUpdate: boolean;
    enableAutoUpdateNotification: boolean;
    checkpointing: { enabled: boolean };
    maxAttempts?: number;
    retryFetchErrors?: boolean;
  };
  model: { maxSessionTurns: number };
  skills: { disabled: string[] };
  ui: { hideTips: boolean; showCompatibilityWarnings: boolean };
  /** The job's MCP servers (mcp.ts `buildGeminiMcpServers`); absent without any. May hold secrets (env, headers). */
  mcpServers?: Record<string, GeminiMcpServerSettings>;
}

/**
 * The settings of one job:
 * - `security.auth.selectedType: "gemini-api-key"` when scripted, or when a base URL or
 *   `GEMINI_API_KEY` is in use (without it, `GOOGLE_GEMINI_BASE_URL` makes the CLI pick the
 *   `gateway` auth type and exit 41 "Invalid auth method selected");
 *   `vertex-ai` when `GOOGLE_GENAI_USE_VERTEXAI` is true; else left to the CLI.
 * - telemetry, usage statistics, auto-update and its notification, checkpointing: off; the
 *   trust dialog off (`GEMINI_CLI_TRUST_WORKSPACE` also trusts the workspace, so `yolo` stays
 *   `yolo`).
 * - scripted only: `general.maxAttempts: 1` and `general.retryFetchErrors: false`, so a
 *   scripted 500/429 or an unreachable server ends the turn at once (defaults: 10 attempts
 *   with backoff; "still retrying after 120 s" for an unreachable endpoint).
 * - `model.maxSessionTurns`: the case's `max_turns` (model requests per invocation; exit 53
 *   when reached), -1 (unlimited) when ≤ 0.
 * - `skills.disabled`: the built-in skills, except any of the same name under test.
 * - `mcpServers`: only when `ctx.mcpServers` has any (mcp.ts), the same for both variants.
 *
 * @throws Error when an MCP server lacks its command (stdio) or url (http).
 */
export function buildGeminiSettings(ctx: EngineContext): GeminiSettings {
  const scripted = isScripted(ctx.engine);
  const env = ctx.baseEnv;
  let selectedType: string | undefined;
  if (scripted || ctx.engine.model.baseUrl || env.GEMINI_API_KEY) selectedType = 'gemini-api-key';
  else if (/^(true|1)$/i.test(env.GOOGLE_GENAI_USE_VERTEXAI ?? '')) selectedType = 'vertex-ai';
  const maxTurns = ctx.case.maxTurns;
  const mcpServers = buildGeminiMcpServers(ctx.mcpServers);
  return {
    security: { ...(selectedType ? { auth: { selectedType } } : {}), folderTrust: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      checkpointing: { enabled: false },
      ...(scripted ? { maxAttempts: 1, retryFetchErrors: false } : {}),
    },
    model: { maxSessionTurns: maxTurns > 0 ? maxTurns : -1 },
    skills: { disabled: BUILTIN_SKILLS.filter((s) => !ctx.installedSkills.includes(s)) },
    ui: { hideTips: true, showCompatibilityWarnings: false },
    ...(mcpServers ? { mcpServers } : {}),
  };
}

/**
 * The environment of one job's `gemini` processes: the allow-listed part of `ctx.baseEnv`
 * (`isolatedEnv`: `agentEnv` with the definition's `envAllow`, index.ts) and the suite's `environment.env`, plus
 * `HOME` = `GEMINI_CLI_HOME` = `<homeDir>` (gemini's user dir is `$GEMINI_CLI_HOME/.gemini`; user
 * skills are read from there, not from `$HOME`), `XDG_{CONFIG,CACHE,DATA,STATE}_HOME` under it,
 * `TMPDIR=<homeDir>/tmp` (the CLI writes `gemini-client-error-*.json` reports to the OS temp
 * dir), `GEMINI_CLI_SYSTEM_SETTINGS_PATH` / `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` pointing at absent
 * files in the job home (no machine-wide `/etc/gemini-cli` settings leak in),
 * `GEMINI_CLI_TRUST_WORKSPACE=true`, `GEMINI_CLI_NO_RELAUNCH=true` (no second node process:
 * halves start-up, measured 2.5 s vs 4.8–5.4 s on a loaded 2-core machine),
 * `GEMINI_TELEMETRY_ENABLED=false`, `GEMINI_SANDBOX=false`, the variables of
 * ALWAYS_DROPPED_VARS removed, and:
 * - scripted model: `GOOGLE_GEMINI_BASE_URL=<ctx.modelBaseUrl>` and
 *   `GEMINI_API_KEY=skill-up-job:<ctx.jobId>` (the scripted server files each exchange under
 *   the job id the key carries), with NON_SCRIPTED_ROUTING_VARS removed;
 * - otherwise: `GOOGLE_GEMINI_BASE_URL=<engine.model.baseUrl>` when set (else the
 *   environment's), and `GEMINI_API_KEY` (or other credentials) exactly as in the environment.
 *
 * @throws EngineUnavailable when the model is scripted but no server URL was given.
 */
export function buildGeminiEnv(ctx: EngineContext): ProcessEnv {
  const env = isolatedEnv(ctx, geminiCli, { drop: ALWAYS_DROPPED_VARS, dropScripted: NON_SCRIPTED_ROUTING_VARS });
  env.GEMINI_CLI_HOME = ctx.homeDir;
  env.TMPDIR = join(ctx.homeDir, 'tmp');
  env.GEMINI_CLI_SYSTEM_SETTINGS_PATH = join(ctx.homeDir, '.gemini', 'no-system-settings.json');
  env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH = join(ctx.homeDir, '.gemini', 'no-system-defaults.json');
  env.GEMINI_CLI_TRUST_WORKSPACE = 'true';
  env.GEMINI_CLI_NO_RELAUNCH = 'true';
  env.GEMINI_TELEMETRY_ENABLED = 'false';
  env.GEMINI_SANDBOX = 'false';
  // settings.json spells a literal `$` of an MCP server's values as `${SKILL_UP_LITERAL_DOLLAR:-$}` (mcp.ts).
  delete env[LITERAL_DOLLAR_VAR];
  if (isScripted(ctx.engine)) {
    env.GOOGLE_GEMINI_BASE_URL = ctx.modelBaseUrl!.replace(/\/+$/, '');
    env.GEMINI_API_KEY = scriptedApiKey(ctx, 'skill-up-scripted');
  } else if (ctx.engine.model.baseUrl) {
    env.GOOGLE_GEMINI_BASE_URL = ctx.engine.model.baseUrl.replace(/\/+$/, '');
  }
  return env;
}

/**
 * The argv of one turn (without the executable):
 * `--output-format stream-json --approval-mode yolo --extensions none [-m <model>]
 *  (--session-id <uuid> | --resume <id>) --prompt=<prompt>`.
 * The prompt is attached with `=` so one starting with `-` stays a prompt (verified: a bare
 * `-p "--write …"` is rejected); a prompt over 100 000 bytes is sent on stdin with an empty
 * `--prompt=` instead (gemini appends `-p` to its stdin input; verified).
 */
export function buildGeminiArgs(opts: { prompt: string; model?: string; resume?: string; sessionId?: string }): { args: string[]; stdin?: string } {
  const args = ['--output-format', 'stream-json', '--approval-mode', GEMINI_APPROVAL_MODE, '--extensions', 'none'];
  if (opts.model) args.push('-m', opts.model);
  if (opts.resume) args.push('--resume', opts.resume);
  else if (opts.sessionId) args.push('--session-id', opts.sessionId);
  if (Buffer.byteLength(opts.prompt, 'utf8') > MAX_ARGV_PROMPT_BYTES) {
    args.push('--prompt=');
    return { args, stdin: opts.prompt };
  }
  args.push(`--prompt=${opts.prompt}`);
  return { args };
}

/**
 * Decides a turn's error from the process outcome and the parsed stream, in this order:
 * could not start (ENOENT/EACCES → `missing`, else `crash`), `timeout`, `cancelled`, the error
 * the stream reports (see `GeminiStreamSummary.error`; API errors exit with the HTTP status
 * mod 256, e.g. 244 for a 500, 173 for a 429, 1 for an unreachable server), a non-zero exit or a
 * signal (`crash` with the stderr tail), and finally an exit 0 without a `result` line
 * (`protocol`).
 */
export function decideError(r: ProcResult, parsed: GeminiStreamSummary, timeoutMs: number, stderrTail: string): EngineError | undefined {
  return decideTurnError(r, parsed, timeoutMs, stderrTail, errorFacts(parsed));
}

function errorFacts(parsed: GeminiStreamSummary): ErrorFacts {
  return { completed: parsed.hasResult, noResult: 'gemini exited 0 without a "result" line in its stream-json output' };
}

/**
 * Gemini CLI's part of the lifecycle: `<homeDir>/.gemini/settings.json` (`buildGeminiSettings`,
 * no secrets), `<homeDir>/tmp` and the environment (`buildGeminiEnv`). Per turn `gemini
 * <buildGeminiArgs>`, stdout → `outputs/turn-<n>.stream.jsonl` (a file, so it is always fully
 * drained: gemini dies of EPIPE before calling the model if its stdout is closed early). The
 * first turn presets a fresh session UUID (`--session-id`), so the id is known even
 * if the process dies before printing it; later turns pass `--resume <id>` (same cwd and
 * GEMINI_CLI_HOME, which the job keeps). Tokens are this invocation's (`result.stats`, the
 * session's last raw stats carried in case they are cumulative); gemini reports no cost.
 */
export const geminiCliSpec: CliEngineSpec<GeminiState, GeminiStreamSummary, GeminiRawStats> = {
  stdoutName: 'stream.jsonl',
  supportsMcp: true,
  async setup(ctx) {
    const env = buildGeminiEnv(ctx);
    const settings = buildGeminiSettings(ctx);
    await mkdir(join(ctx.homeDir, '.gemini'), { recursive: true });
    await mkdir(join(ctx.homeDir, 'tmp'), { recursive: true });
    const settingsFile = join(ctx.homeDir, '.gemini', 'settings.json');
    await writeFile(settingsFile, JSON.stringify(settings, null, 2) + '\n', settings.mcpServers ? { mode: 0o600 } : {});
    // MCP env/header values may be secrets: only the job's own user may read them.
    if (settings.mcpServers) await chmod(settingsFile, 0o600);
    const model = ctx.engine.model.name ?? (isScripted(ctx.engine) ? DEFAULT_SCRIPTED_MODEL : undefined);
    return { env, geminiHome: ctx.homeDir, settings, ...(model ? { model } : {}) };
  },
  command(_ctx, prepared, turn) {
    const sessionId = turn.sessionId ? undefined : randomUUID();
    return { ...buildGeminiArgs({ prompt: turn.prompt, model: prepared.model, resume: turn.sessionId, sessionId }), ...(sessionId ? { sessionId } : {}) };
  },
  parser: (ctx, _p, _turn, previous) =>
    new GeminiStreamParser({
      ...(ctx.case.maxTurns > 0 ? { maxTurns: ctx.case.maxTurns } : {}),
      ...(previous ? { previous } : {}),
      ...(ctx.mcpServers?.length ? { mcpServers: ctx.mcpServers.map((s) => s.name) } : {}),
    }),
  carry: (parsed) => parsed.rawStats,
  errorFacts,
  // gemini's stream-json output names no approval mode: record the one buildGeminiArgs passes.
  permissionMode: () => GEMINI_APPROVAL_MODE,
};

/** The adapter. One instance serves every job. */
export const geminiCliAdapter = cliEngine(geminiCli, geminiCliSpec);
