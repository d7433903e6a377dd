/**
 * The OpenAI Codex CLI engine adapter (`engine.name: codex`).
 *
 * Drives `codex exec --json` (npm `@openai/codex`, verified with 0.171.0), one process per user
 * turn, later turns continuing the first turn's thread with `codex exec resume <thread id>`.
 * Every job gets its own `CODEX_HOME` holding a generated `config.toml` whose custom model
 * provider points at the scripted model server or `engine.model.baseUrl` (codex ignores
 * `OPENAI_BASE_URL`). The exact command line and environment, and the facts behind them, are
 * in README.md beside this file and the captured output in samples/.
 */
import { chmod, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EngineConfig } from '../../src/config/types.js';
import type { ProcResult } from '../../src/engine/proc.js';
import { feedLines } from '../../src/engine/turn.js';
import { cliEngine, decideTurnError, isScripted, isolatedEnv, noServer, scriptedApiKey, type CliEngineSpec, type ErrorFacts, type ProcessEnv } from '../../src/engine/cli-engine.js';
import type { EngineContext, EngineError, TranscriptTurn } from '../../src/engine/types.js';
import { CodexJsonParser, RolloutParser, type CodexStreamSummary, type CodexUsage } from './parse.js';
import { textFromFile, turnTextFields } from '../../src/engine/final-text.js';
import { codex } from './index.js';
import { buildCodexMcpToml } from './mcp.js';

/** Model slug used with the scripted model when `engine.model.name` is unset: a slug codex
 * 0.171.0 knows, so it offers its full tool set (`apply_patch` included) and prints no
 * "Model metadata … not found" warning. */
export const CODEX_SCRIPTED_DEFAULT_MODEL = 'gpt-5.5';

/** Id of the model provider written into config.toml. */
export const CODEX_PROVIDER_ID = 'skillup';

/** Prompts longer than this many bytes go to stdin (`-`) instead of argv (Linux caps one argument at 128 KiB). */
const MAX_ARGV_PROMPT_BYTES = 100_000;

/** Variables removed when the model is scripted: each could route auth or traffic elsewhere. */
const NON_SCRIPTED_ROUTING_VARS = ['CODEX_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORGANIZATION', 'OPENAI_ORG_ID', 'OPENAI_PROJECT'];

/** Codex's per-job state (besides the executable, see `CliPrepared`). */
export interface CodexState {
  /** The complete environment of every `codex` process of the job (no secret is written to a file). */
  env: ProcessEnv;
  /** `CODEX_HOME` of the job: `<homeDir>/codex-home`. */
  codexHome: string;
  /** `--dangerously-bypass-approvals-and-sandbox` on every turn (`engine.kwargs.bypass_sandbox`). */
  bypassSandbox: boolean;
  /** The running turn's rollout file before it started and that file's size then (bytes). */
  rolloutBefore?: { file?: string; offset: number };
}

/** Appends `/v1` unless the URL already ends with a version segment: codex POSTs `<base_url>/responses`. */
export function codexBaseUrl(url: string, scripted: boolean): string {
  const u = url.replace(/\/+$/, '');
  return scripted && !/\/v\d+$/.test(u) ? `${u}/v1` : u;
}

/**
 * The permission mode of a codex job as skill-up passes it (codex's `--json` output reports
 * none): `--dangerously-bypass-approvals-and-sandbox` with `bypass_sandbox`, else config.toml's
 * `approval_policy = "never"` and `sandbox_mode = "workspace-write"` (buildCodexConfig).
 */
export function codexPermissionMode(bypassSandbox: boolean): string {
  return bypassSandbox ? '--dangerously-bypass-approvals-and-sandbox' : 'approval_policy "never", sandbox_mode "workspace-write"';
}

/** `engine.kwargs.bypass_sandbox` is `true`/`1`/`yes`. */
export function wantsBypass(engine: EngineConfig): boolean {
  return /^(true|1|yes|on)$/i.test(engine.kwargs.bypass_sandbox ?? '');
}

function tomlString(s: string): string {
  return JSON.stringify(s); // JSON string escapes are valid TOML basic-string escapes
}

/**
 * The job's `$CODEX_HOME/config.toml` (accepted by `--strict-config`; no secret in it: the key
 * is read from `OPENAI_API_KEY` by `env_key`):
 * - `model`: `engine.model.name`, else (scripted) `gpt-5.5`, else codex's default;
 * - `model_provider = "skillup"` with `base_url` = the scripted server + `/v1`, else
 *   `engine.model.baseUrl`, else `https://api.openai.com/v1`; `wire_api = "responses"`;
 *   `env_key = "OPENAI_API_KEY"`; scripted: `request_max_retries = 0`, `stream_max_retries = 0`
 *   (a scripted 500 fails in ~1 s instead of backing off);
 * - `approval_policy = "never"`, `sandbox_mode = "workspace-write"` (also applies to `exec
 *   resume`, which has no `--sandbox` flag) or `danger-full-access` with bypass;
 * - `check_for_update_on_startup = false`, `[analytics] enabled = false`, `[features] plugins,
 *   remote_plugin, apps = false` (no traffic but the model's);
 * - `[skills.bundled] enabled = false`: codex's 4 built-in skills (imagegen, openai-docs,
 *   skill-creator, skill-installer) are not listed, so the listing holds exactly the
 *   workspace's skills (verified with 0.171.0; pitfall 18);
 * - with `ctx.mcpServers` non-empty, their `[mcp_servers.<name>]` tables at the end
 *   (`buildCodexMcpToml`); without, nothing about MCP. Those tables may hold secrets (env and
 *   header values): the adapter writes the file mode 0600.
 * @throws EngineUnavailable when the model is scripted but no server URL was given.
 */
export function buildCodexConfig(ctx: EngineContext, opts: { bypassSandbox?: boolean } = {}): string {
  const scripted = isScripted(ctx.engine);
  if (scripted && !ctx.modelBaseUrl) throw noServer(codex.name);
  const baseUrl = scripted ? codexBaseUrl(ctx.modelBaseUrl!, true) : codexBaseUrl(ctx.engine.model.baseUrl ?? 'https://api.openai.com/v1', false);
  const model = ctx.engine.model.name ?? (scripted ? CODEX_SCRIPTED_DEFAULT_MODEL : undefined);
  const lines = [
    ctx.mcpServers?.length
      ? '# Written by skill-up for one job (engines/codex/README.md). The API key comes from $OPENAI_API_KEY; [mcp_servers] may hold secrets (mode 0600).'
      : '# Written by skill-up for one job (engines/codex/README.md). No secrets: the API key comes from $OPENAI_API_KEY.',
    ...(model ? [`model = ${tomlString(model)}`] : []),
    `model_provider = ${tomlString(CODEX_PROVIDER_ID)}`,
    'approval_policy = "never"',
    `sandbox_mode = ${opts.bypassSandbox ? '"danger-full-access"' : '"workspace-write"'}`,
    'check_for_update_on_startup = false',
    '',
    `[model_providers.${CODEX_PROVIDER_ID}]`,
    `name = ${tomlString(scripted ? 'skill-up scripted model' : 'skill-up')}`,
    `base_url = ${tomlString(baseUrl)}`,
    'wire_api = "responses"',
    'env_key = "OPENAI_API_KEY"',
    ...(scripted ? ['request_max_retries = 0', 'stream_max_retries = 0'] : []),
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
    '[skills.bundled]',
    'enabled = false',
    '',
  ];
  if (ctx.mcpServers?.length) lines.push(buildCodexMcpToml(ctx.mcpServers));
  return lines.join('\n');
}

/**
 * The environment of one job's `codex` processes: the allow-listed part of `ctx.baseEnv`
 * (`isolatedEnv`: `agentEnv` with the definition's `envAllow`, index.ts) and the suite's `environment.env`, plus `HOME=<homeDir>`,
 * `CODEX_HOME=<homeDir>/codex-home` (codex reads `$HOME/.agents/skills` too, so both are
 * private), `XDG_{CONFIG,CACHE,DATA,STATE}_HOME` under `<homeDir>`, `NO_COLOR=1`, and:
 * - scripted model: `OPENAI_API_KEY=skill-up-job:<jobId>` (the server files each exchange
 *   under that job) or `dummy` without a job id, and NON_SCRIPTED_ROUTING_VARS removed;
 * - otherwise: `OPENAI_API_KEY` exactly as in the environment.
 */
export function buildCodexEnv(ctx: EngineContext, codexHome: string): ProcessEnv {
  // The server URL goes into config.toml, which checks it (buildCodexConfig).
  const env = isolatedEnv(ctx, codex, { dropScripted: NON_SCRIPTED_ROUTING_VARS, requireServer: false });
  env.CODEX_HOME = codexHome;
  env.NO_COLOR = '1';
  if (isScripted(ctx.engine)) env.OPENAI_API_KEY = scriptedApiKey(ctx);
  return env;
}

/**
 * The argv of one turn (without the executable):
 * - turn 1: `exec --json --skip-git-repo-check -o <lastMessageFile> [--dangerously-bypass-approvals-and-sandbox] -- <prompt>`;
 * - later:  `exec resume --json --skip-git-repo-check -o <lastMessageFile> [--dangerously-…] -- <thread id> <prompt>`.
 * The positionals go behind `--` so a prompt starting with `-` stays a prompt. A prompt over
 * 100 000 bytes is sent on stdin instead (`-` as the prompt; `stdin` set).
 */
export function buildCodexArgs(opts: { prompt: string; lastMessageFile: string; resume?: string; bypassSandbox?: boolean }): { args: string[]; stdin?: string } {
  const args = ['exec'];
  if (opts.resume) args.push('resume');
  args.push('--json', '--skip-git-repo-check', '-o', opts.lastMessageFile);
  if (opts.bypassSandbox) args.push('--dangerously-bypass-approvals-and-sandbox');
  args.push('--');
  if (opts.resume) args.push(opts.resume);
  if (Buffer.byteLength(opts.prompt, 'utf8') > MAX_ARGV_PROMPT_BYTES) {
    args.push('-');
    return { args, stdin: opts.prompt };
  }
  args.push(opts.prompt);
  return { args };
}

/** `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<threadId>.jsonl`, or undefined. */
export async function findRolloutFile(codexHome: string, threadId: string): Promise<string | undefined> {
  const suffix = `-${threadId}.jsonl`;
  const walk = async (dir: string, depth: number): Promise<string | undefined> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return undefined;
    }
    for (const e of entries.sort((a, b) => b.name.localeCompare(a.name))) {
      const p = join(dir, e.name);
      if (e.isFile() && e.name.startsWith('rollout-') && e.name.endsWith(suffix)) return p;
      if (e.isDirectory() && depth < 4) {
        const found = await walk(p, depth + 1);
        if (found) return found;
      }
    }
    return undefined;
  };
  return walk(join(codexHome, 'sessions'), 0);
}

async function fileSize(file: string | undefined): Promise<number> {
  if (!file) return 0;
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/**
 * Decides a turn's error, in this order: could not start (ENOENT/EACCES → `missing`, else
 * `crash`), `timeout` (with codex's last `error` line, e.g. `Reconnecting... waiting for
 * network`, when there was one), `cancelled`, the stream's `turn.failed` (`api`), a non-zero
 * exit or a signal (`crash` with the stderr tail), and an exit 0 without `turn.completed`
 * (`protocol`).
 */
export function decideError(r: ProcResult, parsed: CodexStreamSummary, timeoutMs: number, stderrTail: string): EngineError | undefined {
  return decideTurnError(r, parsed, timeoutMs, stderrTail, errorFacts(parsed));
}

function errorFacts(parsed: CodexStreamSummary): ErrorFacts {
  return {
    completed: parsed.completed,
    noResult: 'codex exited 0 without a "turn.completed" line in its --json output',
    ...(parsed.lastErrorMessage ? { timeoutDetail: `codex's last error: ${parsed.lastErrorMessage}` } : {}),
  };
}

/** `outputs/turn-<n>.last-message.txt`: where `-o` writes the turn's last agent message. */
function lastMessageRel(index: number): string {
  return `outputs/turn-${index}.last-message.txt`;
}

/**
 * Codex's part of the lifecycle: `<homeDir>/codex-home/config.toml` (`buildCodexConfig`) and the
 * environment (`buildCodexEnv`); per turn `codex <buildCodexArgs>`, stdout →
 * `outputs/turn-<n>.jsonl`, the last agent message → `outputs/turn-<n>.last-message.txt`. Codex
 * retries an unreachable endpoint forever: the time limit is what ends such a turn.
 *
 * `finalText` is the `-o` file when it is non-empty, else the last `agent_message`; tokens are
 * this turn's (codex's counters are cumulative over the thread: the previous turn's are carried
 * and subtracted); no cost is reported (codex prints none). `skillsListed` and `$name`-mention
 * activations come from the thread's rollout file in `CODEX_HOME` (undefined / none when it is missing).
 */
export const codexSpec: CliEngineSpec<CodexState, CodexStreamSummary, CodexUsage> = {
  stdoutName: 'jsonl',
  supportsMcp: true,
  async setup(ctx) {
    const codexHome = join(ctx.homeDir, 'codex-home');
    // In a container, the container is the sandbox; Codex's own (Landlock, seccomp) cannot write there.
    const bypassSandbox = wantsBypass(ctx.engine) || ctx.runtime === 'docker';
    const config = buildCodexConfig(ctx, { bypassSandbox });
    const env = buildCodexEnv(ctx, codexHome);
    await mkdir(codexHome, { recursive: true });
    // 0600: MCP servers' env and header values may be secrets.
    await writeFile(join(codexHome, 'config.toml'), config, { mode: 0o600 });
    await chmod(join(codexHome, 'config.toml'), 0o600);
    return { env, codexHome, bypassSandbox };
  },
  async command(ctx, prepared, turn) {
    const file = turn.sessionId ? await findRolloutFile(prepared.codexHome, turn.sessionId) : undefined;
    prepared.rolloutBefore = { file, offset: await fileSize(file) };
    const lastMessageFile = join(ctx.outputDir, lastMessageRel(turn.index));
    return buildCodexArgs({ prompt: turn.prompt, lastMessageFile, resume: turn.sessionId, bypassSandbox: prepared.bypassSandbox });
  },
  parser: (_ctx, _p, _turn, previous) => new CodexJsonParser({ previousUsage: previous }),
  carry: (parsed) => parsed.cumulativeUsage,
  errorFacts,
  permissionMode: (_ctx, prepared) => codexPermissionMode(prepared.bypassSandbox),
  async afterTurn(ctx, prepared, turn, out) {
    // The -o file is the answer when it has one (a large one stays there: one copy on disk);
    // no -o file means the turn failed before an answer.
    const lastRel = lastMessageRel(turn.index);
    const fromFile = await textFromFile(ctx.outputDir, lastRel, 'newline');
    const finalText: Pick<TranscriptTurn, 'finalText' | 'finalTextFile' | 'finalTextBytes'> =
      fromFile.file || fromFile.text.trim() !== '' ? turnTextFields(fromFile) : { finalText: out.finalText };

    const skillActivations = [...out.skillActivations];
    let skillsListed: string[] | undefined;
    const rollout = out.sessionId ? await findRolloutFile(prepared.codexHome, out.sessionId) : undefined;
    if (rollout) {
      // Line by line (the rollout holds the whole thread): memory is bounded by one line.
      const whole = new RolloutParser();
      await feedLines(rollout, (line) => whole.push(line));
      skillsListed = whole.finish().skillsListed;
      const start = rollout === prepared.rolloutBefore?.file ? prepared.rolloutBefore.offset : 0;
      const recent = new RolloutParser();
      await feedLines(rollout, (line) => recent.push(line), start);
      for (const skill of recent.finish().mentioned) {
        if (!skillActivations.some((a) => a.skill === skill)) skillActivations.push({ skill, via: '$skill mention' });
      }
    }
    const rawFiles = [...out.rawFiles];
    if ((await fileSize(join(ctx.outputDir, lastRel))) > 0) rawFiles.push(lastRel);
    return { ...out, ...finalText, skillActivations, ...(skillsListed ? { skillsListed } : {}), rawFiles };
  },
};

/** The adapter. One instance serves every job. */
export const codexAdapter = cliEngine(codex, codexSpec);
