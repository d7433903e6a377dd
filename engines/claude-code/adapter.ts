/**
 * The Claude Code engine adapter (`engine.name: claude_code`).
 *
 * Drives the `claude` CLI (npm `@anthropic-ai/claude-code`, verified with 2.1.332) in print mode
 * with stream-json output, one process per user turn, later turns resuming the first turn's
 * session. The exact command line and environment, and the facts behind them, are in README.md
 * beside this file. The lifecycle is
 * src/engine/cli-engine.ts; this file holds only Claude Code's own facts.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcResult } from '../../src/engine/proc.js';
import { cliEngine, decideTurnError, isScripted, isolatedEnv, scriptedApiKey, type CliEngineSpec, type ErrorFacts, type ProcessEnv } from '../../src/engine/cli-engine.js';
import type { EngineContext, EngineError } from '../../src/engine/types.js';
import { StreamJsonParser, type ClaudeStreamSummary } from './parse.js';
import { claudeCode } from './index.js';
import { CLAUDE_MCP_CONFIG_FILE, buildClaudeMcpConfig, claudeMcpArgs } from './mcp.js';

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

/** Claude Code's per-job state (besides the executable, see `CliPrepared`). */
export interface ClaudeState {
  /** The complete environment of every `claude` process of the job (holds no file-written secret). */
  env: ProcessEnv;
  /** `CLAUDE_CONFIG_DIR` of the job: `<homeDir>/claude-config`. */
  configDir: string;
  /** The job's `--mcp-config` file (`<configDir>/skill-up-mcp.json`), only when `ctx.mcpServers` is non-empty. */
  mcpConfigFile?: string;
}

/** Drops a trailing `/` and `/v1`: Claude Code appends `/v1/messages` to `ANTHROPIC_BASE_URL` itself. */
export function normaliseAnthropicBaseUrl(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/**
 * The environment of one job's `claude` processes: the allow-listed part of `ctx.baseEnv`
 * (`isolatedEnv`: `agentEnv` with the definition's `envAllow`, index.ts) and the suite's `environment.env`, plus
 * `HOME=<homeDir>`, `CLAUDE_CONFIG_DIR=<homeDir>/claude-config`, `XDG_{CONFIG,CACHE,DATA,STATE}_HOME`
 * under `<homeDir>`, `IS_SANDBOX=1`, `DISABLE_TELEMETRY=1`,
 * `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, `DISABLE_AUTOUPDATER=1`,
 * `CLAUDE_CODE_DISABLE_BUNDLED_SKILLS=1`, and:
 * - scripted model: `ANTHROPIC_BASE_URL=<ctx.modelBaseUrl>`, `ANTHROPIC_API_KEY=skill-up-job:<jobId>` (`dummy` without one),
 *   `CLAUDE_CODE_MAX_RETRIES=0`, and the variables of NON_SCRIPTED_ROUTING_VARS removed;
 * - otherwise: `ANTHROPIC_BASE_URL=<engine.model.baseUrl>` when set (else the environment's),
 *   and `ANTHROPIC_API_KEY` (or other credentials) exactly as in the environment.
 *
 * @throws EngineUnavailable when the model is scripted but no server URL was given.
 */
export function buildClaudeEnv(ctx: EngineContext, configDir: string): ProcessEnv {
  const env = isolatedEnv(ctx, claudeCode, { dropScripted: NON_SCRIPTED_ROUTING_VARS });
  env.CLAUDE_CONFIG_DIR = configDir;
  env.IS_SANDBOX = '1';
  env.DISABLE_TELEMETRY = '1';
  env.CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC = '1';
  env.DISABLE_AUTOUPDATER = '1';
  env.CLAUDE_CODE_DISABLE_BUNDLED_SKILLS = '1';
  if (isScripted(ctx.engine)) {
    env.ANTHROPIC_BASE_URL = normaliseAnthropicBaseUrl(ctx.modelBaseUrl!);
    env.ANTHROPIC_API_KEY = scriptedApiKey(ctx);
    env.CLAUDE_CODE_MAX_RETRIES = '0';
  } else if (ctx.engine.model.baseUrl) {
    env.ANTHROPIC_BASE_URL = normaliseAnthropicBaseUrl(ctx.engine.model.baseUrl);
  }
  return env;
}

/**
 * The argv of one turn (without the executable):
 * `-p --output-format stream-json --verbose --permission-mode bypassPermissions
 *  --max-turns <N> [--model <name>] [--resume <session>] [--mcp-config <file> --strict-mcp-config] -- <prompt>`.
 * The prompt goes last behind `--` so a prompt starting with `-` is not taken for an option
 * (verified); a prompt over 100 000 bytes is left out and sent on stdin instead (`stdin` set).
 * `--max-turns` is omitted when `maxTurns` ≤ 0.
 */
export function buildClaudeArgs(opts: { prompt: string; maxTurns: number; model?: string; resume?: string; mcpConfigFile?: string }): { args: string[]; stdin?: string } {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions'];
  if (opts.maxTurns > 0) args.push('--max-turns', String(opts.maxTurns));
  if (opts.model) args.push('--model', opts.model);
  if (opts.resume) args.push('--resume', opts.resume);
  // Every turn: a resumed session does not remember the servers of the previous process.
  if (opts.mcpConfigFile) args.push(...claudeMcpArgs(opts.mcpConfigFile));
  if (Buffer.byteLength(opts.prompt, 'utf8') > MAX_ARGV_PROMPT_BYTES) return { args, stdin: opts.prompt };
  args.push('--', opts.prompt);
  return { args };
}

/**
 * Decides a turn's error from the process outcome and the parsed stream, in this order:
 * could not start (ENOENT/EACCES → `missing`, else `crash`), `timeout`, `cancelled`, the error
 * the stream reports (see `ClaudeStreamSummary.error`), a non-zero exit or a signal (`crash`
 * with the stderr tail), and finally an exit 0 without a `result` line (`protocol`).
 */
export function decideError(r: ProcResult, parsed: ClaudeStreamSummary, timeoutMs: number, stderrTail: string): EngineError | undefined {
  return decideTurnError(r, parsed, timeoutMs, stderrTail, errorFacts(parsed));
}

function errorFacts(parsed: ClaudeStreamSummary): ErrorFacts {
  return { completed: parsed.hasResult, noResult: 'claude exited 0 without a "result" line in its stream-json output' };
}

/**
 * Claude Code's part of the lifecycle: `<homeDir>/claude-config/settings.json` (CLAUDE_SETTINGS),
 * with MCP servers `<homeDir>/claude-config/skill-up-mcp.json` (mode 0600, `buildClaudeMcpConfig`),
 * and the environment (`buildClaudeEnv`); per turn `claude <buildClaudeArgs>`, stdout →
 * `outputs/turn-<n>.stream.jsonl`. Tokens are this invocation's (`result.usage`); `costUsd` is
 * this turn's share in USD: Claude Code's `total_cost_usd` is cumulative over a resumed session,
 * so the session's last total is carried to the next turn and subtracted.
 */
export const claudeCodeSpec: CliEngineSpec<ClaudeState, ClaudeStreamSummary, number> = {
  stdoutName: 'stream.jsonl',
  supportsMcp: true,
  async setup(ctx) {
    const configDir = join(ctx.homeDir, 'claude-config');
    const env = buildClaudeEnv(ctx, configDir);
    await mkdir(configDir, { recursive: true });
    await writeFile(join(configDir, 'settings.json'), JSON.stringify(CLAUDE_SETTINGS, null, 2) + '\n');
    if (!ctx.mcpServers?.length) return { env, configDir };
    const mcpConfigFile = join(configDir, CLAUDE_MCP_CONFIG_FILE);
    await writePrivateFile(mcpConfigFile, JSON.stringify(buildClaudeMcpConfig(ctx.mcpServers), null, 2) + '\n');
    return { env, configDir, mcpConfigFile };
  },
  command: (ctx, p, turn) =>
    buildClaudeArgs({ prompt: turn.prompt, maxTurns: ctx.case.maxTurns, model: ctx.engine.model.name, resume: turn.sessionId, mcpConfigFile: p.mcpConfigFile }),
  parser: (ctx, _p, _turn, previous) =>
    new StreamJsonParser({ maxTurns: ctx.case.maxTurns > 0 ? ctx.case.maxTurns : undefined, previousTotalCostUsd: previous }),
  carry: (parsed) => parsed.totalCostUsd,
  errorFacts,
};

/** Writes `text` to `file` readable by its owner only (0600, also when the file existed): MCP env and header values may be secrets. */
async function writePrivateFile(file: string, text: string): Promise<void> {
  await writeFile(file, text, { mode: 0o600 });
  await chmod(file, 0o600);
}

/** The adapter. One instance serves every job. */
export const claudeCodeAdapter = cliEngine(claudeCode, claudeCodeSpec);
