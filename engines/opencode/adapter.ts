/**
 * The OpenCode engine adapter (`engine.name: opencode`).
 *
 * Drives `opencode run --format json` (npm `opencode-ai`, verified with 1.18.33; a Bun-compiled
 * binary shipped inside the npm package), one process per user turn, later turns continuing the
 * first turn's session with `--session <ses_…>`. The exact command line, environment and config
 * are in README.md beside this file; the facts behind them are in
 * shared/engines/opencode-gemini-qwen-docker.md §2 and §6 and in this adapter's own runs.
 */
import { access, constants, mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
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
import { agentEnv, type EnvAllowList, type EnvPattern } from '../../src/engine/env.js';
import { OpencodeJsonParser, type OpencodeSummary } from './parse.js';

/** npm package and executable name (also in src/engine/known.ts). */
export const OPENCODE_NPM_PACKAGE = 'opencode-ai';
export const OPENCODE_BIN = 'opencode';

/** Provider id of the scripted model in the generated config (`<id>/<model>` on the command line). */
export const SCRIPTED_PROVIDER_ID = 'skillup';
/** Model id used with the scripted server when `engine.model.name` is unset. */
export const DEFAULT_SCRIPTED_MODEL = 'scripted-model';

/**
 * A dead loopback port for npm: on every run OpenCode starts a background `npm install` of its
 * plugin/TUI dependencies into `$XDG_CONFIG_HOME/opencode`; pointed here it fails at once and
 * silently, and the run is unaffected (doc §6).
 */
export const DEAD_NPM_REGISTRY = 'http://127.0.0.1:9/';

/** Environment prefixes of OpenCode providers whose variables are not simply `<ID>_*`. */
const PROVIDER_ENV: Record<string, readonly EnvPattern[]> = {
  google: ['GOOGLE_GENERATIVE_AI_API_KEY', 'GEMINI_API_KEY'],
  'google-vertex': [/^GOOGLE_/, /^VERTEX_/],
  'google-vertex-anthropic': [/^GOOGLE_/, /^VERTEX_/],
  'amazon-bedrock': [/^AWS_/],
  azure: [/^AZURE_/],
  togetherai: [/^TOGETHER_/],
  'github-copilot': [],
};

/**
 * What `opencode` receives of skill-up's environment besides the common base
 * (src/engine/env.ts): with a real model `OPENCODE_*` and the variables of the model's provider
 * only (`engine.model.provider`, else the `provider/` of `engine.model.name`): `<ID>_*` for
 * provider id ID (`anthropic` → `ANTHROPIC_*`, `openrouter` → `OPENROUTER_*`), or the
 * provider's known names (PROVIDER_ENV: `google`, `google-vertex`, `amazon-bedrock` → `AWS_*`,
 * `azure`, …); with the scripted model nothing more.
 */
export const OPENCODE_ENV_ALLOW: EnvAllowList = {
  realModel: [/^OPENCODE_/],
  select: (engine) => {
    const id = engine.model.provider ?? (engine.model.name?.includes('/') ? engine.model.name.split('/')[0] : undefined);
    if (!id) return [];
    const known = PROVIDER_ENV[id];
    if (known) return known;
    return [new RegExp(`^${id.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_`)];
  },
};

/** Per-job state made by `prepare`. */
export interface OpencodePrepared {
  /** Absolute path of the `opencode` executable; unset when it could not be resolved. */
  bin?: string;
  binSource?: 'env' | 'path' | 'cache';
  /** Why the engine cannot run (every turn then ends with an error of kind `missing`). */
  missing?: string;
  /** The complete environment of every `opencode` process of the job. */
  env: Record<string, string | undefined>;
  /** Absolute path of the generated config (`<homeDir>/.config/opencode/opencode.json`). */
  configFile: string;
  /** `-m` value: `<provider>/<model>`. */
  model: string;
  /** Whether the model is skill-up's scripted server. */
  scripted: boolean;
  /** The case's `max_turns` (the config's `agent.build.steps` is one more), 0 = none. */
  maxSteps: number;
}

/** True when `engine.model.provider` is `scripted`. */
export function isScripted(engine: EngineConfig): boolean {
  return engine.model.provider === 'scripted';
}

/** `<base>/v1` without a trailing slash (the AI SDK appends `/chat/completions`). */
export function openaiBaseUrl(url: string): string {
  const u = url.replace(/\/+$/, '');
  return /\/v1$/.test(u) ? u : `${u}/v1`;
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
 *   workspace at every step), `permission: "allow"` (every tool may run, workspace writes
 *   included, on every turn), and with `maxSteps > 0` `agent.build.steps = maxSteps + 1`:
 *   OpenCode's last allowed step is a forced text-only answer (it appends "CRITICAL - MAXIMUM
 *   STEPS REACHED" and the scripted server then offers no tool), so the agent gets `maxSteps`
 *   ordinary model calls, like Claude Code's `--max-turns`, and a run that used the extra
 *   step is reported as `max turns reached` (`OpencodeSummary.error`).
 */
export function buildOpencodeConfig(ctx: EngineContext, maxSteps: number): Record<string, unknown> {
  const cfg: Record<string, unknown> = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    snapshot: false,
    permission: 'allow',
  };
  const model = opencodeModel(ctx.engine);
  if (isScripted(ctx.engine)) {
    if (!ctx.modelBaseUrl) throw new EngineUnavailable('opencode: engine.model.provider is "scripted" but no scripted model server was started');
    const id = ctx.engine.model.name || DEFAULT_SCRIPTED_MODEL;
    cfg.provider = {
      [SCRIPTED_PROVIDER_ID]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'skill-up scripted model',
        options: { baseURL: openaiBaseUrl(ctx.modelBaseUrl), apiKey: ctx.jobId ? `skill-up-job:${ctx.jobId}` : 'dummy' },
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
  return cfg;
}

/**
 * The environment of one job's `opencode` processes: the allow-listed part of `ctx.baseEnv`
 * (`agentEnv` with OPENCODE_ENV_ALLOW) and the suite's `environment.env`, plus `HOME=<homeDir>` and
 * `XDG_{CONFIG,DATA,CACHE,STATE}_HOME` under it (config, the session database
 * `opencode/opencode.db`, caches and logs all stay in the job), `OPENCODE_DISABLE_AUTOUPDATE=1`,
 * `OPENCODE_DISABLE_MODELS_FETCH=1` (the bundled models list is used), `OPENCODE_DISABLE_SHARE=1`,
 * `OPENCODE_DISABLE_LSP_DOWNLOAD=1`, `npm_config_registry=<dead port>` and
 * `npm_config_update_notifier=false` (the background plugin install fails at once, offline).
 * `OPENCODE_CONFIG`, `OPENCODE_CONFIG_CONTENT`, `OPENCODE_CONFIG_DIR` and `OPENCODE_PERMISSION`
 * from the environment are removed so the job's config is the only one besides the workspace's.
 */
export function buildOpencodeEnv(ctx: EngineContext): Record<string, string | undefined> {
  const env = agentEnv(ctx, OPENCODE_ENV_ALLOW);
  for (const v of ['OPENCODE_CONFIG', 'OPENCODE_CONFIG_CONTENT', 'OPENCODE_CONFIG_DIR', 'OPENCODE_PERMISSION', 'OPENCODE_DB']) delete env[v];
  // OpenCode takes its working directory from $PWD when set (verified: an inherited PWD made it
  // work in the caller's folder, not the workspace), so PWD must name the workspace.
  env.PWD = ctx.workspace;
  env.HOME = ctx.homeDir;
  env.XDG_CONFIG_HOME = join(ctx.homeDir, '.config');
  env.XDG_DATA_HOME = join(ctx.homeDir, '.local', 'share');
  env.XDG_CACHE_HOME = join(ctx.homeDir, '.cache');
  env.XDG_STATE_HOME = join(ctx.homeDir, '.local', 'state');
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
 * `run --format json --auto -m <model> [--title skill-up:<job>] [--session <id>]`.
 * `--title` on the first turn skips OpenCode's extra title-generation model call; `--auto`
 * approves any permission request that would otherwise be refused in a headless run.
 */
export function buildOpencodeArgs(opts: { model?: string; session?: string; title?: string }): string[] {
  const args = ['run', '--format', 'json', '--auto'];
  if (opts.model) args.push('-m', opts.model);
  if (opts.session) args.push('--session', opts.session);
  else if (opts.title) args.push('--title', opts.title);
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

/** Streams the output file's lines into the parser. */
function parseFile(file: string, parser: OpencodeJsonParser): Promise<void> {
  return feedLines(file, (line) => parser.push(line));
}

/**
 * A turn's error from the process outcome and the parsed output, in this order: could not
 * start (`missing` for ENOENT/EACCES, else `crash`), `timeout`, `cancelled`, the error the
 * output reports (`api` / `crash` / `protocol`, see `OpencodeSummary.error`), a non-zero exit or
 * a signal (`crash` with the stderr tail), and an exit 0 with no finished step (`protocol`).
 */
export function decideOpencodeError(r: ProcResult, parsed: OpencodeSummary, timeoutMs: number, stderrTail: string): EngineError | undefined {
  const failed = processError(r, timeoutMs, stderrTail);
  if (failed) return failed;
  if (parsed.error) return parsed.error;
  if (r.exitCode !== 0) return { kind: 'crash', message: describeFailure(r, timeoutMs, stderrTail) };
  if (parsed.finishedSteps === 0) return { kind: 'protocol', message: 'opencode exited 0 without a finished step in its --format json output' };
  return undefined;
}


/** The adapter. One instance serves every job. */
export const opencodeAdapter: EngineAdapter<OpencodePrepared> = {
  name: 'opencode',
  npmPackage: OPENCODE_NPM_PACKAGE,
  // Doc §2 "Skills": project skills are found in all of these; skill-up installs into the first.
  skillDirs: ['.opencode/skills', '.opencode/skill', '.claude/skills', '.agents/skills'],
  supportsResume: true,
  envAllow: OPENCODE_ENV_ALLOW,

  /**
   * Resolves `opencode` (installing a pinned `engine.version` into the cache) and returns the
   * version it prints.
   * @throws EngineUnavailable when it cannot be resolved, installed or run.
   */
  async check(engine: EngineConfig): Promise<{ version?: string }> {
    return checkEngineBinary('opencode', engine.version);
  },

  /**
   * Resolves the executable, writes `<homeDir>/.config/opencode/opencode.json`
   * (`buildOpencodeConfig`) and builds the environment (`buildOpencodeEnv`). A binary that cannot
   * be found, or no `rg` on PATH, is not thrown: every turn then reports `error.kind = 'missing'`.
   * @throws EngineUnavailable when the model is scripted but `ctx.modelBaseUrl` is unset.
   */
  async prepare(ctx: EngineContext): Promise<OpencodePrepared> {
    const maxSteps = ctx.case.maxTurns > 0 ? ctx.case.maxTurns : 0;
    const config = buildOpencodeConfig(ctx, maxSteps);
    const env = buildOpencodeEnv(ctx);
    const configDir = join(env.XDG_CONFIG_HOME!, 'opencode');
    const configFile = join(configDir, 'opencode.json');
    await mkdir(configDir, { recursive: true });
    await writeFile(configFile, JSON.stringify(config, null, 2) + '\n');
    const prepared: OpencodePrepared = { env, configFile, model: (config.model as string | undefined) ?? '', scripted: isScripted(ctx.engine), maxSteps };
    Object.assign(prepared, await resolveForJob('opencode', ctx.engine.version));
    if (prepared.bin && !(await ripgrepOnPath(env.PATH))) {
      prepared.missing =
        'opencode needs ripgrep (`rg`) on PATH: without it its skill, grep and glob tools fail ("ripgrep execution failed") and it tries to download rg. Install it (e.g. `apt-get install ripgrep`).';
    }
    return prepared;
  },

  /**
   * Runs one turn: `opencode <buildOpencodeArgs>` in the workspace with the prompt on stdin,
   * stdout → `outputs/turn-<n>.opencode.jsonl`, stderr → `outputs/turn-<n>.stderr.txt` (under
   * `ctx.outputDir`), limited to the smaller of `turn.timeoutMs` and the job deadline and killed
   * (whole process group) on `ctx.signal`. Never throws for engine failures.
   *
   * `durationMs` is the process wall time (spawn to exit, ms); tokens and `costUsd` (USD) are
   * this invocation's (sums over its `step_finish` lines, which are per model call).
   */
  async runTurn(ctx: EngineContext, prepared: OpencodePrepared, turn: TurnRequest): Promise<TranscriptTurn> {
    const base = blankTurn(turn, { sessionId: turn.sessionId });
    if (!prepared.bin || prepared.missing) {
      return { ...base, error: { kind: 'missing', message: prepared.missing ?? 'opencode executable not found' } };
    }
    const stdoutRel = `outputs/turn-${turn.index}.opencode.jsonl`;
    const stderrRel = `outputs/turn-${turn.index}.stderr.txt`;
    const stdoutFile = join(ctx.outputDir, stdoutRel);
    const stderrFile = join(ctx.outputDir, stderrRel);
    await mkdir(join(ctx.outputDir, 'outputs'), { recursive: true });

    const args = buildOpencodeArgs({ model: prepared.model || undefined, session: turn.sessionId, title: `skill-up ${ctx.jobId ?? ctx.case.id}` });
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

    const parser = new OpencodeJsonParser({ maxSteps: prepared.maxSteps || undefined });
    await parseFile(stdoutFile, parser);
    const parsed = parser.finish();
    const stderrTail = r.exitCode === 0 && !r.startError ? '' : await readTail(stderrFile, 4096);
    const error = decideOpencodeError(r, parsed, timeoutMs, stderrTail);
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
    if (parsed.costUsd !== undefined) out.costUsd = parsed.costUsd;
    if (error) out.error = error;
    return out;
  },
};
