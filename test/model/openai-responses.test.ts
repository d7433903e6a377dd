/**
 * The OpenAI Responses protocol module (Codex CLI 0.171.0) over the captured requests in
 * fixtures/codex/ (captured Codex requests, as in engines/codex/samples/, plus one full request from a
 * real skill run against skill-up's server), the planner's Codex tool mapping, the SSE/JSON/
 * error rendering, and the server route. The real binary is driven in engines/codex/.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contextTexts, skillFilesOf, viewConversation } from '../../src/model/conversation.js';
import { planResponse } from '../../src/model/plan.js';
import {
  applyPatchInput,
  CODEX_TOOL_TABLE,
  codexShellInput,
  openaiResponsesProtocol,
  outputIsError,
  parseResponsesRequest,
  renderResponsesError,
  renderResponsesStream,
  responsesObject,
  shellCommandFor,
  shellQuote,
} from '../../src/model/protocols/openai-responses.js';
import type { WireContext } from '../../src/model/protocols/protocol.js';
import { startModelServer, PROTOCOLS, type ModelServer } from '../../src/model/server.js';
import { mapToolAction } from '../../src/model/tools.js';
import type { ModelReply, ModelRequest } from '../../src/model/types.js';
import { FIXTURES, parseSse, script } from './helpers.js';

interface Captured {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown> & { input: Array<Record<string, unknown>> };
}

function loadCodex(name: string): Captured {
  const raw = JSON.parse(readFileSync(join(FIXTURES, 'codex', name), 'utf8')) as Record<string, unknown>;
  return { url: raw.url as string, headers: raw.headers as Record<string, string>, body: (raw.body ?? raw['body(trimmed)']) as Captured['body'] };
}

const FULL_LISTING = readFileSync(join(FIXTURES, 'codex-skills-instructions.txt'), 'utf8');

/** A trimmed capture with its cut-off `<skills_instructions>` text replaced by the full one. */
function withFullListing(c: Captured): Captured {
  const body = structuredClone(c.body);
  for (const item of body.input) {
    if (item.role !== 'developer' || !Array.isArray(item.content)) continue;
    for (const part of item.content as Array<{ text?: string }>) {
      if (part.text?.startsWith('<skills_instructions>')) part.text = FULL_LISTING;
    }
  }
  return { ...c, body };
}

function wire(headers: Record<string, string> = {}, rawChars = 1000): WireContext {
  return { method: 'POST', pathname: '/v1/responses', query: new URLSearchParams(), headers, rawChars };
}

function parse(c: Captured): ModelRequest {
  return parseResponsesRequest(c.body, wire(c.headers, JSON.stringify(c.body).length));
}

const THREAD = '01a2287e-c04a-77e0-8a9b-bb465fc30561';
const CWD = '/tmp/lab/demo-out/codex/work';

describe('parsing the captured Codex requests', () => {
  it('turn 1: developer texts are context, <environment_context> is meta, the prompt is the typed text', () => {
    const req = parse(withFullListing(loadCodex('request-1-first-turn.trimmed.json')));
    expect(req).toMatchObject({ protocol: 'openai_responses', engine: 'codex', model: 'gpt-5.5', stream: true, system: [], sessionId: THREAD });
    expect(req.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'user']);
    expect(req.messages[2]!.parts[0]).toMatchObject({ type: 'text', meta: true });
    const conv = viewConversation(req);
    expect(conv).toMatchObject({ turn: 1, prompt: 'Create it [[write hello.txt Hello from fake codex]]', cwd: CWD, replyStarts: [] });
    expect(conv.skillsListed).toEqual(['imagegen', 'openai-docs', 'skill-creator', 'skill-installer', 'hello']);
    expect(conv.toolsOffered).toEqual(['exec_command', 'write_stdin', 'request_user_input', 'apply_patch', 'view_image', 'get_goal', 'create_goal', 'update_goal']);
    // The custom (freeform) apply_patch tool is marked as taking text.
    expect(req.tools.find((t) => t.name === 'apply_patch')?.schema?.type).toBe('string');
  });

  it('after an exec_command result: one reply so far (message + function_call), the result is the latest tool result', () => {
    const req = parse(loadCodex('request-2-after-function-output.trimmed.json'));
    expect(req.messages.map((m) => m.role)).toEqual(['system', 'system', 'user', 'user', 'assistant', 'user']);
    expect(req.messages[4]!.parts).toEqual([
      { type: 'text', text: 'I will run a command.' },
      { type: 'tool_call', id: 'call_mx25kql7000d', name: 'exec_command', input: { cmd: "printf '%s' 'Hello from fake codex' > hello.txt", yield_time_ms: 1000 } },
    ]);
    const conv = viewConversation(req);
    expect(conv.turn).toBe(1);
    expect(conv.replyStarts).toEqual([4]);
    expect(conv.lastToolResult).toEqual({ output: expect.stringContaining('Process exited with code 0'), isError: false });
  });

  it('resume: the replayed history is turn 1 and the new prompt is turn 2', () => {
    const conv = viewConversation(parse(loadCodex('request-3-resume.trimmed.json')));
    expect(conv).toMatchObject({ turn: 2, prompt: 'What did you do?', replyStarts: [] });
  });

  it('a $hello mention: the injected <skill> message is meta, not a second prompt', () => {
    const req = parse(loadCodex('request-4-skill-mention.trimmed.json'));
    expect(req.messages.at(-1)!.parts[0]).toMatchObject({ type: 'text', meta: true });
    expect(viewConversation(req)).toMatchObject({ turn: 1, prompt: '$hello greet me [[patch patched.txt patched line]]' });
    expect(req.sessionId).toBe('01a2287e-c2a4-71c1-a6d2-277f83af0c64');
  });

  it('a full skill run request: the SKILL.md read is a load, apply_patch is a call with freeform input', () => {
    const req = parse(loadCodex('skill-run-request-3.full.json'));
    const conv = viewConversation(req);
    expect(conv.skillsLoaded).toEqual(['hello']);
    expect(conv.skillsListed).toContain('hello');
    expect(conv.replyStarts).toHaveLength(2);
    const calls = req.messages.flatMap((m) => m.parts).filter((p) => p.type === 'tool_call');
    expect(calls.map((c) => c.type === 'tool_call' && c.name)).toEqual(['exec_command', 'apply_patch']);
    expect(calls[1]).toMatchObject({ input: { input: '*** Begin Patch\n*** Add File: greeting.txt\n+Hello, World!\n*** End Patch\n' } });
    expect(conv.lastToolResult).toEqual({ output: expect.stringContaining('Success. Updated the following files:'), isError: false });
  });

  it('rejects a body without input; accepts a string input', () => {
    expect(() => parseResponsesRequest({ model: 'x' }, wire())).toThrow(/input/);
    expect(() => parseResponsesRequest([], wire())).toThrow(/JSON object/);
    const req = parseResponsesRequest({ model: 'x', input: 'hello there', instructions: 'be brief' }, wire());
    expect(viewConversation(req)).toMatchObject({ turn: 1, prompt: 'hello there' });
    expect(req.system).toEqual(['be brief']);
    expect(req.sessionId).toBeUndefined();
  });

  it('tool outputs: a non-zero exit or success:false is an error', () => {
    expect(outputIsError({}, 'Chunk ID: 1\nProcess exited with code 1\nOutput:\n')).toBe(true);
    expect(outputIsError({}, 'Chunk ID: 1\nProcess exited with code 0\nOutput:\n')).toBe(false);
    expect(outputIsError({}, 'Exit code: 2\nOutput:\nerror')).toBe(true);
    expect(outputIsError({ output: { content: 'x', success: false } }, 'x')).toBe(true);
    expect(outputIsError({}, 'plain text')).toBe(false);
  });

  it('other items: local_shell_call, reasoning (ignored), structured outputs', () => {
    const req = parseResponsesRequest(
      {
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
          { type: 'reasoning', summary: [] },
          { type: 'local_shell_call', call_id: 'c1', action: { type: 'exec', command: ['cat', 'skills/pdf/SKILL.md'] } },
          { type: 'local_shell_call_output', call_id: 'c1', output: { content: 'body', success: true } },
        ],
      },
      wire(),
    );
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(viewConversation(req).skillsLoaded).toEqual(['pdf']);
    expect(req.messages[2]!.parts[0]).toEqual({ type: 'tool_result', id: 'c1', output: 'body', isError: false });
  });
});

describe('skill files from the Codex listing', () => {
  it('expands the roots table', () => {
    expect(skillFilesOf([FULL_LISTING])).toEqual({
      imagegen: '/tmp/lab/demo-out/codex/codexhome/skills/.system/imagegen/SKILL.md',
      'openai-docs': '/tmp/lab/demo-out/codex/codexhome/skills/.system/openai-docs/SKILL.md',
      'skill-creator': '/tmp/lab/demo-out/codex/codexhome/skills/.system/skill-creator/SKILL.md',
      'skill-installer': '/tmp/lab/demo-out/codex/codexhome/skills/.system/skill-installer/SKILL.md',
      hello: '/tmp/lab/demo-out/codex/work/.agents/skills/hello/SKILL.md',
    });
    expect(skillFilesOf(['<skills_instructions>\n### Available skills\n- x: d (file: /abs/x/SKILL.md)\n</skills_instructions>'])).toEqual({ x: '/abs/x/SKILL.md' });
    expect(skillFilesOf(['no listing'])).toEqual({});
  });
});

describe('planning with the Codex tools', () => {
  const SCRIPT = script(`
rules:
  - when: { skill_listed: hello, skill_loaded: false }
    reply: [ { use_skill: hello } ]
  - when: { skill_loaded: hello }
    reply:
      - { say: "Writing it." }
      - { write_file: { path: greeting.txt, content: "Hello, World!\\n" } }
      - { say: "Greeted." }
  - when: { prompt_contains: "write" }
    reply: [ { write_file: { path: "dir/it's.txt", content: "a\\nb" } }, { say: done } ]
  - when: { prompt_contains: "read" }
    reply: [ { read_file: notes.md } ]
  - reply: [ { run: "ls -la" } ]
`);
  const first = () => parse(withFullListing(loadCodex('request-1-first-turn.trimmed.json')));
  const plan = (req: ModelRequest) => planResponse(SCRIPT, req, CODEX_TOOL_TABLE).plan;

  it('use_skill reads SKILL.md through exec_command at the path the listing gives', () => {
    const p = plan(first());
    expect(p.kind === 'reply' && p.reply.blocks).toEqual([
      { type: 'tool_call', id: expect.any(String), name: 'exec_command', input: { cmd: `cat '${CWD}/.agents/skills/hello/SKILL.md'`, yield_time_ms: 30_000 } },
    ]);
  });

  it('after the read, write_file becomes apply_patch (Add File) with the say riding along, then the final text', () => {
    const req = parse(loadCodex('skill-run-request-3.full.json'));
    const upTo2 = { ...req, messages: req.messages.slice(0, -2) }; // as the 2nd request stood
    const p2 = plan(upTo2);
    expect(p2.kind === 'reply' && p2.reply.blocks).toEqual([
      { type: 'text', text: 'Writing it.' },
      { type: 'tool_call', id: expect.any(String), name: 'apply_patch', input: { input: '*** Begin Patch\n*** Add File: greeting.txt\n+Hello, World!\n*** End Patch\n' } },
    ]);
    const p3 = plan(req);
    expect(p3.kind === 'reply' && p3.reply).toMatchObject({ blocks: [{ type: 'text', text: 'Greeted.' }], stop: 'end_turn' });
  });

  it('without apply_patch (unknown model slug), write_file is a shell printf that keeps the content exactly', () => {
    const req = first();
    req.tools = req.tools.filter((t) => t.name !== 'apply_patch');
    req.messages[1]!.parts = []; // no listing: the catch-all rules apply
    req.messages[3]!.parts = [{ type: 'text', text: 'write it' }];
    const p = plan(req);
    expect(p.kind === 'reply' && p.reply.blocks[0]).toMatchObject({
      name: 'exec_command',
      input: { cmd: `mkdir -p 'dir' && printf '%s' 'a\nb' > 'dir/it'\\''s.txt'` },
    });
  });

  it('read_file and run go through the shell; older shells take an argv array', () => {
    const req = first();
    req.messages[1]!.parts = [];
    req.messages[3]!.parts = [{ type: 'text', text: 'read notes' }];
    const p = plan(req);
    expect(p.kind === 'reply' && p.reply.blocks[0]).toMatchObject({ name: 'exec_command', input: { cmd: "cat 'notes.md'" } });
    const shell = { name: 'shell', schema: { properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' } } } };
    expect(mapToolAction({ kind: 'run', command: 'ls -la' }, [shell], CODEX_TOOL_TABLE, {})).toEqual({ ok: true, name: 'shell', input: { command: ['bash', '-lc', 'ls -la'] } });
    const shellCommand = { name: 'shell_command', schema: { properties: { command: { type: 'string' } } } };
    expect(mapToolAction({ kind: 'run', command: 'ls' }, [shellCommand], CODEX_TOOL_TABLE, {})).toEqual({ ok: true, name: 'shell_command', input: { command: 'ls' } });
  });

  it('builders: quoting, patch lines, the skill path fallback', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(applyPatchInput({ kind: 'write_file', path: 'a.txt', content: '' }, { name: 'apply_patch' }, {})).toEqual({ input: '*** Begin Patch\n*** Add File: a.txt\n*** End Patch\n' });
    expect(applyPatchInput({ kind: 'write_file', path: 'a.txt', content: 'x\n\ny' }, { name: 'apply_patch' }, {})).toEqual({ input: '*** Begin Patch\n*** Add File: a.txt\n+x\n+\n+y\n*** End Patch\n' });
    expect(shellCommandFor({ kind: 'use_skill', skill: 'pdf' }, {})).toBe("cat '.agents/skills/pdf/SKILL.md'");
    expect(shellCommandFor({ kind: 'use_skill', skill: 'pdf' }, { skillFiles: { pdf: '/r/pdf/SKILL.md' } })).toBe("cat '/r/pdf/SKILL.md'");
    expect(codexShellInput({ kind: 'run', command: 'x' }, { name: 'exec_command' }, {})).toEqual({ cmd: 'x', yield_time_ms: 30_000 });
  });
});

const reply = (blocks: ModelReply['blocks']): ModelReply => ({
  id: 'abcdef0123456789abcdef01',
  model: 'gpt-5.5',
  blocks,
  stop: blocks.some((b) => b.type === 'tool_call') ? 'tool_use' : 'end_turn',
  usage: { inputTokens: 100, outputTokens: 7 },
});

describe('rendering', () => {
  it('streams created → items (added, deltas, done) → completed, with event: lines and sequence numbers', () => {
    const events = parseSse(
      renderResponsesStream(
        reply([
          { type: 'text', text: 'Writing it.' },
          { type: 'tool_call', id: '111111111111111111111111', name: 'exec_command', input: { cmd: 'ls' } },
          { type: 'tool_call', id: '222222222222222222222222', name: 'apply_patch', input: { input: '*** Begin Patch\n*** End Patch\n' } },
        ]),
      ).join(''),
    );
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.every((e) => e.data.type === e.event)).toBe(true);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const done = events.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item);
    expect(done).toEqual([
      { type: 'message', id: 'msg_abcdef0123456789abcdef01_0', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Writing it.', annotations: [] }] },
      { type: 'function_call', id: 'fc_111111111111111111111111', status: 'completed', name: 'exec_command', arguments: '{"cmd":"ls"}', call_id: 'call_111111111111111111111111' },
      { type: 'custom_tool_call', id: 'ctc_222222222222222222222222', status: 'completed', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n', call_id: 'call_222222222222222222222222' },
    ]);
    const completed = events.at(-1)!.data.response as Record<string, unknown>;
    expect(completed).toMatchObject({ id: 'resp_abcdef0123456789abcdef01', status: 'completed', model: 'gpt-5.5', output: done });
    expect(completed.usage).toEqual({ input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 7, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 107 });
  });

  it('a call to another tool with an `input` key stays a function call', () => {
    const obj = responsesObject(reply([{ type: 'tool_call', id: '3'.repeat(24), name: 'exec_command', input: { input: 'x' } }]));
    expect((obj.output as Array<{ type: string }>)[0]!.type).toBe('function_call');
  });

  it('non-streamed: one Response object', () => {
    const r = openaiResponsesProtocol.render(reply([{ type: 'text', text: 'hi' }]), false);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.chunks.join(''))).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', content: [{ text: 'hi' }] }] });
  });

  it('errors: a 5xx or 429 is a 200 stream ending in response.failed (codex shows its message); others are JSON with the status', () => {
    const r500 = renderResponsesError(500, 'boom');
    expect(r500.status).toBe(200);
    const ev = parseSse(r500.chunks.join(''));
    expect(ev.map((e) => e.event)).toEqual(['response.created', 'response.failed']);
    expect((ev[1]!.data.response as Record<string, unknown>).error).toEqual({ code: 'server_error', message: 'boom (HTTP 500)' });
    expect(parseSse(renderResponsesError(429, 'slow down').chunks.join(''))[1]!.data.response).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
    const r400 = renderResponsesError(400, 'bad', 'custom_type');
    expect(r400.status).toBe(400);
    expect(JSON.parse(r400.chunks.join(''))).toEqual({ error: { message: 'bad', type: 'custom_type', code: 'custom_type', param: null } });
  });
});

describe('the server speaks Responses', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  function post(url: string, path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  }

  it('is listed in PROTOCOLS and claims only POST …/responses', () => {
    expect(PROTOCOLS).toContain(openaiResponsesProtocol);
    expect(openaiResponsesProtocol.route('POST', '/v1/responses')).toBe('generate');
    expect(openaiResponsesProtocol.route('POST', '/proxy/v1/responses')).toBe('generate');
    expect(openaiResponsesProtocol.route('GET', '/v1/responses')).toBeUndefined();
    expect(openaiResponsesProtocol.route('POST', '/v1/messages')).toBeUndefined();
  });

  it('answers a captured codex request, filing it under the job and the thread', async () => {
    server = await startModelServer({ script: script('rules:\n  - when: { engine: codex }\n    reply: [ { write_file: { path: hello.txt, content: hi } } ]\n') });
    const c = loadCodex('request-1-first-turn.trimmed.json');
    const res = await post(server.url, '/v1/responses', c.body, { authorization: 'Bearer skill-up-job:case/with_skill/run-1', 'session-id': THREAD });
    expect(res.status).toBe(200);
    const ev = parseSse(res.text);
    expect(ev.at(-1)!.event).toBe('response.completed');
    const item = ev.find((e) => e.event === 'response.output_item.done')!.data.item as Record<string, unknown>;
    expect(item).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n' });
    const entries = server.requestsFor('case/with_skill/run-1');
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ protocol: 'openai_responses', kind: 'generate', sessionId: THREAD, status: 200 });
    expect(server.requestsFor(THREAD)).toHaveLength(1);
  });

  it('a scripted 500 keeps its status in the log while codex gets a response.failed stream', async () => {
    server = await startModelServer({ script: script('rules:\n  - error: { status: 503, message: overloaded now }\n') });
    const res = await post(server.url, '/v1/responses', { model: 'gpt-5.5', input: 'hi', stream: true }, { authorization: 'Bearer skill-up-job:j1' });
    expect(res.status).toBe(200);
    expect(parseSse(res.text).at(-1)!.data).toMatchObject({ type: 'response.failed', response: { error: { message: 'overloaded now (HTTP 503)' } } });
    expect(server.requestsFor('j1')[0]!.error).toEqual({ status: 503, message: 'overloaded now' });
  });

  it('a malformed body gets a 400 in the Responses error shape', async () => {
    server = await startModelServer({ script: script('rules:\n  - reply: [ { say: x } ]\n') });
    const res = await post(server.url, '/v1/responses', { model: 'gpt-5.5' }, {});
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text)).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('input') } });
  });

  it('contextTexts of a Codex request hold the listing (used for skill files)', () => {
    const req = parse(withFullListing(loadCodex('request-1-first-turn.trimmed.json')));
    expect(contextTexts(req).some((t) => t.startsWith('<skills_instructions>'))).toBe(true);
  });
});
