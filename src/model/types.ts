/**
 * Data shapes of the scripted model: the loaded rule script, the protocol-neutral view of
 * a model request, and the protocol-neutral reply a protocol module serialises.
 *
 * Data flows one way:
 *
 * ```
 * HTTP body ──protocol.parse──> ModelRequest ──conversation──> Conversation
 *                                      │                            │
 *                                      └────────── plan (script rules, tool table) ──> Plan
 * Plan ──protocol.render──> HTTP response (SSE or JSON)
 * ```
 *
 * Only `protocols/*` know a wire format; everything else works on these types.
 */
import type { Diagnostic } from '../config/diagnostics.js';
import type { ModelProtocolId } from '../engine/definition.js';
import { CUSTOM_ENGINE, engineDefinitions, findEngineDefinition } from '../../engines/index.js';

/** Engine names a rule's `engine` condition may name: the registry's engines (engines/index.ts), then `custom` (read at call time). */
export function engineNames(): string[] {
  return [...engineDefinitions().map((d) => d.name), CUSTOM_ENGINE];
}

/**
 * The canonical name of an engine spelling a rule's `engine` condition may use: a registered
 * engine's name or alias (`claude-code` → `claude_code`, as eval.yaml accepts them), or
 * `custom`; undefined for anything else.
 */
export function canonicalRuleEngine(name: string): EngineName | undefined {
  return name === CUSTOM_ENGINE ? name : findEngineDefinition(name)?.name;
}

/** Every spelling `canonicalRuleEngine` accepts: each engine's name and aliases, then `custom` (read at call time). */
export function engineSpellings(): string[] {
  return [...engineDefinitions().flatMap((d) => [d.name, ...d.aliases]), CUSTOM_ENGINE];
}

/** The engine names when this module loaded; prefer `engineNames()`. */
export const ENGINE_NAMES: readonly string[] = Object.freeze(engineNames());
/** A canonical engine name (one of `engineNames()`). */
export type EngineName = string;

/** Wire protocols the server speaks (each engine's definition names its own, `model.protocol`). */
export type ProtocolId = ModelProtocolId;

// ───────────────────────────── the rule script ─────────────────────────────

/** Abstract actions a `reply` is made of; each maps onto the engine's own tools. */
export type Action =
  | { kind: 'use_skill'; skill: string }
  | { kind: 'write_file'; path: string; content: string }
  | { kind: 'run'; command: string; description?: string }
  | { kind: 'read_file'; path: string }
  | { kind: 'say'; text: string }
  /** A tool call sent verbatim (strings in `input` are templated), offered by the engine or not. */
  | { kind: 'tool'; name: string; input: Record<string, unknown> }
  /**
   * A call of tool `tool` of MCP server `server` under the engine's own name for it (its
   * `ModelProfile.mcpTool`, else `mcp__<server>__<tool>`), with `input` as the arguments (strings
   * templated); sent only when the request offers or lists that tool (conversation.ts `toolListed`).
   */
  | { kind: 'mcp_tool'; server: string; tool: string; input: Record<string, unknown> };

export type ActionKind = Action['kind'];
/** Abstract actions a protocol's `ToolTable` maps onto the engine's tools (all but `say`, `tool`, `mcp_tool`). */
export type ToolActionKind = Exclude<ActionKind, 'say' | 'tool' | 'mcp_tool'>;

/** `when` of a rule; every condition given must hold. Absent = no constraint. */
export interface RuleConditions {
  /** Any of these substrings (case-insensitive) occurs in the current prompt. */
  promptContains?: string[];
  /** The current prompt matches this regular expression (RE2-style `(?i)` prefix allowed). */
  promptMatches?: RegExp;
  /** This skill name appears in the skill listing the engine sent. */
  skillListed?: string;
  /** string: that skill was loaded since the current prompt; `true`: any skill was; `false`: none was. */
  skillLoaded?: string | boolean;
  /** 1-based user-turn number is one of these. */
  turn?: number[];
  /** Any of these substrings (case-insensitive) occurs in the latest tool result since the current prompt. */
  toolResultContains?: string[];
  /**
   * Any of these tools is offered or listed as deferred (conversation.ts `toolListed`): a name as
   * the engine sends it, or a canonical `mcp__<server>__<tool>` mapped through the engine's `mcpTool`.
   */
  toolListed?: string[];
  /** The engine (as inferred by the protocol module) is one of these. */
  engine?: EngineName[];
  /**
   * `true`: the request comes from a grader run (an `agent_judge`, filed under a job id whose
   * last `/`-segment is `judge-<n>`, see log.ts `isJudgeJobId`); `false`: from anything else
   * (the agent's own requests). Absent = both.
   */
  judge?: boolean;
  /**
   * `true`: the request comes from the user simulator (src/simulator/, job id `<job id>/simulator`,
   * log.ts `isSimulatorJobId`); `false`: from anything else. Absent = both.
   */
  simulator?: boolean;
}

/** One rule of the script, in file order. */
export interface Rule {
  /** 0-based position in `rules`. */
  index: number;
  /** Optional label shown in logs. */
  name?: string;
  /** 1-based line of the rule in the script file (0 when built in code). */
  line: number;
  when: RuleConditions;
  /** Steps to answer with; exactly one of `reply` and `error` is set. */
  reply?: Action[];
  /** Answer with an HTTP error instead of a message. */
  error?: { status: number; message: string; type?: string };
  /** Milliseconds to wait before answering (0 = none). */
  delayMs: number;
}

/** A loaded and validated script. */
export interface ModelScript {
  /** Absolute path of the file it came from (or a label for in-memory scripts). */
  file: string;
  rules: Rule[];
  /** Non-fatal findings (e.g. unreachable rules), already positioned. */
  warnings: Diagnostic[];
}

// ──────────────────────── the protocol-neutral request ────────────────────────

/** One piece of a message. */
export type NeutralPart =
  /**
   * Text. `meta` marks text the engine injected rather than the user typed (environment
   * blocks, skill bodies pasted after a skill tool call, reminders); it never counts as a prompt.
   */
  | { type: 'text'; text: string; meta?: boolean }
  | { type: 'tool_call'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; id: string; output: string; isError: boolean };

/** One message of the conversation; `system` covers system/developer messages inside the history. */
export interface NeutralMessage {
  role: 'user' | 'assistant' | 'system';
  parts: NeutralPart[];
}

/** A tool the engine offered, with its input JSON Schema when sent (may be partial). */
export interface ToolSpec {
  name: string;
  /** The tool namespace holding it (OpenAI Responses `{type: "namespace", name, tools}`); absent for a flat tool. */
  namespace?: string;
  schema?: { properties?: Record<string, unknown>; required?: string[] | null; [k: string]: unknown };
}

/** A model request reduced to what the script needs, whatever the wire protocol. */
export interface ModelRequest {
  protocol: ProtocolId;
  engine: EngineName;
  /** Model name the client asked for; echoed back in replies. */
  model: string;
  stream: boolean;
  /** Top-level system / instructions texts. */
  system: string[];
  messages: NeutralMessage[];
  tools: ToolSpec[];
  /** Engine session id when the protocol carries one (e.g. `x-claude-code-session-id`). */
  sessionId?: string;
  /**
   * True when the request's job id names a grader run (`<job id>/judge-<n>`, log.ts
   * `isJudgeJobId`). Set by the server from the API key, never by a protocol module.
   */
  judge?: boolean;
  /** True when the request's job id names the user simulator (`<job id>/simulator`); set by the server. */
  simulator?: boolean;
  /** Size of the raw request body in characters; input-token figures derive from it. */
  rawChars: number;
}

// ───────────────────────────── the neutral reply ─────────────────────────────

export type ReplyBlock =
  | { type: 'text'; text: string }
  /**
   * `id`: 24 hex digits derived from the request; protocols add their prefix (`toolu_`, `call_`).
   * `namespace`: the tool namespace the called function is in (OpenAI Responses, an `mcp_tool`
   * on Codex); a protocol without namespaces sends `<namespace>__<name>` (protocol.ts `flatToolName`).
   */
  | { type: 'tool_call'; id: string; name: string; namespace?: string; input: Record<string, unknown> };

/** One model message to send back. */
export interface ModelReply {
  /** Message id as 24 hex digits, a hash of the request's messages (protocols add `msg_` etc.). */
  id: string;
  model: string;
  blocks: ReplyBlock[];
  /** `tool_use` when the message ends with a tool call, else `end_turn`. */
  stop: 'end_turn' | 'tool_use';
  /** Token estimates: input ≈ request chars / 4, output ≈ reply chars / 4 (rounded up). */
  usage: { inputTokens: number; outputTokens: number };
}

/** Why a reply was chosen, for logs and tests. */
export interface PlanTrace {
  /** Index of the matched rule, or -1 when none matched. */
  rule: number;
  ruleName?: string;
  /** 0-based step within the rule's reply (steps past the end answer the closing text). */
  step: number;
  /** True when the step index ran past the reply's steps. */
  exhausted: boolean;
  /** Set when an abstract action could not be mapped: the tool name(s) looked for. */
  missingTool?: string;
}

/** What to answer: a message, or an HTTP error (from an `error:` rule). */
export type Plan =
  | { kind: 'reply'; reply: ModelReply; delayMs: number; trace: PlanTrace }
  | { kind: 'error'; status: number; message: string; errorType?: string; delayMs: number; trace: PlanTrace };
