/**
 * OpenCode `opencode run --format json` output → the parts of a TranscriptTurn.
 *
 * Format source: shared/engines/opencode-gemini-qwen-docker.md §2 ("`--format json` event
 * lines") and the captured samples in shared/engines/samples/opencode/ (`run1-write`,
 * `run2-resume`, `run3-skill`, `run4-bash`, `run5-error-unreachable` `.jsonl`), observed with
 * opencode-ai 1.18.33; the failed-tool shape (`state.status:"error"`, `state.error`) and the
 * HTTP-error line (`data.statusCode`, `data.responseBody`) were seen in this adapter's own runs.
 *
 * One JSON object per stdout line, each with `type`, `timestamp` (epoch ms), `sessionID`:
 * - `step_start` `{part:{type:"step-start", messageID, snapshot}}` — one model call begins;
 * - `tool_use` `{part:{type:"tool", tool, callID, state:{status:"completed"|"error", input,
 *   output?, error?, metadata, title, time:{start,end}}}}` — emitted once, when the tool ended;
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
import type { EngineError, SkillActivation, TokenUsage, ToolCall } from '../../src/engine/types.js';

/** Options for parsing one invocation's output. */
export interface OpencodeParseOptions {
  /** The case's `max_turns`. The adapter sets `agent.build.steps` one higher, so more
   * `step_start`s than this means the agent used OpenCode's forced, text-only last step. */
  maxSteps?: number;
  /** Longest tool output kept, characters; longer outputs are cut with a marker. Default 100 000. */
  maxToolOutputChars?: number;
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
   * call, then `isError: true`), cut at `maxToolOutputChars`. */
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

type Json = Record<string, unknown>;

const SKILL_MD = /(?:^|[\\/])([^\\/]+)[\\/]SKILL\.md$/;
const SKILL_TOOLS = new Set(['skill']);
const READ_TOOLS = new Set(['read']);

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Incremental parser: `push` each stdout line, then `finish`. */
export class OpencodeJsonParser {
  private readonly opts: OpencodeParseOptions;
  private sessionId?: string;
  private readonly calls: ToolCall[] = [];
  private readonly usage: TokenUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  private cost?: number;
  private steps = 0;
  private finished = 0;
  private lastReason?: string;
  /** Text parts of the current (last started) step. */
  private stepTexts: string[] = [];
  private errorLine?: Json;
  private badLines = 0;

  constructor(opts: OpencodeParseOptions = {}) {
    this.opts = opts;
  }

  /** Consumes one line (blank lines are skipped; non-JSON lines are counted and skipped). */
  push(line: string): void {
    const trimmed = line.trim();
    if (trimmed === '') return;
    let d: unknown;
    try {
      d = JSON.parse(trimmed);
    } catch {
      this.badLines++;
      return;
    }
    if (!isObj(d)) {
      this.badLines++;
      return;
    }
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
    const call: ToolCall = { name: str(part.tool) ?? '', input: state.input ?? {} };
    const max = this.opts.maxToolOutputChars ?? 100_000;
    let out: string | undefined;
    if (status === 'error') {
      out = str(state.error) ?? (state.error !== undefined ? JSON.stringify(state.error) : 'tool failed');
      call.isError = true;
    } else if (status === 'completed') {
      out = str(state.output) ?? (state.output !== undefined ? JSON.stringify(state.output) : '');
      call.isError = false;
    }
    if (out !== undefined) call.output = out.length > max ? `${out.slice(0, max)}\n… [truncated ${out.length - max} characters]` : out;
    this.calls.push(call);
  }

  private onFinish(part: Json): void {
    this.finished++;
    this.lastReason = str(part.reason) ?? this.lastReason;
    const t = isObj(part.tokens) ? part.tokens : undefined;
    if (t) {
      const cache = isObj(t.cache) ? t.cache : {};
      this.usage.input += num(t.input) ?? 0;
      this.usage.output += (num(t.output) ?? 0) + (num(t.reasoning) ?? 0);
      this.usage.cacheRead += num(cache.read) ?? 0;
      this.usage.cacheWrite += num(cache.write) ?? 0;
    }
    const c = num(part.cost);
    if (c !== undefined) this.cost = (this.cost ?? 0) + c;
  }

  /** Everything seen so far, summarised. */
  finish(): OpencodeSummary {
    const skillActivations: SkillActivation[] = [];
    for (const c of this.calls) {
      if (c.isError) continue;
      const input = isObj(c.input) ? c.input : {};
      if (SKILL_TOOLS.has(c.name)) {
        const skill = (str(input.name) ?? str(input.skill) ?? '').trim();
        if (skill) skillActivations.push({ skill, via: 'skill tool' });
      } else if (READ_TOOLS.has(c.name)) {
        const m = SKILL_MD.exec(str(input.filePath) ?? str(input.file_path) ?? str(input.path) ?? '');
        if (m) skillActivations.push({ skill: m[1]!, via: 'read SKILL.md' });
      }
    }
    return {
      sessionId: this.sessionId,
      finalText: this.stepTexts.join('\n\n'),
      toolCalls: this.calls,
      skillActivations,
      usage: { ...this.usage },
      costUsd: this.cost === undefined ? undefined : Math.round(this.cost * 1e10) / 1e10,
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
  for (const line of text.split('\n')) p.push(line);
  return p.finish();
}
