import { describe, expect, it } from 'vitest';
import type { PostCondition } from '../../src/config/types.js';
import { applyJsonPath, captureDetail, captureValue, evaluatePostCondition, extractJson, parseJsonPath } from '../../src/judge/index.js';

describe('captureValue: pattern', () => {
  it('prefers the named group `value` (Go (?P<value>…) syntax too)', () => {
    expect(captureValue('id: 42, name: bob', { variable: 'v', pattern: '(\\w+): (?P<value>\\d+)' })).toBe('42');
    expect(captureValue('id: 42', { variable: 'v', pattern: '(?<value>\\d+)' })).toBe('42');
  });
  it('uses the only group otherwise', () => {
    expect(captureValue('ticket PROJ-123 created', { variable: 'v', pattern: 'ticket (\\S+)' })).toBe('PROJ-123');
  });
  it('uses the whole match when there is no group', () => {
    expect(captureValue('ticket PROJ-123 created', { variable: 'v', pattern: 'PROJ-\\d+' })).toBe('PROJ-123');
  });
  it('refuses several unnamed groups, no match, and empty values, with a reason', () => {
    const two = captureDetail('a=1', { variable: 'v', pattern: '(a)=(1)' });
    expect(two).toEqual({ ok: false, reason: 'pattern /(a)=(1)/ has 2 groups; name the wanted one (?P<value>…)' });
    expect(captureValue('abc', { variable: 'v', pattern: 'x(\\d+)' })).toBeUndefined();
    expect(captureDetail('abc', { variable: 'v', pattern: 'x(\\d+)' })).toEqual({ ok: false, reason: 'pattern /x(\\d+)/ did not match' });
    expect(captureValue('id=', { variable: 'v', pattern: 'id=(\\d*)' })).toBeUndefined();
    expect(captureDetail('x', { variable: 'v', pattern: '(' }).ok).toBe(false);
  });
  it('honours a leading (?i) flag', () => {
    expect(captureValue('TOKEN: abc', { variable: 'v', pattern: '(?i)token: (\\w+)' })).toBe('abc');
  });
});

describe('captureValue: jsonpath', () => {
  it('reads a whole-JSON answer', () => {
    const text = '{"a": {"b": [{"c": "deep"}, {"c": 7}]}, "ok": true}';
    expect(captureValue(text, { variable: 'v', jsonpath: '$.a.b[0].c' })).toBe('deep');
    expect(captureValue(text, { variable: 'v', jsonpath: '$.a.b[1].c' })).toBe('7');
    expect(captureValue(text, { variable: 'v', jsonpath: "$['ok']" })).toBe('true');
    expect(captureValue(text, { variable: 'v', jsonpath: '$.a.b[-1]' })).toBe('{"c":7}');
    expect(captureValue(text, { variable: 'v', jsonpath: '$.a.missing' })).toBeUndefined();
  });
  it('reads the first ```json block of a prose answer', () => {
    const text = 'Here you go:\n\n```json\n{"id": "abc-1"}\n```\n\nand also\n```json\n{"id": "second"}\n```\n';
    expect(captureValue(text, { variable: 'v', jsonpath: '$.id' })).toBe('abc-1');
  });
  it('says when there is no JSON', () => {
    expect(captureDetail('just words', { variable: 'v', jsonpath: '$.id' })).toEqual({
      ok: false,
      reason: 'the answer holds no JSON (neither as a whole nor in a ```json block)',
    });
  });
  it('applies a pattern to the JSONPath result when both are given', () => {
    expect(captureValue('{"url": "https://x.test/items/99"}', { variable: 'v', jsonpath: '$.url', pattern: '/items/(\\d+)' })).toBe('99');
  });
  it('parses the supported subset and rejects the rest', () => {
    expect(parseJsonPath('$.a["b c"][2]')).toEqual([{ key: 'a' }, { key: 'b c' }, { index: 2 }]);
    expect(() => parseJsonPath('a.b')).toThrow(SyntaxError);
    expect(() => parseJsonPath('$..a')).toThrow(/unsupported JSONPath at position 1/);
    expect(() => parseJsonPath('$.a[*]')).toThrow(SyntaxError);
    expect(applyJsonPath([1, 2], [{ index: 5 }])).toBeUndefined();
    expect(extractJson('```\n[1, 2]\n```')).toEqual([1, 2]);
  });
});

describe('evaluatePostCondition', () => {
  const pc = (over: Partial<PostCondition>): PostCondition => ({
    mustContainAll: [],
    mustContainAny: [],
    mustNotContain: [],
    onFail: 'fail',
    ...over,
  });
  it('passes when every check holds', () => {
    const r = evaluatePostCondition('Which language: Python or Go?', pc({ mustContainAll: ['language'], mustContainAny: ['Rust', 'Go'], mustNotContain: ['error'] }));
    expect(r.passed).toBe(true);
    expect(r.assertions.map((a) => a.text)).toEqual([
      'post_condition must_contain_all: "language"',
      'post_condition must_contain_any: ["Rust", "Go"]',
      'post_condition must_not_contain: "error"',
    ]);
  });
  it('fails on any missing or forbidden string, with evidence', () => {
    const r = evaluatePostCondition('an error occurred', pc({ mustContainAll: ['done'], mustContainAny: ['x', 'y'], mustNotContain: ['error'] }));
    expect(r.passed).toBe(false);
    expect(r.assertions.map((a) => a.passed)).toEqual([false, false, false]);
    expect(r.assertions[2]!.evidence).toBe('found at offset 3: "an error occurred"');
    expect(r.assertions[1]!.evidence).toBe('none found in turn answer (17 chars): "an error occurred"');
  });
  it('passes vacuously when empty', () => {
    expect(evaluatePostCondition('x', pc({}))).toEqual({ passed: true, assertions: [] });
  });
});
