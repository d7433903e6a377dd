/**
 * The Gemini API (Google AI "Developer API", `v1beta`), as Gemini CLI 0.61.x uses it through
 * the `@google/genai` SDK. Sources: engines/gemini-cli/README.md, the captured requests in
 * engines/gemini-cli/samples/
 * (`request-2nd-call-trimmed.json`, `request-router-trimmed.json`), and requests captured from
 * the real `gemini` 0.61.0 binary against this server.
 *
 * Routes (matched on the path's end, so any base URL prefix works; the query string is not
 * needed: `alt=sse` is implied by `:streamGenerateContent`, and a `?key=` is read by log.ts):
 * - `POST …/models/<model>:streamGenerateContent?alt=sse`: a model call answered as SSE
 *   (`data: <GenerateContentResponse>\n\n` events, no `event:` lines; the `@google/genai` SDK
 *   always asks for `alt=sse`, and its parser accepts `\n\n`, `\r\r` or `\r\n\r\n`).
 * - `POST …/models/<model>:generateContent`: a model call answered with one JSON
 *   GenerateContentResponse (Gemini CLI uses it for its router, classifiers and the
 *   session-title summary).
 * - `POST …/models/<model>:countTokens`: `{totalTokens}` (≈ body chars / 4).
 * - `GET …/v1beta/models[/<model>]`: a one-model list / the model.
 *
 * Request body: `{contents:[{role:"user"|"model", parts:[{text, thought?}|{functionCall:{id?,
 * name, args}}|{functionResponse:{id?, name, response:{output}|{error}}}|…]}], systemInstruction:
 * {parts:[{text}]}, tools:[{functionDeclarations:[{name, description, parametersJsonSchema}]}],
 * generationConfig:{…, responseMimeType?, responseJsonSchema?|responseSchema?}}`. Tool schemas
 * come as `parametersJsonSchema` (Gemini CLI) or `parameters` (OpenAPI-style, upper-case types).
 *
 * Quirks handled:
 * - Gemini CLI merges a `<session_context>` text (date, OS, workspace directories, a file tree)
 *   into the first user content beside the prompt: it is marked `meta`. It has no
 *   "I'm currently working in the directory:" line; the workspace is the first entry under
 *   `**Workspace Directories:**`, which `parse` restates as that line in `system` so the
 *   protocol-neutral cwd finder (conversation.ts) sees it.
 * - Function calls usually have no `id` on the wire (the real API sends none; Gemini CLI makes
 *   one up and sends it back in the history): calls and responses without ids are paired by
 *   name in order.
 * - A `functionResponse.response.error` is a failed tool call (`isError`).
 * - `thought: true` parts are ignored.
 * - **Structured-output requests** (`generationConfig.responseMimeType: "application/json"`
 *   or a response schema: Gemini CLI's model router, next-speaker and loop checks) are still
 *   matched against the script (so error and delay rules apply to them too), but are
 *   answered with JSON built from the requested schema (`jsonFromSchema`), so the CLI
 *   proceeds. The schema rides from `parse` to `render` inside `ModelRequest.model` (which
 *   the planner echoes as `ModelReply.model`), behind `JSON_SCHEMA_MARK`; `render` strips it.
 *   The exchange log's `reply` therefore shows the script's step, not the JSON sent.
 *
 * Responses: `{candidates:[{content:{role:"model", parts:[{text}…, {functionCall:{name,
 * args}}]}, finishReason:"STOP", index:0}], usageMetadata:{promptTokenCount,
 * candidatesTokenCount, totalTokenCount}, modelVersion, responseId}` (tokens ≈ chars / 4, see
 * plan.ts). Streamed replies send the text (if any) and the function call as two events, the
 * usage on the last only. Function calls carry no id, as with the real API. Errors:
 * `{"error":{"code":<status>,"message":…,"status":"INTERNAL"|…}}` with the HTTP status.
 */
import type { EngineName, ModelReply, ModelRequest, NeutralMessage, NeutralPart, ToolSpec } from '../types.js';
import { estimateTokens } from '../plan.js';
import { readInput, shellInput, skillInput, writeInput, type ToolTable } from '../tools.js';
import { flatToolName, jsonResponse, ProtocolError, SSE_HEADERS, type ProtocolModule, type Rendered, type WireContext } from './protocol.js';
import { engineOfRequest } from './engines.js';

/**
 * Gemini CLI's tools (`activate_skill {name}`, `write_file {file_path, content}`,
 * `run_shell_command {command, description}`, `read_file {file_path}`;
 * engines/gemini-cli/README.md), then common names of other agents for custom clients of this API.
 */
export const GEMINI_TOOL_TABLE: ToolTable = {
  use_skill: [
    { name: 'activate_skill', build: skillInput },
    { name: 'skill', build: skillInput },
    { name: 'Skill', build: skillInput },
  ],
  write_file: [
    { name: 'write_file', build: writeInput },
    { name: 'Write', build: writeInput },
    { name: 'write', build: writeInput },
    { name: 'create_file', build: writeInput },
  ],
  run: [
    { name: 'run_shell_command', build: shellInput },
    { name: 'Bash', build: shellInput },
    { name: 'shell', build: shellInput },
  ],
  read_file: [
    { name: 'read_file', build: readInput },
    { name: 'Read', build: readInput },
  ],
};

/** Separates the model name from the encoded response schema in `ModelRequest.model`. */
export const JSON_SCHEMA_MARK = '\u0000json-schema:';

/** Google RPC status name for an HTTP status (google.rpc.Code mapping). */
export function geminiErrorStatus(status: number): string {
  const known: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    409: 'ABORTED',
    413: 'INVALID_ARGUMENT',
    429: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    500: 'INTERNAL',
    501: 'NOT_IMPLEMENTED',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  };
  return known[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

const GENERATE = /\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;
const COUNT_TOKENS = /\/models\/([^/:]+):countTokens$/;
const MODELS = /\/v1(?:alpha|beta)\d*\/models(?:\/([^/:]+))?$/;
const SESSION_CONTEXT = '<session_context>';
const WORKSPACE_DIRS = /\*\*Workspace Directories:\*\*\s*\n\s*-\s*([^\n]+)/;

/** Model name from a generate/countTokens path (URL-decoded), or undefined. */
export function modelFromPath(pathname: string): string | undefined {
  const m = GENERATE.exec(pathname) ?? COUNT_TOKENS.exec(pathname);
  return m ? decodeURIComponent(m[1]!) : undefined;
}

/** Text of a `Content` (`{parts:[{text}]}`), a bare string, or a list of either. */
function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(contentText).filter(Boolean).join('\n');
  if (!isObj(c)) return '';
  if (typeof c.text === 'string') return c.text;
  return Array.isArray(c.parts) ? c.parts.map((p) => (isObj(p) && typeof p.text === 'string' && p.thought !== true ? p.text : '')).filter(Boolean).join('\n') : '';
}

/** Text of a functionResponse's `response`: `output` when a string, `error` for failures, else JSON. */
function responseText(response: unknown): { output: string; isError: boolean } {
  if (!isObj(response)) return { output: typeof response === 'string' ? response : JSON.stringify(response ?? ''), isError: false };
  if (response.error !== undefined) {
    const e = response.error;
    return { output: typeof e === 'string' ? e : isObj(e) && typeof e.message === 'string' ? e.message : JSON.stringify(e), isError: true };
  }
  if (typeof response.output === 'string') return { output: response.output, isError: false };
  if (typeof response.content === 'string') return { output: response.content, isError: false };
  return { output: JSON.stringify(response), isError: false };
}

/**
 * Converts `contents` into neutral messages, pairing function calls with responses: by `id`
 * when both carry one, else by name in order of appearance (synthetic ids `gemini-call-<n>`).
 */
function toMessages(contents: unknown[]): NeutralMessage[] {
  const messages: NeutralMessage[] = [];
  /** Calls still waiting for a response: synthetic id and name. */
  const open: { id: string; wireId?: string; name: string }[] = [];
  let n = 0;
  for (const c of contents) {
    if (!isObj(c)) continue;
    const role: NeutralMessage['role'] = c.role === 'model' ? 'assistant' : c.role === 'system' ? 'system' : 'user';
    const parts: NeutralPart[] = [];
    for (const p of Array.isArray(c.parts) ? c.parts : []) {
      if (!isObj(p)) continue;
      if (typeof p.text === 'string') {
        if (p.thought === true) continue;
        const meta = role === 'user' && p.text.trimStart().startsWith(SESSION_CONTEXT);
        parts.push({ type: 'text', text: p.text, ...(meta ? { meta: true } : {}) });
      } else if (isObj(p.functionCall)) {
        const fc = p.functionCall;
        const name = typeof fc.name === 'string' ? fc.name : '';
        const wireId = typeof fc.id === 'string' && fc.id ? fc.id : undefined;
        const id = wireId ?? `gemini-call-${++n}`;
        open.push({ id, wireId, name });
        parts.push({ type: 'tool_call', id, name, input: isObj(fc.args) ? fc.args : {} });
      } else if (isObj(p.functionResponse)) {
        const fr = p.functionResponse;
        const name = typeof fr.name === 'string' ? fr.name : '';
        const wireId = typeof fr.id === 'string' && fr.id ? fr.id : undefined;
        let k = wireId ? open.findIndex((o) => o.wireId === wireId) : -1;
        if (k < 0) k = open.findIndex((o) => o.name === name && (!wireId || !o.wireId));
        if (k < 0) k = open.findIndex((o) => o.name === name);
        const id = k >= 0 ? open.splice(k, 1)[0]!.id : (wireId ?? `gemini-response-${++n}`);
        const { output, isError } = responseText(fr.response);
        parts.push({ type: 'tool_result', id, output, isError });
      }
    }
    messages.push({ role, parts });
  }
  return messages;
}

/** Tools of `tools[].functionDeclarations[]`, schema from `parametersJsonSchema` or `parameters`. */
function toTools(tools: unknown): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const t of Array.isArray(tools) ? tools : []) {
    if (!isObj(t) || !Array.isArray(t.functionDeclarations)) continue;
    for (const f of t.functionDeclarations) {
      if (!isObj(f) || typeof f.name !== 'string') continue;
      const schema = isObj(f.parametersJsonSchema) ? f.parametersJsonSchema : isObj(f.parameters) ? f.parameters : undefined;
      out.push(schema ? { name: f.name, schema: schema } : { name: f.name });
    }
  }
  return out;
}

/** The response schema a structured-output request asks for: the schema, `{}` for JSON without one, or undefined. */
export function requestedJsonSchema(generationConfig: unknown): unknown {
  if (!isObj(generationConfig)) return undefined;
  const schema = generationConfig.responseJsonSchema ?? generationConfig.responseSchema;
  if (schema !== undefined) return schema;
  return generationConfig.responseMimeType === 'application/json' ? {} : undefined;
}

/**
 * Parses a generateContent / streamGenerateContent body.
 * `engine`: engines.ts `engineOfRequest` (`gemini_cli`, the only engine of this API skill-up
 * drives, unless the job or a registered engine's marks say otherwise).
 * @throws ProtocolError when `contents` is missing or not a list.
 */
export function parseGeminiRequest(body: unknown, ctx: WireContext): ModelRequest {
  if (!isObj(body)) throw new ProtocolError('request body must be a JSON object');
  if (!Array.isArray(body.contents)) throw new ProtocolError('contents: field required (a list of Content)');
  const messages = toMessages(body.contents);
  const system: string[] = [];
  const sys = contentText(body.systemInstruction);
  if (sys) system.push(sys);
  for (const m of messages) {
    for (const p of m.parts) {
      const dir = p.type === 'text' && p.meta ? WORKSPACE_DIRS.exec(p.text)?.[1]?.trim() : undefined;
      if (dir && !system.some((s) => s.startsWith("I'm currently working in the directory:"))) {
        system.push(`I'm currently working in the directory: ${dir}`);
      }
    }
  }
  let model = modelFromPath(ctx.pathname) ?? (typeof body.model === 'string' ? body.model.replace(/^models\//, '') : 'scripted-model');
  const schema = requestedJsonSchema(body.generationConfig);
  if (schema !== undefined) model += JSON_SCHEMA_MARK + Buffer.from(JSON.stringify(schema), 'utf8').toString('base64url');
  const engine: EngineName = engineOfRequest('gemini', ctx, system, messages);
  return {
    protocol: 'gemini',
    engine,
    model,
    stream: /:streamGenerateContent$/.test(ctx.pathname),
    system,
    messages,
    tools: toTools(body.tools),
    rawChars: ctx.rawChars,
  };
}

/** Splits `ModelReply.model` into the model name and the requested JSON schema, if any. */
export function splitModel(model: string): { model: string; schema?: unknown } {
  const at = model.indexOf(JSON_SCHEMA_MARK);
  if (at < 0) return { model };
  const name = model.slice(0, at);
  try {
    return { model: name, schema: JSON.parse(Buffer.from(model.slice(at + JSON_SCHEMA_MARK.length), 'base64url').toString('utf8')) as unknown };
  } catch {
    return { model: name, schema: {} };
  }
}

/**
 * A value valid against `schema` (JSON Schema, or Gemini's OpenAPI-style Schema with
 * upper-case `type`s): `const`, else the first `enum` value, else `default`; objects get every
 * declared property; arrays get `minItems` items; strings `"scripted"` (padded to
 * `minLength`); numbers `minimum` (or `exclusiveMinimum + 1`, else 1, capped at `maximum`:
 * Gemini CLI's router rejects a complexity score of 0); booleans `false`; `anyOf`/`oneOf`
 * take the first branch. Depth is capped at 8 (deeper values are `null`).
 */
export function jsonFromSchema(schema: unknown, depth = 0): unknown {
  if (!isObj(schema) || depth > 8) return depth > 8 ? null : 'scripted';
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
  for (const k of ['anyOf', 'oneOf'] as const) {
    const alts = schema[k];
    if (Array.isArray(alts) && alts.length > 0) return jsonFromSchema(alts.find((a) => !(isObj(a) && String(a.type).toLowerCase() === 'null')) ?? alts[0], depth + 1);
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const parts = schema.allOf.map((s) => jsonFromSchema(s, depth + 1));
    return parts.every(isObj) ? Object.assign({}, ...parts) : parts[0];
  }
  const rawType = Array.isArray(schema.type) ? (schema.type.find((t) => String(t).toLowerCase() !== 'null') ?? schema.type[0]) : schema.type;
  const type = typeof rawType === 'string' ? rawType.toLowerCase() : isObj(schema.properties) ? 'object' : isObj(schema.items) ? 'array' : undefined;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [k, v] of Object.entries(isObj(schema.properties) ? schema.properties : {})) out[k] = jsonFromSchema(v, depth + 1);
      return out;
    }
    case 'array': {
      const n = typeof schema.minItems === 'number' ? schema.minItems : Number(schema.minItems ?? 0) || 0;
      return Array.from({ length: Math.min(n, 100) }, () => jsonFromSchema(schema.items, depth + 1));
    }
    case 'integer':
    case 'number': {
      const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
      const min = num(schema.minimum);
      const exMin = num(schema.exclusiveMinimum);
      const max = num(schema.maximum);
      let v = min ?? (exMin !== undefined ? exMin + 1 : 1);
      if (max !== undefined && v > max) v = max;
      return type === 'integer' ? Math.ceil(v) : v;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    default: {
      const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
      return 'scripted'.padEnd(minLength, '.');
    }
  }
}

/** The `parts` of a reply's model content. */
function wireParts(reply: ModelReply): Json[] {
  const { schema } = splitModel(reply.model);
  if (schema !== undefined) return [{ text: JSON.stringify(jsonFromSchema(schema)) }];
  return reply.blocks.map((b) => (b.type === 'text' ? { text: b.text } : { functionCall: { name: flatToolName(b), args: b.input } }));
}

function usageMetadata(reply: ModelReply): Json {
  const { inputTokens, outputTokens } = reply.usage;
  return { promptTokenCount: inputTokens, candidatesTokenCount: outputTokens, totalTokenCount: inputTokens + outputTokens };
}

function response(reply: ModelReply, parts: Json[], last: boolean): Json {
  const candidate: Json = { content: { role: 'model', parts }, index: 0 };
  if (last) candidate.finishReason = 'STOP';
  const out: Json = { candidates: [candidate] };
  if (last) out.usageMetadata = usageMetadata(reply);
  out.modelVersion = splitModel(reply.model).model;
  out.responseId = reply.id;
  return out;
}

/**
 * The GenerateContentResponse chunks of a streamed reply: one per text run and one per
 * function call; the last carries `finishReason: "STOP"` and `usageMetadata`.
 */
export function geminiStreamResponses(reply: ModelReply): Json[] {
  const parts = wireParts(reply);
  if (parts.length === 0) parts.push({ text: '' });
  return parts.map((p, i) => response(reply, [p], i === parts.length - 1));
}

/** The one GenerateContentResponse of a non-streamed reply. */
export function geminiResponse(reply: ModelReply): Json {
  const parts = wireParts(reply);
  return response(reply, parts.length ? parts : [{ text: '' }], true);
}

/** The SSE events (`data: <json>\n\n`) of a streamed reply. */
export function renderGeminiStream(reply: ModelReply): string[] {
  return geminiStreamResponses(reply).map((r) => `data: ${JSON.stringify(r)}\n\n`);
}

function utility(ctx: WireContext, body: unknown): Rendered {
  if (COUNT_TOKENS.test(ctx.pathname)) return jsonResponse(200, { totalTokens: estimateTokens(ctx.rawChars) });
  const id = MODELS.exec(ctx.pathname)?.[1];
  const model = (m: string) => ({
    name: `models/${m}`,
    displayName: `Scripted (${m})`,
    inputTokenLimit: 1_048_576,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
  });
  void body;
  if (id) return jsonResponse(200, model(decodeURIComponent(id)));
  return jsonResponse(200, { models: [model('gemini-scripted')] });
}

export const geminiProtocol: ProtocolModule = {
  id: 'gemini',
  route(method, pathname) {
    if (method === 'POST' && GENERATE.test(pathname)) return 'generate';
    if (method === 'POST' && COUNT_TOKENS.test(pathname)) return 'utility';
    if (method === 'GET' && MODELS.test(pathname)) return 'utility';
    return undefined;
  },
  utility,
  parse: parseGeminiRequest,
  toolTable: GEMINI_TOOL_TABLE,
  render(reply, stream) {
    // `stream` is true for :streamGenerateContent; the SDK asks for SSE with `alt=sse`
    // (always, in @google/genai), so SSE is what streaming callers get.
    if (stream) return { status: 200, headers: { ...SSE_HEADERS }, chunks: renderGeminiStream(reply) };
    return jsonResponse(200, geminiResponse(reply));
  },
  renderError(status, message, type) {
    return jsonResponse(status, { error: { code: status, message, status: type ?? geminiErrorStatus(status) } });
  },
};
