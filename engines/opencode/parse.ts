/**
 * OpenCode `opencode run --format json` output → the parts of a TranscriptTurn.
 *
 * Format source: engines/opencode/README.md and the captured samples in
 * engines/opencode/samples/ (`run1-write`,
 * `run2-resume`, `run3-skill`, `run4-bash`, `run5-error-unreachable`, `run6-bash-exit`, `run7-mcp-stdio`, `run8-mcp-http` `.jsonl`), observed with
 * opencode-ai 1.18.33; the failed-tool shape (`state.status:"error"`, `state.error`) and the
 * HTTP-error line (`data.statusCode`, `data.responseBody`) were seen in this adapter's own runs.
 *
 * One JSON object per stdout line, each with `type`, `timestamp` (epoch ms), `sessionID`:
 * - `step_start` `{part:{type:"step-start", messageID, snapshot}}` — one model call begins;
 * - `tool_use` `{part:{type:"tool", tool, callID, state:{status:"completed"|"error", input,
 *   output?, error?, metadata, title, time:{start,end}}}}` — emitted once, when the tool ended;
 *   an MCP tool is `tool: "<server>_<tool>"` with the server's text answer as `output`, or
 *   `status:"error"` with its text as `error` when the server answered `isError: true`
 *   (samples `run7-mcp-stdio`, `run8-mcp-http`);
 *   a `bash` call is `completed` whatever its exit status, which is `metadata.exit` (`0`, or
 *   e.g. `254` for `npm test` without a package.json: seen with opencode-ai 1.18.33);
 * - `text` `{part:{type:"text", text, time}}` — a complete text part (not deltas);
 * - `step_finish` `{part:{type:"step-finish", reason:"tool-calls"|"stop"|…, tokens:{total,
 *   input, output, reasoning, cache:{read, write}}, cost}}` — one per model call, figures of
 *   that call only (so summing them gives this invocation's usage; `cost` in USD, 0 for a model
 *   without a price);
 * - `error` `{error:{name:"APIError"|…, data:{message, statusCode?, isRetryable, responseBody?,
 *   metadata:{url}}}}` — the run failed (exit code 1).
 * There is no final "result" line.
 *
 * The parser is pure: feed it lines (`OpencodeJsonParser.push`) or a whole text
 * (`parseOpencodeJson`); it never touches the file system.
 */
import { mcpToolCallName } from '../../src/engine/mcp.js';
import type { EngineError, SkillActivation, TokenUsage, ToolCall } from '../../src/engine/types.js';
import { mcpToolOf } from './mcp.js';
import {
  DEFAULT_MAX_TOOL_OUTPUT_CHARS,
  JsonLinesParser,
  addUsage,
  truncateToolOutput,
  firstString,
  isObj,
  num,
  parseLines,
  roundUsd,
  skillActivationsOf,
  skillOfSkillMd,
  str,
  zeroUsage,
  type Json,
} from '../../src/engine/parse-common.js';

/** Options for parsing one invocation's output. */
export interface OpencodeParseOptions {
  /** The case's `max_turns`. The adapter sets `agent.build.steps` one higher, so more
   * `step_start`s than this means the agent used OpenCode's forced, text-only last step. */
  maxSteps?: number;
  /** Longest tool output kept, characters; longer outputs are cut with a marker. Default 100 000. */
  maxToolOutputChars?: number;
  /**
   * Names of the job's MCP servers (`EngineContext.mcpServers`): a tool part named
   * `<server>_<tool>` of one of them (OpenCode's naming, mcp.ts `modelToolName`) is recorded as
   * `mcp__<server>__<tool>` (`mcpToolCallName`). `<server>_<tool>` alone cannot say where the
   * server's name ends when both hold `_`, hence the names. Default: none.
   */
  mcpServers?: readonly string[];
}

/** Everything one invocation's output says. */
export interface OpencodeSummary {
  /** `ses_…` id, from the first line carrying `sessionID`. */
  sessionId?: string;
  /** The text parts of the last step (the last model call), joined by blank lines; empty when
   * that step said nothing (text of an earlier step, such as narration sent with a tool call,
   * is never the answer). */
  finalText: string;
  /** Every `tool_use` in order: `output` is `state.output` (or `state.error` for a failed
   * call, then `isError: true`), cut at `maxToolOutputChars`; a completed call whose
   * `metadata.exit` is non-zero (a failed shell command) is `isError: true` too. A call of a
   * configured MCP server's tool (`opts.mcpServers`) is named `mcp__<server>__<tool>`. */
  toolCalls: ToolCall[];
  /** `skill` tool calls (`via: 'skill tool'`) and `read`s of `…/<name>/SKILL.md`
   * (`via: 'read SKILL.md'`), excluding failed calls, in order. */
  skillActivations: SkillActivation[];
  /** Sum over `step_finish` lines: `input`, `output + reasoning`, `cache.read`, `cache.write` (tokens). */
  usage: TokenUsage;
  /** Sum of `step_finish.part.cost` (USD); undefined when no step reported one. */
  costUsd?: number;
  /** Number of `step_start` lines (model calls). */
  steps: number;
  /** Number of `step_finish` lines. */
  finishedSteps: number;
  /** `reason` of the last `step_finish` (`stop`, `tool-calls`, `length`, …). */
  lastFinishReason?: string;
  /** Lines that were not JSON objects. */
  badLines: number;
  /**
   * The failure the output itself reports (process-level failures are the adapter's):
   * - an `error` line named `APIError` / `ProviderAuthError`, or carrying `data.statusCode`
   *   → `api`, `"<message>"` plus ` (HTTP <status>)` when known;
   * - any other `error` line → `crash`, `"<name>: <message>"`;
   * - more steps than `maxSteps` → `protocol`, `max turns reached (N)`.
   */
  error?: EngineError;
}

const SKILL_TOOLS = new Set(['skill']);
const READ_TOOLS = new Set(['read']);

/** Incremental parser: `push` each stdout line, then `finish`. */
export class OpencodeJsonParser extends JsonLinesParser<OpencodeSummary, OpencodeParseOptions> {
  private sessionId?: string;
  private readonly calls: ToolCall[] = [];
  private readonly usage: TokenUsage = zeroUsage();
  private cost?: number;
  private steps = 0;
  private finished = 0;
  private lastReason?: string;
  /** Text parts of the current (last started) step. */
  private stepTexts: string[] = [];
  private errorLine?: Json;

  /** One line's event (blank lines are skipped; non-JSON lines are counted in `badLines`). */
  protected onObject(d: Json): void {
    const sid = str(d.sessionID);
    if (sid && !this.sessionId) this.sessionId = sid;
    const part = isObj(d.part) ? d.part : {};
    switch (d.type) {
      case 'step_start':
        this.steps++;
        this.stepTexts = [];
        break;
      case 'text': {
        const t = str(part.text);
        if (t !== undefined && t !== '') this.stepTexts.push(t);
        break;
      }
      case 'tool_use':
        this.onTool(part);
        break;
      case 'step_finish':
        this.onFinish(part);
        break;
      case 'error':
        this.errorLine = d;
        break;
      default:
        break; // reasoning, snapshot/patch parts, future types
    }
  }

  private onTool(part: Json): void {
    const state = isObj(part.state) ? part.state : {};
    const status = str(state.status);
    const tool = str(part.tool) ?? '';
    const mcp = this.opts.mcpServers?.length ? mcpToolOf(tool, this.opts.mcpServers) : undefined;
    const call: ToolCall = { name: mcp ? mcpToolCallName(mcp.server, mcp.tool) : tool, input: state.input ?? {} };
    const max = this.opts.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS;
    let out: string | undefined;
    if (status === 'error') {
      out = str(state.error) ?? (state.error !== undefined ? JSON.stringify(state.error) : 'tool failed');
      call.isError = true;
    } else if (status === 'completed') {
      out = str(state.output) ?? (state.output !== undefined ? JSON.stringify(state.output) : '');
      // A shell command "completes" whatever its exit status: `metadata.exit` says how it ended.
      const exit = isObj(state.metadata) ? num(state.metadata.exit) : undefined;
      call.isError = exit !== undefined && exit !== 0;
    }
    if (out !== undefined) call.output = truncateToolOutput(out, max);
    this.calls.push(call);
  }

  private onFinish(part: Json): void {
    this.finished++;
    this.lastReason = str(part.reason) ?? this.lastReason;
    const t = isObj(part.tokens) ? part.tokens : undefined;
    if (t) {
      const cache = isObj(t.cache) ? t.cache : {};
      addUsage(this.usage, { input: num(t.input) ?? 0, output: (num(t.output) ?? 0) + (num(t.reasoning) ?? 0), cacheRead: num(cache.read) ?? 0, cacheWrite: num(cache.write) ?? 0 });
    }
    const c = num(part.cost);
    if (c !== undefined) this.cost = (this.cost ?? 0) + c;
  }

  /** Everything seen so far, summarised. */
  finish(): OpencodeSummary {
    const skillActivations = skillActivationsOf(this.calls, (c, input): SkillActivation | undefined => {
      if (SKILL_TOOLS.has(c.name)) {
        const skill = (firstString(input, ['name', 'skill']) ?? '').trim();
        return skill ? { skill, via: 'skill tool' } : undefined;
      }
      const skill = READ_TOOLS.has(c.name) ? skillOfSkillMd(firstString(input, ['filePath', 'file_path', 'path']) ?? '') : undefined;
      return skill ? { skill, via: 'read SKILL.md' } : undefined;
    });
    return {
      sessionId: this.sessionId,
      finalText: this.stepTexts.join('\n\n'),
      toolCalls: this.calls,
      skillActivations,
      usage: { ...this.usage },
      costUsd: this.cost === undefined ? undefined : roundUsd(this.cost),
      steps: this.steps,
      finishedSteps: this.finished,
      lastFinishReason: this.lastReason,
      badLines: this.badLines,
      error: this.classify(),
    };
  }

  private classify(): EngineError | undefined {
    const e = this.errorLine;
    if (e) {
      const err = isObj(e.error) ? e.error : {};
      const data = isObj(err.data) ? err.data : {};
      const name = str(err.name) ?? 'Error';
      const message = str(data.message) ?? str(err.message) ?? JSON.stringify(err);
      const status = num(data.statusCode);
      if (name === 'APIError' || name === 'ProviderAuthError' || status !== undefined) {
        return { kind: 'api', message: `${message}${status !== undefined ? ` (HTTP ${status})` : ''}` };
      }
      return { kind: 'crash', message: `${name}: ${message}` };
    }
    const max = this.opts.maxSteps;
    if (max !== undefined && max > 0 && this.steps > max) return { kind: 'protocol', message: `max turns reached (${max})` };
    return undefined;
  }
}

/** Parses a whole `--format json` output. */
export function parseOpencodeJson(text: string, opts: OpencodeParseOptions = {}): OpencodeSummary {
  const p = new OpencodeJsonParser(opts);
  return parseLines(p, text);
}
