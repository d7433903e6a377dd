/**
 * Parser tests over the real Gemini CLI 0.61.0 output captured in
 * engines/gemini-cli/samples/ (real captured output, copied into the repository) (every `*.stream.jsonl` and the `--output-format json`
 * sample), plus lines captured from the same binary for the cases the samples do not show
 * (API error, quota error, unreachable server, max turns, a text run before a tool call).
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineSamples } from '../../test/support/samples.js';
import { GeminiStreamParser, mcpToolErrorText, parseGeminiStream, skillOfSkillMdPath } from './parse.js';

/** The engine-output samples: every *.jsonl plus the `--output-format json` result (not the request captures). */
const { dir: SAMPLES, read: sample, outputs: OUTPUT_SAMPLES } = engineSamples(import.meta.url, (f) => !f.startsWith('mcp') && (f.endsWith('.jsonl') || (f.endsWith('.json') && !f.startsWith('request-'))));

describe('gemini-cli samples', () => {
  it('finds the sample folder', () => {
    expect(existsSync(SAMPLES), `missing ${SAMPLES}`).toBe(true);
    expect(OUTPUT_SAMPLES).toEqual(['run1-write.stream.jsonl', 'run2-resume.stream.jsonl', 'run3-skill.stream.jsonl', 'run4-write-autorouter.json', 'run5-bash.stream.jsonl']);
  });

  it.each(OUTPUT_SAMPLES)('%s: every line is understood, a session id, a result and no error', (name) => {
    const s = parseGeminiStream(sample(name));
    expect(s.badLines).toBe(0);
    expect(s.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.hasResult).toBe(true);
    expect(s.status).toBe('success');
    expect(s.error).toBeUndefined();
    expect(s.usage.input).toBeGreaterThan(0);
    expect(s.usage.output).toBeGreaterThan(0);
    expect(s.finalText).toMatch(/^FAKE_/);
  });

  it('run1-write: write_file call paired with its result (no output for write_file), tokens', () => {
    const s = parseGeminiStream(sample('run1-write.stream.jsonl'));
    expect(s.sessionId).toBe('ee5f5967-f445-4458-975d-1ef40b8e3c7a');
    expect(s.model).toBe('gemini-2.5-flash');
    expect(s.finalText).toBe('FAKE_DONE: the file was written (messages seen: 3).');
    expect(s.toolCalls).toEqual([{ name: 'write_file', input: { file_path: 'hello.txt', content: 'hello from fake model\n' }, isError: false }]);
    expect(s.skillActivations).toEqual([]);
    expect(s.usage).toEqual({ input: 481, output: 22, cacheRead: 0, cacheWrite: 0 });
    expect(s.usageSource).toBe('result');
    expect(s.rawStats).toEqual({ input: 481, output: 22, cached: 0, toolCalls: 1 });
    expect(s.engineDurationMs).toBe(106);
  });

  it('run2-resume: same session, text only, this invocation’s tokens', () => {
    const s = parseGeminiStream(sample('run2-resume.stream.jsonl'));
    expect(s.sessionId).toBe('ee5f5967-f445-4458-975d-1ef40b8e3c7a');
    expect(s.toolCalls).toEqual([]);
    expect(s.finalText).toMatch(/^FAKE_SECOND_TURN: I saw 5 messages; 2 user messages/);
    expect(s.usage).toEqual({ input: 387, output: 11, cacheRead: 0, cacheWrite: 0 });
  });

  it('run2-resume after run1: stats.tool_calls (0) ≤ tool_use lines, so they are not cumulative and nothing is subtracted', () => {
    const first = parseGeminiStream(sample('run1-write.stream.jsonl'));
    const s = parseGeminiStream(sample('run2-resume.stream.jsonl'), { previous: first.rawStats });
    expect(s.usageSource).toBe('result');
    expect(s.usage.input).toBe(387);
  });

  it('run3-skill: activate_skill is an activation; its output is kept', () => {
    const s = parseGeminiStream(sample('run3-skill.stream.jsonl'));
    expect(s.toolCalls).toHaveLength(1);
    expect(s.toolCalls[0]).toMatchObject({ name: 'activate_skill', input: { name: 'g-proj-gemini' }, isError: false });
    expect(s.toolCalls[0]!.output).toMatch(/^Skill \*\*g-proj-gemini\*\* activated\. Resources loaded from `\/tmp\/lab\/runs\/gm-skills\/ws\/\.gemini\/skills\/g-proj-gemini`/);
    expect(s.skillActivations).toEqual([{ skill: 'g-proj-gemini', via: 'activate_skill tool' }]);
    expect(s.usage).toEqual({ input: 669, output: 22, cacheRead: 0, cacheWrite: 0 });
  });

  it('run5-bash: run_shell_command with its output', () => {
    const s = parseGeminiStream(sample('run5-bash.stream.jsonl'));
    expect(s.toolCalls).toEqual([{ name: 'run_shell_command', input: { command: 'echo hi-gemini', description: 'fake shell call' }, output: 'hi-gemini', isError: false }]);
    expect(s.skillActivations).toEqual([]);
    expect(s.usage).toEqual({ input: 494, output: 22, cacheRead: 0, cacheWrite: 0 });
  });

  it('run4-write-autorouter.json (--output-format json): response text, tokens summed over router + main model', () => {
    const s = parseGeminiStream(sample('run4-write-autorouter.json'));
    expect(s.sessionId).toBe('4d6d6b4d-7420-4f20-9134-8411a77dc994');
    expect(s.finalText).toBe('FAKE_DONE: the file was written (messages seen: 3).');
    expect(s.toolCalls).toEqual([]); // the json format has no per-call details
    expect(s.usage).toEqual({ input: 188 + 484, output: 11 + 22, cacheRead: 0, cacheWrite: 0 });
    expect(s.rawStats?.toolCalls).toBe(1);
  });
});

// Lines captured from gemini 0.61.0 against skill-up's scripted server (timestamps shortened).
const INIT = '{"type":"init","timestamp":"t","session_id":"1b5a3583-5cb7-428b-bd75-d3cd1ab532ae","model":"fake-model"}';
const ZERO_STATS = '"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}';

describe('gemini-cli error results (captured)', () => {
  it('HTTP 500 → api, with the API message (exit 244)', () => {
    const s = parseGeminiStream(
      [
        INIT,
        '{"type":"message","timestamp":"t","role":"user","content":"please fail now"}',
        `{"type":"result","timestamp":"t","status":"error","error":{"type":"unknown","message":"[API Error: {\\"error\\":{\\"code\\":500,\\"message\\":\\"scripted failure for the adapter test\\",\\"status\\":\\"INTERNAL\\"}}]"},${ZERO_STATS}}`,
      ].join('\n'),
    );
    expect(s.error?.kind).toBe('api');
    expect(s.error?.message).toContain('scripted failure for the adapter test');
    expect(s.finalText).toBe('');
  });

  it('HTTP 429 → api (quota wording kept)', () => {
    const s = parseGeminiStream(`${INIT}\n{"type":"result","timestamp":"t","status":"error","error":{"type":"unknown","message":"[API Error: scripted quota]\\nPlease wait and try again later."},${ZERO_STATS}}`);
    expect(s.error).toEqual({ kind: 'api', message: '[API Error: scripted quota]\nPlease wait and try again later.' });
  });

  it('unreachable server → api (fetch failed)', () => {
    const s = parseGeminiStream(`${INIT}\n{"type":"result","timestamp":"t","status":"error","error":{"type":"unknown","message":"[API Error: exception TypeError: fetch failed sending request]"},${ZERO_STATS}}`);
    expect(s.error).toEqual({ kind: 'api', message: '[API Error: exception TypeError: fetch failed sending request]' });
  });

  it('max session turns (exit 53) → protocol "max turns reached (N)"; tool calls and tokens so far kept', () => {
    const lines = [
      INIT,
      '{"type":"tool_use","timestamp":"t","tool_name":"run_shell_command","tool_id":"a","parameters":{"command":"true","description":"Run: true"}}',
      '{"type":"tool_result","timestamp":"t","tool_id":"a","status":"success","output":""}',
      '{"type":"tool_use","timestamp":"t","tool_name":"run_shell_command","tool_id":"b","parameters":{"command":"true","description":"Run: true"}}',
      '{"type":"tool_result","timestamp":"t","tool_id":"b","status":"success","output":""}',
      '{"type":"result","timestamp":"t","status":"error","error":{"type":"FatalTurnLimitedError","message":"Reached max session turns for this session. Increase the number of turns by specifying maxSessionTurns in settings.json."},"stats":{"total_tokens":23890,"input_tokens":23858,"output_tokens":32,"cached":0,"input":23858,"duration_ms":0,"tool_calls":2,"models":{}}}',
    ].join('\n');
    const s = parseGeminiStream(lines, { maxTurns: 2 });
    expect(s.error).toEqual({ kind: 'protocol', message: 'max turns reached (2)' });
    expect(s.toolCalls.map((c) => c.output)).toEqual(['', '']);
    expect(s.usage).toEqual({ input: 23858, output: 32, cacheRead: 0, cacheWrite: 0 });
  });

  it('an invalid-stream error line with an error result → protocol with that message; other errors → crash', () => {
    const invalid = parseGeminiStream(
      `${INIT}\n{"type":"error","timestamp":"t","severity":"error","message":"Model returned an empty response."}\n{"type":"result","timestamp":"t","status":"error",${ZERO_STATS}}`,
    );
    expect(invalid.error).toEqual({ kind: 'protocol', message: 'Model returned an empty response.' });
    expect(invalid.warnings).toEqual(['error: Model returned an empty response.']);
    const crash = parseGeminiStream(`${INIT}\n{"type":"result","timestamp":"t","status":"error","error":{"type":"FatalToolExecutionError","message":"Error executing tool x"},${ZERO_STATS}}`);
    expect(crash.error).toEqual({ kind: 'crash', message: 'FatalToolExecutionError: Error executing tool x' });
    const cancelled = parseGeminiStream(`${INIT}\n{"type":"result","timestamp":"t","status":"error","error":{"type":"FatalCancellationError","message":"Operation cancelled."},${ZERO_STATS}}`);
    expect(cancelled.error?.kind).toBe('cancelled');
  });

  it('a loop-detected warning is kept as a warning, not an error', () => {
    const s = parseGeminiStream(`${INIT}\n{"type":"error","timestamp":"t","severity":"warning","message":"Loop detected, stopping execution"}\n{"type":"result","timestamp":"t","status":"success",${ZERO_STATS}}`);
    expect(s.error).toBeUndefined();
    expect(s.warnings).toEqual(['warning: Loop detected, stopping execution']);
  });

  it('killed before the result line: no result, no error of its own, the partial text kept', () => {
    const s = parseGeminiStream(`${INIT}\n{"type":"message","timestamp":"t","role":"assistant","content":"Partial","delta":true}`);
    expect(s).toMatchObject({ hasResult: false, usageSource: 'none', finalText: 'Partial', error: undefined });
  });
});

describe('gemini-cli final text, tools and skills (synthetic lines)', () => {
  const tool = (id: string, name: string, parameters: object) => JSON.stringify({ type: 'tool_use', timestamp: 't', tool_name: name, tool_id: id, parameters });
  const result = (id: string, status: string, extra: object = {}) => JSON.stringify({ type: 'tool_result', timestamp: 't', tool_id: id, status, ...extra });
  const say = (content: string) => JSON.stringify({ type: 'message', timestamp: 't', role: 'assistant', content, delta: true });

  it('the final text is the text after the last tool call; deltas are joined', () => {
    const s = parseGeminiStream([INIT, say('I will write it.'), tool('w', 'write_file', { file_path: 'a', content: 'b' }), result('w', 'success'), say('Wrote '), say('a.')].join('\n'));
    expect(s.finalText).toBe('Wrote a.');
  });

  it('without text after the last tool call the final text is empty: narration sent with a tool call is no answer', () => {
    const s = parseGeminiStream([INIT, say('Before.'), tool('w', 'write_file', {}), result('w', 'success')].join('\n'));
    expect(s.finalText).toBe('');
  });

  it('SKILL.md reads count (read_file, read_many_files, shell); failed calls and writes do not', () => {
    const s = parseGeminiStream(
      [
        INIT,
        tool('1', 'read_file', { file_path: '/w/.agents/skills/alpha/SKILL.md' }),
        result('1', 'success'),
        tool('2', 'read_many_files', { include: ['.gemini/skills/beta/SKILL.md'] }),
        result('2', 'success'),
        tool('3', 'run_shell_command', { command: 'cat .agents/skills/gamma/SKILL.md | head' }),
        result('3', 'success', { output: '---' }),
        tool('4', 'activate_skill', { name: 'delta' }),
        result('4', 'error', { error: { type: 'INVALID_TOOL_PARAMS', message: 'no such skill' } }),
        tool('5', 'write_file', { file_path: '/w/.agents/skills/eps/SKILL.md', content: 'x' }),
        result('5', 'success'),
        tool('6', 'read_file', { file_path: '/w/README.md' }),
        result('6', 'success'),
      ].join('\n'),
    );
    expect(s.skillActivations).toEqual([
      { skill: 'alpha', via: 'read SKILL.md' },
      { skill: 'beta', via: 'read SKILL.md' },
      { skill: 'gamma', via: 'shell read SKILL.md' },
    ]);
    expect(s.toolCalls[3]).toMatchObject({ name: 'activate_skill', isError: true, output: 'no such skill' });
  });

  it('skillOfSkillMdPath', () => {
    expect(skillOfSkillMdPath('/a/.agents/skills/x-y/SKILL.md')).toBe('x-y');
    expect(skillOfSkillMdPath('skills/z/SKILL.md')).toBe('z');
    expect(skillOfSkillMdPath('/a/skills/SKILL.md')).toBeUndefined();
    expect(skillOfSkillMdPath('/a/b/c.md')).toBeUndefined();
  });

  it('long tool outputs are cut; bad lines counted; a repeated tool_id is one call', () => {
    const p = new GeminiStreamParser({ maxToolOutputChars: 5 });
    for (const l of [INIT, 'not json', '[1]', tool('x', 'run_shell_command', { command: 'yes' }), tool('x', 'run_shell_command', { command: 'yes' }), result('x', 'success', { output: '0123456789' })]) p.push(l);
    const s = p.finish();
    expect(s.badLines).toBe(2);
    expect(s.toolCalls).toHaveLength(1);
    expect(s.toolCalls[0]!.output).toBe('01234\n… [truncated 5 characters]');
  });

  it('cumulative counters (stats.tool_calls above the tool_use lines printed) are made per turn with `previous`', () => {
    const text = [INIT, say('ok'), '{"type":"result","timestamp":"t","status":"success","stats":{"input_tokens":1500,"input":1400,"cached":100,"output_tokens":60,"tool_calls":3}}'].join('\n');
    const s = parseGeminiStream(text, { previous: { input: 1000, output: 40, cached: 50, toolCalls: 3 } });
    expect(s.usageSource).toBe('result-delta');
    expect(s.usage).toEqual({ input: 400, output: 20, cacheRead: 50, cacheWrite: 0 });
    expect(s.rawStats).toEqual({ input: 1400, output: 60, cached: 100, toolCalls: 3 });
    // Without `previous` the figures are taken as they are.
    expect(parseGeminiStream(text).usage).toEqual({ input: 1400, output: 60, cacheRead: 100, cacheWrite: 0 });
  });
});

describe('gemini-cli MCP tool calls (samples mcp1-stdio-call, mcp2-tool-error: gemini 0.61.0, server `help_desk`)', () => {
  it('a call is recorded as mcp__<server>__<tool> with input and output when the server is configured', () => {
    const s = parseGeminiStream(sample('mcp1-stdio-call.stream.jsonl'), { mcpServers: ['help', 'help_desk'] });
    expect(s.toolCalls).toEqual([{ name: 'mcp__help_desk__get_ticket', input: { id: 'T-7' }, output: 'ticket T-7 is open: Login fails on Safari', isError: false }]);
    expect(s.finalText).toBe('Looked it up.');
    expect(s.error).toBeUndefined();
    // Without the configured names the engine's own name stays (the split is ambiguous).
    expect(parseGeminiStream(sample('mcp1-stdio-call.stream.jsonl')).toolCalls[0]!.name).toBe('mcp_help_desk_get_ticket');
  });

  it('a tool error keeps the server’s own text, not gemini’s generic line', () => {
    const s = parseGeminiStream(sample('mcp2-tool-error.stream.jsonl'), { mcpServers: ['help_desk'] });
    expect(s.toolCalls).toEqual([{ name: 'mcp__help_desk__close_ticket', input: { id: 'T-9' }, output: 'no response configured for close_ticket with these arguments', isError: true }]);
    expect(s.error).toBeUndefined();
    expect(mcpToolErrorText('MCP tool failed')).toBe('MCP tool failed');
    expect(mcpToolErrorText('x with response: not json')).toBe('x with response: not json');
  });
});
