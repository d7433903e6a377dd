import { afterEach, describe, expect, it } from 'vitest';
import type { Rule } from '../../src/config/types.js';
import type { TranscriptTurn } from '../../src/engine/types.js';
import { argsMatch, argsMismatch, evaluateRule, runRuleJudge } from '../../src/judge/index.js';
import type { JudgeInput } from '../../src/judge/types.js';
import { makeInput, tempDir, turn } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

function input(over: Partial<Parameters<typeof makeInput>[0]> = {}, files: Record<string, string> = {}): JudgeInput {
  const t = tempDir(files);
  cleanups.push(t.cleanup);
  return makeInput({ workspace: t.dir, ...over });
}

const turns: TranscriptTurn[] = [
  turn(1, 'Loaded the skill. Which language?', [{ name: 'Skill', input: { skill: 'hello-world' } }], {
    skillActivations: [{ skill: 'hello-world', via: 'Skill tool' }],
  }),
  turn(2, 'Created hello.py: it prints Hello, World!', [
    { name: 'Write', input: { file_path: '/tmp/ws/hello.py', content: "print('Hello, World!')\n", options: { mode: 420, tags: ['a', 'b'] } } },
    { name: 'Bash', input: { command: 'python3 hello.py' } },
  ]),
];
const base = () => input({ turns, finalMessage: turns[1]!.finalText }, { 'hello.py': "print('Hello, World!')\n" });

async function holds(rule: Rule, inp = base()) {
  return evaluateRule(rule, inp);
}

describe('rules: output', () => {
  it('output_contains all / any / not', async () => {
    expect((await holds({ outputContains: { all: ['hello.py', 'Hello'] } })).holds).toBe(true);
    const miss = await holds({ outputContains: { all: ['hello.py', 'Goodbye'] } });
    expect(miss.holds).toBe(false);
    expect(miss.evidence).toContain('"Goodbye" not found');
    expect(miss.text).toBe('output_contains {all: ["hello.py", "Goodbye"]}');
    expect((await holds({ outputContains: { any: ['nope', 'World'] } })).holds).toBe(true);
    expect((await holds({ outputContains: { any: ['nope', 'nada'] } })).holds).toBe(false);
    const not = await holds({ outputContains: { not: ['prints'] } });
    expect(not.holds).toBe(false);
    expect(not.evidence).toMatch(/not: "prints" found at offset \d+/);
  });
  it('output_matches uses Go-syntax patterns', async () => {
    expect((await holds({ outputMatches: { all: ['(?i)HELLO,\\s+world'] } })).holds).toBe(true);
    expect((await holds({ outputMatches: { all: ['(?P<f>\\w+)\\.py'] } })).holds).toBe(true);
    expect((await holds({ outputMatches: { not: ['\\d{3}'] } })).holds).toBe(true);
    expect((await holds({ outputMatches: { any: ['^Goodbye'] } })).holds).toBe(false);
    const bad = await holds({ outputMatches: { all: ['(unclosed'] } });
    expect(bad.holds).toBe(false);
    expect(bad.evidence).toContain('invalid pattern');
  });
  it('exit_code', async () => {
    expect((await holds({ exitCode: 0 })).holds).toBe(true);
    const r = await holds({ exitCode: 0 }, input({ exitCode: 3 }));
    expect(r).toMatchObject({ holds: false, evidence: 'actual exit code: 3', text: 'exit_code: 0' });
  });
  it('files_exist / files_not_exist are workspace-confined', async () => {
    expect((await holds({ filesExist: ['hello.py'] })).holds).toBe(true);
    expect((await holds({ filesExist: ['hello.py', 'nope.py'] })).holds).toBe(false);
    expect((await holds({ filesNotExist: ['nope.py'] })).holds).toBe(true);
    const esc = await holds({ filesNotExist: ['../../etc'] });
    expect(esc.holds).toBe(false);
    expect(esc.evidence).toContain('escapes the workspace');
  });
});

describe('rules: tools and skills', () => {
  it('tool_called matches names case-insensitively and args partially', async () => {
    expect((await holds({ toolCalled: { name: 'write' } })).holds).toBe(true);
    const r = await holds({ toolCalled: { name: 'Write', args: { file_path: 'hello.py' } } });
    expect(r.holds).toBe(true);
    expect(r.evidence).toContain('matching call in turn 2');
    expect((await holds({ toolCalled: { name: 'Write', args: { options: { mode: 420 } } } })).holds).toBe(true);
    expect((await holds({ toolCalled: { name: 'Write', args: { options: { tags: ['a', 'b'] } } } })).holds).toBe(true);
  });
  it('tool_called fails with the mismatch and the tools actually called', async () => {
    const r = await holds({ toolCalled: { name: 'Write', args: { file_path: 'main.py' } } });
    expect(r.holds).toBe(false);
    expect(r.evidence).toContain('file_path: expected "main.py", got "/tmp/ws/hello.py"');
    expect(r.evidence).toContain('tools called: Skill, Write, Bash');
    const none = await holds({ toolCalled: { name: 'Edit' } });
    expect(none.evidence).toBe('Edit was not called in any turn; tools called: Skill, Write, Bash');
  });
  it('numbers, booleans and arrays match strictly', async () => {
    expect((await holds({ toolCalled: { name: 'Write', args: { options: { mode: '420' } } } })).holds).toBe(false);
    expect((await holds({ toolCalled: { name: 'Write', args: { options: { tags: ['a'] } } } })).holds).toBe(false);
  });
  it('tool_not_called', async () => {
    expect((await holds({ toolNotCalled: { name: 'Edit' } })).holds).toBe(true);
    const r = await holds({ toolNotCalled: { name: 'BASH' } });
    expect(r.holds).toBe(false);
    expect(r.evidence).toMatch(/^BASH called 1 time\(s\) in any turn \(turn 2; first: \{"command":"python3 hello.py"\}\)/);
  });
  it('lists at most 20 tools', async () => {
    const calls = Array.from({ length: 25 }, (_, i) => ({ name: `T${i}`, input: {} }));
    const r = await holds({ toolCalled: { name: 'X' } }, input({ turns: [turn(1, '', calls)] }));
    expect(r.evidence).toContain('T19 (+5 more)');
    expect(r.evidence).not.toContain('T20');
  });
  it('skill_invoked / skill_not_invoked', async () => {
    const r = await holds({ skillInvoked: 'hello-world' });
    expect(r).toMatchObject({ holds: true, text: 'skill_invoked: hello-world' });
    expect(r.evidence).toContain('activated in turn 1 via Skill tool');
    expect((await holds({ skillInvoked: 'other' })).holds).toBe(false);
    expect((await holds({ skillNotInvoked: 'other' })).holds).toBe(true);
    expect((await holds({ skillNotInvoked: 'hello-world' })).holds).toBe(false);
  });
});

describe('rules: turns', () => {
  it('turn_response_contains / not_contains look at that turn only', async () => {
    expect((await holds({ turnResponseContains: { turn: 1, containsAll: ['Which language?'] } })).holds).toBe(true);
    expect((await holds({ turnResponseContains: { turn: 1, containsAll: ['hello.py'] } })).holds).toBe(false);
    expect((await holds({ turnResponseContains: { turn: 2, containsAny: ['nope', 'World'] } })).holds).toBe(true);
    expect((await holds({ turnResponseNotContains: { turn: 1, notContains: ['hello.py'] } })).holds).toBe(true);
    expect((await holds({ turnResponseNotContains: { turn: 2, notContains: ['hello.py'] } })).holds).toBe(false);
  });
  it('tool_called_in_turn / tool_not_called_in_turn', async () => {
    expect((await holds({ toolCalledInTurn: { turn: 2, name: 'write', args: { file_path: 'hello.py' } } })).holds).toBe(true);
    expect((await holds({ toolCalledInTurn: { turn: 1, name: 'Write' } })).holds).toBe(false);
    expect((await holds({ toolNotCalledInTurn: { turn: 1, name: 'Write' } })).holds).toBe(true);
    expect((await holds({ toolNotCalledInTurn: { turn: 2, name: 'Write' } })).holds).toBe(false);
  });
  it('a missing or not completed turn fails the rule, saying why', async () => {
    const missing = await holds({ toolNotCalledInTurn: { turn: 3, name: 'Write' } });
    expect(missing).toMatchObject({ holds: false, evidence: 'turn 3 does not exist (the transcript has 2 turn(s))' });
    const skipped = input({ turns, finalMessage: '', turnStatus: ['completed', 'skipped'] });
    const r = await holds({ turnResponseNotContains: { turn: 2, notContains: ['zzz'] } }, skipped);
    expect(r).toMatchObject({ holds: false, evidence: 'turn 2 was not completed (status: skipped)' });
  });
});

describe('rule_based judge', () => {
  it('passes vacuously with no rules', async () => {
    const o = await runRuleJudge({ success: [], failure: [] }, base());
    expect(o.status).toBe('pass');
    expect(o.assertions).toHaveLength(1);
  });
  it('a matching failure rule fails the judge; only matched failure rules are reported', async () => {
    const o = await runRuleJudge(
      {
        success: [{ outputContains: { all: ['hello.py'] } }],
        failure: [{ toolCalled: { name: 'Bash' } }, { toolCalled: { name: 'Edit' } }],
      },
      base(),
    );
    expect(o.status).toBe('fail');
    expect(o.assertions).toHaveLength(1);
    expect(o.assertions[0]).toMatchObject({ text: 'failure: tool_called: Bash', passed: false });
  });
  it('otherwise every success rule must hold', async () => {
    const ok = await runRuleJudge(
      { success: [{ outputContains: { all: ['hello.py'] } }, { skillInvoked: 'hello-world' }], failure: [{ toolCalled: { name: 'Edit' } }] },
      base(),
    );
    expect(ok.status).toBe('pass');
    expect(ok.assertions.map((a) => a.text)).toEqual([
      'output_contains {all: ["hello.py"]}',
      'skill_invoked: hello-world',
      'no failure: tool_called: Edit',
    ]);
    const bad = await runRuleJudge({ success: [{ exitCode: 0 }, { skillInvoked: 'nope' }], failure: [] }, base());
    expect(bad.status).toBe('fail');
    expect(bad.assertions.map((a) => a.passed)).toEqual([true, false]);
  });
});

describe('argument matching', () => {
  it('accepts string suffixes, recurses into objects, compares arrays element-wise', () => {
    expect(argsMatch({ path: 'hello.py' }, { path: '/tmp/ws/hello.py', extra: 1 })).toBe(true);
    expect(argsMatch({ path: 'hello.py' }, { path: 'hello.py.bak' })).toBe(false);
    expect(argsMatch({ a: { b: 'x' } }, { a: { b: 'x', c: 2 } })).toBe(true);
    expect(argsMatch({ a: [1, 'y'] }, { a: [1, 'xy'] })).toBe(true);
    expect(argsMatch({ a: [1] }, { a: [1, 2] })).toBe(false);
    expect(argsMatch({ n: 1 }, { n: '1' })).toBe(false);
    expect(argsMatch({ b: true }, { b: 'true' })).toBe(false);
    expect(argsMatch({ s: '1' }, { s: 1 })).toBe(false);
    expect(argsMatch(undefined, 'anything')).toBe(true);
  });
  it('decodes arguments reported as a JSON string', () => {
    expect(argsMatch({ path: 'a.txt' }, '{"path": "/w/a.txt"}')).toBe(true);
  });
  it('names the first mismatch', () => {
    expect(argsMismatch({ a: { b: 2 } }, { a: { b: 3 } })).toBe('a.b: expected 2, got 3');
    expect(argsMismatch({ a: 1 }, {})).toBe('a: missing');
  });
});

describe('tool names with alternatives', () => {
  it('matches any of `A|b|c`, case-insensitively, and nothing else', async () => {
    const { evaluateRule } = await import('../../src/judge/index.js');
    const { makeInput, turn } = await import('./helpers.js');
    const input = makeInput({ workspace: '/tmp', turns: [turn(1, 'x', [{ name: 'write_file', input: { path: 'a' } }])] });
    const hit = await evaluateRule({ toolCalled: { name: 'Write|WRITE_FILE' } }, input);
    const miss = await evaluateRule({ toolCalled: { name: 'Write|apply_patch' } }, input);
    expect(hit.holds).toBe(true);
    expect(miss.holds).toBe(false);
  });
});
