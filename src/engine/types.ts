/**
 * The engine adapter contract (design.md, "Engine adapters") and the normalised Transcript
 * every adapter produces. Adapters live in the top-level `engines/<name>/` folders.
 */
import type { McpServerLaunch } from './mcp.js';
import type { ProcessRunner } from './proc.js';
import type { CaseSpec, EngineConfig } from '../config/types.js';
import type { EnvAllowList } from './env.js';

/** Token counts for one turn (never cumulative). */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** One tool call the agent made. `output` is the tool result as text when the engine reports it. */
export interface ToolCall {
  /** The tool's name; an MCP tool's is `mcp__<server>__<tool>` on every engine (src/engine/mcp.ts). */
  name: string;
  input: unknown;
  output?: string;
  isError?: boolean;
  /** An MCP tool call of a server the job offered: its server and tool (set by the run, src/run/job.ts). */
  mcp?: { server: string; tool: string };
}

/** Evidence that a skill was used: `via` names the mechanism (`Skill` tool, `read SKILL.md`, …). */
export interface SkillActivation {
  skill: string;
  via: string;
}

/** Why a turn could not produce an answer. Any error makes the job `error`, never `fail`. */
export interface EngineError {
  kind: 'crash' | 'timeout' | 'api' | 'missing' | 'protocol' | 'cancelled';
  message: string;
}

/** The outcome of one user turn. */
export interface TranscriptTurn {
  /** 1-based turn number. */
  index: number;
  prompt: string;
  /** Who wrote `prompt`, in a case with a user simulator: the case file (`case`) or the simulator (`simulator`); unset otherwise. */
  source?: TurnSource;
  /** The agent's final answer for this turn: the whole text, or its preview when `finalTextFile` is set. */
  finalText: string;
  /**
   * Set when the answer is larger than INLINE_TEXT_BYTES (src/engine/final-text.ts): the
   * job-folder-relative path of the file whose first `finalTextBytes` bytes are the whole
   * answer (often the raw output file itself); `finalText` is then a bounded preview.
   */
  finalTextFile?: string;
  /** UTF-8 bytes of the whole answer, when it lives in `finalTextFile`. */
  finalTextBytes?: number;
  toolCalls: ToolCall[];
  skillActivations: SkillActivation[];
  /** Names of the skills the engine offered the model in this turn, when observable. */
  skillsListed?: string[];
  /**
   * Names of the tools the engine offered the model in this turn, in the engine's order, when
   * observable: from the engine's own output (Claude Code's and Qwen Code's init line), else
   * from the first request of the turn that offered tools, as the scripted model server saw it.
   */
  toolsOffered?: string[];
  /**
   * The permission (approval) mode the engine ran the turn under: in the engine's own words
   * when its output says (Claude Code `bypassPermissions`, Qwen Code `yolo`), else as skill-up
   * passed it (Codex `--dangerously-bypass-approvals-and-sandbox` or its `approval_policy` and
   * `sandbox_mode`, Gemini CLI `yolo`, OpenCode its `permission` config and `--auto`; the
   * adapter's `permissionMode` hook, src/engine/cli-engine.ts). Unset for a custom engine.
   */
  permissionMode?: string;
  usage: TokenUsage;
  /** USD, when the engine reports it. */
  costUsd?: number;
  durationMs: number;
  sessionId?: string;
  /** Exit code of the engine process; null when it was killed. */
  exitCode: number | null;
  error?: EngineError;
  /** Job-folder-relative paths of the raw engine output files for this turn. */
  rawFiles: string[];
}

/** The normalised record of one job's conversation. */
export interface Transcript {
  engine: string;
  model?: string;
  turns: TranscriptTurn[];
  /** Why the conversation ended, in a case with a user simulator (TurnResult.stopReason). */
  stopReason?: string;
}

/** Who wrote a turn's user message: the case file, or the user simulator (src/simulator/). */
export type TurnSource = 'case' | 'simulator';

/** What an adapter receives for a job. */
export interface EngineContext {
  /** The job's id (`<case>/<variant>/run-<k>`), unique in a run. */
  jobId?: string;
  engine: EngineConfig;
  case: CaseSpec;
  variant: Variant;
  /** 1-based trial number. */
  trial: number;
  /** Absolute path of the job's workspace (the agent's cwd). */
  workspace: string;
  /** Absolute path of a private folder the adapter may use as the engine's HOME/config. */
  homeDir: string;
  /** Absolute path of the job's output folder; raw engine files go under `outputs/`. */
  outputDir: string;
  /** Skill names installed into the workspace (empty in `without_skill`). */
  installedSkills: string[];
  /**
   * skill-up's own environment: the SOURCE an adapter picks from (src/engine/env.ts `agentEnv`,
   * with its `envAllow`) and expands `${VAR}` templates against. Never handed to a process whole.
   */
  baseEnv: Record<string, string | undefined>;
  /** The suite's `environment.env`, templates expanded: given to every engine process (src/engine/env.ts). */
  suiteEnv?: Record<string, string>;
  /** Aborted on Ctrl-C or when the job deadline passes. */
  signal: AbortSignal;
  /** Epoch ms by which the whole job must end; Infinity = none. */
  deadline: number;
  /** Base URL of a scripted model server started for this run, when `provider: scripted`. */
  modelBaseUrl?: string;
  /** The MCP servers to offer the agent, identical in both variants (src/engine/mcp.ts); none when unset. */
  mcpServers?: McpServerLaunch[];
  /** Where the engine runs: `docker` (a container per job, itself a sandbox), else `local`. */
  runtime?: 'local' | 'docker';
  /**
   * Starts the engine's processes: the job's container's runner with `environment.type: docker`
   * (same paths, same contract), else unset and src/engine/proc.ts `runProcess` is used.
   */
  runProcess?: ProcessRunner;
}

/** One turn request handed to `runTurn`. */
export interface TurnRequest {
  index: number;
  prompt: string;
  /** Session to resume (from the previous turn), when the engine supports it. */
  sessionId?: string;
  /** Every user message so far including this one, for engines that take the whole history. */
  history: string[];
  /** Milliseconds this turn may take. */
  timeoutMs: number;
}

export type Variant = 'with_skill' | 'without_skill';

/** An engine plug-in. One instance serves every job; per-job state lives in `prepare`'s result. */
export interface EngineAdapter<P = unknown> {
  /** Canonical name: 'claude_code' | 'codex' | 'opencode' | 'gemini_cli' | 'qwen_code' | 'custom'. */
  name: string;
  /** Workspace-relative folders the engine scans for skills; skills are installed into the first. */
  skillDirs: string[];
  /** Whether a later turn can resume the earlier turn's session. */
  supportsResume: boolean;
  /** Whether `prepare` offers `EngineContext.mcpServers` to the agent; a job with servers on an engine without it is an `error`. */
  supportsMcp?: boolean;
  /**
   * The variables of skill-up's environment this engine's processes receive besides the common
   * base (src/engine/env.ts); absent = the base only. Everything else is withheld.
   */
  envAllow?: EnvAllowList;
  /** Checks the engine can start (binary present, config sane, `unmetRequirement` passes). Throws EngineUnavailable. */
  check?(engine: EngineConfig): Promise<{ version?: string }>;
  /**
   * What the engine needs besides its executable `bin` (e.g. `rg` on PATH) that environment
   * `env` lacks: the reason it cannot run, or undefined. `skill-up engines check` asks it after
   * resolving the executable; `check` and `prepare` apply it themselves.
   */
  unmetRequirement?(bin: string, env: Record<string, string | undefined>): Promise<string | undefined>;
  /** Creates isolated homes, config files and the environment for one job. */
  prepare(ctx: EngineContext): Promise<P>;
  /**
   * Files and folders of this machine the engine's processes need when they run in a container
   * (`environment.type: docker`): its installed package, never the user's home. Each is
   * mounted read-only at the same path. The workspace, the engine's home and the job folder
   * are mounted by the runtime.
   */
  containerPaths?(prepared: P): string[];
  /** Runs one user turn to completion (stdout fully drained), never throwing for engine failures. */
  runTurn(ctx: EngineContext, prepared: P, turn: TurnRequest): Promise<TranscriptTurn>;
}

/** Thrown by `check` when the engine cannot run at all (not installed, bad config). */
export class EngineUnavailable extends Error {}

/** Empty usage. */
export function zeroUsage(): TokenUsage {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
}

/** A turn with nothing in it yet: adapters fill it in (or set `error`). */
export function blankTurn(turn: Pick<TurnRequest, 'index' | 'prompt'>, extra: Partial<TranscriptTurn> = {}): TranscriptTurn {
  return {
    index: turn.index,
    prompt: turn.prompt,
    finalText: '',
    toolCalls: [],
    skillActivations: [],
    usage: zeroUsage(),
    durationMs: 0,
    exitCode: null,
    rawFiles: [],
    ...extra,
  };
}
