/**
 * Qwen Code `--output-format stream-json` (JSONL) and `--output-format json` (one JSON array of
 * the same objects) → the parts of a TranscriptTurn.
 *
 * Format source: engines/qwen-code/README.md and the captured samples in
 * engines/qwen-code/samples/ (`run1-write`, `run2-resume`,
 * `run3-skill`, `run5-error-unreachable`, `run6-bash` `.stream.jsonl`, and `run4-write.json`),
 * observed with @qwen-code/qwen-code 0.24.4; the HTTP-error texts (`[API Error: 500 …]`) and the
 * session-cumulative `result.usage` on `--resume` were seen in this adapter's own runs.
 *
 * Objects used (every one carries `uuid` and `session_id`; anything else is ignored):
 * - `{"type":"system","subtype":"init", session_id, cwd, tools[], model, permission_mode,
 *   slash_commands[], mcp_servers[{name, status}]}` — first;
 * - `{"type":"assistant", parent_tool_use_id, message:{id, model, content:[text | tool_use
 *   {id, name, input}], stop_reason, usage:{input_tokens, output_tokens,
 *   cache_read_input_tokens?, total_tokens}}}` — one per model response, its usage that
 *   response's; an API failure appears as a text `[API Error: …]` with zero usage;
 * - `{"type":"user", message:{content:[{type:"tool_result", tool_use_id, is_error, content}]}}`
 *   (for `skill`, `content` is only the skill's description; the model gets the body). An MCP
 *   tool's `tool_use.name` is `mcp__<server>__<tool>`, the transcript name itself, and an MCP
 *   tool error's content wraps the server's text (`qwenMcpToolErrorText`; samples `mcp1-…`, `mcp2-…`);
 * - `{"type":"result", subtype:"success"|"error_during_execution"|…, is_error, duration_ms,
 *   num_turns, result?, error?:{message}, usage:{…}, stats?}` — last. Its `usage` is cumulative
 *   over the session: a resumed invocation reports the earlier turns' tokens plus its own.
 *
 * The parser is pure: feed it lines (`QwenStreamParser.push`) or a whole text
 * (`parseQwenOutput`); it never touches the file system.
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
  skillActivationsOf,
  skillOfSkillMd,
  str,
  strings,
  usageDelta,
  zeroUsage,
  type Json,
} from '../../src/engine/parse-common.js';

/** Options for parsing one invocation's output. */
export interface QwenParseOptions {
  /**
   * The session's cumulative `result.usage` after the previous turn (tokens). With it, this
   * turn's usage is `result.usage − previous`; without it on a resumed session, the sum of this
   * invocation's assistant messages is used (see `usageSource`).
   */
  previousCumulativeUsage?: TokenUsage;
  /** True when this invocation resumed an earlier session (`--resume`). */
  resumed?: boolean;
  /** Longest tool output kept, characters; longer outputs are cut with a marker. Default 100 000. */
  maxToolOutputChars?: number;
}

/** Everything one invocation's output says. */
export interface QwenSummary {
  /** Session UUID (init line, else result line, else any line). */
  sessionId?: string;
  /** `result.result`; without it, the text of the last top-level assistant message. */
  finalText: string;
  /** Every tool call in order (subagents' included), paired by id with its result. */
  toolCalls: ToolCall[];
  /** `skill` tool calls (`via: 'skill tool'`) and `read_file`s of `…/<name>/SKILL.md`
   * (`via: 'read SKILL.md'`), excluding calls whose result was an error, in order. */
  skillActivations: SkillActivation[];
  /** This invocation's tokens (see `usageSource`): `input_tokens`, `output_tokens`,
   * `cache_read_input_tokens` → cacheRead; cacheWrite is not reported (0). */
  usage: TokenUsage;
  /** `result-delta`: result.usage minus the previous cumulative figure; `result`: result.usage of
   * a first turn; `messages`: the sum of this invocation's assistant messages; `none`. */
  usageSource: 'result' | 'result-delta' | 'messages' | 'none';
  /** `result.usage` as reported (session-cumulative), for the next turn's subtraction. */
  cumulativeUsage?: TokenUsage;
  /** `result.duration_ms`, ms. */
  engineDurationMs?: number;
  /** `result.num_turns`. */
  numTurns?: number;
  /** `init.model`. */
  model?: string;
  /** `init.slash_commands`: built-in commands and the skills Qwen Code found (unlabelled). */
  slashCommands?: string[];
  /** Tools offered to the model: `init.tools`, in its order. Undefined without an init line. */
  toolsOffered?: string[];
  /** `init.permission_mode` (e.g. `yolo`). Undefined without one. */
  permissionMode?: string;
  /** `init.mcp_servers`: each configured MCP server's name and connection status (`connected`, …) at start. Undefined without one. */
  mcpServers?: { name: string; status: string }[];
  hasResult: boolean;
  /** `result.subtype`. */
  resultSubtype?: string;
  /** Lines that were not JSON objects. */
  badLines: number;
  /**
   * The failure the output itself reports (process-level failures are the adapter's):
   * - `result.is_error` whose message (`error.message`, else `result`) starts with `[API Error`
   *   or names an HTTP status → `api` with that message;
   * - `result.subtype` mentioning max turns (`error_max_turns`, …) → `protocol`,
   *   `max turns reached`;
   * - any other `result.is_error` → `crash`, `<subtype>: <message>`;
   * - no result line but an assistant text `[API Error: …]` → `api` with it.
   */
  error?: EngineError;
}

const API_ERROR = /^\s*\[?API Error\b/i;

/** Text of a `tool_result.content`: a string, or the text blocks of an array joined by newlines. */
export function qwenToolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (isObj(b) ? (str(b.text) ?? `[${str(b.type) ?? 'block'}]`) : String(b))).join('\n');
  if (content === undefined || content === null) return '';
  return JSON.stringify(content);
}

const MCP_TOOL_ERROR = /^MCP tool '[^']*' reported tool error for function call: .* with response: (\[.*\])\s*$/s;

/**
 * The server's own text of an MCP tool error. Qwen Code 0.24.4 reports one as a `tool_result`
 * with `is_error: true` and content `MCP tool 't' reported tool error for function call: {…}
 * with response: [{"functionResponse":{"name":"t","response":{"error":{"content":[{"type":
 * "text","text":…}],"isError":true}}}}]` (sample `mcp2-tool-error.stream.jsonl`): the `text`
 * parts of that response, joined by newlines; `text` itself for anything else.
 */
export function qwenMcpToolErrorText(text: string): string {
  const m = MCP_TOOL_ERROR.exec(text);
  if (!m) return text;
  try {
    const parts: unknown = JSON.parse(m[1]!);
    const texts: string[] = [];
    for (const p of Array.isArray(parts) ? parts : []) {
      const r = isObj(p) && isObj(p.functionResponse) && isObj(p.functionResponse.response) ? p.functionResponse.response : undefined;
      const holder = r && isObj(r.error) ? r.error : r;
      const content = holder ? holder.content : undefined;
      for (const c of Array.isArray(content) ? content : []) if (isObj(c) && typeof c.text === 'string') texts.push(c.text);
    }
    return texts.length ? texts.join('\n') : text;
  } catch {
    return text;
  }
}

/** Incremental parser: `push` each stdout line (or each element of the json array), then `finish`. */
export class QwenStreamParser extends JsonLinesParser<QwenSummary, QwenParseOptions> {
  private init?: Json;
  private result?: Json;
  private anySessionId?: string;
  private readonly tools = new ToolCallLog();
  private readonly msgUsage: TokenUsage = zeroUsage();
  private msgUsageSeen = false;
  private lastText: string[] = [];
  private apiErrorText?: string;

  /** Consumes one line's value: an array (the `--output-format json` form) is its elements, one by one. */
  override pushValue(value: unknown): void {
    if (Array.isArray(value)) for (const o of value) this.pushObject(o);
    else this.pushObject(value);
  }

  /** Consumes one already-parsed object (anything else is counted in `badLines`). */
  pushObject(d: unknown): void {
    super.pushValue(d);
  }

  /** One object of the output. */
  protected onObject(d: Json): void {
    const sid = str(d.session_id);
    if (sid && !this.anySessionId) this.anySessionId = sid;
    switch (d.type) {
      case 'system':
        if (d.subtype === 'init' && !this.init) this.init = d;
        break;
      case 'assistant':
        this.onAssistant(d);
        break;
      case 'user':
        // An MCP tool error wraps the server's text in qwen's own message: keep the server's text.
        settleToolResults(this.tools, d, (c) => qwenMcpToolErrorText(qwenToolResultText(c)), this.opts.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS);
        break;
      case 'result':
        this.result = d;
        break;
      default:
        break; // stream_event and future types
    }
  }

  private onAssistant(d: Json): void {
    const msg = isObj(d.message) ? d.message : undefined;
    if (!msg) return;
    const topLevel = d.parent_tool_use_id === null || d.parent_tool_use_id === undefined;
    const content = Array.isArray(msg.content) ? msg.content : [];
    if (isObj(msg.usage) && topLevel) {
      addUsage(this.msgUsage, anthropicUsage(msg.usage));
      this.msgUsageSeen = true;
    }
    const texts: string[] = [];
    for (const b of content) {
      if (!isObj(b)) continue;
      if (b.type === 'text') {
        const t = str(b.text);
        if (t) texts.push(t);
      } else if (b.type === 'tool_use') {
        this.tools.add(str(b.id), { name: str(b.name) ?? '', input: b.input ?? {} });
      }
    }
    if (topLevel && texts.length > 0) {
      this.lastText = texts;
      const joined = texts.join('\n');
      if (API_ERROR.test(joined)) this.apiErrorText = joined.trim();
    }
  }

  /** Everything seen so far, summarised. */
  finish(): QwenSummary {
    const init = this.init;
    const r = this.result;
    const toolCalls = [...this.tools.calls];
    const skillActivations = skillActivationsOf(toolCalls, (c, input): SkillActivation | undefined => {
      if (c.name === 'skill') {
        const skill = (firstString(input, ['skill', 'name']) ?? '').trim();
        return skill ? { skill, via: 'skill tool' } : undefined;
      }
      const skill = c.name === 'read_file' ? skillOfSkillMd(firstString(input, ['file_path', 'absolute_path', 'path']) ?? '') : undefined;
      return skill ? { skill, via: 'read SKILL.md' } : undefined;
    });

    let usage: TokenUsage = zeroUsage();
    let usageSource: QwenSummary['usageSource'] = 'none';
    const cumulative = r && isObj(r.usage) ? anthropicUsage(r.usage) : undefined;
    const prev = this.opts.previousCumulativeUsage;
    if (cumulative && prev) {
      usage = usageDelta(cumulative, prev);
      usageSource = 'result-delta';
    } else if (cumulative && !this.opts.resumed) {
      usage = cumulative;
      usageSource = 'result';
    } else if (this.msgUsageSeen) {
      usage = { ...this.msgUsage };
      usageSource = 'messages';
    }

    const resultText = r ? str(r.result) : undefined;
    return {
      sessionId: (init && str(init.session_id)) ?? (r && str(r.session_id)) ?? this.anySessionId,
      finalText: resultText ?? (r?.is_error === true ? '' : this.lastText.join('\n')),
      toolCalls,
      skillActivations,
      usage,
      usageSource,
      cumulativeUsage: cumulative,
      engineDurationMs: r ? num(r.duration_ms) : undefined,
      numTurns: r ? num(r.num_turns) : undefined,
      model: init ? str(init.model) : undefined,
      slashCommands: init ? strings(init.slash_commands) : undefined,
      ...(init && Array.isArray(init.tools) ? { toolsOffered: strings(init.tools) } : {}),
      ...(init && str(init.permission_mode) ? { permissionMode: str(init.permission_mode) } : {}),
      ...(init && Array.isArray(init.mcp_servers)
        ? { mcpServers: init.mcp_servers.filter(isObj).map((m) => ({ name: str(m.name) ?? '', status: str(m.status) ?? '' })) }
        : {}),
      hasResult: r !== undefined,
      resultSubtype: r ? str(r.subtype) : undefined,
      badLines: this.badLines,
      error: this.classify(r, resultText),
    };
  }

  private classify(r: Json | undefined, resultText: string | undefined): EngineError | undefined {
    if (!r) return this.apiErrorText !== undefined ? { kind: 'api', message: this.apiErrorText } : undefined;
    if (r.is_error !== true) return undefined;
    const subtype = str(r.subtype) ?? 'error';
    const errObj = isObj(r.error) ? r.error : undefined;
    const message = (errObj && str(errObj.message)) ?? resultText ?? this.apiErrorText ?? '';
    if (API_ERROR.test(message)) return { kind: 'api', message: message.trim() };
    if (/max[_ -]?(session[_ -]?)?turns/i.test(subtype) || /max(imum)? (session )?turns/i.test(message)) {
      return { kind: 'protocol', message: `max turns reached${message ? `: ${message}` : ''}` };
    }
    return { kind: 'crash', message: `${subtype}${message ? `: ${message}` : ''}` };
  }
}

/** Parses a whole stream-json text, or the JSON array printed by `--output-format json`. */
export function parseQwenOutput(text: string, opts: QwenParseOptions = {}): QwenSummary {
  const p = new QwenStreamParser(opts);
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      const whole: unknown = JSON.parse(trimmed);
      if (Array.isArray(whole)) {
        for (const o of whole) p.pushObject(o);
        return p.finish();
      }
    } catch {
      /* not one array: JSON lines */
    }
  }
  return parseLines(p, text);
}
