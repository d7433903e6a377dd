/**
 * The OpenAI Chat Completions protocol module (src/model/protocols/openai-chat.ts): request
 * parsing over requests captured from OpenCode 1.18.33 and Qwen Code 0.24.4
 * (fixtures/opencode/, fixtures/qwen-code/: the trimmed samples of engines/<name>/samples/ and full
 * requests captured by skill-up's own server), planning with the Chat tool table for both
 * engines, response rendering (SSE and JSON), errors, and the routes over real HTTP.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { viewConversation } from '../../src/model/conversation.js';
import { planResponse } from '../../src/model/plan.js';
import {
  detectChatEngine,
  looksLikeToolError,
  NO_RETRY_HEADERS,
  OPENAI_CHAT_TOOL_TABLE,
  openAIChatCompletion,
  openaiChatProtocol,
  openaiErrorType,
  parseOpenAIChatRequest,
  renderOpenAIChatStream,
  unquoteOpencodePrompt,
} from '../../src/model/protocols/openai-chat.js';
import type { WireContext } from '../../src/model/protocols/protocol.js';
import { PROTOCOLS, startModelServer, type ModelServer } from '../../src/model/server.js';
import type { ModelReply, ModelRequest } from '../../src/model/types.js';
import { FIXTURES, script } from './helpers.js';

interface Captured {
  url?: string;
  headers?: Record<string, string>;
  body: Record<string, unknown> & { messages: Array<Record<string, unknown>> };
}

function load(dir: string, name: string): Captured {
  const raw = JSON.parse(readFileSync(join(FIXTURES, dir, name), 'utf8')) as Record<string, unknown>;
  // The trimmed samples are bare bodies; captures from skill-up's server are {url, headers, body}.
  return ('body' in raw ? raw : { body: raw }) as unknown as Captured;
}

function wire(headers: Record<string, string> = {}, rawChars = 1000): WireContext {
  return { method: 'POST', pathname: '/v1/chat/completions', query: new URLSearchParams(), headers, rawChars };
}

function parseCaptured(c: Captured): ModelRequest {
  return parseOpenAIChatRequest(c.body, wire(c.headers ?? {}, JSON.stringify(c.body).length));
}

const OPENCODE_UA = { 'user-agent': 'opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14' };
const QWEN_UA = { 'user-agent': 'QwenCode/0.24.4 (linux; x64)' };

const SCRIPT = script(`
rules:
  - name: boom
    when: { prompt_contains: explode }
    error: { status: 500, message: "scripted overload" }
  - name: load
    when: { skill_listed: hello, skill_loaded: false, prompt_contains: skill }
    reply: [ { use_skill: hello } ]
  - name: after-skill
    when: { skill_loaded: hello }
    reply:
      - { say: "Loaded; writing." }
      - { write_file: { path: greeting.txt, content: "Hello!\\n" } }
      - { say: "Greeted in {{cwd}}" }
  - name: create
    when: { prompt_contains: create }
    reply:
      - { write_file: { path: hello.txt, content: "hi\\n" } }
      - { say: "Wrote hello.txt" }
  - name: shell
    when: { prompt_contains: shell }
    reply: [ { run: "echo hi" }, { say: "ran" } ]
  - name: read
    when: { prompt_contains: read }
    reply: [ { read_file: notes.md }, { say: "read" } ]
  - name: second
    when: { turn: 2 }
    reply: [ { say: "turn {{turn}}" } ]
  - reply: [ { say: "plain: {{prompt}}" } ]
`);

describe('parsing captured OpenCode requests', () => {
  it('the trimmed sample: engine from the shape, quotes removed, tool calls and results, tools with schemas', () => {
    const c = load('opencode', 'request-2nd-call-trimmed.json');
    const req = parseCaptured(c); // no headers in the sample: the system prompt tells the engine
    expect(req.protocol).toBe('openai_chat');
    expect(req.engine).toBe('opencode');
    expect(req.stream).toBe(true);
    expect(req.model).toBe('fake-model');
    expect(req.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(req.messages[1]!.parts).toEqual([{ type: 'text', text: 'Please create the file. FAKE_WRITE hello.txt' }]);
    expect(req.messages[2]!.parts[0]).toMatchObject({ type: 'tool_call', id: 'call_fake_2', name: 'write' });
    expect(req.messages[3]!.parts).toEqual([{ type: 'tool_result', id: 'call_fake_2', output: 'Wrote file successfully.', isError: false }]);
    expect(req.tools.map((t) => t.name)).toEqual(['bash', 'edit', 'glob', 'grep', 'read', 'skill', 'task', 'todowrite', 'webfetch', 'write']);
    expect(req.tools.find((t) => t.name === 'write')!.schema!.required).toEqual(['content', 'filePath']);
    const conv = viewConversation(req);
    expect(conv.turn).toBe(1);
    expect(conv.prompt).toBe('Please create the file. FAKE_WRITE hello.txt');
    expect(conv.replyStarts).toEqual([2]);
  });

  it('a full request after a skill call: listing, cwd, session id, the skill counted as loaded', () => {
    const req = parseCaptured(load('opencode', 'request-after-skill.full.json'));
    expect(req.engine).toBe('opencode');
    expect(req.sessionId).toMatch(/^ses_/);
    const conv = viewConversation(req);
    expect(conv.skillsListed).toEqual(['customize-opencode', 'hello']);
    expect(conv.skillsLoaded).toEqual(['hello']);
    expect(conv.cwd).toMatch(/^\/.*\/ws$/);
    expect(conv.prompt).toBe('use the skill please');
  });

  it('a resumed second turn is turn 2 with the first turn replayed', () => {
    const req = parseCaptured(load('opencode', 'request-resume-turn2.full.json'));
    const conv = viewConversation(req);
    expect(conv.turn).toBe(2);
    expect(conv.replyStarts).toEqual([]);
    expect(conv.skillsLoaded).toEqual([]); // loaded in turn 1, not since the current prompt
  });

  it('maps every abstract action onto OpenCode tools with its argument names', () => {
    const base = parseCaptured(load('opencode', 'request-2nd-call-trimmed.json'));
    const system = 'You are opencode.\n<env>\n  Working directory: /w\n</env>\n<available_skills><skill><name>hello</name><description>d</description><location>/w/.opencode/skills/hello/SKILL.md</location></skill></available_skills>';
    const tools = [
      ...base.tools.filter((t) => t.name !== 'bash' && t.name !== 'read'),
      { name: 'bash', schema: { type: 'object', properties: { command: {}, timeout: {}, workdir: {}, description: {} }, required: ['command', 'description'] } },
      { name: 'read', schema: { type: 'object', properties: { filePath: {}, offset: {}, limit: {} }, required: ['filePath'] } },
    ];
    const ask = (prompt: string) =>
      planResponse(SCRIPT, { ...base, tools, messages: [{ role: 'system', parts: [{ type: 'text', text: system }] }, { role: 'user', parts: [{ type: 'text', text: prompt }] }] }, OPENAI_CHAT_TOOL_TABLE).plan;
    const blocks = (prompt: string) => (ask(prompt) as Extract<ReturnType<typeof ask>, { kind: 'reply' }>).reply.blocks;
    expect(blocks('use the skill')).toEqual([{ type: 'tool_call', id: expect.any(String), name: 'skill', input: { name: 'hello' } }]);
    expect(blocks('create it')).toEqual([{ type: 'tool_call', id: expect.any(String), name: 'write', input: { filePath: '/w/hello.txt', content: 'hi\n' } }]);
    expect(blocks('shell now')[0]).toMatchObject({ name: 'bash', input: { command: 'echo hi', description: expect.any(String) } });
    expect(blocks('read it')[0]).toMatchObject({ name: 'read', input: { filePath: '/w/notes.md' } });
  });

  it('OpenCode past its step limit: the injected assistant message is dropped and no tool is offered', () => {
    const c = load('opencode', 'request-2nd-call-trimmed.json');
    const body = structuredClone(c.body);
    body.messages.push({ role: 'assistant', content: 'CRITICAL - MAXIMUM STEPS REACHED\n\nTools are disabled until next user input.' });
    const req = parseOpenAIChatRequest(body, wire(OPENCODE_UA));
    expect(req.messages.at(-1)!.role).toBe('user');
    expect(req.tools).toEqual([]);
    const { plan } = planResponse(SCRIPT, req, OPENAI_CHAT_TOOL_TABLE);
    expect(plan.kind === 'reply' && plan.reply.stop).toBe('end_turn');
  });

  it('a title request (no tools) gets plain text', () => {
    const req = parseOpenAIChatRequest(
      {
        model: 'm',
        stream: true,
        messages: [
          { role: 'system', content: 'You are a title generator.' },
          { role: 'user', content: 'Generate a title for this conversation:\n' },
          { role: 'user', content: '"please create the file"' },
        ],
      },
      wire(OPENCODE_UA),
    );
    expect(req.tools).toEqual([]);
    const { plan } = planResponse(SCRIPT, req, OPENAI_CHAT_TOOL_TABLE);
    expect(plan.kind).toBe('reply');
    if (plan.kind === 'reply') {
      expect(plan.reply.stop).toBe('end_turn');
      expect(plan.reply.blocks.every((b) => b.type === 'text')).toBe(true);
    }
  });
});

describe('parsing captured Qwen Code requests', () => {
  it('the trimmed sample: content parts, reminders, absolute write_file path', () => {
    const req = parseCaptured(load('qwen-code', 'request-2nd-call-trimmed.json'));
    expect(req.engine).toBe('qwen_code');
    expect(req.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(req.messages[1]!.parts).toHaveLength(5);
    const conv = viewConversation(req);
    expect(conv.prompt).toBe('Please create the file. FAKE_WRITE hello.txt');
    expect(conv.turn).toBe(1);
    expect(conv.cwd).toBe('/tmp/lab/runs/qwen1/ws');
    expect(req.messages[3]!.parts[0]).toMatchObject({ type: 'tool_result', id: 'call_fake_1', isError: false });
    expect(req.tools.find((t) => t.name === 'skill')!.schema!.required).toEqual(['skill']);
  });

  it('a full resumed request after a skill call: turn 2, skill listed and loaded, user agent', () => {
    const c = load('qwen-code', 'request-after-skill-resumed.full.json');
    const req = parseCaptured(c);
    expect(req.engine).toBe('qwen_code');
    const conv = viewConversation(req);
    expect(conv.turn).toBe(2);
    expect(conv.prompt).toBe('use the skill please');
    expect(conv.skillsListed).toEqual(['hello']);
    expect(conv.skillsLoaded).toEqual(['hello']);
    expect(conv.replyStarts).toHaveLength(1);
  });

  it('maps every abstract action onto Qwen tools', () => {
    const base = parseCaptured(load('qwen-code', 'request-2nd-call-trimmed.json'));
    const first = { ...base, messages: base.messages.slice(0, 2) };
    const tools = [
      ...base.tools.filter((t) => !['run_shell_command', 'read_file'].includes(t.name)),
      { name: 'run_shell_command', schema: { type: 'object', properties: { command: {}, is_background: {}, description: {} }, required: ['command'] } },
      { name: 'read_file', schema: { type: 'object', properties: { absolute_path: {}, offset: {}, limit: {} }, required: ['absolute_path'] } },
    ];
    const ask = (prompt: string) => {
      const msgs = structuredClone(first.messages);
      msgs[1]!.parts[4] = { type: 'text', text: prompt };
      const { plan } = planResponse(SCRIPT, { ...first, tools, messages: msgs }, OPENAI_CHAT_TOOL_TABLE);
      return plan.kind === 'reply' ? plan.reply.blocks : [];
    };
    expect(ask('create it')[0]).toMatchObject({ name: 'write_file', input: { file_path: '/tmp/lab/runs/qwen1/ws/hello.txt', content: 'hi\n' } });
    expect(ask('shell now')[0]).toMatchObject({ name: 'run_shell_command', input: { command: 'echo hi', description: expect.any(String) } });
    expect(ask('read it')[0]).toMatchObject({ name: 'read_file', input: { absolute_path: '/tmp/lab/runs/qwen1/ws/notes.md' } });
  });
});

describe('request details', () => {
  it('engine detection: user agent first, then the request shape, else custom', () => {
    expect(detectChatEngine(OPENCODE_UA, { messages: [] })).toBe('opencode');
    expect(detectChatEngine(QWEN_UA, { messages: [] })).toBe('qwen_code');
    expect(detectChatEngine({}, { messages: [{ role: 'system', content: 'You are Qwen Code, a CLI agent' }] })).toBe('qwen_code');
    expect(detectChatEngine({ 'user-agent': 'OpenAI/JS 5.0' }, { messages: [{ role: 'user', content: 'hi' }] })).toBe('custom');
  });

  it('OpenCode quoting is undone only for OpenCode', () => {
    expect(unquoteOpencodePrompt('"say \\"hi\\""')).toBe('say "hi"');
    expect(unquoteOpencodePrompt('no quotes')).toBe('no quotes');
    const body = { model: 'm', messages: [{ role: 'user', content: '"quoted"' }] };
    expect(parseOpenAIChatRequest(body, wire(OPENCODE_UA)).messages[0]!.parts).toEqual([{ type: 'text', text: 'quoted' }]);
    expect(parseOpenAIChatRequest(body, wire(QWEN_UA)).messages[0]!.parts).toEqual([{ type: 'text', text: '"quoted"' }]);
  });

  it('tool errors by their text; consecutive tool messages merged; unparsable arguments kept', () => {
    expect(looksLikeToolError('Error: File path must be absolute: hello.txt')).toBe(true);
    expect(looksLikeToolError('<tool_use_error>nope</tool_use_error>')).toBe(true);
    expect(looksLikeToolError('Command: true\nError: (none)')).toBe(false);
    const req = parseOpenAIChatRequest(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'x', arguments: '{"k":1}' } }, { id: 'b', type: 'function', function: { name: 'y', arguments: '{oops' } }] },
          { role: 'tool', tool_call_id: 'a', content: 'ok' },
          { role: 'tool', tool_call_id: 'b', content: [{ type: 'text', text: 'Error: bad' }] },
        ],
      },
      wire(),
    );
    expect(req.engine).toBe('custom');
    expect(req.messages).toHaveLength(3);
    expect(req.messages[1]!.parts).toEqual([
      { type: 'tool_call', id: 'a', name: 'x', input: { k: 1 } },
      { type: 'tool_call', id: 'b', name: 'y', input: '{oops' },
    ]);
    expect(req.messages[2]!.parts).toEqual([
      { type: 'tool_result', id: 'a', output: 'ok', isError: false },
      { type: 'tool_result', id: 'b', output: 'Error: bad', isError: true },
    ]);
  });

  it('rejects bodies without messages', () => {
    expect(() => parseOpenAIChatRequest({ model: 'm' }, wire())).toThrow(/messages/);
    expect(() => parseOpenAIChatRequest('x', wire())).toThrow(/JSON object/);
  });
});

describe('rendering', () => {
  const toolReply: ModelReply = {
    id: 'abc',
    model: 'm',
    blocks: [
      { type: 'text', text: 'Writing.' },
      { type: 'tool_call', id: 't1', name: 'write_file', input: { file_path: '/abs/hello.txt', content: 'hi\n' } },
    ],
    stop: 'tool_use',
    usage: { inputTokens: 8, outputTokens: 11 },
  };

  it('streams the documented chunk sequence', () => {
    const text = renderOpenAIChatStream(toolReply, 1700000000).join('');
    const base = '"id":"chatcmpl-abc","object":"chat.completion.chunk","created":1700000000,"model":"m"';
    expect(text).toBe(
      [
        `data: {${base},"choices":[{"index":0,"delta":{"role":"assistant","content":"Writing."},"finish_reason":null}]}`,
        `data: {${base},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_t1","type":"function","function":{"name":"write_file","arguments":""}}]},"finish_reason":null}]}`,
        `data: {${base},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"file_path\\":\\"/abs/hello.txt\\",\\"content\\":\\"hi\\\\n\\"}"}}]},"finish_reason":null}]}`,
        `data: {${base},"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
        `data: {${base},"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":11,"total_tokens":19}}`,
        'data: [DONE]',
      ].join('\n\n') + '\n\n',
    );
  });

  it('a tool call without text streams content null; a text reply ends with stop', () => {
    const only = renderOpenAIChatStream({ ...toolReply, blocks: [toolReply.blocks[1]!] }, 1);
    expect(JSON.parse(only[0]!.slice(6)).choices[0].delta).toEqual({ role: 'assistant', content: null });
    const text = renderOpenAIChatStream({ ...toolReply, blocks: [{ type: 'text', text: 'done' }], stop: 'end_turn' }, 1);
    expect(text).toHaveLength(4);
    expect(JSON.parse(text[1]!.slice(6)).choices[0].finish_reason).toBe('stop');
  });

  it('a non-streamed completion', () => {
    expect(openAIChatCompletion(toolReply, 5)).toEqual({
      id: 'chatcmpl-abc',
      object: 'chat.completion',
      created: 5,
      model: 'm',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Writing.', tool_calls: [{ id: 'call_t1', type: 'function', function: { name: 'write_file', arguments: '{"file_path":"/abs/hello.txt","content":"hi\\n"}' } }] },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 8, completion_tokens: 11, total_tokens: 19 },
    });
  });

  it('errors in the OpenAI shape, with the no-retry headers', () => {
    const r = openaiChatProtocol.renderError(429, 'slow down');
    expect(r.status).toBe(429);
    expect(JSON.parse(r.chunks.join(''))).toEqual({ error: { message: 'slow down', type: 'rate_limit_error', param: null, code: null } });
    expect(r.headers).toMatchObject(NO_RETRY_HEADERS);
    expect(openaiErrorType(500)).toBe('server_error');
    expect(openaiErrorType(418)).toBe('invalid_request_error');
    expect(JSON.parse(openaiChatProtocol.renderError(400, 'x', 'custom_type').chunks.join('')).error.type).toBe('custom_type');
  });
});

describe('over HTTP', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const req = httpRequest(url + path, { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      if (data) req.write(data);
      req.end();
    });
  }

  const turn = (text: string, stream = true) => ({
    model: 'scripted-model',
    stream,
    stream_options: { include_usage: true },
    messages: [
      { role: 'system', content: 'You are opencode.\n<env>\n  Working directory: /work/dir\n</env>' },
      { role: 'user', content: `"${text}"` },
    ],
    tools: [{ type: 'function', function: { name: 'write', parameters: { type: 'object', properties: { filePath: {}, content: {} }, required: ['content', 'filePath'] } } }],
  });

  it('is registered first, so GET /v1/models with Authorization gets the OpenAI list', () => {
    expect(PROTOCOLS[0]).toBe(openaiChatProtocol);
  });

  it('streams, answers JSON, files the exchange under the job key, and lists models', async () => {
    const seen: Array<{ jobId?: string; sessionId?: string; engine?: string }> = [];
    server = await startModelServer({ script: SCRIPT, onRequest: (e) => seen.push({ jobId: e.jobId, sessionId: e.sessionId, engine: e.conversation?.engine }) });
    const headers = { authorization: 'Bearer skill-up-job:case-1/with_skill/run-1', 'x-session-id': 'ses_abc', ...OPENCODE_UA };
    const sse = await call(server.url, 'POST', '/v1/chat/completions', turn('please create it'), headers);
    expect(sse.status).toBe(200);
    expect(String(sse.headers['content-type'])).toMatch(/^text\/event-stream/);
    const events = sse.text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const args = JSON.parse(events[2]!.slice(6)).choices[0].delta.tool_calls[0].function.arguments as string;
    expect(JSON.parse(args)).toEqual({ filePath: '/work/dir/hello.txt', content: 'hi\n' });
    expect(seen[0]).toEqual({ jobId: 'case-1/with_skill/run-1', sessionId: 'ses_abc', engine: 'opencode' });

    const json = await call(server.url, 'POST', '/v1/chat/completions', turn('hello there', false), headers);
    expect(JSON.parse(json.text).choices[0]).toMatchObject({ message: { role: 'assistant', content: 'plain: hello there' }, finish_reason: 'stop' });

    const models = await call(server.url, 'GET', '/v1/models', undefined, { authorization: 'Bearer x' });
    expect(JSON.parse(models.text)).toEqual({ object: 'list', data: [{ id: 'scripted-model', object: 'model', created: expect.any(Number), owned_by: 'skill-up' }] });
    const one = await call(server.url, 'GET', '/v1/models/foo', undefined, { authorization: 'Bearer x' });
    expect(JSON.parse(one.text)).toMatchObject({ id: 'foo', object: 'model' });
    // Anthropic clients (no Authorization, or anthropic-version) still get Anthropic's shape.
    const anth = await call(server.url, 'GET', '/v1/models', undefined, { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' });
    expect(JSON.parse(anth.text).data[0]).toMatchObject({ type: 'model' });
  });

  it('an error rule is an OpenAI error with the no-retry headers; a bad body is a 400', async () => {
    server = await startModelServer({ script: SCRIPT });
    const res = await call(server.url, 'POST', '/v1/chat/completions', turn('explode now'), QWEN_UA);
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ error: { message: 'scripted overload', type: 'server_error', param: null, code: null } });
    expect(res.headers['x-should-retry']).toBe('false');
    expect(res.headers['retry-after-ms']).toBe('0');
    const bad = await call(server.url, 'POST', '/v1/chat/completions', { model: 'm' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.message).toMatch(/messages/);
  });
});
