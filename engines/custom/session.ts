/**
 * The custom engine's wire contract, after alibaba/skill-up's `SessionInput` / `SessionResult`
 * (docs/design/custom-engine.md), so agents written for it work unchanged.
 */
import type { SkillActivation, ToolCall, TokenUsage } from '../../src/engine/types.js';

/** What skill-up sends: written to `${input_file}` (local) or POSTed (http). */
export interface SessionInput {
  case_id: string;
  variant: string;
  trial: number;
  workspace: string;
  model: { provider?: string; name?: string; base_url?: string };
  /** Every user message so far, oldest first. */
  messages: { role: 'user'; content: string }[];
  max_turns: number;
  /** Seconds this call may take. */
  timeout_seconds: number;
  /** The previous call's session id in `conversation_mode: stateful`; absent on the first call. */
  session_id?: string;
}

/** The part of a SessionResult skill-up reads, normalised. */
export interface ParsedSessionResult {
  exitCode: number;
  finalMessage: string;
  sessionId?: string;
  usage: TokenUsage;
  costUsd?: number;
  toolCalls: ToolCall[];
  skillActivations: SkillActivation[];
  skillsListed?: string[];
}

/** Raised when an agent's output is not a usable SessionResult. */
export class SessionResultError extends Error {}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * Parses a SessionResult JSON text. Required: `exit_code` (integer) and `final_message` (string).
 * Optional: `session_id`, `input_tokens`, `output_tokens`, `cache_read_tokens`,
 * `cache_write_tokens`, `cost_usd`, `tool_calls[{name, input|arguments, output, is_error}]`,
 * `transcript[]` (entries with `type: tool_call` or `tool_calls` are read as tool calls),
 * `skills_used[]` (names, recorded as activations), `skills_listed[]`.
 *
 * @throws SessionResultError naming what is missing or malformed.
 */
export function parseSessionResult(text: string): ParsedSessionResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const head = text.trim().slice(0, 120);
    throw new SessionResultError(`output is not a SessionResult JSON (${(e as Error).message})${head ? `; it starts with: ${head}` : '; it is empty'}`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw new SessionResultError('SessionResult must be a JSON object');
  const r = data as Record<string, unknown>;
  if (!Number.isInteger(r.exit_code)) throw new SessionResultError('SessionResult.exit_code must be an integer');
  if (typeof r.final_message !== 'string') throw new SessionResultError('SessionResult.final_message must be a string');
  if (r.cost_usd !== undefined && r.cost_usd !== null && !(typeof r.cost_usd === 'number' && Number.isFinite(r.cost_usd) && r.cost_usd >= 0)) {
    throw new SessionResultError(`SessionResult.cost_usd must be a number ≥ 0 (USD), got ${JSON.stringify(r.cost_usd)}`);
  }
  const toolCalls: ToolCall[] = [];
  const addCall = (c: unknown) => {
    if (!c || typeof c !== 'object') return;
    const o = c as Record<string, unknown>;
    const name = typeof o.name === 'string' ? o.name : typeof o.tool === 'string' ? o.tool : undefined;
    if (!name) return;
    toolCalls.push({
      name,
      input: o.input ?? o.arguments ?? o.args ?? {},
      output: typeof o.output === 'string' ? o.output : o.output === undefined ? undefined : JSON.stringify(o.output),
      isError: o.is_error === true,
    });
  };
  if (Array.isArray(r.tool_calls)) r.tool_calls.forEach(addCall);
  if (Array.isArray(r.transcript)) {
    for (const entry of r.transcript) {
      if (!entry || typeof entry !== 'object') continue;
      const e = entry as Record<string, unknown>;
      if (e.type === 'tool_call') addCall(e);
      if (Array.isArray(e.tool_calls)) e.tool_calls.forEach(addCall);
    }
  }
  const names = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
  return {
    exitCode: r.exit_code as number,
    finalMessage: r.final_message,
    sessionId: typeof r.session_id === 'string' && r.session_id ? r.session_id : undefined,
    usage: {
      input: num(r.input_tokens),
      output: num(r.output_tokens),
      cacheRead: num(r.cache_read_tokens),
      cacheWrite: num(r.cache_write_tokens),
    },
    costUsd: typeof r.cost_usd === 'number' ? r.cost_usd : undefined,
    toolCalls,
    skillActivations: (names(r.skills_used) ?? []).map((skill) => ({ skill, via: 'reported by agent' })),
    skillsListed: names(r.skills_listed),
  };
}
