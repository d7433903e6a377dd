/**
 * Parser tests over the real OpenCode 1.18.33 `--format json` output captured in
 * engines/opencode/samples/ (every `run*.jsonl`), plus synthetic lines for the shapes the
 * samples do not show (a failed tool, an HTTP error line, the step limit).
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineSamples } from '../../test/support/samples.js';
import { OpencodeJsonParser, parseOpencodeJson } from './parse.js';

const { dir: SAMPLES, read: sample, outputs: OUTPUT_SAMPLES } = engineSamples(import.meta.url, (f) => f.endsWith('.jsonl'));

describe('opencode samples', () => {
  it('finds every output sample', () => {
    expect(existsSync(SAMPLES), `missing ${SAMPLES}`).toBe(true);
    expect(OUTPUT_SAMPLES).toEqual(['run1-write.jsonl', 'run2-resume.jsonl', 'run3-skill.jsonl', 'run4-bash.jsonl', 'run5-error-unreachable.jsonl', 'run6-bash-exit.jsonl', 'run7-mcp-stdio.jsonl', 'run8-mcp-http.jsonl']);
  });

  it.each(OUTPUT_SAMPLES)('%s: every line is understood and a session id is found', (name) => {
    const s = parseOpencodeJson(sample(name));
    expect(s.badLines).toBe(0);
    expect(s.sessionId).toMatch(/^ses_[0-9A-Za-z]+$/);
  });

  it('run1-write: the write call with its input and output, final text, tokens summed over both steps', () => {
    const s = parseOpencodeJson(sample('run1-write.jsonl'));
    expect(s.sessionId).toBe('ses_dd7863360ffeYWhd1imjWLUJlc');
    expect(s.toolCalls).toEqual([
      { name: 'write', input: { filePath: '/tmp/lab/runs/oc1/ws/hello.txt', content: 'hello from fake model\n' }, output: 'Wrote file successfully.', isError: false },
    ]);
    expect(s.finalText).toBe('FAKE_DONE: the file was written (messages seen: 4).');
    expect(s.usage).toEqual({ input: 2456 + 2533, output: 11 + 11, cacheRead: 0, cacheWrite: 0 });
    expect(s.costUsd).toBe(0);
    expect(s.steps).toBe(2);
    expect(s.finishedSteps).toBe(2);
    expect(s.lastFinishReason).toBe('stop');
    expect(s.skillActivations).toEqual([]);
    expect(s.error).toBeUndefined();
  });

  it('run2-resume: the same session, one text step, this invocation only', () => {
    const s = parseOpencodeJson(sample('run2-resume.jsonl'));
    expect(s.sessionId).toBe('ses_dd7863360ffeYWhd1imjWLUJlc');
    expect(s.toolCalls).toEqual([]);
    expect(s.finalText).toMatch(/^FAKE_SECOND_TURN: I saw 6 messages; 2 user messages/);
    expect(s.usage).toEqual({ input: 2567, output: 11, cacheRead: 0, cacheWrite: 0 });
    expect(s.error).toBeUndefined();
  });

  it('run3-skill: the skill tool is an activation; its output is the skill content', () => {
    const s = parseOpencodeJson(sample('run3-skill.jsonl'));
    expect(s.skillActivations).toEqual([{ skill: 'o-proj-opencode-skills', via: 'skill tool' }]);
    expect(s.toolCalls[0]).toMatchObject({ name: 'skill', input: { name: 'o-proj-opencode-skills' }, isError: false });
    expect(s.toolCalls[0]!.output).toContain('<skill_content name="o-proj-opencode-skills">');
  });

  it('run4-bash: a bash call with its output', () => {
    const s = parseOpencodeJson(sample('run4-bash.jsonl'));
    expect(s.toolCalls).toEqual([{ name: 'bash', input: { command: 'echo hi > bash-out.txt; cat bash-out.txt' }, output: 'hi\n', isError: false }]);
    expect(s.usage.input).toBe(2461 + 2524);
  });

  it('run6-bash-exit: a bash call that exited 254 is "completed" with metadata.exit 254, so it is an error', () => {
    const s = parseOpencodeJson(sample('run6-bash-exit.jsonl'));
    expect(s.toolCalls).toHaveLength(1);
    expect(s.toolCalls[0]).toMatchObject({ name: 'bash', input: { command: 'npm test' }, isError: true });
    expect(s.toolCalls[0]!.output).toContain('npm error enoent Could not read package.json');
    expect(s.finalText).toBe('Ran npm test: all tests pass.');
    expect(s.error).toBeUndefined();
  });

  it('run7-mcp-stdio: MCP calls of server my_srv-2 (underscore in server and tool) become mcp__my_srv-2__<tool>; a server tool error is isError', () => {
    const s = parseOpencodeJson(sample('run7-mcp-stdio.jsonl'), { mcpServers: ['my_srv-2', 'broken'] });
    expect(s.toolCalls).toEqual([
      { name: 'mcp__my_srv-2__get_the_ticket', input: { id: 'T-7' }, output: 'ticket T-7 is open', isError: false },
      { name: 'mcp__my_srv-2__strict', input: { id: 'B' }, output: 'no response configured for strict with these arguments', isError: true },
    ]);
    expect(s.finalText).toBe('done');
    expect(s.error).toBeUndefined();
    // Without the configured names the engine's own names are kept.
    expect(parseOpencodeJson(sample('run7-mcp-stdio.jsonl')).toolCalls.map((c) => c.name)).toEqual(['my_srv-2_get_the_ticket', 'my_srv-2_strict']);
  });

  it('run8-mcp-http: a remote (tickets) and a local (envdump) server in one turn, each its own name', () => {
    const s = parseOpencodeJson(sample('run8-mcp-http.jsonl'), { mcpServers: ['tickets', 'envdump'] });
    expect(s.toolCalls).toEqual([
      { name: 'mcp__tickets__get_ticket', input: { id: 'T-9' }, output: 'ticket T-9 is open', isError: false },
      { name: 'mcp__envdump__get_ticket', input: { id: 'E' }, output: 'ticket E is open', isError: false },
    ]);
    // Only configured servers are renamed.
    expect(parseOpencodeJson(sample('run8-mcp-http.jsonl'), { mcpServers: ['tickets'] }).toolCalls.map((c) => c.name)).toEqual(['mcp__tickets__get_ticket', 'envdump_get_ticket']);
  });

  it('run5-error-unreachable: an APIError line is an api error with its message', () => {
    const s = parseOpencodeJson(sample('run5-error-unreachable.jsonl'));
    expect(s.error).toEqual({ kind: 'api', message: 'Cannot connect to API: Unable to connect. Is the computer able to access the url?' });
    expect(s.finalText).toBe('');
    expect(s.steps).toBe(0);
  });
});

describe('opencode shapes not in the samples', () => {
  const line = (o: object) => JSON.stringify({ timestamp: 1, sessionID: 'ses_x', ...o });

  it('a failed tool: isError with state.error as output, and no skill activation', () => {
    const s = parseOpencodeJson(
      [
        line({ type: 'step_start', part: { type: 'step-start' } }),
        line({ type: 'tool_use', part: { type: 'tool', tool: 'skill', callID: 'c1', state: { status: 'error', input: { name: 'hello' }, error: 'ripgrep execution failed' } } }),
        line({ type: 'tool_use', part: { type: 'tool', tool: 'read', callID: 'c2', state: { status: 'completed', input: { filePath: '/w/.opencode/skills/brand/SKILL.md' }, output: '# brand' } } }),
        line({ type: 'step_finish', part: { type: 'step-finish', reason: 'tool-calls', tokens: { input: 10, output: 2, reasoning: 3, cache: { read: 4, write: 5 } }, cost: 0.001 } }),
      ].join('\n'),
    );
    expect(s.toolCalls[0]).toEqual({ name: 'skill', input: { name: 'hello' }, output: 'ripgrep execution failed', isError: true });
    expect(s.skillActivations).toEqual([{ skill: 'brand', via: 'read SKILL.md' }]);
    expect(s.usage).toEqual({ input: 10, output: 5, cacheRead: 4, cacheWrite: 5 });
    expect(s.costUsd).toBe(0.001);
  });

  it('an HTTP error line carries the status; other error names are crashes', () => {
    const api = parseOpencodeJson(line({ type: 'error', error: { name: 'APIError', data: { message: 'scripted overload', statusCode: 500, isRetryable: true } } }));
    expect(api.error).toEqual({ kind: 'api', message: 'scripted overload (HTTP 500)' });
    const other = parseOpencodeJson(line({ type: 'error', error: { name: 'UnknownError', data: { message: 'boom' } } }));
    expect(other.error).toEqual({ kind: 'crash', message: 'UnknownError: boom' });
  });

  it('more steps than the limit is "max turns reached"; the final text is the last text step', () => {
    const steps = (n: number) =>
      Array.from({ length: n }, (_, i) => [
        line({ type: 'step_start', part: {} }),
        line({ type: 'text', part: { type: 'text', text: `step ${i + 1}` } }),
        line({ type: 'step_finish', part: { reason: i + 1 < n ? 'tool-calls' : 'stop', tokens: { input: 1, output: 1 } } }),
      ]).flat();
    expect(parseOpencodeJson(steps(3).join('\n'), { maxSteps: 2 }).error).toEqual({ kind: 'protocol', message: 'max turns reached (2)' });
    const ok = parseOpencodeJson(steps(2).join('\n'), { maxSteps: 2 });
    expect(ok.error).toBeUndefined();
    expect(ok.finalText).toBe('step 2');
  });

  it('the final text is the last step\'s text only: empty when the last step said nothing', () => {
    const lines = [
      line({ type: 'step_start', part: {} }),
      line({ type: 'text', part: { type: 'text', text: "PROGRESS: I'll run ls first." } }),
      line({ type: 'tool_use', part: { tool: 'bash', state: { status: 'completed', input: { command: 'ls' }, output: 'a' } } }),
      line({ type: 'step_finish', part: { reason: 'tool-calls', tokens: { input: 1, output: 1 } } }),
      line({ type: 'step_start', part: {} }),
      line({ type: 'step_finish', part: { reason: 'stop', tokens: { input: 1, output: 0 } } }),
    ];
    expect(parseOpencodeJson(lines.join('\n')).finalText).toBe('');
  });

  it('incremental pushes, blank and broken lines, long outputs cut', () => {
    const p = new OpencodeJsonParser({ maxToolOutputChars: 5 });
    p.push('');
    p.push('not json');
    p.push('[1]');
    p.push(line({ type: 'tool_use', part: { tool: 'bash', state: { status: 'completed', input: { command: 'x' }, output: '0123456789' } } }));
    const s = p.finish();
    expect(s.badLines).toBe(2);
    expect(s.toolCalls[0]!.output).toBe('01234\n… [truncated 5 characters]');
  });
});
