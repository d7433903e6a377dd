/**
 * The Gemini API protocol module (src/model/protocols/gemini.ts): request parsing over the
 * captured Gemini CLI requests (fixtures/gemini-cli/: the two trimmed samples from
 * engines/gemini-cli/samples/ and one full request captured from gemini 0.61.0 after an
 * `activate_skill` call), planning with the Gemini tool table, the JSON-from-schema answers
 * for structured-output (router) calls, response rendering, and the routes over real HTTP.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { viewConversation } from '../../src/model/conversation.js';
import { planResponse } from '../../src/model/plan.js';
import {
  GEMINI_TOOL_TABLE,
  geminiErrorStatus,
  geminiProtocol,
  geminiResponse,
  geminiStreamResponses,
  jsonFromSchema,
  modelFromPath,
  parseGeminiRequest,
  renderGeminiStream,
  requestedJsonSchema,
  splitModel,
} from '../../src/model/protocols/gemini.js';
import type { WireContext } from '../../src/model/protocols/protocol.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import type { ModelReply, ModelRequest } from '../../src/model/types.js';
import { FIXTURES, script } from './helpers.js';

interface Captured {
  url: string;
  headers?: Record<string, string>;
  body: Record<string, unknown> & { contents: unknown[] };
}

function loadGemini(name: string): Captured {
  return JSON.parse(readFileSync(join(FIXTURES, 'gemini-cli', name), 'utf8')) as Captured;
}

function wireFor(url: string, rawChars = 1000): WireContext {
  const u = new URL(url, 'http://127.0.0.1');
  return { method: 'POST', pathname: u.pathname, query: u.searchParams, headers: {}, rawChars };
}

function parseCaptured(c: Captured): ModelRequest {
  return parseGeminiRequest(c.body, wireFor(c.url, JSON.stringify(c.body).length));
}

const SCRIPT = script(`
rules:
  - name: boom
    when: { prompt_contains: explode }
    error: { status: 500, message: "scripted overload" }
  - name: quota
    when: { prompt_contains: quota }
    error: { status: 429, message: "scripted quota", type: RESOURCE_EXHAUSTED }
  - name: load
    when: { skill_listed: hello, skill_loaded: false }
    reply: [ { use_skill: hello } ]
  - name: greet
    when: { skill_loaded: hello }
    reply:
      - { write_file: { path: greeting.txt, content: "Hello, World!\\n" } }
      - { say: "Greeted." }
  - name: write
    when: { prompt_contains: FAKE_WRITE }
    reply:
      - { say: "I will write it." }
      - { write_file: { path: hello.txt, content: "hi\\n" } }
      - { say: "Wrote hello.txt in {{cwd}}" }
  - name: shell
    when: { prompt_contains: shell }
    reply:
      - { run: "echo hi" }
      - { read_file: notes.md }
      - { say: "done" }
  - reply: [ { say: "plain answer" } ]
`);

describe('gemini protocol: parsing captured Gemini CLI requests', () => {
  it('the 2nd call of a write run: session_context is meta, the prompt is turn 1, the call is paired with its response', () => {
    const req = parseCaptured(loadGemini('request-2nd-call-trimmed.json'));
    expect(req).toMatchObject({ protocol: 'gemini', engine: 'gemini_cli', model: 'gemini-2.5-flash', stream: true });
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(req.messages[0]!.parts[0]).toMatchObject({ type: 'text', meta: true });
    expect(req.messages[1]!.parts).toEqual([
      { type: 'tool_call', id: 'write_file_1795975503382_0', name: 'write_file', input: { file_path: 'hello.txt', content: 'hello from fake model\n' } },
    ]);
    expect(req.messages[2]!.parts[0]).toMatchObject({ type: 'tool_result', id: 'write_file_1795975503382_0', isError: false });
    expect(req.tools.find((t) => t.name === 'write_file')?.schema?.required).toEqual(['file_path', 'content']);
    expect(req.tools.find((t) => t.name === 'update_topic')).toEqual({ name: 'update_topic' });
    const conv = viewConversation(req);
    expect(conv).toMatchObject({ turn: 1, prompt: 'Please create the file. FAKE_WRITE hello.txt', cwd: '/tmp/lab/runs/gm1/ws', replyStarts: [1] });
    expect(conv.lastToolResult?.output).toMatch(/^Successfully created and wrote to new file/);
  });

  it('the full request after activate_skill: listing, loaded skill, cwd, all 15 tools', () => {
    const c = loadGemini('request-after-activate-skill.json');
    const req = parseCaptured(c);
    expect(req.model).toBe('fake-model');
    const conv = viewConversation(req);
    expect(conv.skillsListed).toEqual(['hello']);
    expect(conv.skillsLoaded).toEqual(['hello']);
    expect(conv.prompt).toBe('Please greet me');
    expect(conv.cwd).toBe('/tmp/gx/exp/runs/s1/ws');
    expect(conv.toolsOffered).toHaveLength(15);
    expect(conv.toolsOffered).toEqual(expect.arrayContaining(['activate_skill', 'write_file', 'run_shell_command', 'read_file']));
    // The script continues with the next rule's first step: write_file with an absolute path.
    const { plan } = planResponse(SCRIPT, req, GEMINI_TOOL_TABLE);
    expect(plan.kind).toBe('reply');
    if (plan.kind !== 'reply') return;
    expect(plan.trace).toMatchObject({ ruleName: 'greet', step: 0 });
    expect(plan.reply.blocks).toEqual([
      { type: 'tool_call', id: expect.any(String), name: 'write_file', input: { file_path: '/tmp/gx/exp/runs/s1/ws/greeting.txt', content: 'Hello, World!\n' } },
    ]);
  });

  it('the router call: two user contents, the first meta; its response schema rides in the model name', () => {
    const c = loadGemini('request-router-trimmed.json');
    const req = parseCaptured(c);
    expect(req.stream).toBe(false);
    expect(req.tools).toEqual([]);
    const { model, schema } = splitModel(req.model);
    expect(model).toBe('gemini-3.5-flash-lite');
    expect(schema).toEqual((c.body.generationConfig as { responseJsonSchema: unknown }).responseJsonSchema);
    const conv = viewConversation(req);
    expect(conv).toMatchObject({ turn: 1, prompt: 'Write again FAKE_WRITE hello2.txt' });
  });

  it('pairs id-less calls and responses by name, in order; response.error is a failed call', () => {
    const req = parseGeminiRequest(
      {
        contents: [
          { role: 'user', parts: [{ text: 'run it' }] },
          { role: 'model', parts: [{ text: 'thinking…', thought: true }, { functionCall: { name: 'run_shell_command', args: { command: 'a' } } }, { functionCall: { name: 'run_shell_command', args: { command: 'b' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'run_shell_command', response: { output: 'A' } } }, { functionResponse: { name: 'run_shell_command', response: { error: 'B failed' } } }] },
        ],
      },
      wireFor('/v1beta/models/m:streamGenerateContent?alt=sse'),
    );
    const [call1, call2] = req.messages[1]!.parts;
    expect(req.messages[1]!.parts).toHaveLength(2); // the thought part is dropped
    const [res1, res2] = req.messages[2]!.parts;
    expect(res1).toEqual({ type: 'tool_result', id: (call1 as { id: string }).id, output: 'A', isError: false });
    expect(res2).toEqual({ type: 'tool_result', id: (call2 as { id: string }).id, output: 'B failed', isError: true });
    expect((call1 as { id: string }).id).not.toBe((call2 as { id: string }).id);
  });

  it('accepts OpenAPI-style `parameters` schemas and rejects a body without contents', () => {
    const req = parseGeminiRequest(
      { contents: [], tools: [{ functionDeclarations: [{ name: 'write_file', parameters: { type: 'OBJECT', properties: { path: { type: 'STRING' } } } }] }] },
      wireFor('/v1beta/models/m:generateContent'),
    );
    expect(req.tools[0]!.schema?.properties).toEqual({ path: { type: 'STRING' } });
    expect(() => parseGeminiRequest({ model: 'x' }, wireFor('/v1beta/models/m:generateContent'))).toThrow(/contents/);
    expect(() => parseGeminiRequest('nope', wireFor('/v1beta/models/m:generateContent'))).toThrow(/JSON object/);
  });

  it('model names come from the path, URL-decoded', () => {
    expect(modelFromPath('/v1beta/models/gemini-2.5-flash:streamGenerateContent')).toBe('gemini-2.5-flash');
    expect(modelFromPath('/proxy/v1beta/models/a%2Fb:generateContent')).toBe('a/b');
    expect(modelFromPath('/v1beta/models/m:countTokens')).toBe('m');
    expect(modelFromPath('/v1/messages')).toBeUndefined();
  });
});

describe('gemini protocol: tool mapping', () => {
  const tools = parseCaptured(loadGemini('request-after-activate-skill.json')).tools;
  const ask = (prompt: string, extra: object[] = []) =>
    planResponse(
      SCRIPT,
      {
        protocol: 'gemini',
        engine: 'gemini_cli',
        model: 'm',
        stream: true,
        system: ["I'm currently working in the directory: /w"],
        messages: [{ role: 'user', parts: [{ type: 'text', text: prompt }] }, ...(extra as ModelRequest['messages'])],
        tools,
        rawChars: 100,
      },
      GEMINI_TOOL_TABLE,
    ).plan;

  it('write_file {file_path (absolute), content}, after the text said before it', () => {
    const plan = ask('FAKE_WRITE now');
    expect(plan.kind === 'reply' && plan.reply.blocks).toEqual([
      { type: 'text', text: 'I will write it.' },
      { type: 'tool_call', id: expect.any(String), name: 'write_file', input: { file_path: '/w/hello.txt', content: 'hi\n' } },
    ]);
  });

  it('run → run_shell_command {command, description}; read_file → read_file {file_path}', () => {
    const plan = ask('use the shell');
    expect(plan.kind === 'reply' && plan.reply.blocks[0]).toMatchObject({ name: 'run_shell_command', input: { command: 'echo hi', description: expect.any(String) } });
    const second = ask('use the shell', [
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'run_shell_command', input: { command: 'echo hi' } }] },
      { role: 'user', parts: [{ type: 'tool_result', id: 'c1', output: 'hi', isError: false }] },
    ]);
    expect(second.kind === 'reply' && second.reply.blocks[0]).toMatchObject({ name: 'read_file', input: { file_path: '/w/notes.md' } });
  });

  it('use_skill → activate_skill {name}', () => {
    const plan = planResponse(
      SCRIPT,
      {
        protocol: 'gemini',
        engine: 'gemini_cli',
        model: 'm',
        stream: true,
        system: ['<available_skills>\n  <skill>\n    <name>hello</name>\n    <description>d</description>\n  </skill>\n</available_skills>'],
        messages: [{ role: 'user', parts: [{ type: 'text', text: 'greet me' }] }],
        tools,
        rawChars: 100,
      },
      GEMINI_TOOL_TABLE,
    ).plan;
    expect(plan.kind === 'reply' && plan.reply.blocks).toEqual([{ type: 'tool_call', id: expect.any(String), name: 'activate_skill', input: { name: 'hello' } }]);
  });
});

describe('gemini protocol: JSON built from a response schema', () => {
  it('the router schema (Gemini upper-case types): a reasoning string and a score ≥ 1', () => {
    const router = loadGemini('request-router-trimmed.json');
    const schema = requestedJsonSchema(router.body.generationConfig);
    expect(jsonFromSchema(schema)).toEqual({ complexity_reasoning: 'scripted', complexity_score: 1 });
  });

  it('next-speaker schema: the first enum value ("user")', () => {
    const schema = {
      type: 'object',
      properties: { reasoning: { type: 'string' }, next_speaker: { type: 'string', enum: ['user', 'model'] } },
      required: ['reasoning', 'next_speaker'],
    };
    expect(jsonFromSchema(schema)).toEqual({ reasoning: 'scripted', next_speaker: 'user' });
  });

  it('const, default, bounds, arrays, unions, allOf, nullable types, depth cap', () => {
    expect(jsonFromSchema({ const: 7 })).toBe(7);
    expect(jsonFromSchema({ type: 'string', default: 'd' })).toBe('d');
    expect(jsonFromSchema({ type: 'integer', minimum: 5, maximum: 9 })).toBe(5);
    expect(jsonFromSchema({ type: 'number', exclusiveMinimum: 2 })).toBe(3);
    expect(jsonFromSchema({ type: 'integer', maximum: 0 })).toBe(0);
    expect(jsonFromSchema({ type: 'boolean' })).toBe(false);
    expect(jsonFromSchema({ type: 'array', items: { type: 'string' }, minItems: 2 })).toEqual(['scripted', 'scripted']);
    expect(jsonFromSchema({ type: 'array', items: { type: 'string' } })).toEqual([]);
    expect(jsonFromSchema({ anyOf: [{ type: 'null' }, { type: 'integer' }] })).toBe(1);
    expect(jsonFromSchema({ allOf: [{ properties: { a: { type: 'boolean' } } }, { properties: { b: { const: 'x' } } }] })).toEqual({ a: false, b: 'x' });
    expect(jsonFromSchema({ type: ['null', 'string'], minLength: 10 })).toBe('scripted..');
    expect(jsonFromSchema({})).toBe('scripted');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 12; i++) deep = { type: 'object', properties: { x: deep } };
    expect(JSON.stringify(jsonFromSchema(deep))).toContain('null');
  });

  it('only structured-output requests carry a schema; JSON without one gets {}', () => {
    expect(requestedJsonSchema({ temperature: 1 })).toBeUndefined();
    expect(requestedJsonSchema({ responseMimeType: 'application/json' })).toEqual({});
    expect(requestedJsonSchema({ responseSchema: { type: 'STRING' } })).toEqual({ type: 'STRING' });
  });
});

describe('gemini protocol: rendering', () => {
  const reply: ModelReply = {
    id: 'abc123',
    model: 'gemini-2.5-flash',
    blocks: [
      { type: 'text', text: 'I will write it.' },
      { type: 'tool_call', id: 't1', name: 'write_file', input: { file_path: '/w/h.txt', content: 'hi' } },
    ],
    stop: 'tool_use',
    usage: { inputTokens: 100, outputTokens: 7 },
  };

  it('streams text and function call as two responses; the last has finishReason and usage; no call id', () => {
    expect(renderGeminiStream(reply)).toEqual([
      'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"I will write it."}]},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"abc123"}\n\n',
      'data: {"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"write_file","args":{"file_path":"/w/h.txt","content":"hi"}}}]},"index":0,"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":7,"totalTokenCount":107},"modelVersion":"gemini-2.5-flash","responseId":"abc123"}\n\n',
    ]);
  });

  it('one JSON response with every part when not streamed', () => {
    expect(geminiResponse(reply)).toEqual({
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'I will write it.' }, { functionCall: { name: 'write_file', args: { file_path: '/w/h.txt', content: 'hi' } } }] },
          index: 0,
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 7, totalTokenCount: 107 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'abc123',
    });
  });

  it('a structured-output request gets one JSON text part instead of the scripted blocks', () => {
    const req = parseCaptured(loadGemini('request-router-trimmed.json'));
    const jsonReply: ModelReply = { ...reply, model: req.model };
    const [only] = geminiStreamResponses(jsonReply);
    const r = geminiResponse(jsonReply) as { candidates: Array<{ content: { parts: Array<{ text: string }> } }>; modelVersion: string };
    expect(r.modelVersion).toBe('gemini-3.5-flash-lite');
    expect(JSON.parse(r.candidates[0]!.content.parts[0]!.text)).toEqual({ complexity_reasoning: 'scripted', complexity_score: 1 });
    expect(only).toMatchObject({ candidates: [{ finishReason: 'STOP' }] });
  });

  it('errors: {error:{code,message,status}} with the Google status name', () => {
    const r = geminiProtocol.renderError(500, 'boom');
    expect(r.status).toBe(500);
    expect(JSON.parse(r.chunks.join(''))).toEqual({ error: { code: 500, message: 'boom', status: 'INTERNAL' } });
    expect(JSON.parse(geminiProtocol.renderError(429, 'q', 'CUSTOM').chunks.join('')).error.status).toBe('CUSTOM');
    expect(geminiErrorStatus(429)).toBe('RESOURCE_EXHAUSTED');
    expect(geminiErrorStatus(503)).toBe('UNAVAILABLE');
    expect(geminiErrorStatus(418)).toBe('FAILED_PRECONDITION');
  });

  it('routes: generate for both model calls, utility for countTokens and model lists, nothing else', () => {
    expect(geminiProtocol.route('POST', '/v1beta/models/m:streamGenerateContent')).toBe('generate');
    expect(geminiProtocol.route('POST', '/v1beta/models/m:generateContent')).toBe('generate');
    expect(geminiProtocol.route('POST', '/v1beta/models/m:countTokens')).toBe('utility');
    expect(geminiProtocol.route('GET', '/v1beta/models')).toBe('utility');
    expect(geminiProtocol.route('GET', '/v1beta/models/m')).toBe('utility');
    expect(geminiProtocol.route('POST', '/v1/messages')).toBeUndefined();
    expect(geminiProtocol.route('GET', '/v1/models')).toBeUndefined();
  });
});

describe('gemini protocol over HTTP (startModelServer)', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; type: string; text: string }> {
    return new Promise((resolve, reject) => {
      const data = Buffer.from(JSON.stringify(body));
      const req = httpRequest(server!.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(data);
    });
  }
  const sse = (text: string) =>
    text
      .split('\n\n')
      .filter((b) => b.trim())
      .map((b) => JSON.parse(b.replace(/^data: /, '')) as Record<string, unknown>);
  const turn = (text: string, extra: object = {}) => ({
    contents: [{ role: 'user', parts: [{ text: '<session_context>\n- **Workspace Directories:**\n  - /ws\n</session_context>' }, { text }] }],
    tools: [{ functionDeclarations: [{ name: 'write_file', parametersJsonSchema: { type: 'object', properties: { file_path: {}, content: {} } } }] }],
    ...extra,
  });

  it('streamGenerateContent?alt=sse: SSE whose parts parse back; logged per job under the gemini protocol', async () => {
    const seen: Array<{ jobId?: string; protocol?: string; conversation?: { engine: string; cwd?: string } }> = [];
    server = await startModelServer({ script: SCRIPT, onRequest: (e) => seen.push(e) });
    const res = await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', turn('FAKE_WRITE please'), { 'x-goog-api-key': 'skill-up-job:g/with_skill/run-1' });
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/event-stream/);
    const events = sse(res.text);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({
      candidates: [{ content: { parts: [{ functionCall: { name: 'write_file', args: { file_path: '/ws/hello.txt', content: 'hi\n' } } }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: expect.any(Number) },
    });
    expect(seen[0]).toMatchObject({ jobId: 'g/with_skill/run-1', protocol: 'gemini', conversation: { engine: 'gemini_cli', cwd: '/ws' } });
    expect(server.requestsFor('g/with_skill/run-1')).toHaveLength(1);
  });

  it('generateContent: one JSON response; a router request gets JSON from its schema', async () => {
    server = await startModelServer({ script: SCRIPT });
    const plain = await post('/v1beta/models/m:generateContent', turn('hello'));
    expect(JSON.parse(plain.text).candidates[0].content.parts).toEqual([{ text: 'plain answer' }]);
    const router = loadGemini('request-router-trimmed.json');
    const res = await post(router.url, router.body);
    expect(res.status).toBe(200);
    const text = JSON.parse(res.text).candidates[0].content.parts[0].text as string;
    expect(JSON.parse(text)).toEqual({ complexity_reasoning: 'scripted', complexity_score: 1 });
  });

  it('error rules are Gemini errors with the HTTP status; countTokens and model lists answer', async () => {
    server = await startModelServer({ script: SCRIPT });
    const boom = await post('/v1beta/models/m:streamGenerateContent?alt=sse', turn('explode'));
    expect(boom.status).toBe(500);
    expect(JSON.parse(boom.text)).toEqual({ error: { code: 500, message: 'scripted overload', status: 'INTERNAL' } });
    const quota = await post('/v1beta/models/m:generateContent', turn('quota'));
    expect(quota.status).toBe(429);
    expect(JSON.parse(quota.text).error.status).toBe('RESOURCE_EXHAUSTED');
    const bad = await post('/v1beta/models/m:generateContent', { nope: 1 });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    const count = await post('/v1beta/models/m:countTokens', { contents: [{ role: 'user', parts: [{ text: 'abcd' }] }] });
    expect(JSON.parse(count.text)).toEqual({ totalTokens: expect.any(Number) });
    const models = await new Promise<string>((resolve, reject) => {
      httpRequest(server!.url + '/v1beta/models', (res) => {
        let t = '';
        res.on('data', (c: Buffer) => (t += c.toString()));
        res.on('end', () => resolve(t));
      })
        .on('error', reject)
        .end();
    });
    expect(JSON.parse(models).models[0].name).toMatch(/^models\//);
  });
});
