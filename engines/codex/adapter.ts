/**
 * The OpenAI Codex CLI engine adapter (`engine.name: codex`).
 *
 * Drives `codex exec --json` (npm `@openai/codex`, verified with 0.171.0), one process per user
 * turn, later turns continuing the first turn's thread with `codex exec resume <thread id>`.
 * Every job gets its own `CODEX_HOME` holding a generated `config.toml` whose custom model
 * provider points at the scripted model server or `engine.model.baseUrl` (codex ignores
 * `OPENAI_BASE_URL`). The exact command line and environment are in README.md beside this
 * file; the facts behind them are in shared/engines/claude-code-and-codex.md §1, §3 and §5.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
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
import { CodexJsonParser, RolloutParser, type CodexStreamSummary, type CodexUsage } from './parse.js';
import { textFromFile, turnTextFields } from '../../src/engine/final-text.js';

/** npm package and executable name (also in src/engine/known.ts). */
export const CODEX_NPM_PACKAGE = '@openai/codex';
export const CODEX_BIN = 'codex';

/** Model slug used with the scripted model when `engine.model.name` is unset: a slug codex
 * 0.171.0 knows, so it offers its full tool set (`apply_patch` included) and prints no
 * "Model metadata … not found" warning (§3.2, pitfall 12). */
export const CODEX_SCRIPTED_DEFAULT_MODEL = 'gpt-5.5';

/** Id of the model provider written into config.toml. */
export const CODEX_PROVIDER_ID = 'skillup';

/** Prompts longer than this many bytes go to stdin (`-`) instead of argv (Linux caps one argument at 128 KiB). */
const MAX_ARGV_PROMPT_BYTES = 100_000;

/** Variables removed when the model is scripted: each could route auth or traffic elsewhere. */
const NON_SCRIPTED_ROUTING_VARS = ['CODEX_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORGANIZATION', 'OPENAI_ORG_ID', 'OPENAI_PROJECT'];

/**
 * What `codex` receives of skill-up's environment besides the common base (src/engine/env.ts):
 * with a real model `OPENAI_*`, `CODEX_*` and `AZURE_OPENAI_*`; with the scripted model nothing more.
 */
export const CODEX_ENV_ALLOW: EnvAllowList = {
  realModel: [/^OPENAI_/, /^CODEX_/, /^AZURE_OPENAI_/],
};

/** Per-job state made by `prepare`. */
export interface CodexPrepared {
  /** Absolute path of the `codex` executable; unset when it could not be resolved. */
  bin?: string;
  binSource?: 'env' | 'path' | 'cache';
  /** Why the engine cannot run (every turn then ends with an error of kind `missing`). */
  missing?: string;
  /** The complete environment of every `codex` process of the job (no secret is written to a file). */
  env: Record<string, string | undefined>;
  /** `CODEX_HOME` of the job: `<homeDir>/codex-home`. */
  codexHome: string;
  scripted: boolean;
  /** `--dangerously-bypass-approvals-and-sandbox` on every turn (`engine.kwargs.bypass_sandbox`). */
  bypassSandbox: boolean;
  /** Thread id → its last `turn.completed.usage` (cumulative), to make tokens per turn. */
  usageByThread: Map<string, CodexUsage>;
}

/** Appends `/v1` unless the URL already ends with a version segment: codex POSTs `<base_url>/responses`. */
export function codexBaseUrl(url: string, scripted: boolean): string {
  const u = url.replace(/\/+$/, '');
  return scripted && !/\/v\d+$/.test(u) ? `${u}/v1` : u;
}

/** True when `engine.model.provider` is `scripted`. */
export function isScripted(engine: EngineConfig): boolean {
  return engine.model.provider === 'scripted';
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
 *   resume`, which has no `--sandbox` flag; §3.4) or `danger-full-access` with bypass;
 * - `check_for_update_on_startup = false`, `[analytics] enabled = false`, `[features] plugins,
 *   remote_plugin, apps = false` (no traffic but the model's, §3.1);
 * - `[skills.bundled] enabled = false`: codex's 4 built-in skills (imagegen, openai-docs,
 *   skill-creator, skill-installer) are not listed, so the listing holds exactly the
 *   workspace's skills (verified with 0.171.0; pitfall 18).
 * @throws EngineUnavailable when the model is scripted but no server URL was given.
 */
export function buildCodexConfig(ctx: EngineContext, opts: { bypassSandbox?: boolean } = {}): string {
  const scripted = isScripted(ctx.engine);
  if (scripted && !ctx.modelBaseUrl) throw new EngineUnavailable('codex: engine.model.provider is "scripted" but no scripted model server was started');
  const baseUrl = scripted ? codexBaseUrl(ctx.modelBaseUrl!, true) : codexBaseUrl(ctx.engine.model.baseUrl ?? 'https://api.openai.com/v1', false);
  const model = ctx.engine.model.name ?? (scripted ? CODEX_SCRIPTED_DEFAULT_MODEL : undefined);
  const lines = [
    '# Written by skill-up for one job (engines/codex/README.md). No secrets: the API key comes from $OPENAI_API_KEY.',
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
  return lines.join('\n');
}

/**
 * The environment of one job's `codex` processes: the allow-listed part of `ctx.baseEnv`
 * (`agentEnv` with CODEX_ENV_ALLOW) and the suite's `environment.env`, plus `HOME=<homeDir>`,
 * `CODEX_HOME=<homeDir>/codex-home` (codex reads `$HOME/.agents/skills` too, so both are
 * private; §3.5), `XDG_{CONFIG,CACHE,DATA,STATE}_HOME` under `<homeDir>`, `NO_COLOR=1`, and:
 * - scripted model: `OPENAI_API_KEY=skill-up-job:<jobId>` (the server files each exchange
 *   under that job) or `dummy` without a job id, and NON_SCRIPTED_ROUTING_VARS removed;
 * - otherwise: `OPENAI_API_KEY` exactly as in the environment.
 */
export function buildCodexEnv(ctx: EngineContext, codexHome: string): Record<string, string | undefined> {
  const env = agentEnv(ctx, CODEX_ENV_ALLOW);
  env.HOME = ctx.homeDir;
  env.CODEX_HOME = codexHome;
  env.XDG_CONFIG_HOME = join(ctx.homeDir, '.config');
  env.XDG_CACHE_HOME = join(ctx.homeDir, '.cache');
  env.XDG_DATA_HOME = join(ctx.homeDir, '.local', 'share');
  env.XDG_STATE_HOME = join(ctx.homeDir, '.local', 'state');
  env.NO_COLOR = '1';
  if (isScripted(ctx.engine)) {
    for (const v of NON_SCRIPTED_ROUTING_VARS) delete env[v];
    env.OPENAI_API_KEY = ctx.jobId ? `skill-up-job:${ctx.jobId}` : 'dummy';
  }
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

/** Reads a JSONL file line by line into the parser (any size, bounded memory per line). */
/** Streams the output file's lines into the parser. */
function parseFile(file: string, parser: CodexJsonParser): Promise<void> {
  return feedLines(file, (line) => parser.push(line));
}

/** `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<threadId>.jsonl`, or undefined (§3.4). */
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

/** Feeds every line of `file` from byte `offset` on to `push`, streaming (a missing file has no lines). */
async function feedLinesFrom(file: string, offset: number, push: (line: string) => void): Promise<void> {
  let stream;
  try {
    stream = createReadStream(file, { encoding: 'utf8', start: offset });
    const rl = createInterface({ input: stream, crlfDelay: Infinity });
    for await (const line of rl) push(line);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  } finally {
    stream?.destroy();
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
  const failed = processError(r, timeoutMs, stderrTail);
  if (failed?.kind === 'timeout' && parsed.lastErrorMessage) return { ...failed, message: `${failed.message}; codex's last error: ${parsed.lastErrorMessage}` };
  if (failed) return failed;
  if (parsed.error) return parsed.error;
  if (r.exitCode !== 0) return { kind: 'crash', message: describeFailure(r, timeoutMs, stderrTail) };
  if (!parsed.completed) return { kind: 'protocol', message: 'codex exited 0 without a "turn.completed" line in its --json output' };
  return undefined;
}


/** The adapter. One instance serves every job. */
export const codexAdapter: EngineAdapter<CodexPrepared> = {
  name: 'codex',
  npmPackage: CODEX_NPM_PACKAGE,
  // Both are scanned from the cwd (verified with 0.171.0); `.agents/skills` is the
  // agentskills.io location and where skill-up installs.
  skillDirs: ['.agents/skills', '.codex/skills'],
  supportsResume: true,
  envAllow: CODEX_ENV_ALLOW,

  /**
   * Resolves `codex` (installing a pinned `engine.version` into the cache, with one progress
   * line on stderr) and returns the version it reports (`codex-cli 0.171.0` → `0.171.0`).
   * @throws EngineUnavailable when it cannot be resolved, installed or run.
   */
  async check(engine: EngineConfig): Promise<{ version?: string }> {
    return checkEngineBinary('codex', engine.version);
  },

  /**
   * Resolves the executable (`SKILL_UP_CODEX_BIN`, then the pinned version in the cache, else
   * PATH, else the newest cached version), writes `<homeDir>/codex-home/config.toml`
   * (`buildCodexConfig`) and builds the environment (`buildCodexEnv`). A binary that cannot be
   * found is not thrown: every turn then reports `error.kind = 'missing'`.
   * @throws EngineUnavailable when the model is scripted but `ctx.modelBaseUrl` is unset.
   */
  async prepare(ctx: EngineContext): Promise<CodexPrepared> {
    const codexHome = join(ctx.homeDir, 'codex-home');
    const bypassSandbox = wantsBypass(ctx.engine);
    const config = buildCodexConfig(ctx, { bypassSandbox });
    const env = buildCodexEnv(ctx, codexHome);
    await mkdir(codexHome, { recursive: true });
    await writeFile(join(codexHome, 'config.toml'), config);
    const prepared: CodexPrepared = { env, codexHome, scripted: isScripted(ctx.engine), bypassSandbox, usageByThread: new Map() };
    Object.assign(prepared, await resolveForJob('codex', ctx.engine.version));
    return prepared;
  },

  /**
   * Runs one turn: `codex <buildCodexArgs>` in the workspace with the job's environment,
   * stdout → `outputs/turn-<n>.jsonl`, stderr → `outputs/turn-<n>.stderr.txt`, the last agent
   * message → `outputs/turn-<n>.last-message.txt` (all under `ctx.outputDir`), limited to the
   * smaller of `turn.timeoutMs` and the job deadline and killed (whole process group) on
   * `ctx.signal`. Codex retries an unreachable endpoint forever (§3.6): the time limit is what
   * ends such a turn. Never throws for engine failures.
   *
   * `finalText` is the `-o` file when it is non-empty, else the last `agent_message`;
   * `durationMs` is the wall time of the process (spawn to exit, ms); tokens are this turn's
   * (codex's counters are cumulative over the thread: the previous turn's are subtracted);
   * no cost is reported (codex prints none). `skillsListed` and `$name`-mention activations
   * come from the thread's rollout file in `CODEX_HOME` (undefined / none when it is missing).
   */
  async runTurn(ctx: EngineContext, prepared: CodexPrepared, turn: TurnRequest): Promise<TranscriptTurn> {
    const base = blankTurn(turn, { sessionId: turn.sessionId });
    if (!prepared.bin) {
      return { ...base, error: { kind: 'missing', message: prepared.missing ?? 'codex executable not found' } };
    }
    const stdoutRel = `outputs/turn-${turn.index}.jsonl`;
    const stderrRel = `outputs/turn-${turn.index}.stderr.txt`;
    const lastRel = `outputs/turn-${turn.index}.last-message.txt`;
    const stdoutFile = join(ctx.outputDir, stdoutRel);
    const stderrFile = join(ctx.outputDir, stderrRel);
    const lastFile = join(ctx.outputDir, lastRel);
    await mkdir(join(ctx.outputDir, 'outputs'), { recursive: true });

    const rolloutBefore = turn.sessionId ? await findRolloutFile(prepared.codexHome, turn.sessionId) : undefined;
    const offset = await fileSize(rolloutBefore);

    const { args, stdin } = buildCodexArgs({ prompt: turn.prompt, lastMessageFile: lastFile, resume: turn.sessionId, bypassSandbox: prepared.bypassSandbox });
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

    const previousUsage = turn.sessionId ? prepared.usageByThread.get(turn.sessionId) : undefined;
    const parser = new CodexJsonParser({ previousUsage });
    await parseFile(stdoutFile, parser);
    const parsed = parser.finish();
    const sessionId = parsed.sessionId ?? turn.sessionId;
    if (sessionId && parsed.cumulativeUsage) prepared.usageByThread.set(sessionId, parsed.cumulativeUsage);

    // The -o file is the answer when it has one (a large one stays there: one copy on disk);
    // no -o file means the turn failed before an answer.
    let finalText: Pick<TranscriptTurn, 'finalText' | 'finalTextFile' | 'finalTextBytes'> = { finalText: parsed.finalText };
    const fromFile = await textFromFile(ctx.outputDir, lastRel, 'newline');
    if (fromFile.file || fromFile.text.trim() !== '') finalText = turnTextFields(fromFile);

    const skillActivations = [...parsed.skillActivations];
    let skillsListed: string[] | undefined;
    const rollout = sessionId ? await findRolloutFile(prepared.codexHome, sessionId) : undefined;
    if (rollout) {
      // Line by line (the rollout holds the whole thread): memory is bounded by one line.
      const whole = new RolloutParser();
      await feedLines(rollout, (line) => whole.push(line));
      skillsListed = whole.finish().skillsListed;
      const start = rollout === rolloutBefore ? offset : 0;
      const recent = new RolloutParser();
      await feedLinesFrom(rollout, start, (line) => recent.push(line));
      for (const skill of recent.finish().mentioned) {
        if (!skillActivations.some((a) => a.skill === skill)) skillActivations.push({ skill, via: '$skill mention' });
      }
    }

    const stderrTail = r.exitCode === 0 && !r.startError ? '' : await readTail(stderrFile, 4096);
    const error = decideError(r, parsed, timeoutMs, stderrTail);
    const rawFiles = [stdoutRel, stderrRel];
    if ((await fileSize(lastFile)) > 0) rawFiles.push(lastRel);
    const out: TranscriptTurn = {
      ...base,
      ...finalText,
      toolCalls: parsed.toolCalls,
      skillActivations,
      ...(skillsListed ? { skillsListed } : {}),
      usage: parsed.usage,
      durationMs: Math.round(r.durationMs),
      sessionId,
      exitCode: r.exitCode,
      rawFiles,
    };
    if (error) out.error = error;
    return out;
  },
};
