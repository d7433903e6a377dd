/**
 * Parser tests over the real Qwen Code 0.24.4 output captured in
 * engines/qwen-code/samples/ (real captured output, copied into the repository) (every `*.stream.jsonl` and the `--output-format json`
 * array `run4-write.json`), plus synthetic lines for the shapes the samples do not show.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineSamples } from '../../test/support/samples.js';
import { parseQwenOutput, QwenStreamParser, qwenToolResultText, qwenMcpToolErrorText } from './parse.js';

const { dir: SAMPLES, read: sample, outputs: OUTPUT_SAMPLES } = engineSamples(import.meta.url, (f) => !f.startsWith('mcp') && (f.endsWith('.stream.jsonl') || f === 'run4-write.json'));

describe('qwen-code samples', () => {
  it('finds every output sample', () => {
    expect(existsSync(SAMPLES), `missing ${SAMPLES}`).toBe(true);
    expect(OUTPUT_SAMPLES).toEqual([
      'run1-write.stream.jsonl',
      'run2-resume.stream.jsonl',
      'run3-skill.stream.jsonl',
      'run4-write.json',
      'run5-error-unreachable.stream.jsonl',
      'run6-bash.stream.jsonl',
    ]);
  });

  it.each(OUTPUT_SAMPLES)('%s: every line is understood, with init and result', (name) => {
    const s = parseQwenOutput(sample(name));
    expect(s.badLines).toBe(0);
    expect(s.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.hasResult).toBe(true);
  });

  it('the init line gives the tools offered and the permission mode', () => {
    const s = parseQwenOutput(sample('run3-skill.stream.jsonl'));
    expect(s.permissionMode).toBe('yolo');
    expect(s.toolsOffered).toEqual(expect.arrayContaining(['skill', 'write_file', 'run_shell_command']));
    expect(s.toolsOffered![0]).toBe('get_goal');
  });

  it('run1-write: write_file call paired with its result; result text and usage', () => {
    const s = parseQwenOutput(sample('run1-write.stream.jsonl'));
    expect(s.sessionId).toBe('330ed6f8-9deb-430b-a2b6-126f2f2537b0');
    expect(s.toolCalls).toEqual([
      {
        name: 'write_file',
        input: { file_path: '/tmp/lab/runs/qwen1/ws/hello.txt', content: 'hello from fake model\n' },
        output: 'Successfully created and wrote to new file: /tmp/lab/runs/qwen1/ws/hello.txt.',
        isError: false,
      },
    ]);
    expect(s.finalText).toBe('FAKE_DONE: the file was written (messages seen: 4).');
    expect(s.usage).toEqual({ input: 18643, output: 22, cacheRead: 0, cacheWrite: 0 });
    expect(s.usageSource).toBe('result');
    expect(s.numTurns).toBe(2);
    expect(s.model).toBe('fake-model');
    expect(s.error).toBeUndefined();
  });

  it('run2-resume: cumulative result.usage minus the previous turn; messages when the previous is unknown', () => {
    const prev = parseQwenOutput(sample('run1-write.stream.jsonl')).cumulativeUsage!;
    const s = parseQwenOutput(sample('run2-resume.stream.jsonl'), { previousCumulativeUsage: prev, resumed: true });
    expect(s.sessionId).toBe('330ed6f8-9deb-430b-a2b6-126f2f2537b0');
    expect(s.cumulativeUsage).toEqual({ input: 43031, output: 55, cacheRead: 0, cacheWrite: 0 });
    expect(s.usage).toEqual({ input: 43031 - 18643, output: 55 - 22, cacheRead: 0, cacheWrite: 0 });
    expect(s.usageSource).toBe('result-delta');
    const blind = parseQwenOutput(sample('run2-resume.stream.jsonl'), { resumed: true });
    expect(blind.usageSource).toBe('messages');
    expect(blind.usage).toEqual({ input: 9415, output: 11, cacheRead: 0, cacheWrite: 0 });
    expect(s.finalText).toMatch(/^FAKE_SECOND_TURN: I saw 6 messages/);
  });

  it('run3-skill: the skill tool is an activation', () => {
    const s = parseQwenOutput(sample('run3-skill.stream.jsonl'));
    expect(s.skillActivations).toEqual([{ skill: 'q-proj-qwen', via: 'skill tool' }]);
    expect(s.toolCalls[0]).toMatchObject({ name: 'skill', input: { skill: 'q-proj-qwen' }, isError: false });
    expect(s.slashCommands).toContain('q-proj-qwen');
  });

  it('run4-write.json: the --output-format json array gives the same summary', () => {
    const s = parseQwenOutput(sample('run4-write.json'));
    expect(s.sessionId).toBe('11111111-2222-4333-8444-555555555555');
    expect(s.toolCalls.map((c) => c.name)).toEqual(['write_file']);
    expect(s.finalText).toBe('FAKE_DONE: the file was written (messages seen: 4).');
    expect(s.usage.input).toBe(14765);
  });

  it('run5-error-unreachable: error_during_execution with an [API Error …] message is an api error', () => {
    const s = parseQwenOutput(sample('run5-error-unreachable.stream.jsonl'));
    expect(s.error).toEqual({ kind: 'api', message: '[API Error: Connection error. (cause: fetch failed)]' });
    expect(s.finalText).toBe('');
    expect(s.resultSubtype).toBe('error_during_execution');
  });

  it('run6-bash: run_shell_command with its output', () => {
    const s = parseQwenOutput(sample('run6-bash.stream.jsonl'));
    expect(s.toolCalls).toEqual([{ name: 'run_shell_command', input: { command: 'echo hi-qwen', description: 'fake shell call' }, output: 'hi-qwen', isError: false }]);
  });
});

describe('qwen-code shapes not in the samples', () => {
  const line = (o: object) => JSON.stringify({ uuid: 'u', session_id: 's-1', ...o });
  const assistant = (content: object[], extra: object = {}) => line({ type: 'assistant', parent_tool_use_id: null, message: { id: 'm', role: 'assistant', content, usage: { input_tokens: 3, output_tokens: 1 } }, ...extra });

  it('a failed tool is no activation; read_file of SKILL.md is', () => {
    const s = parseQwenOutput(
      [
        assistant([{ type: 'tool_use', id: 'a', name: 'skill', input: { skill: 'x' } }]),
        line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'a', is_error: true, content: 'Skill "x" not found' }] } }),
        assistant([{ type: 'tool_use', id: 'b', name: 'read_file', input: { file_path: '/w/.qwen/skills/brand/SKILL.md' } }]),
        line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'b', is_error: false, content: [{ type: 'text', text: '# brand' }] }] } }),
        line({ type: 'result', subtype: 'success', is_error: false, result: 'ok', usage: { input_tokens: 6, output_tokens: 2 } }),
      ].join('\n'),
    );
    expect(s.toolCalls[0]).toMatchObject({ isError: true, output: 'Skill "x" not found' });
    expect(s.skillActivations).toEqual([{ skill: 'brand', via: 'read SKILL.md' }]);
    expect(s.toolCalls[1]!.output).toBe('# brand');
  });

  it('an HTTP error from the model, with and without a result line', () => {
    const withResult = parseQwenOutput(
      [
        assistant([{ type: 'text', text: '[API Error: 400 scripted bad request]' }]),
        line({ type: 'result', subtype: 'error_during_execution', is_error: true, usage: {}, error: { message: '[API Error: 400 scripted bad request]' } }),
      ].join('\n'),
    );
    expect(withResult.error).toEqual({ kind: 'api', message: '[API Error: 400 scripted bad request]' });
    const killed = parseQwenOutput(assistant([{ type: 'text', text: '[API Error: 500 scripted overload]' }]));
    expect(killed.error).toEqual({ kind: 'api', message: '[API Error: 500 scripted overload]' });
    expect(killed.hasResult).toBe(false);
  });

  it('other is_error results are crashes; max-turns subtypes are protocol errors', () => {
    const crash = parseQwenOutput(line({ type: 'result', subtype: 'error_during_execution', is_error: true, error: { message: 'tool registry failed' } }));
    expect(crash.error).toEqual({ kind: 'crash', message: 'error_during_execution: tool registry failed' });
    const max = parseQwenOutput(line({ type: 'result', subtype: 'error_max_turns', is_error: true }));
    expect(max.error?.kind).toBe('protocol');
  });

  it('incremental pushes, a JSON array on one line, broken lines, tool result texts', () => {
    const p = new QwenStreamParser();
    p.push('nope');
    p.push(`[${line({ type: 'system', subtype: 'init', session_id: 'abc', qwen_code_version: '9' })}]`);
    const s = p.finish();
    expect(s.badLines).toBe(1);
    expect(s.sessionId).toBe('abc');
    expect(s.hasResult).toBe(false);
    expect(qwenToolResultText([{ type: 'text', text: 'a' }, { type: 'image' }])).toBe('a\n[image]');
    expect(qwenToolResultText(undefined)).toBe('');
  });
});

describe('qwen-code MCP tool calls (samples mcp1-stdio-call, mcp2-tool-error: qwen 0.24.4, server `help_desk`)', () => {
  it('a call is named mcp__<server>__<tool> with input and output; init lists the server as connected', () => {
    const s = parseQwenOutput(sample('mcp1-stdio-call.stream.jsonl'));
    expect(s.toolCalls).toEqual([{ name: 'mcp__help_desk__get_ticket', input: { id: 'T-7' }, output: 'ticket T-7 is open: Login fails on Safari', isError: false }]);
    expect(s.finalText).toBe('Looked it up.');
    expect(s.error).toBeUndefined();
    expect(s.mcpServers).toEqual([{ name: 'help_desk', status: 'connected' }]);
    expect(s.toolsOffered).toEqual(expect.arrayContaining(['mcp__help_desk__get_ticket', 'mcp__help_desk__close_ticket']));
  });

  it('a tool error keeps the server’s own text, not qwen’s wrapper', () => {
    const s = parseQwenOutput(sample('mcp2-tool-error.stream.jsonl'));
    expect(s.toolCalls).toEqual([{ name: 'mcp__help_desk__close_ticket', input: { id: 'T-9' }, output: 'no response configured for close_ticket with these arguments', isError: true }]);
    expect(s.error).toBeUndefined();
    expect(qwenMcpToolErrorText('plain failure')).toBe('plain failure');
    expect(qwenMcpToolErrorText("MCP tool 't' reported tool error for function call: {} with response: [oops]")).toContain('[oops]');
  });
});
