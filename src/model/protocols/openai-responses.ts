/**
 * OpenAI Responses API, as the Codex CLI (0.171.0) uses it through a custom
 * `model_providers.<id>` with `wire_api = "responses"`.
 *
 * Sources: engines/codex/README.md (wire protocol, skills, errors) and the captured requests
 * in engines/codex/samples/`request-{1..4}-*.trimmed.json`
 * and `skills-instructions-developer-message.txt`. Verified against the real binary by
 * engines/codex/adapter.test.ts.
 *
 * Routes (matched on the path's end, so a base URL with a prefix works):
 * - `POST …/responses`: a model call. Body `{model, instructions, input[], tools[], stream,
 *   tool_choice, parallel_tool_calls, reasoning, store, include, prompt_cache_key, text,
 *   client_metadata}`.
 * - `POST …/responses/compact` is NOT served (codex only calls it when the context is full).
 *
 * Request items (`input[]`) → neutral messages:
 * - `message` with role `developer`/`system` → `system` (the base instructions, the
 *   `<skills_instructions>` listing, `<permissions instructions>`); role `user` → `user`, its
 *   engine-injected texts marked `meta` (`<environment_context>`, the `<skill>` block codex
 *   pastes after a `$name` mention, `# AGENTS.md instructions`, `<user_instructions>`,
 *   `<turn_aborted>`, …, see META_PREFIXES); role `assistant` → `assistant` text.
 * - `function_call {name, arguments (JSON text), call_id}` → assistant `tool_call` (input =
 *   the parsed arguments, or the raw text when not JSON); `custom_tool_call {name, input
 *   (freeform text), call_id}` → `tool_call` with input `{input: text}`; `local_shell_call`
 *   → `tool_call` `local_shell` with its `action`.
 * - `function_call_output` / `custom_tool_call_output` / `local_shell_call_output` →
 *   user `tool_result`. `isError` when the output reports a non-zero exit
 *   (`Process exited with code N` from exec_command, `Exit code: N` from apply_patch) or
 *   `success: false`.
 * - `reasoning`, `web_search_call`, `tool_search_*`, … are ignored.
 * Consecutive assistant items (a message and the calls after it) form one assistant message.
 * The session id is the thread id (headers `session-id` / `thread-id`, else
 * `prompt_cache_key`); the engine: engines.ts `engineOfRequest` (`codex` unless the job or a
 * registered engine's marks say otherwise).
 *
 * Tools (`tools[]`): `function` tools keep their `parameters` as schema; `custom` (freeform)
 * tools such as `apply_patch` get the schema `{type: "string"}` so builders know to send
 * text; a `namespace` tool (`{type: "namespace", name: "mcp__tickets", tools: [function…]}`, an
 * MCP server with a model codex has no metadata for) gives one tool per function, with its
 * `namespace`; tools without a name (`web_search`, `tool_search`) are left out. A `function_call`
 * with a `namespace` in the history is named `<namespace>__<name>`.
 * A reply's call of a tool in a namespace (an `mcp_tool` action) goes out as
 * `function_call {namespace, name}`, streamed or not: codex refuses the flat
 * `mcp__<server>__<tool>` (engines/codex/mcp.ts `modelToolAddress`).
 *
 * Streaming response (codex always sends `stream: true`): SSE events, each with an `event:`
 * line and a `sequence_number`: `response.created` → `response.in_progress` → per output
 * item `response.output_item.added`, then for a message `response.content_part.added` /
 * `response.output_text.delta` / `response.output_text.done` / `response.content_part.done`,
 * for a function call `response.function_call_arguments.delta` / `.done`, for a custom tool
 * call `response.custom_tool_call_input.delta` / `.done`, then `response.output_item.done` →
 * `response.completed` with `usage {input_tokens, input_tokens_details.cached_tokens,
 * output_tokens, output_tokens_details.reasoning_tokens, total_tokens}` (tokens ≈ chars / 4).
 * The minimum codex needs (verified) is `output_item.done` per item plus
 * `response.completed`.
 *
 * Errors: `{"error": {"message", "type", "code", "param": null}}` with the HTTP status; codex
 * quotes such a body (`unexpected status 400 Bad Request: {…}`). But codex 0.171.0 replaces
 * the body of a 5xx with a generic "We're currently experiencing high demand" text and
 * reports a 429 as `exceeded retry limit, last status: 429` without it, so for a scripted
 * status ≥ 500 or 429 the module answers HTTP 200 with an SSE stream whose `response.failed`
 * event carries the message (`renderResponsesError`): codex then ends the turn with
 * `turn.failed` naming it (`stream disconnected before completion: <message> (HTTP 500)`,
 * verified), without retrying when `stream_max_retries = 0`.
 */
import { absolutePath, pickKey, schemaKeys, type ActionContext, type ToolAction, type ToolCandidate, type ToolTable } from '../tools.js';
import type { ModelReply, ModelRequest, NeutralMessage, NeutralPart, ReplyBlock, ToolSpec } from '../types.js';
import { jsonResponse, ProtocolError, sseEvent, SSE_HEADERS, type ProtocolModule, type Rendered, type WireContext } from './protocol.js';
import { engineOfRequest } from './engines.js';
import { qualifiedToolName } from '../conversation.js';

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// ───────────────────────────── tool mapping ─────────────────────────────

/** Tools whose calls go out as `custom_tool_call` (freeform text input) rather than `function_call`. */
export const FREEFORM_TOOLS: ReadonlySet<string> = new Set(['apply_patch']);

/** POSIX single-quoting: `it's` → `'it'\''s'`. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Where a skill's SKILL.md is: from the engine's skill listing (`ctx.skillFiles`, the Codex
 * roots table expanded), else `<skills dir>/<name>/SKILL.md` relative to the working
 * directory (`.agents/skills`, where skill-up installs skills for codex).
 */
export function skillFileFor(name: string, ctx: ActionContext): string {
  return ctx.skillFiles?.[name] ?? `.agents/skills/${name}/SKILL.md`;
}

/** The shell command an action stands for, for engines whose only tool is a shell. */
export function shellCommandFor(a: ToolAction, ctx: ActionContext): string {
  switch (a.kind) {
    case 'run':
      return a.command;
    case 'use_skill':
      return `cat ${shellQuote(skillFileFor(a.skill, ctx))}`;
    case 'read_file':
      return `cat ${shellQuote(a.path)}`;
    case 'write_file': {
      const slash = a.path.lastIndexOf('/');
      const dir = slash > 0 ? a.path.slice(0, slash) : '';
      const write = `printf '%s' ${shellQuote(a.content)} > ${shellQuote(a.path)}`;
      return dir ? `mkdir -p ${shellQuote(dir)} && ${write}` : write;
    }
  }
}

/**
 * Input of a Codex shell tool carrying `shellCommandFor(action)`:
 * - `exec_command` (0.171.0): `{cmd, yield_time_ms: 30000}` — codex returns as soon as the
 *   command exits; 30 s (its maximum) keeps longer commands from coming back half-done;
 * - `shell_command`: `{command: "<cmd>"}`;
 * - `shell` (older codex): `{command: ["bash", "-lc", "<cmd>"]}` when the schema says
 *   `command` is an array, else `{command: "<cmd>"}`.
 */
export const codexShellInput: ToolCandidate['build'] = (a, tool, ctx) => {
  const cmd = shellCommandFor(a, ctx);
  const keys = schemaKeys(tool);
  const key = pickKey(tool, ['cmd', 'command']);
  const props = tool.schema?.properties ?? {};
  const prop = props[key];
  const wantsArray = isObj(prop) && prop.type === 'array';
  const input: Record<string, unknown> = { [key]: wantsArray ? ['bash', '-lc', cmd] : cmd };
  if (keys.includes('yield_time_ms') || tool.name === 'exec_command') input.yield_time_ms = 30_000;
  return input;
};

/**
 * `apply_patch` carrying a `write_file`: `*** Begin Patch / *** Add File: <path> / +line… /
 * *** End Patch` (the path as written; codex resolves relative paths against its cwd). Sent as
 * `{input: patch}`; `render` turns a call of a FREEFORM_TOOLS tool with that input into a
 * `custom_tool_call`. Codex ends every added line with `\n`, so a file's missing final
 * newline is added.
 */
export const applyPatchInput: ToolCandidate['build'] = (a) => {
  const w = a as Extract<ToolAction, { kind: 'write_file' }>;
  const body = w.content.endsWith('\n') ? w.content.slice(0, -1) : w.content;
  const lines = w.content === '' ? [] : body.split('\n').map((l) => `+${l}`);
  return { input: ['*** Begin Patch', `*** Add File: ${w.path}`, ...lines, '*** End Patch', ''].join('\n') };
};

/** A generic file writer (a custom agent on this API): absolute path + content. */
const genericWrite: ToolCandidate['build'] = (a, tool, ctx) => {
  const w = a as Extract<ToolAction, { kind: 'write_file' }>;
  return { [pickKey(tool, ['file_path', 'filePath', 'path'])]: absolutePath(w.path, ctx.cwd), [pickKey(tool, ['content', 'contents', 'text'])]: w.content };
};

const SHELLS: ToolCandidate[] = [
  { name: 'exec_command', build: codexShellInput },
  { name: 'shell_command', build: codexShellInput },
  { name: 'shell', build: codexShellInput },
];

/**
 * Codex's tools (engines/codex/README.md; 0.171.0 with `gpt-5.5` offers `exec_command` and a custom
 * `apply_patch`; with an unknown model slug, no `apply_patch`):
 * - `use_skill` → a shell read `cat <SKILL.md path>` (codex has no skill tool);
 * - `write_file` → `apply_patch` (`*** Add File`), else a shell `mkdir -p … && printf '%s' … > path`;
 * - `run` → the shell; `read_file` → `cat <path>` in the shell.
 */
export const CODEX_TOOL_TABLE: ToolTable = {
  use_skill: SHELLS,
  write_file: [{ name: 'apply_patch', build: applyPatchInput }, ...SHELLS, { name: 'write_file', build: genericWrite }],
  run: SHELLS,
  read_file: SHELLS,
};

// ───────────────────────────── request ─────────────────────────────

/**
 * Starts of user texts that Codex injects (never typed by the user). Sources: the samples
 * (`<environment_context>`, `<skill>`) and the tag strings in the 0.171.0 binary.
 */
export const META_PREFIXES = [
  '<environment_context>',
  '<skill>',
  '<permissions instructions>',
  '<user_instructions>',
  '# AGENTS.md instructions',
  '<turn_aborted>',
  '<user_shell_command>',
  '<subagent_notification>',
  '<collaboration_mode>',
  '<model_switch>',
  '<apps_instructions>',
  '<plugins_instructions>',
  '<skills_instructions>',
];

function isMetaText(text: string): boolean {
  const t = text.trimStart();
  return META_PREFIXES.some((p) => t.startsWith(p));
}

function contentTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const c of content) {
    if (!isObj(c)) continue;
    if (typeof c.text === 'string') out.push(c.text);
    else if (c.type === 'input_image') out.push('[image]');
    else if (c.type === 'refusal' && typeof c.refusal === 'string') out.push(c.refusal);
  }
  return out;
}

/** Text of a tool output: a string, `{content|output}`, or content items joined. */
function outputText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return contentTexts(v).join('\n');
  if (isObj(v)) {
    if (typeof v.content === 'string') return v.content;
    if (Array.isArray(v.content)) return contentTexts(v.content).join('\n');
    if (typeof v.output === 'string') return v.output;
  }
  return v === undefined || v === null ? '' : JSON.stringify(v);
}

/** Whether a tool output reports failure (non-zero exit, `success: false`). */
export function outputIsError(item: Json, text: string): boolean {
  if (isObj(item.output) && item.output.success === false) return true;
  if (item.success === false) return true;
  const m = /^Process exited with code (-?\d+)/m.exec(text) ?? /^Exit code: (-?\d+)/m.exec(text);
  return m !== null && m[1] !== '0';
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

function sessionIdOf(body: Json, ctx: WireContext): string | undefined {
  for (const h of ['session-id', 'thread-id', 'session_id', 'conversation_id']) {
    const v = ctx.headers[h];
    if (typeof v === 'string' && v) return v;
  }
  if (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key) return body.prompt_cache_key;
  return undefined;
}

/** Parses a Responses API body (module doc). @throws ProtocolError when `input` is missing. */
export function parseResponsesRequest(body: unknown, ctx: WireContext): ModelRequest {
  if (!isObj(body)) throw new ProtocolError('request body must be a JSON object');
  const rawInput = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input;
  if (!Array.isArray(rawInput)) throw new ProtocolError('input: field required (a list of items or a string)');
  const system = typeof body.instructions === 'string' && body.instructions.trim() ? [body.instructions] : [];
  const messages: NeutralMessage[] = [];
  const push = (role: NeutralMessage['role'], part: NeutralPart) => {
    const last = messages.at(-1);
    // Consecutive assistant items are one assistant message (a text and the calls after it).
    if (role === 'assistant' && last?.role === 'assistant') last.parts.push(part);
    else messages.push({ role, parts: [part] });
  };
  for (const item of rawInput) {
    if (!isObj(item)) continue;
    const type = typeof item.type === 'string' ? item.type : item.role !== undefined ? 'message' : '';
    switch (type) {
      case 'message': {
        const role = item.role === 'assistant' ? 'assistant' : item.role === 'user' ? 'user' : 'system';
        const texts = contentTexts(item.content);
        if (role === 'system') {
          messages.push({ role, parts: texts.map((text) => ({ type: 'text' as const, text })) });
        } else if (role === 'user') {
          messages.push({ role, parts: texts.map((text) => ({ type: 'text' as const, text, ...(isMetaText(text) ? { meta: true } : {}) })) });
        } else {
          for (const text of texts) push('assistant', { type: 'text', text });
          if (texts.length === 0) push('assistant', { type: 'text', text: '' });
        }
        break;
      }
      case 'function_call': {
        // A call in a namespace (an MCP tool: `{namespace: "mcp__tickets", name: "get_ticket"}`) is named as `toolsOffered` names it.
        const name = String(item.name ?? '');
        const qualified = typeof item.namespace === 'string' && item.namespace ? qualifiedToolName({ name, namespace: item.namespace }) : name;
        push('assistant', { type: 'tool_call', id: String(item.call_id ?? item.id ?? ''), name: qualified, input: parseArguments(item.arguments) });
        break;
      }
      case 'custom_tool_call':
        push('assistant', { type: 'tool_call', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? ''), input: { input: typeof item.input === 'string' ? item.input : '' } });
        break;
      case 'local_shell_call':
        push('assistant', { type: 'tool_call', id: String(item.call_id ?? item.id ?? ''), name: 'local_shell', input: item.action ?? {} });
        break;
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output': {
        const output = outputText(item.output);
        messages.push({ role: 'user', parts: [{ type: 'tool_result', id: String(item.call_id ?? item.id ?? ''), output, isError: outputIsError(item, output) }] });
        break;
      }
      default:
        break; // reasoning, web_search_call, tool_search_call/output, compaction, …
    }
  }
  const tools: ToolSpec[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObj(t)) continue;
    if (t.type === 'namespace') {
      // `{type: "namespace", name: "mcp__tickets", tools: [{type: "function", name, parameters}]}`: one tool per function.
      if (typeof t.name !== 'string' || !t.name || !Array.isArray(t.tools)) continue;
      for (const f of t.tools) {
        if (!isObj(f) || typeof f.name !== 'string' || !f.name) continue;
        tools.push(isObj(f.parameters) ? { name: f.name, namespace: t.name, schema: f.parameters } : { name: f.name, namespace: t.name });
      }
      continue;
    }
    const fn = isObj(t.function) ? t.function : t; // tolerate the Chat Completions nesting
    if (typeof fn.name !== 'string' || !fn.name) continue;
    if (t.type === 'custom') tools.push({ name: fn.name, schema: { type: 'string', description: 'freeform input (custom tool)' } });
    else tools.push(isObj(fn.parameters) ? { name: fn.name, schema: fn.parameters } : { name: fn.name });
  }
  const req: ModelRequest = {
    protocol: 'openai_responses',
    engine: engineOfRequest('openai_responses', ctx, system, messages),
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

// ───────────────────────────── response ─────────────────────────────

/** One output item of a Responses reply, as codex reads it. */
export type ResponsesOutputItem =
  | { type: 'message'; id: string; status: 'completed'; role: 'assistant'; content: { type: 'output_text'; text: string; annotations: [] }[] }
  /** `namespace`: the tool namespace of the function (an MCP tool on Codex: `mcp__<server>`), absent for a flat tool. */
  | { type: 'function_call'; id: string; status: 'completed'; name: string; namespace?: string; arguments: string; call_id: string }
  | { type: 'custom_tool_call'; id: string; status: 'completed'; name: string; input: string; call_id: string };

function isFreeformCall(b: Extract<ReplyBlock, { type: 'tool_call' }>): boolean {
  const keys = Object.keys(b.input);
  return b.namespace === undefined && FREEFORM_TOOLS.has(b.name) && keys.length === 1 && keys[0] === 'input' && typeof b.input.input === 'string';
}

/** The output items of a reply: a message per text block, a (custom) function call per tool block. */
export function responsesOutput(reply: ModelReply): ResponsesOutputItem[] {
  return reply.blocks.map((b, i): ResponsesOutputItem => {
    if (b.type === 'text') {
      return { type: 'message', id: `msg_${reply.id}_${i}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: b.text, annotations: [] }] };
    }
    if (isFreeformCall(b)) {
      return { type: 'custom_tool_call', id: `ctc_${b.id}`, status: 'completed', name: b.name, input: b.input.input as string, call_id: `call_${b.id}` };
    }
    return {
      type: 'function_call',
      id: `fc_${b.id}`,
      status: 'completed',
      name: b.name,
      ...(b.namespace !== undefined ? { namespace: b.namespace } : {}),
      arguments: JSON.stringify(b.input),
      call_id: `call_${b.id}`,
    };
  });
}

function usageOf(reply: ModelReply) {
  const { inputTokens, outputTokens } = reply.usage;
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

/** The Response object (`status: completed`) of a reply; also the body of the non-streamed answer. */
export function responsesObject(reply: ModelReply, createdAt = 0): Json {
  return {
    id: `resp_${reply.id}`,
    object: 'response',
    created_at: createdAt,
    status: 'completed',
    model: reply.model,
    output: responsesOutput(reply),
    usage: usageOf(reply),
    error: null,
    incomplete_details: null,
  };
}

/** The SSE events of a streamed reply, one string per event (see the module doc). */
export function renderResponsesStream(reply: ModelReply): string[] {
  const events: string[] = [];
  let seq = 0;
  const ev = (data: { type: string } & Json) => events.push(sseEvent(data.type, { ...data, sequence_number: seq++ }));
  const done = responsesObject(reply);
  const pending = { ...done, status: 'in_progress', output: [], usage: null };
  ev({ type: 'response.created', response: pending });
  ev({ type: 'response.in_progress', response: pending });
  responsesOutput(reply).forEach((item, output_index) => {
    if (item.type === 'message') {
      const text = item.content[0]!.text;
      ev({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', content: [] } });
      const part = { type: 'output_text', text: '', annotations: [] };
      ev({ type: 'response.content_part.added', item_id: item.id, output_index, content_index: 0, part });
      ev({ type: 'response.output_text.delta', item_id: item.id, output_index, content_index: 0, delta: text });
      ev({ type: 'response.output_text.done', item_id: item.id, output_index, content_index: 0, text });
      ev({ type: 'response.content_part.done', item_id: item.id, output_index, content_index: 0, part: { ...part, text } });
    } else if (item.type === 'function_call') {
      ev({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      ev({ type: 'response.function_call_arguments.delta', item_id: item.id, output_index, delta: item.arguments });
      ev({ type: 'response.function_call_arguments.done', item_id: item.id, output_index, arguments: item.arguments });
    } else {
      ev({ type: 'response.output_item.added', output_index, item: { ...item, status: 'in_progress', input: '' } });
      ev({ type: 'response.custom_tool_call_input.delta', item_id: item.id, output_index, delta: item.input });
      ev({ type: 'response.custom_tool_call_input.done', item_id: item.id, output_index, input: item.input });
    }
    ev({ type: 'response.output_item.done', output_index, item });
  });
  ev({ type: 'response.completed', response: done });
  return events;
}

/** OpenAI error `type` for an HTTP status. */
export function openaiErrorType(status: number): string {
  const known: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'invalid_request_error',
    429: 'rate_limit_exceeded',
  };
  return known[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

/**
 * An error answer (module doc): status < 500 except 429 → that HTTP status with
 * `{error: {message, type, code, param}}`; status ≥ 500 or 429 → HTTP 200 and an SSE stream
 * `response.created` + `response.failed` whose `response.error` is `{code, message}`
 * (code = `type`, `server_error` or `rate_limit_exceeded`; message = `<message> (HTTP <status>)`),
 * because codex shows neither a 5xx body nor a 429 body.
 * The scripted status stays in the server's log entry.
 */
export function renderResponsesError(status: number, message: string, type?: string): Rendered {
  const errType = type ?? openaiErrorType(status);
  if (status >= 500 || status === 429) {
    const id = `resp_error_${Date.now().toString(16)}`;
    const base = { id, object: 'response', created_at: 0, model: 'scripted-model', output: [], usage: null };
    return {
      status: 200,
      headers: { ...SSE_HEADERS, 'x-request-id': `req_${id}` },
      chunks: [
        sseEvent('response.created', { type: 'response.created', sequence_number: 0, response: { ...base, status: 'in_progress', error: null } }),
        sseEvent('response.failed', {
          type: 'response.failed',
          sequence_number: 1,
          response: { ...base, status: 'failed', error: { code: errType, message: `${message} (HTTP ${status})` } },
        }),
      ],
    };
  }
  return jsonResponse(status, { error: { message, type: errType, code: errType, param: null } });
}

/** No utility routes are claimed (codex with a custom provider calls only `/responses`). */
function utility(ctx: WireContext): Rendered {
  return jsonResponse(404, { error: { message: `[scripted-model] no route for ${ctx.method} ${ctx.pathname}`, type: 'not_found_error', code: null, param: null } });
}

export const openaiResponsesProtocol: ProtocolModule = {
  id: 'openai_responses',
  route(method, pathname) {
    if (method === 'POST' && pathname.endsWith('/responses')) return 'generate';
    return undefined;
  },
  utility,
  parse: parseResponsesRequest,
  toolTable: CODEX_TOOL_TABLE,
  render(reply, stream) {
    const headers = { 'x-request-id': `req_${reply.id}` };
    if (stream) return { status: 200, headers: { ...SSE_HEADERS, ...headers }, chunks: renderResponsesStream(reply) };
    return jsonResponse(200, responsesObject(reply), headers);
  },
  renderError: renderResponsesError,
};
