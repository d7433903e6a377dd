/**
 * Parser tests over the real Codex CLI 0.171.0 output captured in
 * engines/codex/samples/ (real captured output, copied into the repository) (every `codex exec --json` `*.jsonl` and the trimmed rollout
 * file), plus synthetic lines for what the samples do not show (MCP calls, failed commands,
 * SKILL.md writes, `turn.failed` without a message).
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { engineSamples } from '../../test/support/samples.js';
import { CodexJsonParser, parseCodexJson, parseRollout, perTurnUsage, skillsReadBy } from './parse.js';

/** The `codex exec --json` samples (every *.jsonl except the rollout file). */
const { dir: SAMPLES, read: sample, outputs: OUTPUT_SAMPLES } = engineSamples(import.meta.url, (f) => f.endsWith('.jsonl') && !f.startsWith('rollout-'));

describe('codex samples', () => {
  it('finds the sample folder', () => {
    expect(existsSync(SAMPLES), `missing ${SAMPLES}`).toBe(true);
    expect(OUTPUT_SAMPLES).toEqual([
      'connection-refused-hangs.jsonl',
      'error-500-with-2-retries.jsonl',
      'error-500.jsonl',
      'mcp-call-stdio.jsonl',
      'mcp-tool-failed-stdio.jsonl',
      'readonly-sandbox-unknown-model.jsonl',
      'skill-mention-apply-patch.jsonl',
      'turn1-shell-write.jsonl',
      'turn2-resume.jsonl',
    ]);
  });

  it.each(OUTPUT_SAMPLES)('%s: every line is understood and the thread id is found', (name) => {
    const s = parseCodexJson(sample(name));
    expect(s.badLines).toBe(0);
    expect(s.sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/); // UUIDv7
    // Exactly the runs that ended normally report turn.completed; only the failed ones an error.
    const ok = !/error|connection-refused/.test(name);
    expect(s.completed).toBe(ok);
    expect(s.error === undefined).toBe(ok || name === 'connection-refused-hangs.jsonl');
  });

  it('turn1-shell-write: the shell write, its (empty) output, final text, usage', () => {
    const s = parseCodexJson(sample('turn1-shell-write.jsonl'));
    expect(s.sessionId).toBe('01a2287e-c04a-77e0-8a9b-bb465fc30561');
    expect(s.toolCalls).toEqual([
      { name: 'command_execution', input: { command: `/bin/bash -lc "printf '%s' 'Hello from fake codex' > hello.txt"` }, output: '', isError: false },
    ]);
    expect(s.finalText).toMatch(/^FAKE-DONE: tool said: Chunk ID: d91552\n/);
    expect(s.skillActivations).toEqual([]);
    expect(s.usage).toEqual({ input: 14465, output: 97, cacheRead: 0, cacheWrite: 0 });
    expect(s.cumulativeUsage).toEqual({ input_tokens: 14465, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 97, reasoning_output_tokens: 0 });
    expect(s.warnings).toEqual([]);
    expect(s.error).toBeUndefined();
  });

  it('turn2-resume: same thread, tokens per turn although codex reports them cumulatively', () => {
    const t1 = parseCodexJson(sample('turn1-shell-write.jsonl'));
    const t2 = parseCodexJson(sample('turn2-resume.jsonl'), { previousUsage: t1.cumulativeUsage });
    expect(t2.sessionId).toBe(t1.sessionId);
    expect(t2.finalText).toBe('FAKE-REPLY: What did you do?');
    expect(t2.toolCalls).toEqual([]);
    expect(t2.usage).toEqual({ input: 21878 - 14465, output: 112 - 97, cacheRead: 0, cacheWrite: 0 });
    expect(t2.cumulativeUsage?.input_tokens).toBe(21878);
    // Without the previous figures the cumulative value is all there is.
    expect(parseCodexJson(sample('turn2-resume.jsonl')).usage.input).toBe(21878);
  });

  it('skill-mention-apply-patch: apply_patch is a file_change with its changes', () => {
    const s = parseCodexJson(sample('skill-mention-apply-patch.jsonl'));
    expect(s.toolCalls).toEqual([
      {
        name: 'file_change',
        input: { changes: [{ path: '/tmp/lab/demo-out/codex/work/patched.txt', kind: 'add' }] },
        output: 'add /tmp/lab/demo-out/codex/work/patched.txt',
        isError: false,
      },
    ]);
    expect(s.finalText).toContain('Success. Updated the following files:\nA patched.txt');
    // The $hello mention is visible only in the rollout file (parseRollout), not here.
    expect(s.skillActivations).toEqual([]);
    expect(s.usage.input).toBe(14608);
  });

  it('error-500: turn.failed is an api error with its message', () => {
    const s = parseCodexJson(sample('error-500.jsonl'));
    expect(s.error).toEqual({ kind: 'api', message: 'We’re currently experiencing high demand, which may cause temporary errors.' });
    expect(s.reconnects).toBe(0);
    expect(s.usage).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    expect(s.cumulativeUsage).toBeUndefined();
    expect(s.finalText).toBe('');
  });

  it('error-500-with-2-retries: reconnect lines are counted, the final error wins', () => {
    const s = parseCodexJson(sample('error-500-with-2-retries.jsonl'));
    expect(s.reconnects).toBe(2);
    expect(s.error?.kind).toBe('api');
    expect(s.error?.message).toBe('We’re currently experiencing high demand, which may cause temporary errors.');
  });

  it('connection-refused-hangs: no verdict from the stream (the adapter times it out), last error kept', () => {
    const s = parseCodexJson(sample('connection-refused-hangs.jsonl'));
    expect(s.error).toBeUndefined();
    expect(s.completed).toBe(false);
    expect(s.reconnects).toBe(7);
    expect(s.lastErrorMessage).toBe('Reconnecting... waiting for network (Connection failed: error sending request)');
  });

  it('readonly-sandbox-unknown-model: the error item is a warning, not a failure; no command item at all', () => {
    const s = parseCodexJson(sample('readonly-sandbox-unknown-model.jsonl'));
    expect(s.error).toBeUndefined();
    expect(s.warnings).toEqual([expect.stringMatching(/^Model metadata for `gpt-fake` not found/)]);
    expect(s.toolCalls).toEqual([]);
    expect(s.finalText).toMatch(/Read-only file system/);
    expect(s.completed).toBe(true);
  });
});

describe('rollout file', () => {
  it('rollout-session-file (trimmed): no full listing survives the trim, messages are there', () => {
    const r = parseRollout(sample('rollout-session-file.trimmed.jsonl'));
    // The trimmed sample cuts the <skills_instructions> text before its skill entries.
    expect(r.skillsListed).toEqual([]);
    expect(r.mentioned).toEqual([]);
  });

  it('reads the last listing and the <skill> blocks of $name mentions', () => {
    const listing = sample('skills-instructions-developer-message.txt');
    const rec = (role: string, text: string) => JSON.stringify({ timestamp: 't', type: 'response_item', payload: { type: 'message', role, content: [{ type: 'input_text', text }] } });
    const text = [
      JSON.stringify({ type: 'session_meta', payload: {} }),
      rec('developer', listing),
      rec('user', '$hello greet me'),
      rec('user', '<skill>\n<name>hello</name>\n<path>/w/.agents/skills/hello/SKILL.md</path>\n---\nname: hello\n---\n</skill>'),
      'not json',
    ].join('\n');
    expect(parseRollout(text)).toEqual({ skillsListed: ['imagegen', 'openai-docs', 'skill-creator', 'skill-installer', 'hello'], mentioned: ['hello'] });
    expect(parseRollout('')).toEqual({ mentioned: [] });
  });
});

describe('synthetic lines', () => {
  const lines = (...objs: object[]) => objs.map((o) => JSON.stringify(o)).join('\n');

  it('a SKILL.md read through the shell is an activation; failed reads and writes are not', () => {
    const s = parseCodexJson(
      lines(
        { type: 'thread.started', thread_id: 't' },
        { type: 'turn.started' },
        { type: 'item.completed', item: { id: 'item_0', type: 'command_execution', command: `/bin/bash -lc "cat '/w/.agents/skills/pdf/SKILL.md'"`, aggregated_output: '---\nname: pdf', exit_code: 0, status: 'completed' } },
        { type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: "/bin/bash -lc 'sed -n 1,200p .codex/skills/pdf/SKILL.md'", aggregated_output: '', exit_code: 0, status: 'completed' } },
        { type: 'item.completed', item: { id: 'item_2', type: 'command_execution', command: "/bin/bash -lc 'cat skills/xlsx/SKILL.md'", aggregated_output: 'No such file', exit_code: 1, status: 'failed' } },
        { type: 'item.completed', item: { id: 'item_3', type: 'command_execution', command: "/bin/bash -lc 'echo x > skills/docx/SKILL.md'", aggregated_output: '', exit_code: 0, status: 'completed' } },
        { type: 'turn.completed', usage: { input_tokens: 10, output_tokens: 2 } },
      ),
    );
    expect(s.skillActivations).toEqual([{ skill: 'pdf', via: 'read SKILL.md' }]);
    expect(s.toolCalls.map((c) => c.isError)).toEqual([false, false, true, false]);
  });

  it('item ids restart per turn without overwriting each other; started items are replaced by completed ones', () => {
    const p = new CodexJsonParser();
    p.push(JSON.stringify({ type: 'turn.started' }));
    p.push(JSON.stringify({ type: 'item.started', item: { id: 'item_0', type: 'command_execution', command: 'a', aggregated_output: '', exit_code: null, status: 'in_progress' } }));
    p.push(JSON.stringify({ type: 'item.completed', item: { id: 'item_0', type: 'command_execution', command: 'a', aggregated_output: 'A', exit_code: 0, status: 'completed' } }));
    p.push(JSON.stringify({ type: 'turn.started' }));
    p.push(JSON.stringify({ type: 'item.completed', item: { id: 'item_0', type: 'command_execution', command: 'b', aggregated_output: 'B', exit_code: 0, status: 'completed' } }));
    const s = p.finish();
    expect(s.toolCalls.map((c) => c.output)).toEqual(['A', 'B']);
  });

  it('an interrupted command (still in progress) has no output', () => {
    const s = parseCodexJson(lines({ type: 'item.started', item: { id: 'item_0', type: 'command_execution', command: 'sleep 9', aggregated_output: '', exit_code: null, status: 'in_progress' } }));
    expect(s.toolCalls).toEqual([{ name: 'command_execution', input: { command: 'sleep 9' }, isError: false }]);
  });

  it('mcp_tool_call and web_search items; long outputs are cut', () => {
    const s = parseCodexJson(
      lines(
        { type: 'item.completed', item: { id: 'i0', type: 'mcp_tool_call', server: 'fs', tool: 'read', arguments: { p: 1 }, result: { content: [{ type: 'text', text: 'ok' }] }, error: null, status: 'completed' } },
        { type: 'item.completed', item: { id: 'i1', type: 'mcp_tool_call', server: 'fs', tool: 'write', arguments: {}, result: null, error: { message: 'denied' }, status: 'failed' } },
        { type: 'item.completed', item: { id: 'i2', type: 'web_search', query: 'codex' } },
        { type: 'item.completed', item: { id: 'i3', type: 'command_execution', command: 'yes', aggregated_output: 'y'.repeat(50), exit_code: 0, status: 'completed' } },
      ),
      { maxToolOutputChars: 10 },
    );
    expect(s.toolCalls[0]).toEqual({ name: 'mcp__fs__read', input: { p: 1 }, output: 'ok', isError: false });
    expect(s.toolCalls[1]).toMatchObject({ output: 'denied', isError: true });
    expect(s.toolCalls[2]).toEqual({ name: 'web_search', input: { query: 'codex' } });
    expect(s.toolCalls[3]!.output).toBe('yyyyyyyyyy\n… [truncated 40 characters]');
  });

  it('MCP samples (a stdio mcp-mock): mcp_tool_call items become mcp__<server>__<tool> calls; a server tool error is status failed with the text in result', () => {
    expect(parseCodexJson(sample('mcp-call-stdio.jsonl')).toolCalls).toEqual([
      { name: 'mcp__tickets__get_ticket', input: { id: 'T-7' }, output: 'ticket T-7 is open: Login fails on Safari', isError: false },
    ]);
    const failed = parseCodexJson(sample('mcp-tool-failed-stdio.jsonl'));
    expect(failed.toolCalls).toEqual([{ name: 'mcp__tickets__close_ticket', input: { id: 'T-9' }, output: 'no response configured for close_ticket with these arguments', isError: true }]);
    expect(failed.error).toBeUndefined();
    expect(failed.finalText).toBe('Could not close it.');
  });

  it('turn.failed without a message falls back to the last error line', () => {
    expect(parseCodexJson(lines({ type: 'error', message: 'stream disconnected' }, { type: 'turn.failed', error: {} })).error).toEqual({ kind: 'api', message: 'stream disconnected' });
  });

  it('perTurnUsage: cached input is cacheRead, never negative', () => {
    const u = (i: number, c: number, o: number) => ({ input_tokens: i, cached_input_tokens: c, cache_write_input_tokens: 0, output_tokens: o, reasoning_output_tokens: 0 });
    expect(perTurnUsage(u(100, 40, 10))).toEqual({ input: 60, output: 10, cacheRead: 40, cacheWrite: 0 });
    expect(perTurnUsage(u(300, 140, 30), u(100, 40, 10))).toEqual({ input: 100, output: 20, cacheRead: 100, cacheWrite: 0 });
    expect(perTurnUsage(u(50, 0, 5), u(100, 0, 10))).toEqual({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
  });

  it('skillsReadBy: paths in quoted or plain commands; writes, moves and deletes are not reads', () => {
    expect(skillsReadBy(`/bin/bash -lc "cat '/a/.agents/skills/hello/SKILL.md'"`)).toEqual(['hello']);
    expect(skillsReadBy('/bin/bash -lc "head -50 .codex/skills/a-b/SKILL.md && cat skills/c/SKILL.md"')).toEqual(['a-b', 'c']);
    expect(skillsReadBy('/bin/bash -lc "cat SKILL.md.bak"')).toEqual([]);
    expect(skillsReadBy('/bin/bash -lc "rm .agents/skills/x/SKILL.md"')).toEqual([]);
    expect(skillsReadBy("/bin/bash -lc \"printf '%s' hi > .agents/skills/x/SKILL.md\"")).toEqual([]);
  });
});
