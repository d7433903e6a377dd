/**
 * Claude Code `--output-format stream-json --verbose` output → the parts of a TranscriptTurn.
 *
 * Format source: engines/claude-code/README.md (output, skills, errors) and the captured
 * samples in engines/claude-code/samples/ (`turn1-write`, `turn2-resume`, `skill-tool`, `error-500`, `error-500-with-2-retries`,
 * `include-partial-messages` `.stream.jsonl`, and `output-format-json-max-turns.json`, which is
 * the same `result` object `--output-format json` prints). Observed with Claude Code 2.1.332.
 *
 * Line types used (one JSON object per line; anything else is ignored):
 * - `{"type":"system","subtype":"init", session_id, model, skills[], terminal_slash_commands[]}` —
 *   not always line 1; found by subtype.
 * - `{"type":"assistant","message":{id, model, content:[ONE block]}, is_api_error_message?}` —
 *   one line per content block (`text`, `tool_use {id,name,input}`, `thinking`); the same
 *   `message.id` repeats; `message.usage` is the message_start snapshot.
 * - `{"type":"user","message":{content:[{type:"tool_result", tool_use_id, content, is_error?}]}}`.
 * - `{"type":"system","subtype":"api_retry", attempt, error_status}` (only with retries > 0).
 * - `{"type":"result", subtype, is_error, terminal_reason, api_error_status, result, errors[],
 *   session_id, num_turns, duration_ms, total_cost_usd, usage{input_tokens, output_tokens,
 *   cache_read_input_tokens, cache_creation_input_tokens}, model_usage_since_last_result}` — last.
 *
 * The parser is pure: feed it lines (`StreamJsonParser.push`) or a whole text
 * (`parseStreamJson`); it never touches the file system.
 */
import type { EngineError, SkillActivation, TokenUsage, ToolCall } from '../../src/engine/types.js';
import {
  DEFAULT_MAX_TOOL_OUTPUT_CHARS,
  JsonLinesParser,
  ToolCallLog,
  addUsage,
  anthropicUsage,
  firstString,
  isObj,
  num,
  parseLines,
  settleToolResults,
  roundUsd,
  skillActivationsOf,
  skillOfSkillMd,
  str,
  strings,
  zeroUsage,
  type Json,
} from '../../src/engine/parse-common.js';

/** Options for parsing one invocation's output. */
export interface ParseOptions {
  /** The `--max-turns` value passed, for the `max turns reached (N)` message. Default: the
   * number in the result's `errors[]` text, else `num_turns`. */
  maxTurns?: number;
  /** `total_cost_usd` of the previous turn of the same session, USD. Only used when the result
   * has no `model_usage_since_last_result` (older versions), to turn the session-cumulative
   * `total_cost_usd` into a per-turn figure. */
  previousTotalCostUsd?: number;
  /** Longest tool output kept, characters; longer outputs are cut with a marker. Default 100 000. */
  maxToolOutputChars?: number;
}

/** Everything one invocation's stream says. */
export interface ClaudeStreamSummary {
  /** UUID of the session (init line, else result line, else any line carrying `session_id`). */
  sessionId?: string;
  /** `result.result`; without it, the text of the last top-level assistant message. */
  finalText: string;
  /** Every tool call in order of appearance (subagents' calls included), paired with its result. */
  toolCalls: ToolCall[];
  /** `Skill` tool calls (`via: 'Skill tool'`) and `Read`s of `…/skills/<name>/SKILL.md`
   * (`via: 'read SKILL.md'`), in order, excluding calls whose result was an error. */
  skillActivations: SkillActivation[];
  /** Skills the engine offered: the init line's `skills` minus its `terminal_slash_commands`
   * (local commands such as `doctor` that are never listed to the model). Undefined without an
   * init line. */
  skillsListed?: string[];
  /** Tools offered to the model: the init line's `tools`, in its order. Undefined without an init line. */
  toolsOffered?: string[];
  /** The init line's `mcp_servers` (`{name, status}`: `connected`, `failed`, `needs-auth`, …); undefined without an init line or that field. */
  mcpServers?: { name: string; status: string }[];
  /** The init line's `permissionMode` (e.g. `bypassPermissions`). Undefined without one. */
  permissionMode?: string;
  /** Tokens of this invocation (`result.usage`; see `usageSource`). */
  usage: TokenUsage;
  /** `result` when read from the result line; `messages` when summed from assistant snapshots
   * because there was no result line (input/cache exact, output a lower bound); `none`. */
  usageSource: 'result' | 'messages' | 'none';
  /** USD spent by this invocation: the sum of `model_usage_since_last_result[*].costUSD`, else
   * `total_cost_usd − previousTotalCostUsd`. Undefined without a result line. */
  costUsd?: number;
  /** `total_cost_usd`: USD, cumulative over the session across `--resume`. */
  totalCostUsd?: number;
  /** `result.duration_ms`: the engine's own measure of the invocation, ms. */
  engineDurationMs?: number;
  /** `result.num_turns`: model requests made. */
  numTurns?: number;
  /** Model named by the init line (else by the first assistant message). */
  model?: string;
  /** Whether a `result` line was seen. */
  hasResult: boolean;
  /** `result.terminal_reason` (`completed`, `api_error`, `max_turns`, …). */
  terminalReason?: string;
  /** Number of `system/api_retry` lines. */
  apiRetries: number;
  /** Lines that were not JSON objects. */
  badLines: number;
  /**
   * The failure the stream itself reports, if any (process-level failures — timeout, crash,
   * missing binary — are the adapter's to add):
   * - result `is_error` with `terminal_reason: max_turns` (or subtype `error_max_turns`) →
   *   `protocol`, `max turns reached (N)`;
   * - result `is_error` with `terminal_reason: api_error` or an `api_error_status`, or an
   *   `API Error:` result → `api` with the result text (which carries the API's message);
   * - any other result `is_error` → `crash` with the terminal reason and `errors[]`;
   * - no result line but an assistant line flagged `is_api_error_message` → `api` with its text.
   * `subtype` is deliberately not used: an API error reports `subtype: "success"`.
   */
  error?: EngineError;
}


/** Text of a `tool_result.content`: a string, or the text blocks of an array joined by newlines. */
export function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (isObj(b) ? (b.type === 'text' ? (str(b.text) ?? '') : `[${str(b.type) ?? 'block'}]`) : String(b)))
      .join('\n');
  }
  if (content === undefined || content === null) return '';
  return JSON.stringify(content);
}

/** Incremental parser: `push` each stdout line, then `finish`. */
export class StreamJsonParser extends JsonLinesParser<ClaudeStreamSummary, ParseOptions> {
  private init?: Json;
  private result?: Json;
  private anySessionId?: string;
  private firstModel?: string;
  private readonly tools = new ToolCallLog();
  /** Per assistant message id: last snapshot usage (for the no-result fallback). */
  private readonly msgUsage = new Map<string, TokenUsage>();
  /** Text blocks of the last top-level assistant message. */
  private lastMsgId?: string;
  private lastMsgText: string[] = [];
  private apiErrorText?: string;
  private apiRetries = 0;

  /** One line's object (blank lines are skipped; non-JSON lines are counted in `badLines`). */
  protected onObject(d: Json): void {
    const sid = str(d.session_id);
    if (sid && !this.anySessionId) this.anySessionId = sid;
    switch (d.type) {
      case 'system':
        if (d.subtype === 'init' && !this.init) this.init = d;
        else if (d.subtype === 'api_retry') this.apiRetries++;
        break;
      case 'assistant':
        this.onAssistant(d);
        break;
      case 'user':
        settleToolResults(this.tools, d, toolResultText, this.opts.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS);
        break;
      case 'result':
        this.result = d;
        break;
      default:
        break; // stream_event, hook events, …
    }
  }

  private onAssistant(d: Json): void {
    const msg = isObj(d.message) ? d.message : undefined;
    if (!msg) return;
    const id = str(msg.id);
    const model = str(msg.model);
    if (model && model !== '<synthetic>' && !this.firstModel) this.firstModel = model;
    const content = Array.isArray(msg.content) ? msg.content : [];
    const topLevel = d.parent_tool_use_id === null || d.parent_tool_use_id === undefined;
    if (d.is_api_error_message === true || (model === '<synthetic>' && typeof d.error === 'string')) {
      const text = content
        .filter(isObj)
        .map((b) => str(b.text) ?? '')
        .join('\n')
        .trim();
      this.apiErrorText = text || str(d.error) || 'API error';
    } else if (id && isObj(msg.usage)) {
      this.msgUsage.set(id, anthropicUsage(msg.usage));
    }
    if (topLevel && id !== this.lastMsgId) {
      this.lastMsgId = id;
      this.lastMsgText = [];
    }
    for (const b of content) {
      if (!isObj(b)) continue;
      if (b.type === 'text' && topLevel) {
        const t = str(b.text);
        if (t) this.lastMsgText.push(t);
      } else if (b.type === 'tool_use') {
        this.tools.add(str(b.id), { name: str(b.name) ?? '', input: b.input ?? {} }); // a repeated block is dropped
      }
    }
  }

  /** Everything seen so far, summarised. */
  finish(): ClaudeStreamSummary {
    const init = this.init;
    const r = this.result;
    const toolCalls = [...this.tools.calls];

    const skillActivations = skillActivationsOf(toolCalls, (c, input) => {
      if (c.name === 'Skill') {
        const skill = (firstString(input, ['skill', 'command', 'name']) ?? '').replace(/^\//, '').trim();
        return skill ? { skill, via: 'Skill tool' } : undefined;
      }
      const skill = c.name === 'Read' ? skillOfSkillMd(firstString(input, ['file_path', 'path']) ?? '', { underSkills: true }) : undefined;
      return skill ? { skill, via: 'read SKILL.md' } : undefined;
    });

    let skillsListed: string[] | undefined;
    if (init && Array.isArray(init.skills)) {
      const local = new Set(strings(init.terminal_slash_commands) ?? []);
      skillsListed = init.skills.filter((s): s is string => typeof s === 'string' && !local.has(s));
    }

    let usage: TokenUsage = zeroUsage();
    let usageSource: ClaudeStreamSummary['usageSource'] = 'none';
    if (r && isObj(r.usage)) {
      usage = anthropicUsage(r.usage);
      usageSource = 'result';
    } else if (this.msgUsage.size > 0) {
      for (const u of this.msgUsage.values()) addUsage(usage, u);
      usageSource = 'messages';
    }

    const totalCostUsd = r ? num(r.total_cost_usd) : undefined;
    let costUsd: number | undefined;
    if (r && isObj(r.model_usage_since_last_result)) {
      costUsd = 0;
      for (const m of Object.values(r.model_usage_since_last_result)) {
        if (isObj(m)) costUsd += num(m.costUSD) ?? 0;
      }
      costUsd = roundUsd(costUsd);
    } else if (totalCostUsd !== undefined) {
      costUsd = roundUsd(Math.max(0, totalCostUsd - (this.opts.previousTotalCostUsd ?? 0)));
    }

    const resultText = r ? str(r.result) : undefined;
    const finalText = resultText ?? this.lastMsgText.join('\n');
    const mcpServers =
      init && Array.isArray(init.mcp_servers) ? init.mcp_servers.filter(isObj).map((m) => ({ name: str(m.name) ?? '', status: str(m.status) ?? '' })) : undefined;

    return {
      sessionId: (init && str(init.session_id)) ?? (r && str(r.session_id)) ?? this.anySessionId,
      finalText,
      toolCalls,
      skillActivations,
      skillsListed,
      ...(init && Array.isArray(init.tools) ? { toolsOffered: strings(init.tools) } : {}),
      ...(mcpServers ? { mcpServers } : {}),
      ...(init && str(init.permissionMode) ? { permissionMode: str(init.permissionMode) } : {}),
      usage,
      usageSource,
      costUsd,
      totalCostUsd,
      engineDurationMs: r ? num(r.duration_ms) : undefined,
      numTurns: r ? num(r.num_turns) : undefined,
      model: (init && str(init.model)) ?? this.firstModel,
      hasResult: r !== undefined,
      terminalReason: r ? str(r.terminal_reason) : undefined,
      apiRetries: this.apiRetries,
      badLines: this.badLines,
      error: this.classify(r, resultText) ?? mcpStartError(mcpServers),
    };
  }

  private classify(r: Json | undefined, resultText: string | undefined): EngineError | undefined {
    if (!r) {
      return this.apiErrorText !== undefined ? { kind: 'api', message: this.apiErrorText } : undefined;
    }
    if (r.is_error !== true) return undefined;
    const reason = str(r.terminal_reason);
    const errors = Array.isArray(r.errors) ? r.errors.filter((e): e is string => typeof e === 'string') : [];
    if (reason === 'max_turns' || (reason === undefined && r.subtype === 'error_max_turns')) {
      const fromText = errors.map((e) => /\((\d+)\)/.exec(e)?.[1]).find((x) => x !== undefined);
      const n = this.opts.maxTurns ?? (fromText !== undefined ? Number(fromText) : num(r.num_turns));
      return { kind: 'protocol', message: `max turns reached (${n ?? '?'})` };
    }
    const apiStatus = num(r.api_error_status);
    if (reason === 'api_error' || apiStatus !== undefined || resultText?.startsWith('API Error')) {
      return { kind: 'api', message: resultText ?? this.apiErrorText ?? (errors.join('; ') || `API error${apiStatus ? ` ${apiStatus}` : ''}`) };
    }
    const detail = errors.join('; ') || resultText || '';
    return { kind: 'crash', message: `${reason ?? str(r.subtype) ?? 'error'}${detail ? `: ${detail}` : ''}` };
  }
}

/**
 * A configured MCP server Claude Code could not use: the init line's `mcp_servers[]` with status
 * `failed` (it did not start or answer; verified with a missing command) or `needs-auth` →
 * `crash` naming the servers. Claude Code itself runs on without them, so a turn that otherwise
 * succeeded would be graded as if the server had been offered.
 */
function mcpStartError(servers: { name: string; status: string }[] | undefined): EngineError | undefined {
  const bad = (servers ?? []).filter((m) => m.status === 'failed' || m.status === 'needs-auth');
  if (!bad.length) return undefined;
  return { kind: 'crash', message: `MCP ${bad.length === 1 ? 'server' : 'servers'} ${bad.map((m) => `\`${m.name}\` (${m.status})`).join(', ')} could not be used: Claude Code reports it in its init line` };
}

/** Parses a whole stream-json text (or the single object of `--output-format json`). */
export function parseStreamJson(text: string, opts: ParseOptions = {}): ClaudeStreamSummary {
  const p = new StreamJsonParser(opts);
  const trimmed = text.trim();
  if (trimmed.startsWith('{') && trimmed.includes('\n')) {
    // A pretty-printed single object (`--output-format json` piped through a formatter).
    try {
      const whole: unknown = JSON.parse(trimmed);
      if (isObj(whole)) {
        p.push(JSON.stringify(whole));
        return p.finish();
      }
    } catch {
      /* JSON lines: parse line by line */
    }
  }
  return parseLines(p, text);
}
