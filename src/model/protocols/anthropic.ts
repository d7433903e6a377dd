/**
 * Anthropic Messages API, as Claude Code 2.1.x uses it (sources: engines/claude-code/README.md
 * and the captured requests in engines/claude-code/samples/).
 *
 * Routes (matched on the path's end, so a base URL with a prefix works; the query string,
 * e.g. `?beta=true`, is ignored):
 * - `POST …/v1/messages`: a model call. Body `{model, messages, system, tools, stream, …}`.
 * - `POST …/v1/messages/count_tokens`: `{input_tokens}` (≈ body chars / 4).
 * - `GET …/v1/models[/<id>]`: a one-model list / the model.
 *
 * Request quirks handled: `system` as a string or text blocks; a `role:"system"` message
 * inside `messages` (Claude Code's environment block with `Primary working directory:` and
 * the skill listing); `<system-reminder>` text blocks; the synthetic user text
 * `Base directory for this skill: …` Claude Code sends after a `Skill` call (marked meta);
 * `tool_result.content` as a string or blocks; thinking blocks (ignored).
 *
 * Streaming response (`stream: true`), one SSE event per chunk, each with an `event:` line:
 * `message_start` (usage.input_tokens, output_tokens 1) → per block `content_block_start`
 * / `content_block_delta` (`text_delta`, or `input_json_delta` carrying the whole input
 * JSON) / `content_block_stop` → `message_delta` (stop_reason, usage.output_tokens) →
 * `message_stop`. Errors: `{"type":"error","error":{"type","message"}}` with the HTTP status.
 */
import type { ModelReply, ModelRequest, NeutralMessage, NeutralPart, ToolSpec } from '../types.js';
import { estimateTokens } from '../plan.js';
import { readInput, shellInput, skillInput, writeInput, type ToolTable } from '../tools.js';
import { flatToolName, jsonResponse, ProtocolError, sseEvent, SSE_HEADERS, type ProtocolModule, type Rendered, type WireContext } from './protocol.js';
import { engineOfRequest } from './engines.js';

/** Claude Code's tools first; common names of other agents after (custom agents on this API). */
export const ANTHROPIC_TOOL_TABLE: ToolTable = {
  use_skill: [
    { name: 'Skill', build: skillInput },
    { name: 'skill', build: skillInput },
    { name: 'activate_skill', build: skillInput },
  ],
  write_file: [
    { name: 'Write', build: writeInput },
    { name: 'write_file', build: writeInput },
    { name: 'write', build: writeInput },
    { name: 'create_file', build: writeInput },
  ],
  run: [
    { name: 'Bash', build: shellInput },
    { name: 'run_shell_command', build: shellInput },
    { name: 'shell', build: shellInput },
  ],
  read_file: [
    { name: 'Read', build: readInput },
    { name: 'read_file', build: readInput },
  ],
};

/** Anthropic error `type` for an HTTP status. */
export function anthropicErrorType(status: number): string {
  const known: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    500: 'api_error',
    529: 'overloaded_error',
  };
  return known[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

const SKILL_BASE_DIR = 'Base directory for this skill:';

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => (isObj(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : isObj(b) && b.type === 'image' ? '[image]' : ''))
    .filter(Boolean)
    .join('\n');
}

function toParts(role: NeutralMessage['role'], content: unknown): NeutralPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content, ...(isMetaText(role, content) ? { meta: true } : {}) }];
  if (!Array.isArray(content)) return [];
  const parts: NeutralPart[] = [];
  for (const b of content) {
    if (!isObj(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') {
      parts.push({ type: 'text', text: b.text, ...(isMetaText(role, b.text) ? { meta: true } : {}) });
    } else if (b.type === 'tool_use' || b.type === 'server_tool_use') {
      parts.push({ type: 'tool_call', id: String(b.id ?? ''), name: String(b.name ?? ''), input: b.input ?? {} });
    } else if (b.type === 'tool_result') {
      parts.push({ type: 'tool_result', id: String(b.tool_use_id ?? ''), output: textOf(b.content), isError: b.is_error === true });
    }
  }
  return parts;
}

function isMetaText(role: NeutralMessage['role'], text: string): boolean {
  return role === 'user' && text.trimStart().startsWith(SKILL_BASE_DIR);
}

function sessionIdOf(body: Record<string, unknown>, ctx: WireContext): string | undefined {
  const h = ctx.headers['x-claude-code-session-id'];
  if (typeof h === 'string' && h) return h;
  const meta = body.metadata;
  if (isObj(meta) && typeof meta.user_id === 'string') {
    try {
      const u = JSON.parse(meta.user_id) as unknown;
      if (isObj(u) && typeof u.session_id === 'string' && u.session_id) return u.session_id;
    } catch {
      /* user_id is not always JSON */
    }
  }
  return undefined;
}

/** Parses a Messages API body. @throws ProtocolError when `messages` is missing. */
export function parseAnthropicRequest(body: unknown, ctx: WireContext): ModelRequest {
  if (!isObj(body)) throw new ProtocolError('request body must be a JSON object');
  if (!Array.isArray(body.messages)) throw new ProtocolError('messages: field required (a list)');
  const system = typeof body.system === 'string' ? [body.system] : Array.isArray(body.system) ? [textOf(body.system)] : [];
  const messages: NeutralMessage[] = [];
  for (const m of body.messages) {
    if (!isObj(m)) continue;
    const role = m.role === 'assistant' ? 'assistant' : m.role === 'system' ? 'system' : 'user';
    messages.push({ role, parts: toParts(role, m.content) });
  }
  const tools: ToolSpec[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObj(t) || typeof t.name !== 'string') continue;
    tools.push(isObj(t.input_schema) ? { name: t.name, schema: t.input_schema } : { name: t.name });
  }
  const req: ModelRequest = {
    protocol: 'anthropic',
    engine: engineOfRequest('anthropic', ctx, system, messages),
    model: typeof body.model === 'string' ? body.model : 'scripted-model',
    stream: body.stream === true,
    system,
    messages,
    tools,
    rawChars: ctx.rawChars,
  };
  const sessionId = sessionIdOf(body, ctx);
  if (sessionId) req.sessionId = sessionId;
  return req;
}

type AnthropicBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function wireBlocks(reply: ModelReply): AnthropicBlock[] {
  return reply.blocks.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'tool_use', id: `toolu_${b.id}`, name: flatToolName(b), input: b.input }));
}

function usage(reply: ModelReply, outputTokens: number) {
  return { input_tokens: reply.usage.inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: outputTokens };
}

/** The SSE events of a streamed reply, one string per event (see the module doc). */
export function renderAnthropicStream(reply: ModelReply): string[] {
  const id = `msg_${reply.id}`;
  const events: string[] = [];
  const ev = (data: { type: string } & Record<string, unknown>) => events.push(sseEvent(data.type, data));
  ev({
    type: 'message_start',
    message: { id, type: 'message', role: 'assistant', model: reply.model, content: [], stop_reason: null, stop_sequence: null, usage: usage(reply, 1) },
  });
  wireBlocks(reply).forEach((b, index) => {
    if (b.type === 'text') {
      ev({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      ev({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } });
    } else {
      ev({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      ev({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    ev({ type: 'content_block_stop', index });
  });
  ev({ type: 'message_delta', delta: { stop_reason: reply.stop, stop_sequence: null }, usage: { output_tokens: reply.usage.outputTokens } });
  ev({ type: 'message_stop' });
  return events;
}

/** The non-streamed Message object of a reply. */
export function anthropicMessage(reply: ModelReply): Record<string, unknown> {
  return {
    id: `msg_${reply.id}`,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content: wireBlocks(reply),
    stop_reason: reply.stop,
    stop_sequence: null,
    usage: usage(reply, reply.usage.outputTokens),
  };
}

function requestId(reply?: ModelReply): Record<string, string> {
  return { 'request-id': `req_${reply?.id ?? Date.now().toString(16)}` };
}

function utility(ctx: WireContext, body: unknown): Rendered {
  if (ctx.pathname.endsWith('/v1/messages/count_tokens')) {
    return jsonResponse(200, { input_tokens: estimateTokens(ctx.rawChars) });
  }
  const modelId = /\/v1\/models\/([^/]+)$/.exec(ctx.pathname)?.[1];
  const model = (id: string) => ({ type: 'model', id, display_name: `Scripted (${id})`, created_at: '2025-01-01T00:00:00Z' });
  if (modelId) return jsonResponse(200, model(decodeURIComponent(modelId)));
  void body;
  return jsonResponse(200, { data: [model('claude-scripted')], has_more: false, first_id: 'claude-scripted', last_id: 'claude-scripted' });
}

export const anthropicProtocol: ProtocolModule = {
  id: 'anthropic',
  route(method, pathname) {
    if (method === 'POST' && pathname.endsWith('/v1/messages')) return 'generate';
    if (method === 'POST' && pathname.endsWith('/v1/messages/count_tokens')) return 'utility';
    if (method === 'GET' && /\/v1\/models(\/[^/]+)?$/.test(pathname)) return 'utility';
    return undefined;
  },
  utility,
  parse: parseAnthropicRequest,
  toolTable: ANTHROPIC_TOOL_TABLE,
  render(reply, stream) {
    if (stream) return { status: 200, headers: { ...SSE_HEADERS, ...requestId(reply) }, chunks: renderAnthropicStream(reply) };
    return jsonResponse(200, anthropicMessage(reply), requestId(reply));
  },
  renderError(status, message, type) {
    return jsonResponse(status, { type: 'error', error: { type: type ?? anthropicErrorType(status), message } }, requestId());
  },
};
