/**
 * Gemini CLI `--output-format stream-json` output → the parts of a TranscriptTurn.
 *
 * Format sources: engines/gemini-cli/README.md, the captured samples in
 * engines/gemini-cli/samples/ (`run1-write`, `run2-resume`,
 * `run3-skill`, `run5-bash` `.stream.jsonl`, and `run4-write-autorouter.json`, the single object
 * of `--output-format json`), the package's own docs (`bundle/docs/cli/headless.md`) and the
 * emitter in the 0.61.0 bundle (`runNonInteractive`, `handleError`,
 * `StreamJsonFormatter.convertToStreamStats`), checked against the real binary.
 *
 * Event lines (JSONL; every line has `type` and an ISO `timestamp`; anything else is ignored):
 * - `{"type":"init", session_id, model}` — first line (`model` is `auto` without `-m`).
 * - `{"type":"message", role:"user", content}` — the prompt as given.
 * - `{"type":"message", role:"assistant", content, delta:true}` — assistant text, as deltas to
 *   concatenate.
 * - `{"type":"tool_use", tool_name, tool_id, parameters}` — a tool call as requested; an MCP
 *   tool is named `mcp_<server>_<tool>` (samples `mcp1-stdio-call`, `mcp2-tool-error`), recorded
 *   as `mcp__<server>__<tool>` when `mcpServers` names its server.
 * - `{"type":"tool_result", tool_id, status:"success"|"error", output?, error?:{type,message}}` —
 *   `output` only when the tool's display is a string (e.g. `run_shell_command`,
 *   `activate_skill`; not `write_file`, whose display is a diff object).
 * - `{"type":"error", severity:"warning"|"error", message}` — non-fatal warnings (loop detected,
 *   invalid/empty model response, "Maximum session turns exceeded").
 * - `{"type":"result", status:"success"|"error", error?:{type, message}, stats:{total_tokens,
 *   input_tokens, output_tokens, cached, input, duration_ms, tool_calls, models:{<model>:{…}}}}`
 *   — last. `input_tokens` = prompt tokens including cached ones, `input` = prompt − cached,
 *   summed over every model call of the invocation (utility calls such as the router
 *   included). In 0.61.0 the figures cover this invocation only, also after `--resume`
 *   (verified: a resumed turn reports `tool_calls: 0` and one request's tokens).
 *
 * The parser is pure: feed it lines (`GeminiStreamParser.push`) or a whole text
 * (`parseGeminiStream`); it never touches the file system.
 */
import type { EngineError, SkillActivation, TokenUsage, ToolCall } from '../../src/engine/types.js';
import {
  DEFAULT_MAX_TOOL_OUTPUT_CHARS,
  JsonLinesParser,
  ToolCallLog,
  firstString,
  isObj,
  num,
  parseLines,
  skillActivationsOf,
  str,
  usageDelta,
  zeroUsage,
  type Json,
} from '../../src/engine/parse-common.js';
import { geminiTranscriptToolName } from './mcp.js';

/** Raw cumulative figures of a `result.stats`, kept to turn cumulative counters into per-turn ones. */
export interface GeminiRawStats {
  /** `stats.input` (prompt − cached), tokens. */
  input: number;
  /** `stats.output_tokens`, tokens. */
  output: number;
  /** `stats.cached`, tokens. */
  cached: number;
  /** `stats.tool_calls`. */
  toolCalls: number;
}

/** Options for parsing one invocation's output. */
export interface GeminiParseOptions {
  /** `model.maxSessionTurns` given to the CLI, for the `max turns reached (N)` message. */
  maxTurns?: number;
  /**
   * The previous turn's `rawStats` in the same session. Used only when this invocation's
   * `stats.tool_calls` exceeds the `tool_use` lines it printed — the sign that the CLI
   * restored the session's counters on `--resume` (not the case in 0.61.0) — to subtract the
   * earlier turns and report per-turn tokens.
   */
  previous?: GeminiRawStats;
  /** Longest tool output kept, characters; longer outputs are cut with a marker. Default 100 000. */
  maxToolOutputChars?: number;
  /**
   * Names of the MCP servers the job configured. A `tool_use` named `mcp_<server>_<tool>` for
   * one of them is recorded as `mcp__<server>__<tool>` (mcp.ts `resolveGeminiMcpToolName`:
   * the name alone does not say where the server ends when either part has a `_`).
   */
  mcpServers?: readonly string[];
}

/** Everything one invocation's stream says. */
export interface GeminiStreamSummary {
  /** Session UUID (`init.session_id`). */
  sessionId?: string;
  /** Model named by the init line. */
  model?: string;
  /**
   * The agent's final answer: the assistant text of the last model turn, i.e. after the last
   * tool call (deltas joined); empty when that turn said nothing. Narration sent with an
   * earlier tool call ("I'll run ls first.") is never the answer.
   */
  finalText: string;
  /** Every tool call in order, paired with its result by `tool_id`. */
  toolCalls: ToolCall[];
  /**
   * Successful `activate_skill` calls (`via: 'activate_skill tool'`), and successful reads of
   * `…/skills/<name>/SKILL.md` by `read_file` / `read_many_files` (`via: 'read SKILL.md'`) or by
   * a shell command (`via: 'shell read SKILL.md'`), in order.
   */
  skillActivations: SkillActivation[];
  /** Tokens of this invocation (see `usageSource`): input = prompt − cached, cacheRead = cached. */
  usage: TokenUsage;
  /** `result` when read from the result line (`result-delta` when made per-turn by subtracting
   * `previous`); `none` without a result line (killed). */
  usageSource: 'result' | 'result-delta' | 'none';
  /** The result's cumulative counters, to pass as `previous` for the next turn. */
  rawStats?: GeminiRawStats;
  /** `result.stats.duration_ms`: the engine's own measure (0 on error results), ms. */
  engineDurationMs?: number;
  /** Whether a `result` line was seen. */
  hasResult: boolean;
  /** `result.status`. */
  status?: string;
  /** Messages of `error` lines (`severity: message`). */
  warnings: string[];
  /** Lines that were not JSON objects. */
  badLines: number;
  /**
   * The failure the stream itself reports (process-level failures — timeout, crash, missing
   * binary — are the adapter's to add):
   * - result `error.type: FatalTurnLimitedError` (exit 53), or an `error` line "Maximum session
   *   turns exceeded" → `protocol`, `max turns reached (N)`;
   * - result error whose message starts with `[API Error` (HTTP errors, unreachable endpoint,
   *   quota) or whose type names an API/quota error → `api` with the CLI's message (which
   *   carries the API's own message);
   * - result `error.type: FatalCancellationError` → `cancelled`;
   * - result `status: "error"` without an error object (an invalid or empty model response) →
   *   `protocol` with the last `error` line's message;
   * - any other result error → `crash`, `<type>: <message>`.
   */
  error?: EngineError;
}

const SKILL_MD = /(?:^|[\\/\s'"`=])skills[\\/]([^\\/\s'"`]+)[\\/]SKILL\.md\b/;

/** The skill whose `SKILL.md` a path or command names (`…/skills/<name>/SKILL.md`), if any. */
export function skillOfSkillMdPath(text: string): string | undefined {
  return SKILL_MD.exec(text)?.[1];
}

/**
 * The server's own text of an MCP tool error. Gemini CLI 0.61.0 reports one as
 * `tool_result {status: "error", output: "Error: MCP tool 't' reported an error.", error: {type:
 * "mcp_tool_error", message: "MCP tool 't' reported tool error for function call: {…} with
 * response: [{"functionResponse":{"name":"t","response":{"content":[{"type":"text","text":…}],
 * "isError":true}}}]"}}` (sample `mcp2-tool-error.stream.jsonl`): the `text` parts of that
 * response, joined by newlines; `message` itself when it has no such response.
 */
export function mcpToolErrorText(message: string): string {
  const at = message.indexOf(' with response: ');
  if (at < 0) return message;
  try {
    const parts: unknown = JSON.parse(message.slice(at + ' with response: '.length));
    const texts: string[] = [];
    for (const p of Array.isArray(parts) ? parts : []) {
      const content = isObj(p) && isObj(p.functionResponse) && isObj(p.functionResponse.response) ? p.functionResponse.response.content : undefined;
      for (const c of Array.isArray(content) ? content : []) if (isObj(c) && typeof c.text === 'string') texts.push(c.text);
    }
    return texts.length ? texts.join('\n') : message;
  } catch {
    return message;
  }
}

/** Incremental parser: `push` each stdout line, then `finish`. */
export class GeminiStreamParser extends JsonLinesParser<GeminiStreamSummary, GeminiParseOptions> {
  private init?: Json;
  private result?: Json;
  private readonly tools = new ToolCallLog();
  /** Assistant text runs, split at tool calls; the last is the current one. */
  private readonly runs: string[] = [''];
  private readonly warnings: string[] = [];
  private lastErrorLine?: string;
  private maxTurnsLine = false;
  private toolUseLines = 0;

  /** One line's event (blank lines are skipped; non-JSON lines are counted in `badLines`). */
  protected onObject(d: Json): void {
    switch (d.type) {
      case 'init':
        this.init ??= d;
        break;
      case 'message':
        if (d.role === 'assistant') {
          const t = str(d.content) ?? '';
          // Deltas concatenate; a non-delta message is a whole message of its own.
          if (d.delta === true) this.runs[this.runs.length - 1] += t;
          else this.runs[this.runs.length - 1] += (this.runs[this.runs.length - 1] ? '\n' : '') + t;
        }
        break;
      case 'tool_use': {
        this.toolUseLines++;
        const name = geminiTranscriptToolName(str(d.tool_name) ?? '', this.opts.mcpServers ?? []);
        if (this.tools.add(str(d.tool_id), { name, input: d.parameters ?? {} })) this.runs.push('');
        break;
      }
      case 'tool_result': {
        const err = isObj(d.error) ? (d.error.type === 'mcp_tool_error' ? mcpToolErrorText(str(d.error.message) ?? '') : str(d.error.message)) : undefined;
        // An MCP tool error's `output` is only "Error: MCP tool 't' reported an error.": the server's text is in `error.message`.
        const mcpError = isObj(d.error) && d.error.type === 'mcp_tool_error';
        this.tools.settle(str(d.tool_id), (mcpError ? err : undefined) ?? str(d.output) ?? err, d.status === 'error', this.opts.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS);
        break;
      }
      case 'error': {
        const message = str(d.message) ?? '';
        const severity = str(d.severity) ?? 'error';
        this.warnings.push(`${severity}: ${message}`);
        if (severity === 'error') this.lastErrorLine = message;
        if (/maximum session turns/i.test(message)) this.maxTurnsLine = true;
        break;
      }
      case 'result':
        this.result = d;
        break;
      default:
        break;
    }
  }

  /** Everything seen so far, summarised. */
  finish(): GeminiStreamSummary {
    const r = this.result;
    const toolCalls = [...this.tools.calls];

    const skillActivations = skillActivationsOf(toolCalls, (c, input): SkillActivation | undefined => {
      let skill: string | undefined;
      let via = '';
      if (c.name === 'activate_skill') {
        skill = (firstString(input, ['name', 'skill']) ?? '').trim() || undefined;
        via = 'activate_skill tool';
      } else if (c.name === 'read_file' || c.name === 'read_many_files') {
        const paths = [input.file_path, input.absolute_path, input.path, ...(Array.isArray(input.paths) ? input.paths : []), ...(Array.isArray(input.include) ? input.include : [])];
        skill = paths.map((p) => (typeof p === 'string' ? skillOfSkillMdPath(p) : undefined)).find((s) => s !== undefined);
        via = 'read SKILL.md';
      } else if (c.name === 'run_shell_command') {
        skill = skillOfSkillMdPath(str(input.command) ?? '');
        via = 'shell read SKILL.md';
      }
      return skill ? { skill, via } : undefined;
    });

    let usage: TokenUsage = zeroUsage();
    let usageSource: GeminiStreamSummary['usageSource'] = 'none';
    let rawStats: GeminiRawStats | undefined;
    const stats = r && isObj(r.stats) ? r.stats : undefined;
    if (stats) {
      const cached = num(stats.cached) ?? 0;
      const inputTokens = num(stats.input_tokens);
      rawStats = {
        input: num(stats.input) ?? Math.max(0, (inputTokens ?? 0) - cached),
        output: num(stats.output_tokens) ?? 0,
        cached,
        toolCalls: num(stats.tool_calls) ?? 0,
      };
      usage = { input: rawStats.input, output: rawStats.output, cacheRead: rawStats.cached, cacheWrite: 0 };
      usageSource = 'result';
      const prev = this.opts.previous;
      if (prev && rawStats.toolCalls > this.toolUseLines && rawStats.toolCalls >= prev.toolCalls) {
        usage = usageDelta(usage, { input: prev.input, output: prev.output, cacheRead: prev.cached, cacheWrite: 0 });
        usageSource = 'result-delta';
      }
    }

    // The last model turn only: an empty last reply is an empty answer (issue 11).
    const finalText = this.runs[this.runs.length - 1] ?? '';

    return {
      sessionId: str(this.init?.session_id),
      model: str(this.init?.model),
      finalText,
      toolCalls,
      skillActivations,
      usage,
      usageSource,
      rawStats,
      engineDurationMs: stats ? num(stats.duration_ms) : undefined,
      hasResult: r !== undefined,
      status: r ? str(r.status) : undefined,
      warnings: [...this.warnings],
      badLines: this.badLines,
      error: this.classify(r),
    };
  }

  private classify(r: Json | undefined): EngineError | undefined {
    const maxTurns = () => ({ kind: 'protocol' as const, message: `max turns reached (${this.opts.maxTurns ?? '?'})` });
    if (!r) return this.maxTurnsLine ? maxTurns() : undefined;
    if (r.status !== 'error') return this.maxTurnsLine ? maxTurns() : undefined;
    const e = isObj(r.error) ? r.error : undefined;
    const type = e ? str(e.type) : undefined;
    const message = (e ? str(e.message) : undefined) ?? '';
    if (type === 'FatalTurnLimitedError' || /max session turns/i.test(message) || this.maxTurnsLine) return maxTurns();
    if (!e) return { kind: 'protocol', message: this.lastErrorLine || 'gemini reported an error result without details' };
    if (message.startsWith('[API Error') || /ApiError|QuotaError|RetryableQuota|TerminalQuota/i.test(type ?? '')) {
      return { kind: 'api', message: message || `${type}` };
    }
    if (type === 'FatalCancellationError') return { kind: 'cancelled', message: message || 'Operation cancelled.' };
    return { kind: 'crash', message: `${type ?? 'error'}${message ? `: ${message}` : ''}` };
  }
}

/**
 * Parses a whole stream-json text. Also accepts the single object of `--output-format json`
 * (`{session_id, response, stats:{models:{…}, tools, files}, error?}`): its `response` becomes
 * the final text and its per-model `tokens` the usage; it has no per-call tool details.
 */
export function parseGeminiStream(text: string, opts: GeminiParseOptions = {}): GeminiStreamSummary {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') && trimmed.includes('\n')) {
    try {
      const whole: unknown = JSON.parse(trimmed);
      if (isObj(whole) && !('type' in whole)) return fromJsonOutput(whole, opts);
    } catch {
      /* JSON lines */
    }
  }
  return parseLines(new GeminiStreamParser(opts), text);
}

/** The `--output-format json` object (sample `run4-write-autorouter.json`). */
function fromJsonOutput(o: Json, opts: GeminiParseOptions): GeminiStreamSummary {
  // No tool_use lines here, so the cumulative-counter check would misfire: no `previous`.
  const p = new GeminiStreamParser({ ...opts, previous: undefined });
  p.push(JSON.stringify({ type: 'init', session_id: o.session_id }));
  if (typeof o.response === 'string') p.push(JSON.stringify({ type: 'message', role: 'assistant', content: o.response, delta: true }));
  const stats = isObj(o.stats) ? o.stats : {};
  let prompt = 0;
  let cached = 0;
  let output = 0;
  for (const m of Object.values(isObj(stats.models) ? stats.models : {})) {
    const t = isObj(m) && isObj(m.tokens) ? m.tokens : {};
    prompt += num(t.prompt) ?? 0;
    cached += num(t.cached) ?? 0;
    output += num(t.candidates) ?? 0;
  }
  const tools = isObj(stats.tools) ? stats.tools : {};
  const err = isObj(o.error) ? o.error : undefined;
  p.push(
    JSON.stringify({
      type: 'result',
      status: err ? 'error' : 'success',
      ...(err ? { error: { type: String(err.type ?? 'error'), message: String(err.message ?? '') } } : {}),
      stats: { input_tokens: prompt, input: Math.max(0, prompt - cached), cached, output_tokens: output, tool_calls: num(tools.totalCalls) ?? 0 },
    }),
  );
  return p.finish();
}
