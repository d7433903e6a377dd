import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExchangeLogEntry } from '../../src/model/log.js';
import { renderAnthropicStream } from '../../src/model/protocols/anthropic.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import type { ModelReply } from '../../src/model/types.js';
import { loadCaptured, parseSse, script } from './helpers.js';

const SCRIPT = script(`
rules:
  - name: boom
    when: { prompt_contains: explode }
    error: { status: 500, message: "scripted overload" }
  - name: slow
    when: { prompt_contains: slowly }
    delay_ms: 150
    reply: [ { say: "finally" } ]
  - name: write
    when: { prompt_contains: create }
    reply:
      - { say: "I will write it." }
      - { write_file: { path: hello.txt, content: "Hello from fake model" } }
      - { say: "Wrote hello.txt" }
  - reply: [ { say: "plain answer" } ]
`);

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}, raw?: Buffer): Promise<Res> {
  return new Promise((resolve, reject) => {
    const data = raw ?? (body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
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

const userTurn = (text: string, stream = true, extra: object = {}) => ({
  model: 'claude-test',
  stream,
  system: [{ type: 'text', text: 'Primary working directory: /work/dir' }],
  tools: [{ name: 'Write', input_schema: { type: 'object', properties: { file_path: {}, content: {} }, required: ['file_path', 'content'] } }],
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  ...extra,
});

describe('SSE format', () => {
  it('emits the documented event sequence with event: lines', () => {
    const reply: ModelReply = {
      id: 'abc',
      model: 'claude-opus-5-5',
      blocks: [
        { type: 'text', text: 'I will use a tool.' },
        { type: 'tool_call', id: 't1', name: 'Write', input: { file_path: '/abs/hello.txt', content: 'hi' } },
      ],
      stop: 'tool_use',
      usage: { inputTokens: 4524, outputTokens: 45 },
    };
    const text = renderAnthropicStream(reply).join('');
    expect(text).toBe(
      [
        'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_abc","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":4524,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}',
        'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I will use a tool."}}',
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}',
        'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_t1","name":"Write","input":{}}}',
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"file_path\\":\\"/abs/hello.txt\\",\\"content\\":\\"hi\\"}"}}',
        'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}',
        'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":45}}',
        'event: message_stop\ndata: {"type":"message_stop"}',
      ].join('\n\n') + '\n\n',
    );
  });
});

describe('startModelServer', () => {
  it('streams a tool_use step that parses back in order', async () => {
    server = await startModelServer({ script: SCRIPT });
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    const res = await call(server.url, 'POST', '/v1/messages?beta=true', userTurn('please create the file'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(res.text);
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const e of events) expect(e.data.type).toBe(e.event);
    const toolStart = events[4]!.data as { content_block: { type: string; id: string; name: string } };
    expect(toolStart.content_block).toMatchObject({ type: 'tool_use', name: 'Write', id: expect.stringMatching(/^toolu_[0-9a-f]{24}$/) });
    const delta = events[5]!.data as { delta: { type: string; partial_json: string } };
    expect(delta.delta.type).toBe('input_json_delta');
    expect(JSON.parse(delta.delta.partial_json)).toEqual({ file_path: '/work/dir/hello.txt', content: 'Hello from fake model' });
    expect((events[7]!.data as { delta: { stop_reason: string } }).delta.stop_reason).toBe('tool_use');
    const start = events[0]!.data as { message: { model: string; usage: { input_tokens: number } } };
    expect(start.message.model).toBe('claude-test');
    expect(start.message.usage.input_tokens).toBe(Math.ceil(JSON.stringify(userTurn('please create the file')).length / 4));
  });

  it('answers JSON when stream is false', async () => {
    server = await startModelServer({ script: SCRIPT });
    const res = await call(server.url, 'POST', '/v1/messages', userTurn('hello', false));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [{ type: 'text', text: 'plain answer' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: expect.any(Number), output_tokens: 3 },
    });
  });

  it('answers an error rule with the HTTP status and an Anthropic error body', async () => {
    server = await startModelServer({ script: SCRIPT });
    const res = await call(server.url, 'POST', '/v1/messages?beta=true', userTurn('explode now'));
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ type: 'error', error: { type: 'api_error', message: 'scripted overload' } });
  });

  it('honours delay_ms', async () => {
    server = await startModelServer({ script: SCRIPT });
    const t0 = Date.now();
    const res = await call(server.url, 'POST', '/v1/messages', userTurn('do it slowly', false));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(JSON.parse(res.text).content[0].text).toBe('finally');
  });

  it('answers probes, count_tokens, models and unknown paths quickly', async () => {
    server = await startModelServer({ script: SCRIPT });
    const head = await call(server.url, 'HEAD', '/');
    expect(head.status).toBe(404);
    expect(head.text).toBe('');
    const get = await call(server.url, 'GET', '/api/hello');
    expect(get.status).toBe(404);
    expect(JSON.parse(get.text).error.message).toBe('[scripted-model] no route for GET /api/hello');
    const count = await call(server.url, 'POST', '/v1/messages/count_tokens?beta=true', { model: 'm', messages: [{ role: 'user', content: 'abcdefgh' }] });
    expect(count.status).toBe(200);
    expect(JSON.parse(count.text)).toEqual({ input_tokens: Math.ceil(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'abcdefgh' }] }).length / 4) });
    const models = await call(server.url, 'GET', '/v1/models');
    expect(JSON.parse(models.text).data[0]).toMatchObject({ type: 'model' });
  });

  it('rejects malformed bodies with 400 and accepts gzip bodies', async () => {
    server = await startModelServer({ script: SCRIPT });
    const bad = await call(server.url, 'POST', '/v1/messages', '{not json');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.type).toBe('invalid_request_error');
    const noMessages = await call(server.url, 'POST', '/v1/messages', { model: 'x' });
    expect(noMessages.status).toBe(400);
    const zipped = await call(server.url, 'POST', '/v1/messages', undefined, { 'content-encoding': 'gzip' }, gzipSync(JSON.stringify(userTurn('hi', false))));
    expect(JSON.parse(zipped.text).content[0].text).toBe('plain answer');
  });

  it('routes logs per job (skill-up-job:<id> API key), redacts keys, indexes by job and session', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'model-log-'));
    const seen: ExchangeLogEntry[] = [];
    server = await startModelServer({ script: SCRIPT, logDir, onRequest: (e) => seen.push(e) });
    await Promise.all([
      call(server.url, 'POST', '/v1/messages?beta=true', userTurn('create a'), { 'x-api-key': 'skill-up-job:case-1/with_skill/1', 'x-claude-code-session-id': 'sess-A' }),
      call(server.url, 'POST', '/v1/messages', userTurn('hello', false), { authorization: 'Bearer skill-up-job:case-2' }),
      call(server.url, 'POST', '/v1/messages', userTurn('hello', false), { 'x-api-key': 'sk-real-secret' }),
    ]);
    await server.close();
    server = undefined;

    const job1 = join(logDir, 'case-1', 'with_skill', '1', 'model-requests.jsonl');
    const lines = readFileSync(job1, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as ExchangeLogEntry);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      jobId: 'case-1/with_skill/1',
      sessionId: 'sess-A',
      kind: 'generate',
      protocol: 'anthropic',
      status: 200,
      trace: { rule: 2, ruleName: 'write', step: 0 },
      conversation: { engine: 'claude_code', turn: 1, prompt: 'create a', cwd: '/work/dir', replies: 0 },
      reply: { stop: 'tool_use' },
    });
    expect(lines[0]!.request!.headers['x-api-key']).toBe('[redacted]');
    expect(existsSync(join(logDir, 'case-2', 'model-requests.jsonl'))).toBe(true);
    const shared = readFileSync(join(logDir, 'model-requests.jsonl'), 'utf8');
    expect(shared).not.toContain('sk-real-secret');
    expect(seen).toHaveLength(3);
    expect(seen.map((e) => e.seq).sort()).toEqual([1, 2, 3]);
  });

  it('requestsFor returns body-less entries by job or session id', async () => {
    server = await startModelServer({ script: SCRIPT });
    const captured = loadCaptured('request-2-after-tool-result.trimmed.json');
    await call(server.url, 'POST', captured.url, captured.body, { 'x-claude-code-session-id': captured.headers['x-claude-code-session-id']! });
    const entries = server.requestsFor('082396b3-b72a-4980-aed6-e4682023c9b7');
    expect(entries).toHaveLength(1);
    expect(entries[0]!.request).toBeUndefined();
    expect(entries[0]!.conversation).toMatchObject({ prompt: 'Create it [[write hello.txt Hello from fake model]]', replies: 1 });
    // "Create it …" matches the `write` rule; the sample already holds that rule's first step.
    expect(entries[0]!.trace).toMatchObject({ ruleName: 'write', step: 1 });
    expect(entries[0]!.reply!.blocks).toEqual([{ type: 'text', text: 'Wrote hello.txt' }]);
    server.forget('082396b3-b72a-4980-aed6-e4682023c9b7');
    expect(server.requestsFor('082396b3-b72a-4980-aed6-e4682023c9b7')).toEqual([]);
  });

  it('picks a script per job when given a function', async () => {
    const other = script('rules:\n  - reply: [ { say: "other script" } ]\n');
    server = await startModelServer({ script: ({ jobId }) => (jobId === 'b' ? other : SCRIPT) });
    const a = await call(server.url, 'POST', '/v1/messages', userTurn('hello', false), { 'x-api-key': 'skill-up-job:a' });
    const b = await call(server.url, 'POST', '/v1/messages', userTurn('hello', false), { 'x-api-key': 'skill-up-job:b' });
    expect(JSON.parse(a.text).content[0].text).toBe('plain answer');
    expect(JSON.parse(b.text).content[0].text).toBe('other script');
  });

  it('close() ends a pending delayed request and releases the port', async () => {
    const s = await startModelServer({ script: script('rules:\n  - delay_ms: 60000\n    reply: [ { say: late } ]\n') });
    const pending = call(s.url, 'POST', '/v1/messages', userTurn('x', false)).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 50));
    // Waiting out the 60 s delay would outlast the test's timeout.
    await s.close();
    expect(await pending).toBeInstanceOf(Error);
  });
});

describe('safeJobDir', () => {
  it('keeps job id segments as folders and never escapes the log folder', async () => {
    const { safeJobDir } = await import('../../src/model/log.js');
    expect(safeJobDir('hello/with_skill/run-1')).toBe('hello/with_skill/run-1');
    expect(safeJobDir('../../etc/passwd')).toBe('_/_/etc/passwd');
    expect(safeJobDir('/abs//x y')).toBe('abs/x_y');
    expect(safeJobDir('')).toBe('_');
  });
});
