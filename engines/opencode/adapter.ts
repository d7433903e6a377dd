/**
 * The OpenCode engine adapter (`engine.name: opencode`).
 *
 * Drives `opencode run --format json` (npm `opencode-ai`, verified with 1.18.33; a Bun-compiled
 * binary shipped inside the npm package), one process per user turn, later turns continuing the
 * first turn's session with `--session <ses_…>`. The exact command line, environment and config
 * are in README.md beside this file, with the facts behind them (the captured output in samples/
 * and this adapter's own runs).
 */
import { access, chmod, constants, mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { EngineConfig } from '../../src/config/types.js';
import type { ProcResult } from '../../src/engine/proc.js';
import { cliEngine, decideTurnError, openaiBaseUrl, isScripted, isolatedEnv, noServer, scriptedApiKey, type CliEngineSpec, type ErrorFacts, type ProcessEnv } from '../../src/engine/cli-engine.js';
export { openaiBaseUrl };
import type { EngineContext, EngineError } from '../../src/engine/types.js';
import { redactor } from '../../src/util/redact.js';
import { OpencodeJsonParser, type OpencodeSummary } from './parse.js';
import { OPENCODE_MCP_LOG_ARGS, buildOpencodeMcp, mcpSecretValues, unavailableMcpMessage, unavailableMcpServers } from './mcp.js';
import { opencode } from './index.js';

/** Provider id of the scripted model in the generated config (`<id>/<model>` on the command line). */
export const SCRIPTED_PROVIDER_ID = 'skillup';
/** Model id used with the scripted server when `engine.model.name` is unset. */
export const DEFAULT_SCRIPTED_MODEL = 'scripted-model';

/**
 * A dead loopback port for npm: on every run OpenCode starts a background `npm install` of its
 * plugin/TUI dependencies into `$XDG_CONFIG_HOME/opencode`; pointed here it fails at once and
 * silently, and the run is unaffected.
 */
export const DEAD_NPM_REGISTRY = 'http://127.0.0.1:9/';

/** OpenCode's per-job state (besides the executable, see `CliPrepared`). */
export interface OpencodeState {
  /** The complete environment of every `opencode` process of the job. */
  env: ProcessEnv;
  /** Absolute path of the generated config (`<homeDir>/.config/opencode/opencode.json`). */
  configFile: string;
  /** `-m` value: `<provider>/<model>`. */
  model: string;
  /** The case's `max_turns` (the config's `agent.build.steps` is one more), 0 = none. */
  maxSteps: number;
  /** Names of the job's MCP servers (`ctx.mcpServers`), in the config's `mcp`; empty = none. */
  mcpServers: string[];
}


/** The `-m` value: scripted → `skillup/<name | scripted-model>`; else `<provider>/<name>` (or `name` when it already holds a `/`). */
export function opencodeModel(engine: EngineConfig): string | undefined {
  if (isScripted(engine)) return `${SCRIPTED_PROVIDER_ID}/${engine.model.name || DEFAULT_SCRIPTED_MODEL}`;
  const name = engine.model.name;
  if (!name) return undefined;
  if (name.includes('/')) return name;
  return engine.model.provider ? `${engine.model.provider}/${name}` : name;
}

/**
 * The OpenCode config of one job (written to `$XDG_CONFIG_HOME/opencode/opencode.json`, the
 * user-level config OpenCode always loads). Never holds a secret:
 * - scripted: a provider `skillup` using the bundled `@ai-sdk/openai-compatible` package with
 *   `baseURL: <ctx.modelBaseUrl>/v1` and `apiKey: skill-up-job:<jobId>` (the scripted server
 *   files each exchange under that job), one model with `tool_call: true`, as `model` and
 *   `small_model`;
 * - otherwise: `model` from `engine.model` and, with `engine.model.baseUrl`, that provider's
 *   `options.baseURL`; credentials stay in the environment, where OpenCode reads them;
 * - always: `autoupdate: false`, `share: "disabled"`, `snapshot: false` (no git snapshot of the
 *   workspace at every step), `permission: {"*": "allow"}` (every tool may run, workspace writes
 *   included, on every turn) with the built-in skills denied (hidden from the listing), and with `maxSteps > 0` `agent.build.steps = maxSteps + 1`:
 *   OpenCode's last allowed step is a forced text-only answer (it appends "CRITICAL - MAXIMUM
 *   STEPS REACHED" and the scripted server then offers no tool), so the agent gets `maxSteps`
 *   ordinary model calls, like Claude Code's `--max-turns`, and a run that used the extra
 *   step is reported as `max turns reached` (`OpencodeSummary.error`);
 * - with `ctx.mcpServers` (non-empty): `mcp` (mcp.ts `buildOpencodeMcp`), the same in both
 *   variants; without, no `mcp` key at all. Its env and header values may be secrets: the
 *   adapter writes the file mode 0600 in the job's private home.
 * @throws Error from `buildOpencodeMcp` (a server without command/url, a name given twice).
 */
/** Skills OpenCode always lists (built into the binary); hidden so the model's listing holds only the skills under test. */
export const BUILTIN_SKILLS = ['customize-opencode'] as const;

/** `permission.skill` entries that hide the built-in skills (OpenCode: a `deny`ed skill is not listed), except any of the same name under test. */
function hiddenBuiltinSkills(ctx: EngineContext): Record<string, 'deny'> {
  return Object.fromEntries(BUILTIN_SKILLS.filter((s) => !ctx.installedSkills.includes(s)).map((s) => [s, 'deny']));
}

export function buildOpencodeConfig(ctx: EngineContext, maxSteps: number): Record<string, unknown> {
  const cfg: Record<string, unknown> = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    snapshot: false,
    permission: { '*': 'allow', skill: { '*': 'allow', ...hiddenBuiltinSkills(ctx) } },
  };
  const model = opencodeModel(ctx.engine);
  if (isScripted(ctx.engine)) {
    if (!ctx.modelBaseUrl) throw noServer(opencode.name);
    const id = ctx.engine.model.name || DEFAULT_SCRIPTED_MODEL;
    cfg.provider = {
      [SCRIPTED_PROVIDER_ID]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'skill-up scripted model',
        options: { baseURL: openaiBaseUrl(ctx.modelBaseUrl), apiKey: scriptedApiKey(ctx) },
        models: { [id]: { name: id, tool_call: true } },
      },
    };
  } else if (ctx.engine.model.baseUrl && model?.includes('/')) {
    cfg.provider = { [model.split('/')[0]!]: { options: { baseURL: ctx.engine.model.baseUrl } } };
  }
  if (model) {
    cfg.model = model;
    cfg.small_model = model;
  }
  if (maxSteps > 0) cfg.agent = { build: { steps: maxSteps + 1 } };
  if (ctx.mcpServers?.length) cfg.mcp = buildOpencodeMcp(ctx.mcpServers);
  return cfg;
}

/**
 * The environment of one job's `opencode` processes: the allow-listed part of `ctx.baseEnv`
 * (`isolatedEnv`: `agentEnv` with the definition's `envAllow`, index.ts) and the suite's `environment.env`, plus `HOME=<homeDir>` and
 * `XDG_{CONFIG,DATA,CACHE,STATE}_HOME` under it (config, the session database
 * `opencode/opencode.db`, caches and logs all stay in the job), `OPENCODE_DISABLE_AUTOUPDATE=1`,
 * `OPENCODE_DISABLE_MODELS_FETCH=1` (the bundled models list is used), `OPENCODE_DISABLE_SHARE=1`,
 * `OPENCODE_DISABLE_LSP_DOWNLOAD=1`, `npm_config_registry=<dead port>` and
 * `npm_config_update_notifier=false` (the background plugin install fails at once, offline).
 * `OPENCODE_CONFIG`, `OPENCODE_CONFIG_CONTENT`, `OPENCODE_CONFIG_DIR` and `OPENCODE_PERMISSION`
 * from the environment are removed so the job's config is the only one besides the workspace's.
 */
export function buildOpencodeEnv(ctx: EngineContext): ProcessEnv {
  // The server URL goes into opencode.json, which checks it (buildOpencodeConfig).
  const env = isolatedEnv(ctx, opencode, { drop: ['OPENCODE_CONFIG', 'OPENCODE_CONFIG_CONTENT', 'OPENCODE_CONFIG_DIR', 'OPENCODE_PERMISSION', 'OPENCODE_DB'], requireServer: false });
  // OpenCode takes its working directory from $PWD when set (verified: an inherited PWD made it
  // work in the caller's folder, not the workspace), so PWD must name the workspace.
  env.PWD = ctx.workspace;
  env.OPENCODE_DISABLE_AUTOUPDATE = '1';
  env.OPENCODE_DISABLE_MODELS_FETCH = '1';
  env.OPENCODE_DISABLE_SHARE = '1';
  env.OPENCODE_DISABLE_LSP_DOWNLOAD = '1';
  env.npm_config_registry = DEAD_NPM_REGISTRY;
  env.npm_config_update_notifier = 'false';
  return env;
}

/**
 * The argv of one turn (without the executable; the prompt goes on stdin, where OpenCode takes
 * it verbatim — given as an argument, every word group with a space would be wrapped in quotes):
 * `run --format json --auto -m <model> [--title skill-up:<job>] [--session <id>]
 * [--print-logs --log-level WARN]`.
 * `--title` on the first turn skips OpenCode's extra title-generation model call; `--auto`
 * approves any permission request that would otherwise be refused in a headless run;
 * `mcpLogs` (a job with MCP servers) adds OPENCODE_MCP_LOG_ARGS, so a server OpenCode cannot
 * use shows on stderr.
 */
export function buildOpencodeArgs(opts: { model?: string; session?: string; title?: string; mcpLogs?: boolean }): string[] {
  const args = ['run', '--format', 'json', '--auto'];
  if (opts.model) args.push('-m', opts.model);
  if (opts.session) args.push('--session', opts.session);
  else if (opts.title) args.push('--title', opts.title);
  if (opts.mcpLogs) args.push(...OPENCODE_MCP_LOG_ARGS);
  return args;
}

/** Whether `rg` is an executable on `PATH` (OpenCode's skill, grep and glob tools need it). */
export async function ripgrepOnPath(path: string | undefined): Promise<boolean> {
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      await access(join(dir, 'rg'), constants.X_OK);
      return true;
    } catch {
      /* next */
    }
  }
  return false;
}

/**
 * A turn's error from the process outcome and the parsed output, in this order: could not
 * start (`missing` for ENOENT/EACCES, else `crash`), `timeout`, `cancelled`, the error the
 * output reports (`api` / `crash` / `protocol`, see `OpencodeSummary.error`), a non-zero exit or
 * a signal (`crash` with the stderr tail), and an exit 0 with no finished step (`protocol`).
 */
export function decideOpencodeError(r: ProcResult, parsed: OpencodeSummary, timeoutMs: number, stderrTail: string): EngineError | undefined {
  return decideTurnError(r, parsed, timeoutMs, stderrTail, errorFacts(parsed));
}

function errorFacts(parsed: OpencodeSummary): ErrorFacts {
  return { completed: parsed.finishedSteps > 0, noResult: 'opencode exited 0 without a finished step in its --format json output' };
}

/**
 * The permission mode of every OpenCode turn, as skill-up passes it: the config's
 * `permission: {"*": "allow"}` (built-in skills denied, buildOpencodeConfig) and `--auto`
 * (buildOpencodeArgs). OpenCode's output does not report one.
 */
export const OPENCODE_PERMISSION_MODE = 'permission "*": "allow", --auto';

/** Why OpenCode cannot run without ripgrep. */
const NO_RIPGREP =
  'opencode needs ripgrep (`rg`) on PATH: without it its skill, grep and glob tools fail ("ripgrep execution failed") and it tries to download rg. Install it (e.g. `apt-get install ripgrep`).';

/**
 * OpenCode's part of the lifecycle: `<homeDir>/.config/opencode/opencode.json`
 * (`buildOpencodeConfig`) and the environment (`buildOpencodeEnv`); no `rg` on PATH makes
 * `check` and `skill-up engines check` fail and every turn `missing` (`requires`). The
 * permission mode recorded is OPENCODE_PERMISSION_MODE. Per turn `opencode <buildOpencodeArgs>` with the prompt on stdin, stdout →
 * `outputs/turn-<n>.opencode.jsonl`. Tokens and `costUsd` (USD) are this invocation's (sums over
 * its `step_finish` lines, which are per model call). With MCP servers: the config's `mcp`
 * (written mode 0600, its secret values given to the redactor), MCP tool calls named
 * `mcp__<server>__<tool>` by the parser, and a turn in which OpenCode logged one of them as
 * unavailable is a `crash` naming it (OpenCode itself runs on without its tools).
 */
export const opencodeSpec: CliEngineSpec<OpencodeState, OpencodeSummary> = {
  stdoutName: 'opencode.jsonl',
  supportsMcp: true,
  async setup(ctx) {
    const maxSteps = ctx.case.maxTurns > 0 ? ctx.case.maxTurns : 0;
    const config = buildOpencodeConfig(ctx, maxSteps);
    const env = buildOpencodeEnv(ctx);
    const configDir = join(env.XDG_CONFIG_HOME!, 'opencode');
    const configFile = join(configDir, 'opencode.json');
    const mcpServers = (ctx.mcpServers ?? []).map((s) => s.name);
    // The servers' env and header values are in the config OpenCode reads; skill-up's own copies
    // (outputs, transcripts, reports) must never show them.
    if (ctx.mcpServers?.length) redactor().addAll(mcpSecretValues(ctx.mcpServers));
    await mkdir(configDir, { recursive: true });
    await writeFile(configFile, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
    await chmod(configFile, 0o600); // `mode` applies only to a file writeFile creates
    return { env, configFile, model: (config.model as string | undefined) ?? '', maxSteps, mcpServers };
  },
  requires: async (_bin, env) => ((await ripgrepOnPath(env.PATH)) ? undefined : NO_RIPGREP),
  command: (ctx, prepared, turn) => ({
    args: buildOpencodeArgs({ model: prepared.model || undefined, session: turn.sessionId, title: `skill-up ${ctx.jobId ?? ctx.case.id}`, mcpLogs: prepared.mcpServers.length > 0 }),
    stdin: turn.prompt,
  }),
  parser: (_ctx, prepared) => new OpencodeJsonParser({ maxSteps: prepared.maxSteps || undefined, mcpServers: prepared.mcpServers }),
  async afterTurn(ctx, prepared, turn, out) {
    if (!prepared.mcpServers.length || out.error) return out;
    const stderr = await readFile(join(ctx.outputDir, `outputs/turn-${turn.index}.stderr.txt`), 'utf8').catch(() => '');
    const down = unavailableMcpServers(stderr).filter((s) => prepared.mcpServers.includes(s.name));
    return down.length ? { ...out, error: { kind: 'crash', message: unavailableMcpMessage(down) } } : out;
  },
  errorFacts,
  permissionMode: () => OPENCODE_PERMISSION_MODE,
};

/** The adapter. One instance serves every job. */
export const opencodeAdapter = cliEngine(opencode, opencodeSpec);
