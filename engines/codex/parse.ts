/**
 * Codex CLI `codex exec --json` output (JSON Lines on stdout) → the parts of a TranscriptTurn,
 * plus the few facts only the session's rollout file holds (the skill listing, `$skill`
 * mentions).
 *
 * Format source: engines/codex/README.md (output, rollout file, skills, errors) and the
 * captured samples in engines/codex/samples/ (`turn1-shell-write`, `turn2-resume`,
 * `skill-mention-apply-patch`, `error-500`, `error-500-with-2-retries`,
 * `connection-refused-hangs`, `readonly-sandbox-unknown-model` `.jsonl`, and
 * `rollout-session-file.trimmed.jsonl`). Observed with Codex CLI 0.171.0.
 *
 * Line types used (one JSON object per line; anything else is ignored):
 * - `{"type":"thread.started","thread_id":"<uuid v7>"}` — the session id; repeated unchanged
 *   by `codex exec resume`.
 * - `{"type":"turn.started"}`.
 * - `{"type":"item.started"|"item.updated"|"item.completed","item":{id, type, …}}` with item
 *   types `agent_message {text}`, `reasoning {text}`, `command_execution {command,
 *   aggregated_output, exit_code, status}`, `file_change {changes:[{path, kind}], status}`
 *   (apply_patch), `mcp_tool_call {server, tool, arguments, result, error, status}`,
 *   `web_search {query}`, `todo_list`, `error {message}` (non-fatal, e.g. "Model metadata …
 *   not found"). Item ids (`item_0`, …) restart with every invocation; the completed form
 *   replaces the started one.
 * - `{"type":"turn.completed","usage":{input_tokens, cached_input_tokens,
 *   cache_write_input_tokens, output_tokens, reasoning_output_tokens}}` — tokens CUMULATIVE
 *   over the thread across `exec resume`: callers pass the previous value to get this
 *   turn's share.
 * - `{"type":"error","message"}` — transient (`Reconnecting... 1/2 (…)`) or the final error;
 *   `{"type":"turn.failed","error":{"message"}}` — the turn failed (exit code 1).
 *
 * The parser is pure: feed it lines (`CodexJsonParser.push`) or a whole text
 * (`parseCodexJson`); it never touches the file system.
 */
import type { EngineError, SkillActivation, TokenUsage, ToolCall } from '../../src/engine/types.js';
import { mcpToolCallName } from '../../src/engine/mcp.js';
import { parseSkillListing } from '../../src/engine/skill-listing.js';
import { DEFAULT_MAX_TOOL_OUTPUT_CHARS, JsonLinesParser, truncateToolOutput, isObj, num, parseJsonLine, parseLines, str, zeroUsage, type Json } from '../../src/engine/parse-common.js';

/** Codex's own token counters (`turn.completed.usage`), tokens. */
export interface CodexUsage {
  input_tokens: number;
  cached_input_tokens: number;
  cache_write_input_tokens: number;
  output_tokens: number;
  reasoning_output_tokens: number;
}

/** Options for parsing one invocation's output. */
export interface CodexParseOptions {
  /** `turn.completed.usage` of the previous turn of the same thread (cumulative figures), to
   * make this turn's usage per turn. Absent = this is the thread's first turn. */
  previousUsage?: CodexUsage;
  /** Longest tool output kept, characters; longer outputs are cut with a marker. Default 100 000. */
  maxToolOutputChars?: number;
}

/** Everything one invocation's JSONL says. */
export interface CodexStreamSummary {
  /** `thread.started.thread_id`. */
  sessionId?: string;
  /** Text of the last `agent_message` (the adapter prefers the `-o` file when present). */
  finalText: string;
  /** `command_execution` (name `command_execution`, input `{command}`), `file_change`
   * (input `{changes:[{path, kind}]}`), `mcp_tool_call` (named `mcp__<server>__<tool>`, input = its
   * `arguments`, output = the result's text blocks or the error message) and
   * `web_search` (input `{query}`) items, in order of first appearance. */
  toolCalls: ToolCall[];
  /** `command_execution`s that read `…/<name>/SKILL.md` and exited 0 → `{skill, via: 'read SKILL.md'}`. */
  skillActivations: SkillActivation[];
  /** This turn's tokens: `turn.completed.usage` minus `previousUsage`; `input` excludes cached
   * input (`cacheRead`), like Anthropic's figures. Zero without a `turn.completed` line. */
  usage: TokenUsage;
  /** `turn.completed.usage` as reported (cumulative over the thread), for the next turn. */
  cumulativeUsage?: CodexUsage;
  /** Whether a `turn.completed` line was seen. */
  completed: boolean;
  /** Messages of non-fatal `error` items (e.g. the unknown-model warning). */
  warnings: string[];
  /** The last top-level `error` message (`Reconnecting…` while retrying; then the final one). */
  lastErrorMessage?: string;
  /** Number of top-level `error` lines starting with `Reconnecting`. */
  reconnects: number;
  /** Lines that were not JSON objects. */
  badLines: number;
  /** `turn.failed` → `{kind: 'api', message: error.message}` (codex reports model-API and
   * stream failures this way; the message names the server's error when codex surfaces it).
   * Process-level failures (timeout, crash, missing binary) are the adapter's to add. */
  error?: EngineError;
}

/** A path `…/<name>/SKILL.md` inside a command; group 1 is the skill folder's name. */
const SKILL_MD = /(?:^|[\s/'"`=])([^\s/'"`=\\]+)\/SKILL\.md(?![\w.])/g;
/** Commands that change a SKILL.md rather than read it. */
const WRITES_SKILL_MD = /(>|\btee\b|\bsed\s+-i|\brm\b|\bmv\b|\bcp\b|\btouch\b|\btruncate\b)[^|;&]*SKILL\.md/;

/**
 * Skills a shell command reads: every `…/<name>/SKILL.md` it mentions, unless it writes to,
 * moves or deletes a SKILL.md. Works on codex's displayed form (`/bin/bash -lc "cat …"`).
 */
export function skillsReadBy(command: string): string[] {
  if (WRITES_SKILL_MD.test(command)) return [];
  const out: string[] = [];
  for (const m of command.matchAll(SKILL_MD)) if (!out.includes(m[1]!)) out.push(m[1]!);
  return out;
}

function readUsage(u: Json): CodexUsage {
  return {
    input_tokens: num(u.input_tokens) ?? 0,
    cached_input_tokens: num(u.cached_input_tokens) ?? 0,
    cache_write_input_tokens: num(u.cache_write_input_tokens) ?? 0,
    output_tokens: num(u.output_tokens) ?? 0,
    reasoning_output_tokens: num(u.reasoning_output_tokens) ?? 0,
  };
}

/**
 * This turn's tokens from cumulative counters: `current − previous` per counter (never below 0);
 * `input` = input − cached (cached input is `cacheRead`), `cacheWrite` = cache-write input,
 * `output` = output tokens (reasoning tokens are part of them).
 */
export function perTurnUsage(current: CodexUsage, previous?: CodexUsage): TokenUsage {
  const d = (k: keyof CodexUsage) => Math.max(0, current[k] - (previous?.[k] ?? 0));
  const cached = d('cached_input_tokens');
  return { input: Math.max(0, d('input_tokens') - cached), output: d('output_tokens'), cacheRead: cached, cacheWrite: d('cache_write_input_tokens') };
}

/** Text of an MCP tool result: its text content blocks, else the JSON. */
function mcpResultText(result: unknown): string | undefined {
  if (result === undefined || result === null) return undefined;
  if (isObj(result) && Array.isArray(result.content)) {
    return result.content.map((b) => (isObj(b) && typeof b.text === 'string' ? b.text : JSON.stringify(b))).join('\n');
  }
  return typeof result === 'string' ? result : JSON.stringify(result);
}

/** Incremental parser: `push` each stdout line, then `finish`. */
export class CodexJsonParser extends JsonLinesParser<CodexStreamSummary, CodexParseOptions> {
  private threadId?: string;
  private readonly items = new Map<string, Json>();
  private readonly order: string[] = [];
  private lastAgentText?: string;
  private turnCompleted?: Json;
  private turnFailed?: Json;
  private lastError?: string;
  private reconnects = 0;
  /** Item-id prefix per `turn.started`, so ids restarting at `item_0` never collide. */
  private turnNo = 0;

  /** One line's event (blank lines are skipped; non-JSON lines are counted in `badLines`). */
  protected onObject(d: Json): void {
    switch (d.type) {
      case 'thread.started':
        this.threadId ??= str(d.thread_id);
        break;
      case 'turn.started':
        this.turnNo++;
        break;
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        if (isObj(d.item)) this.onItem(d.item);
        break;
      case 'turn.completed':
        this.turnCompleted = d;
        break;
      case 'turn.failed':
        this.turnFailed = d;
        break;
      case 'error': {
        const m = str(d.message);
        if (m !== undefined) {
          this.lastError = m;
          if (m.startsWith('Reconnecting')) this.reconnects++;
        }
        break;
      }
      default:
        break;
    }
  }

  private onItem(item: Json): void {
    const key = `${this.turnNo}:${str(item.id) ?? String(this.order.length)}`;
    if (!this.items.has(key)) this.order.push(key);
    this.items.set(key, item);
    if (item.type === 'agent_message' && typeof item.text === 'string') this.lastAgentText = item.text;
  }

  /** Everything seen so far, summarised. */
  finish(): CodexStreamSummary {
    const max = this.opts.maxToolOutputChars ?? DEFAULT_MAX_TOOL_OUTPUT_CHARS;
    const toolCalls: ToolCall[] = [];
    const skillActivations: SkillActivation[] = [];
    const warnings: string[] = [];
    for (const key of this.order) {
      const it = this.items.get(key)!;
      const status = str(it.status);
      switch (it.type) {
        case 'command_execution': {
          const command = str(it.command) ?? '';
          const exit = num(it.exit_code);
          const call: ToolCall = { name: 'command_execution', input: { command } };
          const out = str(it.aggregated_output);
          if (out !== undefined && (out !== '' || exit !== undefined)) call.output = truncateToolOutput(out, max);
          const failed = status === 'failed' || status === 'declined' || (exit !== undefined && exit !== 0);
          call.isError = failed;
          toolCalls.push(call);
          if (!failed && exit === 0) {
            for (const skill of skillsReadBy(command)) {
              if (!skillActivations.some((a) => a.skill === skill)) skillActivations.push({ skill, via: 'read SKILL.md' });
            }
          }
          break;
        }
        case 'file_change': {
          const changes = Array.isArray(it.changes) ? it.changes.filter(isObj).map((c) => ({ path: str(c.path) ?? '', kind: str(c.kind) ?? '' })) : [];
          toolCalls.push({ name: 'file_change', input: { changes }, output: changes.map((c) => `${c.kind} ${c.path}`).join('\n'), isError: status === 'failed' || status === 'declined' });
          break;
        }
        case 'mcp_tool_call': {
          const err = isObj(it.error) ? str(it.error.message) : undefined;
          // Codex's item names the server and tool itself: the canonical transcript name needs no lookup.
          const call: ToolCall = { name: mcpToolCallName(str(it.server) ?? '', str(it.tool) ?? ''), input: it.arguments ?? {} };
          const out = err ?? mcpResultText(it.result);
          if (out !== undefined) call.output = truncateToolOutput(out, max);
          call.isError = status === 'failed' || err !== undefined;
          toolCalls.push(call);
          break;
        }
        case 'web_search':
          toolCalls.push({ name: 'web_search', input: { query: str(it.query) ?? '' } });
          break;
        case 'error': {
          const m = str(it.message);
          if (m) warnings.push(m);
          break;
        }
        default:
          break; // agent_message, reasoning, todo_list, …
      }
    }

    const u = this.turnCompleted && isObj(this.turnCompleted.usage) ? readUsage(this.turnCompleted.usage) : undefined;
    const usage = u ? perTurnUsage(u, this.opts.previousUsage) : zeroUsage();

    let error: EngineError | undefined;
    if (this.turnFailed) {
      const e = this.turnFailed.error;
      const message = (isObj(e) ? str(e.message) : str(e)) ?? this.lastError ?? 'turn failed';
      error = { kind: 'api', message };
    }

    return {
      sessionId: this.threadId,
      finalText: this.lastAgentText ?? '',
      toolCalls,
      skillActivations,
      usage,
      ...(u ? { cumulativeUsage: u } : {}),
      completed: this.turnCompleted !== undefined,
      warnings,
      ...(this.lastError !== undefined ? { lastErrorMessage: this.lastError } : {}),
      reconnects: this.reconnects,
      badLines: this.badLines,
      ...(error ? { error } : {}),
    };
  }
}

/** Parses a whole `codex exec --json` stdout text. */
export function parseCodexJson(text: string, opts: CodexParseOptions = {}): CodexStreamSummary {
  return parseLines(new CodexJsonParser(opts), text);
}

// ───────────────────────────── rollout file ─────────────────────────────

/** What a session's rollout file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl`) adds. */
export interface CodexRolloutSummary {
  /** Skill names of the LAST `<skills_instructions>` listing (developer message) in the text;
   * `[]` when the text has model context but no listing (codex lists no skill); undefined when
   * the text holds no model context at all. */
  skillsListed?: string[];
  /** Skills codex pasted into the conversation after a `$name` mention (user messages
   * `<skill>\n<name>…</name>…`), in order. */
  mentioned: string[];
}

/**
 * Reads rollout records (`{timestamp, type, payload}` per line;
 * samples/rollout-session-file.trimmed.jsonl): `response_item` messages only. Pass the
 * whole file for `skillsListed` and the part written during a turn for that turn's `mentioned`.
 */
export function parseRollout(text: string): CodexRolloutSummary {
  return parseLines(new RolloutParser(), text);
}

/**
 * Incremental {@link parseRollout}: `push` each line of a rollout file (read line by line, so
 * memory is bounded by the longest line, not the thread), then `finish`.
 */
export class RolloutParser {
  private listing: string | undefined;
  private sawContext = false;
  private readonly mentioned: string[] = [];

  /** Consumes one line (blank and non-JSON lines are skipped). */
  push(line: string): void {
    const parsed = parseJsonLine(line);
    const d = parsed.kind === 'json' ? parsed.value : undefined;
    if (!isObj(d) || d.type !== 'response_item' || !isObj(d.payload)) return;
    const p = d.payload;
    if (p.type !== 'message' || !Array.isArray(p.content)) return;
    this.sawContext = true;
    for (const c of p.content) {
      const t = isObj(c) ? str(c.text) : undefined;
      if (!t) continue;
      if ((p.role === 'developer' || p.role === 'system') && t.includes('<skills_instructions>')) this.listing = t;
      if (p.role === 'user' && t.trimStart().startsWith('<skill>')) {
        const name = /<name>([^<]+)<\/name>/.exec(t)?.[1]?.trim();
        if (name && !this.mentioned.includes(name)) this.mentioned.push(name);
      }
    }
  }

  /** What the lines said. */
  finish(): CodexRolloutSummary {
    const listed = this.listing !== undefined ? { skillsListed: parseSkillListing([this.listing]) } : this.sawContext ? { skillsListed: [] } : {};
    return { ...listed, mentioned: [...this.mentioned] };
  }
}
