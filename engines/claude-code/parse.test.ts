/**
 * Parser tests over the real Claude Code 2.1.332 output captured in
 * engines/claude-code/samples/ (real captured output, copied into the repository) (every `*.jsonl` and the `--output-format json` sample),
 * plus synthetic lines for the cases the samples do not show.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineSamples } from '../../test/support/samples.js';
import { parseStreamJson, StreamJsonParser, toolResultText } from './parse.js';

/** The engine-output samples: every *.jsonl plus the `--output-format json` result. */
const { dir: SAMPLES, read: sample, outputs: OUTPUT_SAMPLES } = engineSamples(import.meta.url, (f) => f.endsWith('.jsonl') || f === 'output-format-json-max-turns.json');

describe('claude-code samples', () => {
  it('finds the sample folder', () => {
    expect(existsSync(SAMPLES), `missing ${SAMPLES}`).toBe(true);
    expect(OUTPUT_SAMPLES).toEqual([
      'error-500-with-2-retries.stream.jsonl',
      'error-500.stream.jsonl',
      'include-partial-messages.stream.jsonl',
      'mcp-call-stdio.stream.jsonl',
      'mcp-tool-error-stdio.stream.jsonl',
      'output-format-json-max-turns.json',
      'skill-tool.stream.jsonl',
      'turn1-write.stream.jsonl',
      'turn2-resume.stream.jsonl',
    ]);
  });

  it.each(OUTPUT_SAMPLES)('%s: every line is understood and a session id is found', (name) => {
    const s = parseStreamJson(sample(name));
    expect(s.badLines).toBe(0);
    expect(s.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.usage.input).toBeGreaterThanOrEqual(0);
    // Only the partial-messages capture was cut before its result line.
    expect(s.hasResult).toBe(name !== 'include-partial-messages.stream.jsonl');
  });

  it('the init line gives the tools offered and the permission mode; without one they are unknown', () => {
    const s = parseStreamJson(sample('skill-tool.stream.jsonl'));
    expect(s.permissionMode).toBe('bypassPermissions');
    expect(s.toolsOffered).toEqual(expect.arrayContaining(['Task', 'Bash', 'Skill']));
    const none = parseStreamJson(JSON.stringify({ type: 'result', subtype: 'success', result: 'x', session_id: 's' }));
    expect(none.toolsOffered).toBeUndefined();
    expect(none.permissionMode).toBeUndefined();
  });

  it('turn1-write: Write call paired with its result, usage, cost, skills listed', () => {
    const s = parseStreamJson(sample('turn1-write.stream.jsonl'));
    expect(s.sessionId).toBe('082396b3-b72a-4980-aed6-e4682023c9b7');
    expect(s.finalText).toMatch(/^FAKE-DONE: tool said: File created successfully at: \/tmp\/lab\/demo-out\/claude\/work\/hello\.txt/);
    expect(s.toolCalls).toEqual([
      {
        name: 'Write',
        input: { file_path: '/tmp/lab/demo-out/claude/work/hello.txt', content: 'Hello from fake model' },
        output: expect.stringMatching(/^File created successfully at: /),
        isError: false,
      },
    ]);
    expect(s.skillActivations).toEqual([]);
    // init.skills holds 17 names; `doctor` is a terminal slash command, never listed to the model.
    expect(s.skillsListed).toHaveLength(16);
    expect(s.skillsListed).toContain('hello');
    expect(s.skillsListed).not.toContain('doctor');
    expect(s.usage).toEqual({ input: 9205, output: 101, cacheRead: 0, cacheWrite: 0 });
    expect(s.usageSource).toBe('result');
    expect(s.costUsd).toBeCloseTo(0.03884, 10);
    expect(s.totalCostUsd).toBeCloseTo(0.03884, 10);
    expect(s.numTurns).toBe(2);
    expect(s.engineDurationMs).toBeGreaterThan(0);
    expect(s.model).toBe('claude-opus-5-5');
    expect(s.terminalReason).toBe('completed');
    expect(s.error).toBeUndefined();
  });

  it('turn2-resume: same session, per-invocation usage, per-turn cost although total_cost_usd is cumulative', () => {
    const s = parseStreamJson(sample('turn2-resume.stream.jsonl'));
    expect(s.sessionId).toBe('082396b3-b72a-4980-aed6-e4682023c9b7');
    expect(s.finalText).toBe('FAKE-REPLY: What did you do?');
    expect(s.toolCalls).toEqual([]);
    expect(s.usage).toEqual({ input: 4733, output: 14, cacheRead: 0, cacheWrite: 0 });
    expect(s.totalCostUsd).toBeCloseTo(0.058052, 10);
    expect(s.costUsd).toBeCloseTo(0.019212, 10); // model_usage_since_last_result
    expect(s.error).toBeUndefined();
  });

  it('turn2-resume without model_usage_since_last_result: cost = total − previous total', () => {
    const lines = sample('turn2-resume.stream.jsonl')
      .trim()
      .split('\n')
      .map((l) => {
        const d = JSON.parse(l) as Record<string, unknown>;
        delete d.model_usage_since_last_result;
        return JSON.stringify(d);
      });
    const s = parseStreamJson(lines.join('\n'), { previousTotalCostUsd: 0.03884 });
    expect(s.costUsd).toBeCloseTo(0.019212, 10);
  });

  it('skill-tool: a Skill tool call is an activation', () => {
    const s = parseStreamJson(sample('skill-tool.stream.jsonl'));
    expect(s.toolCalls).toEqual([{ name: 'Skill', input: { skill: 'hello' }, output: 'Launching skill: hello', isError: false }]);
    expect(s.skillActivations).toEqual([{ skill: 'hello', via: 'Skill tool' }]);
    expect(s.finalText).toBe('FAKE-DONE: tool said: Launching skill: hello');
    expect(s.usage).toEqual({ input: 9176, output: 51, cacheRead: 0, cacheWrite: 0 });
    expect(s.numTurns).toBe(3);
  });

  it('error-500: an API error (subtype "success" notwithstanding) with the API message', () => {
    const s = parseStreamJson(sample('error-500.stream.jsonl'));
    expect(s.error?.kind).toBe('api');
    expect(s.error?.message).toContain('500 fake server: scripted error 500');
    expect(s.terminalReason).toBe('api_error');
    expect(s.usage).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    expect(s.costUsd).toBe(0);
    expect(s.toolCalls).toEqual([]);
    // A 500 answer lists no skills to anyone, but the init line still tells what was offered.
    expect(s.skillsListed).toContain('deep-research');
  });

  it('error-500-with-2-retries: retries counted, API error, no init line', () => {
    const s = parseStreamJson(sample('error-500-with-2-retries.stream.jsonl'));
    expect(s.apiRetries).toBe(2);
    expect(s.error).toEqual({ kind: 'api', message: expect.stringContaining('fake server: scripted error 500') });
    expect(s.skillsListed).toBeUndefined();
    expect(s.sessionId).toBe('7247638b-defe-478b-ba85-dbcfe23a40cc');
  });

  it('include-partial-messages: stream_event lines are ignored; no result → no error from the stream', () => {
    const s = parseStreamJson(sample('include-partial-messages.stream.jsonl'));
    expect(s.sessionId).toBe('5a5a9964-2766-4db5-b564-274242625503');
    expect(s.hasResult).toBe(false);
    expect(s.error).toBeUndefined();
    expect(s.finalText).toBe('');
    expect(s.usageSource).toBe('none');
  });

  it('output-format json, max turns: a protocol error "max turns reached (N)"', () => {
    const text = sample('output-format-json-max-turns.json');
    const s = parseStreamJson(text);
    expect(s.error).toEqual({ kind: 'protocol', message: 'max turns reached (1)' });
    expect(s.terminalReason).toBe('max_turns');
    expect(s.usage).toEqual({ input: 9944, output: 46, cacheRead: 0, cacheWrite: 0 });
    expect(s.costUsd).toBeCloseTo(0.030522, 10); // no model_usage_since_last_result: the total
    expect(s.finalText).toBe('');
    expect(parseStreamJson(text, { maxTurns: 3 }).error?.message).toBe('max turns reached (3)');
    // Pretty-printed, the same object parses too.
    expect(parseStreamJson(JSON.stringify(JSON.parse(text), null, 2)).error?.message).toBe('max turns reached (1)');
  });
});

describe('synthetic stream-json', () => {
  const sid = '11111111-2222-3333-4444-555555555555';
  const assistant = (id: string, block: unknown, parent: string | null = null) =>
    JSON.stringify({ type: 'assistant', message: { id, model: 'm', role: 'assistant', content: [block], usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5, cache_creation_input_tokens: 2 } }, parent_tool_use_id: parent, session_id: sid });
  const result = (id: string, content: unknown, isError = false) =>
    JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] }, session_id: sid });

  it('a Read of …/skills/<name>/SKILL.md is an activation; failed calls are not', () => {
    const text = [
      assistant('m1', { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/w/.claude/skills/pdf-tools/SKILL.md' } }),
      result('t1', [{ type: 'text', text: 'line1' }, { type: 'text', text: 'line2' }]),
      assistant('m1', { type: 'tool_use', id: 't2', name: 'Skill', input: { skill: 'missing' } }),
      result('t2', 'Unknown skill: missing', true),
      assistant('m2', { type: 'tool_use', id: 't3', name: 'Read', input: { file_path: '/w/src/main.ts' } }),
      result('t3', 'code'),
    ].join('\n');
    const s = parseStreamJson(text);
    expect(s.skillActivations).toEqual([{ skill: 'pdf-tools', via: 'read SKILL.md' }]);
    expect(s.toolCalls.map((c) => [c.name, c.output, c.isError])).toEqual([
      ['Read', 'line1\nline2', false],
      ['Skill', 'Unknown skill: missing', true],
      ['Read', 'code', false],
    ]);
  });

  it('without a result line: usage summed over distinct messages, final text from the last top-level message', () => {
    const text = [
      assistant('m1', { type: 'text', text: 'first' }),
      assistant('m1', { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }),
      assistant('sub', { type: 'text', text: 'subagent talk' }, 't1'),
      result('t1', 'a\nb'),
      assistant('m2', { type: 'text', text: 'second' }),
      assistant('m2', { type: 'text', text: 'third' }),
      'not json',
      '',
    ].join('\n');
    const s = parseStreamJson(text);
    expect(s.hasResult).toBe(false);
    expect(s.usageSource).toBe('messages');
    expect(s.usage).toEqual({ input: 30, output: 3, cacheRead: 15, cacheWrite: 6 });
    expect(s.finalText).toBe('second\nthird');
    expect(s.badLines).toBe(1);
    expect(s.sessionId).toBe(sid);
    expect(s.costUsd).toBeUndefined();
  });

  it('an API error line without a result line is an api error', () => {
    const line = JSON.stringify({
      type: 'assistant',
      message: { id: 'x', model: '<synthetic>', role: 'assistant', content: [{ type: 'text', text: 'API Error: 529 overloaded' }] },
      session_id: sid,
      error: 'overloaded',
      is_api_error_message: true,
    });
    expect(parseStreamJson(line).error).toEqual({ kind: 'api', message: 'API Error: 529 overloaded' });
  });

  it('other is_error results are crashes carrying errors[]', () => {
    const line = JSON.stringify({ type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted', errors: ['boom'], session_id: sid });
    expect(parseStreamJson(line).error).toEqual({ kind: 'crash', message: 'aborted: boom' });
  });

  it('connection refused (api_error_status null) is still an api error', () => {
    const line = JSON.stringify({ type: 'result', subtype: 'success', is_error: true, terminal_reason: 'api_error', api_error_status: null, result: 'API Error: Connection refused (ECONNREFUSED)', session_id: sid });
    expect(parseStreamJson(line).error).toEqual({ kind: 'api', message: 'API Error: Connection refused (ECONNREFUSED)' });
  });

  it('MCP tool calls (samples from a stdio mcp-mock): named mcp__<server>__<tool>, the text blocks as output, is_error kept', () => {
    const ok = parseStreamJson(sample('mcp-call-stdio.stream.jsonl'));
    expect(ok.toolsOffered).toContain('mcp__tickets__get_ticket');
    expect(ok.toolCalls).toEqual([{ name: 'mcp__tickets__get_ticket', input: { id: 'T-7' }, output: 'ticket T-7 is open: Login fails on Safari', isError: false }]);
    expect(ok.error).toBeUndefined();
    const failed = parseStreamJson(sample('mcp-tool-error-stdio.stream.jsonl'));
    expect(failed.toolCalls).toHaveLength(1);
    expect(failed.toolCalls[0]).toMatchObject({ name: 'mcp__tickets__close_ticket', input: { id: 'T-9' }, isError: true });
    expect(failed.toolCalls[0]!.output).toMatch(/^no response configured for close_ticket with these arguments\n\nThis tool's input schema was not in your prompt/);
    expect(failed.finalText).toBe('Could not close it.');
  });

  it('long tool outputs are cut', () => {
    const p = new StreamJsonParser({ maxToolOutputChars: 10 });
    p.push(assistant('m1', { type: 'tool_use', id: 't1', name: 'Bash', input: {} }));
    p.push(result('t1', 'x'.repeat(25)));
    expect(p.finish().toolCalls[0]!.output).toBe(`${'x'.repeat(10)}\n… [truncated 15 characters]`);
  });

  it('toolResultText renders non-text blocks as placeholders', () => {
    expect(toolResultText([{ type: 'text', text: 'a' }, { type: 'image', source: {} }])).toBe('a\n[image]');
    expect(toolResultText(undefined)).toBe('');
    expect(toolResultText({ k: 1 })).toBe('{"k":1}');
  });
});
