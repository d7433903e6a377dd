/**
 * The pieces the engine output parsers share (src/engine/parse-common.ts); each parser's own
 * mapping is tested over its engine's captured samples in engines/<name>/parse.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  JsonLinesParser,
  ToolCallLog,
  addUsage,
  anthropicUsage,
  truncateToolOutput,
  firstString,
  parseJsonLine,
  parseLines,
  roundUsd,
  settleToolResults,
  skillActivationsOf,
  skillOfSkillMd,
  strings,
  usageDelta,
  zeroUsage,
  type Json,
} from '../../src/engine/parse-common.js';

/** A parser that keeps the `type` of every object it is given. */
class TypesParser extends JsonLinesParser<{ types: unknown[]; badLines: number }, { tag?: string }> {
  private readonly types: unknown[] = [];
  protected onObject(d: Json): void {
    this.types.push(this.opts.tag ? `${this.opts.tag}:${String(d.type)}` : d.type);
  }
  finish() {
    return { types: [...this.types], badLines: this.badLines };
  }
}

describe('JSON lines', () => {
  it('parseJsonLine: blank, not JSON, or the value (surrounding whitespace ignored)', () => {
    expect(parseJsonLine('  \t')).toEqual({ kind: 'blank' });
    expect(parseJsonLine('Loading…')).toEqual({ kind: 'bad' });
    expect(parseJsonLine(' {"a":1} \r')).toEqual({ kind: 'json', value: { a: 1 } });
    expect(parseJsonLine('[1,2]')).toEqual({ kind: 'json', value: [1, 2] });
  });

  it('JsonLinesParser: objects go to onObject; blank lines are skipped; other text and non-objects count as bad lines', () => {
    const s = parseLines(new TypesParser(), '{"type":"a"}\n\nwarning: x\n[1]\n"s"\n{"type":"b"}\n');
    expect(s).toEqual({ types: ['a', 'b'], badLines: 3 });
  });

  it('JsonLinesParser: options given reach the subclass, none is {}', () => {
    expect(parseLines(new TypesParser({ tag: 't' }), '{"type":"a"}').types).toEqual(['t:a']);
    expect(parseLines(new TypesParser(), '{"type":"a"}').types).toEqual(['a']);
  });
});

describe('tool calls', () => {
  it('ToolCallLog pairs results with calls by id; a repeated id is dropped; an unknown id is ignored', () => {
    const log = new ToolCallLog();
    expect(log.add('t1', { name: 'Read', input: { path: 'a' } })).toBe(true);
    expect(log.add('t1', { name: 'Read', input: { path: 'again' } })).toBe(false);
    expect(log.add(undefined, { name: 'Bash', input: {} })).toBe(true);
    expect(log.add(undefined, { name: 'Bash', input: {} })).toBe(true); // no id: never a repeat
    expect(log.settle('t1', 'x'.repeat(12), false, 10)).toBe(true);
    expect(log.settle('nope', 'y', true, 10)).toBe(false);
    expect(log.settle(undefined, 'y', true, 10)).toBe(false);
    expect(log.calls).toEqual([
      { name: 'Read', input: { path: 'a' }, output: `${'x'.repeat(10)}\n… [truncated 2 characters]`, isError: false },
      { name: 'Bash', input: {} },
      { name: 'Bash', input: {} },
    ]);
  });

  it('ToolCallLog.settle without an output records only whether it failed', () => {
    const log = new ToolCallLog();
    log.add('w', { name: 'write_file', input: {} });
    log.settle('w', undefined, true, 100);
    expect(log.calls[0]).toEqual({ name: 'write_file', input: {}, isError: true });
  });

  it('settleToolResults reads the tool_result blocks of an Anthropic-style user line', () => {
    const log = new ToolCallLog();
    log.add('a', { name: 'Bash', input: {} });
    log.add('b', { name: 'Read', input: {} });
    const line = {
      type: 'user',
      message: { content: [{ type: 'tool_result', tool_use_id: 'a', content: 'ok' }, { type: 'text', text: 'not a result' }, { type: 'tool_result', tool_use_id: 'b', content: ['x'], is_error: true }] },
    };
    settleToolResults(log, line, (c) => JSON.stringify(c), 100);
    expect(log.calls.map((c) => [c.output, c.isError])).toEqual([
      ['"ok"', false],
      ['["x"]', true],
    ]);
    settleToolResults(log, { type: 'user' }, String, 100); // no message: nothing
  });

  it('truncateToolOutput keeps short text and names what it cut', () => {
    expect(truncateToolOutput('abc', 3)).toBe('abc');
    expect(truncateToolOutput('abcdef', 4)).toBe('abcd\n… [truncated 2 characters]');
  });
});

describe('skill activations', () => {
  it('skillOfSkillMd: the folder holding SKILL.md; with underSkills only inside a `skills` folder', () => {
    expect(skillOfSkillMd('/w/.qwen/skills/hello/SKILL.md')).toBe('hello');
    expect(skillOfSkillMd('C:\\w\\skills\\x-y\\SKILL.md')).toBe('x-y');
    expect(skillOfSkillMd('/w/docs/hello/SKILL.md')).toBe('hello');
    expect(skillOfSkillMd('/w/docs/hello/SKILL.md', { underSkills: true })).toBeUndefined();
    expect(skillOfSkillMd('/w/.claude/skills/hello/SKILL.md', { underSkills: true })).toBe('hello');
    expect(skillOfSkillMd('/w/hello/SKILL.md.bak')).toBeUndefined();
    expect(skillOfSkillMd('SKILL.md')).toBeUndefined();
  });

  it('skillActivationsOf skips failed calls and gives the matcher an object input', () => {
    const calls = [
      { name: 'skill', input: { skill: 'a' } },
      { name: 'skill', input: { skill: 'b' }, isError: true },
      { name: 'skill', input: 'not an object' },
      { name: 'other', input: { skill: 'c' } },
    ];
    const seen: unknown[] = [];
    const got = skillActivationsOf(calls, (c, input) => {
      seen.push(input);
      const skill = c.name === 'skill' ? firstString(input, ['skill']) : undefined;
      return skill ? { skill, via: 'skill tool' } : undefined;
    });
    expect(got).toEqual([{ skill: 'a', via: 'skill tool' }]);
    expect(seen).toEqual([{ skill: 'a' }, {}, { skill: 'c' }]);
  });

  it('firstString and strings take only strings', () => {
    expect(firstString({ a: 1, b: 'x', c: 'y' }, ['a', 'b', 'c'])).toBe('x');
    expect(firstString({ a: 1 }, ['a', 'z'])).toBeUndefined();
    expect(strings(['a', 1, 'b', null])).toEqual(['a', 'b']);
    expect(strings('a')).toBeUndefined();
  });
});

describe('token usage', () => {
  it('anthropicUsage maps the four fields; missing or non-numeric ones count 0', () => {
    expect(anthropicUsage({ input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 })).toEqual({ input: 10, output: 5, cacheRead: 3, cacheWrite: 2 });
    expect(anthropicUsage({ input_tokens: '10', output_tokens: Infinity })).toEqual(zeroUsage());
  });

  it('addUsage sums in place; usageDelta subtracts per field, never below 0', () => {
    const total = zeroUsage();
    addUsage(total, { input: 1, output: 2, cacheRead: 3, cacheWrite: 4 });
    addUsage(total, { input: 10, output: 20, cacheRead: 30, cacheWrite: 40 });
    expect(total).toEqual({ input: 11, output: 22, cacheRead: 33, cacheWrite: 44 });
    expect(usageDelta(total, { input: 1, output: 30, cacheRead: 3, cacheWrite: 4 })).toEqual({ input: 10, output: 0, cacheRead: 30, cacheWrite: 40 });
    expect(zeroUsage()).not.toBe(zeroUsage());
  });

  it('roundUsd drops float noise below 1e-10 USD', () => {
    expect(roundUsd(0.1 + 0.2)).toBe(0.3);
    expect(roundUsd(0.00000000004)).toBe(0);
  });
});
