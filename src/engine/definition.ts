/**
 * What an engine plug-in declares about itself: the static facts every part of skill-up reads
 * without loading the engine's code (config validation, the schema check, `engines list`, the
 * scripted model's engine recognition, the tests' install list, the README table), and a lazy
 * `load()` for the adapter. Each `engines/<name>/index.ts` exports one; `engines/index.ts` is
 * the registry of them all.
 */
import type { EnvAllowList } from './env.js';
import type { EngineAdapter } from './types.js';

/** Wire protocols the scripted model server speaks (src/model/protocols/*). */
export type ModelProtocolId = 'anthropic' | 'openai_responses' | 'openai_chat' | 'gemini';

/**
 * How the scripted model server (src/model/) recognises this engine's requests and which of
 * the protocol's engine quirks apply. A protocol only one engine speaks needs nothing but
 * `protocol`; engines sharing one (OpenCode and Qwen Code on `openai_chat`) name the marks of
 * their requests.
 */
export interface ModelProfile {
  /** The wire protocol the engine's requests use. */
  protocol: ModelProtocolId;
  /** Substrings of the lower-cased `user-agent` header that identify the engine (e.g. `opencode`). */
  userAgent?: readonly string[];
  /** A system/developer message matching this identifies the engine (e.g. /^\s*You are opencode\b/i). */
  systemPrompt?: RegExp;
  /** A user message containing this text identifies the engine (e.g. Qwen Code's reminder). */
  userMarker?: string;
  /** The engine wraps each user prompt in double quotes (OpenCode): the server unquotes them. */
  quotesPrompts?: boolean;
  /** Start of the assistant prefill the engine appends past its step limit; the server then offers no tool. */
  stepsExhaustedPrefill?: string;
  /**
   * How the engine offers tool `tool` of MCP server `server` to the model: the function name the
   * model sees and calls, and for an API with tool namespaces (OpenAI Responses) the namespace
   * holding it. The scripted model's `mcp_tool` action calls this address and its `tool_listed`
   * condition looks for it. Absent: `mcp__<server>__<tool>` (src/engine/mcp.ts `mcpToolCallName`).
   * Pure, no I/O: the definition of each engine takes it from its own mcp.ts.
   */
  mcpTool?(server: string, tool: string): ModelToolAddress;
}

/** Where a tool sits in a model request: its name, and the namespace holding it when the API has namespaces. */
export interface ModelToolAddress {
  /** The function name the model calls, e.g. `mcp__tickets__get_ticket`, `tickets_get_ticket` or (in a namespace) `get_ticket`. */
  name: string;
  /** The tool namespace (OpenAI Responses `{type: "namespace"}`), e.g. `mcp__tickets`; absent for a flat tool list. */
  namespace?: string;
}

/** One engine skill-up can drive. All fields are data except `load`. */
export interface EngineDefinition {
  /** Canonical name as written in eval.yaml (`engine.name`), e.g. `claude_code`. */
  name: string;
  /** Other accepted spellings in eval.yaml (`claude-code`), the canonical name excluded. */
  aliases: readonly string[];
  /** Human name for tables and messages, e.g. `Claude Code`. */
  label: string;
  /** npm package that ships the CLI. */
  npmPackage: string;
  /** Executable name under `node_modules/.bin/` (and on PATH). */
  bin: string;
  /** The version skill-up's tests and examples pin (verified by the contract suite). */
  testedVersion: string;
  /**
   * Commands the engine's tools need on a container image's PATH besides Node
   * (`environment.type: docker`): checked before the first job, exit 3 when one is missing.
   */
  imageCommands?: readonly string[];
  /** Workspace-relative folders the engine scans for skills; skills are installed into the first. */
  skillDirs: readonly string[];
  /** Whether a later turn can resume the earlier turn's session. */
  supportsResume: boolean;
  /** How a skill's use shows in the engine's output (README's engine table), e.g. "the `Skill` tool". */
  activation: string;
  /** What the engine needs besides its npm package (README's engine table), e.g. "`rg` on PATH". */
  needs?: string;
  /**
   * Whether the engine's output says when a shell command failed (an error mark or its exit
   * status); default true. False (Gemini CLI): a shell call's "success" only means the tool ran,
   * so the behaviour checks (src/judge/behaviour/shell.ts) treat its outcome as unknown.
   */
  shellExitObservable?: boolean;
  /** The variables of skill-up's environment the engine's processes receive besides the common base (src/engine/env.ts). */
  envAllow?: EnvAllowList;
  /** The scripted model server's view of the engine. */
  model: ModelProfile;
  /** Repository-relative path of the engine's README (command line, environment, quirks). */
  doc: string;
  /** Imports the engine's adapter (dynamic `import()`, so a run loads only the engines it uses). */
  load(): Promise<EngineAdapter>;
}
