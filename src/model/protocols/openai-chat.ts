/**
 * OpenAI Chat Completions, as OpenCode (opencode-ai 1.18.33, through its bundled
 * `@ai-sdk/openai-compatible` provider) and Qwen Code (@qwen-code/qwen-code 0.24.4, through the
 * `openai` SDK) use it. Sources: the engines' own documentation (engines/opencode, engines/qwen-code
 * README.md) and the captured requests
 * `samples/opencode/request-2nd-call-trimmed.json` and `samples/qwen-code/request-2nd-call-trimmed.json`.
 *
 * Routes (matched on the path's end, so any base-URL prefix works; the query string is ignored):
 * - `POST …/chat/completions`: a model call. Body `{model, messages, tools, tool_choice?, stream,
 *   stream_options?, max_tokens?, …}`.
 * - `GET …/models[/<id>]`: an OpenAI model list `{object:"list", data:[{id, object:"model",
 *   created, owned_by}]}` / one model, for requests with an `Authorization` header. Anthropic's
 *   API has the same path: requests without `Authorization` or with `anthropic-version` are
 *   answered by the Anthropic module, so this module may come first in `PROTOCOLS`.
 *
 * Request shapes handled:
 * - `messages[]`: `system`/`developer` (kept as `role:"system"` context), `user`, `assistant`
 *   (`content` string/null/parts, `tool_calls[{id, type:"function", function:{name, arguments}}]`
 *   whose `arguments` JSON string is parsed; an unparsable one is kept as the raw string), and
 *   `tool` (`tool_call_id`, `content`), consecutive `tool` messages merged into one neutral user
 *   message of tool results. `content` may be a string or an array of `{type:"text", text}` parts
 *   (Qwen sends arrays, with each `<system-reminder>` in its own part; OpenCode sends strings).
 * - OpenCode wraps every prompt argument that contains a space in double quotes
 *   (`"\"Please create …\""`): for OpenCode requests a user text that starts and ends with `"`
 *   is unquoted (and `\"` unescaped).
 * - Tool results carry no error flag in this API. A result is taken as an error when its text
 *   starts with `Error:` / `error:` (OpenCode's failed tool output, Qwen's `Error: …` tool
 *   responses) or is wrapped in `<tool_use_error>`; see `looksLikeToolError`.
 * - `tools[]`: `{type:"function", function:{name, parameters}}` (the `parameters` JSON Schema
 *   gives the argument names); a bare `{name, parameters}` is accepted too.
 *
 * Engine (for the `engine:` rule condition, `ModelRequest.engine`): `user-agent` first
 * (`opencode/…` → `opencode`; `QwenCode/…` → `qwen_code`), then the request shape (a system
 * prompt starting `You are opencode` / `You are Qwen Code`, or a `<system-reminder>` announcing
 * "This is the Qwen Code"), else `custom`.
 *
 * - OpenCode past its agent `steps` limit appends an assistant message `CRITICAL - MAXIMUM STEPS
 *   REACHED …` telling the model that tools are disabled (while still listing them): that
 *   message is dropped and the request is treated as offering no tool.
 *
 * Requests without tools (OpenCode's title generation: `[system, user:"Generate a title for this
 * conversation:\n", user:"\"<prompt>\""]`) go through the script like any other; with no tool
 * offered every abstract action is unmappable, so they get plain text.
 *
 * Streaming response (`stream: true`), `data: <json>\n\n` events without `event:` lines
 * (shape verified with both engines):
 * `chat.completion.chunk` with `delta:{role:"assistant", content}` (text, when any) → per tool
 * call one chunk `delta.tool_calls[{index, id:"call_<24 hex>", type:"function", function:{name,
 * arguments:""}}]` and one carrying the whole `arguments` JSON → a chunk with `delta:{}` and
 * `finish_reason` (`tool_calls` | `stop`) → a usage chunk (`choices:[]`, `usage:{prompt_tokens,
 * completion_tokens, total_tokens}`, token estimates in tokens) → `data: [DONE]`.
 * Non-streamed: one `chat.completion` object with `choices[0].message` and `usage`.
 *
 * Errors: `{"error":{"message","type","param":null,"code"}}` with the HTTP status and
 * `NO_RETRY_HEADERS`, so a scripted error (the script is deterministic: a retry gets the same
 * answer) fails the engine in about a second instead of after minutes of back-off.
 */
import type { EngineName, ModelReply, ModelRequest, NeutralMessage, NeutralPart, ToolSpec } from '../types.js';
import { readInput, shellInput, skillInput, writeInput, type ToolTable } from '../tools.js';
import { anthropicProtocol } from './anthropic.js';
import { profileOf, recogniseEngine, userAgentOf } from './engines.js';
import { flatToolName, jsonResponse, ProtocolError, SSE_HEADERS, type ProtocolModule, type Rendered, type WireContext } from './protocol.js';

/**
 * How abstract actions become Chat Completions tools, in preference order. OpenCode offers
 * `skill {name}`, `write {filePath, content}`, `bash {command, description}`, `read {filePath}`;
 * Qwen Code offers `skill {skill}`, `write_file {file_path, content}`, `run_shell_command
 * {command, description?}`, `read_file {file_path | absolute_path}`. Each engine offers only its
 * own names, so one table serves both; the argument names come from each tool's schema.
 */
export const OPENAI_CHAT_TOOL_TABLE: ToolTable = {
  use_skill: [
    { name: 'skill', build: skillInput },
    { name: 'activate_skill', build: skillInput },
    { name: 'Skill', build: skillInput },
  ],
  write_file: [
    { name: 'write', build: writeInput },
    { name: 'write_file', build: writeInput },
    { name: 'Write', build: writeInput },
    { name: 'create_file', build: writeInput },
  ],
  run: [
    { name: 'bash', build: shellInput },
    { name: 'run_shell_command', build: shellInput },
    { name: 'shell', build: shellInput },
    { name: 'Bash', build: shellInput },
  ],
  read_file: [
    { name: 'read', build: readInput },
    { name: 'read_file', build: readInput },
    { name: 'Read', build: readInput },
  ],
};

/**
 * Headers sent with every error: `x-should-retry: false` stops the `openai` SDK's retries
 * (Qwen Code); `retry-after-ms: 0` / `retry-after: 0` make the retries that OpenCode always
 * makes for 5xx (5 of them, normally 2 s × 2ⁿ apart: ~66 s measured for a 500) immediate,
 * as does the AI SDK's own back-off (it honours `retry-after-ms` below 60 s).
 */
export const NO_RETRY_HEADERS: Record<string, string> = { 'x-should-retry': 'false', 'retry-after-ms': '0', 'retry-after': '0' };

/** OpenAI error `type` for an HTTP status. */
export function openaiErrorType(status: number): string {
  const known: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    409: 'conflict_error',
    413: 'invalid_request_error',
    422: 'invalid_request_error',
    429: 'rate_limit_error',
    500: 'server_error',
    503: 'server_error',
  };
  return known[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Text of a `content` field: a string, or the text parts of an array joined by newlines. */
export function chatContentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p) => (isObj(p) ? (p.type === 'text' && typeof p.text === 'string' ? p.text : p.type === 'image_url' ? '[image]' : '') : typeof p === 'string' ? p : ''))
    .filter(Boolean)
    .join('\n');
}

/** The texts of a `content` field, one per part (a string is one part). */
function contentTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const p of content) {
    if (typeof p === 'string') out.push(p);
    else if (isObj(p) && p.type === 'text' && typeof p.text === 'string') out.push(p.text);
  }
  return out;
}

/**
 * Whether a tool message's text reports a failed tool: it starts with `Error:` (any case) or
 * is wrapped in `<tool_use_error>`. Chat Completions has no error flag, so this is a heuristic.
 */
export function looksLikeToolError(text: string): boolean {
  const t = text.trimStart();
  return /^error\b\s*[:(]/i.test(t) || t.startsWith('<tool_use_error>');
}

/** An engine's quoting of a prompt argument undone (OpenCode; its definition's `quotesPrompts`): `"a \"b\""` → `a "b"`; other texts unchanged. */
export function unquoteOpencodePrompt(text: string): string {
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) return text.slice(1, -1).replace(/\\"/g, '"');
  return text;
}

/**
 * The engine a request comes from (see the module doc; the marks are in the engines'
 * definitions): `jobEngine` (the engine the request's job runs, `WireContext.jobEngine`) when it
 * speaks Chat Completions, else the marks of the headers and the first messages.
 */
export function detectChatEngine(headers: WireContext['headers'], body: Record<string, unknown>, jobEngine?: string): EngineName {
  const msgs = Array.isArray(body.messages) ? body.messages : [];
  const opening = msgs
    .slice(0, 3)
    .filter(isObj)
    .map((m) => ({ role: String(m.role ?? ''), text: chatContentText(m.content) }));
  return recogniseEngine('openai_chat', userAgentOf(headers), opening, jobEngine);
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string') return isObj(args) ? args : {};
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/**
 * Parses a Chat Completions body into the neutral request.
 * @throws ProtocolError (400) when the body is not an object or `messages` is not a list.
 */
export function parseOpenAIChatRequest(body: unknown, ctx: WireContext): ModelRequest {
  if (!isObj(body)) throw new ProtocolError('request body must be a JSON object');
  if (!Array.isArray(body.messages)) throw new ProtocolError('messages: field required (a list)');
  const engine = detectChatEngine(ctx.headers, body, ctx.jobEngine);
  const profile = profileOf(engine);
  const messages: NeutralMessage[] = [];
  for (const m of body.messages) {
    if (!isObj(m)) continue;
    const role = m.role;
    if (role === 'system' || role === 'developer') {
      messages.push({ role: 'system', parts: contentTexts(m.content).map((text) => ({ type: 'text', text })) });
    } else if (role === 'tool' || role === 'function') {
      const output = chatContentText(m.content);
      const part: NeutralPart = { type: 'tool_result', id: String(m.tool_call_id ?? m.name ?? ''), output, isError: looksLikeToolError(output) };
      const last = messages[messages.length - 1];
      if (last && last.role === 'user' && last.parts.length > 0 && last.parts.every((p) => p.type === 'tool_result')) last.parts.push(part);
      else messages.push({ role: 'user', parts: [part] });
    } else if (role === 'assistant') {
      const parts: NeutralPart[] = contentTexts(m.content)
        .filter((t) => t !== '')
        .map((text) => ({ type: 'text', text }));
      for (const c of Array.isArray(m.tool_calls) ? m.tool_calls : []) {
        if (!isObj(c)) continue;
        const fn = isObj(c.function) ? c.function : {};
        parts.push({ type: 'tool_call', id: String(c.id ?? ''), name: String(fn.name ?? ''), input: parseArguments(fn.arguments) });
      }
      messages.push({ role: 'assistant', parts });
    } else {
      const texts = contentTexts(m.content).map((t) => (profile?.quotesPrompts ? unquoteOpencodePrompt(t) : t));
      messages.push({ role: 'user', parts: texts.map((text) => ({ type: 'text', text })) });
    }
  }
  // OpenCode past its step limit appends this assistant prefill and disables tools for the
  // reply (it still lists them): drop the message and offer no tool, so the answer is text.
  const last = messages[messages.length - 1];
  const prefill = profile?.stepsExhaustedPrefill;
  const stepsExhausted = prefill !== undefined && last?.role === 'assistant' && last.parts.some((p) => p.type === 'text' && p.text.startsWith(prefill));
  if (stepsExhausted) messages.pop();
  const tools: ToolSpec[] = [];
  for (const t of stepsExhausted ? [] : Array.isArray(body.tools) ? body.tools : []) {
    if (!isObj(t)) continue;
    const fn = isObj(t.function) ? t.function : t;
    if (typeof fn.name !== 'string') continue;
    tools.push(isObj(fn.parameters) ? { name: fn.name, schema: fn.parameters } : { name: fn.name });
  }
  const req: ModelRequest = {
    protocol: 'openai_chat',
    engine,
    model: typeof body.model === 'string' && body.model ? body.model : 'scripted-model',
    stream: body.stream === true,
    system: [],
    messages,
    tools,
    rawChars: ctx.rawChars,
  };
  const sessionId = sessionIdOf(ctx.headers);
  if (sessionId) req.sessionId = sessionId;
  return req;
}

/** The engine's session id: OpenCode sends `x-session-id: ses_…` (also `x-session-affinity`). */
function sessionIdOf(headers: WireContext['headers']): string | undefined {
  for (const name of ['x-session-id', 'x-session-affinity']) {
    const v = headers[name];
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

type WireToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

function replyParts(reply: ModelReply): { text: string | null; toolCalls: WireToolCall[] } {
  const texts = reply.blocks.filter((b): b is Extract<typeof b, { type: 'text' }> => b.type === 'text').map((b) => b.text);
  const toolCalls: WireToolCall[] = reply.blocks
    .filter((b): b is Extract<typeof b, { type: 'tool_call' }> => b.type === 'tool_call')
    .map((b) => ({ id: `call_${b.id}`, type: 'function', function: { name: flatToolName(b), arguments: JSON.stringify(b.input) } }));
  const text = texts.join('\n\n');
  return { text: text === '' && toolCalls.length > 0 ? null : text, toolCalls };
}

function usageOf(reply: ModelReply) {
  return { prompt_tokens: reply.usage.inputTokens, completion_tokens: reply.usage.outputTokens, total_tokens: reply.usage.inputTokens + reply.usage.outputTokens };
}

function finishReason(reply: ModelReply): 'tool_calls' | 'stop' {
  return reply.stop === 'tool_use' ? 'tool_calls' : 'stop';
}

/** `data: <json>\n\n` */
function dataEvent(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/** The SSE events of a streamed reply, one string per event (see the module doc). */
export function renderOpenAIChatStream(reply: ModelReply, created = Math.floor(Date.now() / 1000)): string[] {
  const base = { id: `chatcmpl-${reply.id}`, object: 'chat.completion.chunk', created, model: reply.model };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => dataEvent({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
  const { text, toolCalls } = replyParts(reply);
  const events: string[] = [];
  events.push(chunk({ role: 'assistant', content: text !== null && text !== '' ? text : text === '' && toolCalls.length === 0 ? '' : null }));
  toolCalls.forEach((c, index) => {
    events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments } }] }));
  });
  events.push(chunk({}, finishReason(reply)));
  events.push(dataEvent({ ...base, choices: [], usage: usageOf(reply) }));
  events.push('data: [DONE]\n\n');
  return events;
}

/** The non-streamed `chat.completion` object of a reply. */
export function openAIChatCompletion(reply: ModelReply, created = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  const { text, toolCalls } = replyParts(reply);
  const message: Record<string, unknown> = { role: 'assistant', content: text };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: `chatcmpl-${reply.id}`,
    object: 'chat.completion',
    created,
    model: reply.model,
    choices: [{ index: 0, message, finish_reason: finishReason(reply), logprobs: null }],
    usage: usageOf(reply),
  };
}

/**
 * True unless a `GET …/models` request looks like an OpenAI client's (an `Authorization` header
 * and no `anthropic-version`): the Anthropic module answers all others, as before this module.
 */
function isAnthropicClient(headers: WireContext['headers']): boolean {
  return headers['anthropic-version'] !== undefined || headers.authorization === undefined;
}

function utility(ctx: WireContext, body: unknown): Rendered {
  if (isAnthropicClient(ctx.headers)) return anthropicProtocol.utility(ctx, body);
  const model = (id: string) => ({ id, object: 'model', created: 1735689600, owned_by: 'skill-up' });
  const modelId = /\/models\/([^/]+)$/.exec(ctx.pathname)?.[1];
  if (modelId) return jsonResponse(200, model(decodeURIComponent(modelId)));
  return jsonResponse(200, { object: 'list', data: [model('scripted-model')] });
}

export const openaiChatProtocol: ProtocolModule = {
  id: 'openai_chat',
  route(method, pathname) {
    if (method === 'POST' && pathname.endsWith('/chat/completions')) return 'generate';
    if (method === 'GET' && /(?:^|\/v1)\/models(\/[^/:]+)?$/.test(pathname)) return 'utility';
    return undefined;
  },
  utility,
  parse: parseOpenAIChatRequest,
  toolTable: OPENAI_CHAT_TOOL_TABLE,
  render(reply, stream) {
    const headers = { 'x-request-id': `req_${reply.id}` };
    if (stream) return { status: 200, headers: { ...SSE_HEADERS, ...headers }, chunks: renderOpenAIChatStream(reply) };
    return jsonResponse(200, openAIChatCompletion(reply), headers);
  },
  renderError(status, message, type) {
    return jsonResponse(status, { error: { message, type: type ?? openaiErrorType(status), param: null, code: null } }, NO_RETRY_HEADERS);
  },
};
