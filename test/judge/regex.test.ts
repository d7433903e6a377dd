/**
 * Users' patterns run on RE2 (src/util/regex.ts): linear time whatever the pattern, Go
 * syntax, and constructs RE2 lacks refused as config errors naming file and line.
 */
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureDetail, evaluateRule } from '../../src/judge/index.js';
import { compileRegex, Re2RegExp, regexError } from '../../src/util/regex.js';
import { parseModelScript } from '../../src/model/script.js';
import { runCli, writeSkill } from '../cli/helpers.js';
import { makeInput, tempDir } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

function inputWith(finalMessage: string) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return makeInput({ workspace: t.dir, finalMessage });
}

const EVIL = '(a+)+$';
const FORTY = `${'a'.repeat(40)}!`;
const MEGABYTE = `${'a'.repeat(1024 * 1024)}!`;

describe('compileRegex (RE2)', () => {
  it('keeps Go syntax: inline flags anywhere, (?P<name>…) and (?<name>…) groups, POSIX classes', () => {
    expect(compileRegex('(?i)hello').test('HeLLo')).toBe(true);
    expect(compileRegex('x(?i)y').test('xY')).toBe(true);
    expect(compileRegex('tok=(?P<value>\\w+)').exec('a tok=abc')?.groups?.value).toBe('abc');
    expect(compileRegex('(?<value>\\d+)').exec('ab12')?.groups?.value).toBe('12');
    expect(compileRegex('[[:digit:]]+').exec('ab12')?.[0]).toBe('12');
    expect(compileRegex('\\-').test('a-b')).toBe(true);
    // Offsets are JavaScript string offsets (UTF-16), as evidence expects.
    expect(compileRegex('(b)').exec('😀b')?.index).toBe(2);
  });

  it('is a RegExp whose stand-in source has the same group layout (for code that probes it)', () => {
    const re = compileRegex('(a)(?P<value>b)(c)');
    expect(re).toBeInstanceOf(RegExp);
    expect([re.groupCount, re.groupNames]).toEqual([3, ['value']]);
    const probe = new RegExp(`(?:${re.source})|`, re.flags).exec('')!;
    expect([probe.length - 1, Object.keys(probe.groups ?? {})]).toEqual([3, ['value']]);
    expect(String(re)).toBe('/(a)(?P<value>b)(c)/');
    expect('xabc'.replace(re, '[$<value>]')).toBe('x[b]');
    expect('xabcyabcz'.split(re)).toEqual(['x', 'a', 'b', 'c', 'y', 'a', 'b', 'c', 'z']);
  });

  it('splits like JavaScript does: empty matches at the edges and after a match do not split, groups are spliced, limit caps', () => {
    const cases: [string, string, number?][] = [
      ['', 'abc'],
      [',', 'a,b,,c,'],
      [',*', 'a,b,,c'],
      ['x*', 'axxbxc'],
      ['(,)', 'a,b'],
      ['(-)|(\\+)', 'a-b+c'],
      [',', 'a,b,c', 2],
      ['z', ''],
      ['', ''],
      [',', 'a,b', 0],
    ];
    for (const [pattern, text, limit] of cases) {
      expect(text.split(compileRegex(pattern), limit), `/${pattern}/ on ${JSON.stringify(text)}`).toEqual(text.split(new RegExp(pattern), limit));
    }
  });

  it('says lookaround and backreferences are not RE2 syntax; plain mistakes keep the familiar message', () => {
    expect(regexError('(?<=x)a')).toMatch(/^lookbehind `\(\?<=…\)` is not RE2 syntax/);
    expect(regexError('(?<!x)a')).toMatch(/^negative lookbehind .* is not RE2 syntax/);
    expect(regexError('a(?=b)')).toMatch(/^lookahead .* is not RE2 syntax/);
    expect(regexError('a(?!b)')).toMatch(/^negative lookahead .* is not RE2 syntax/);
    expect(regexError('(a)\\1')).toMatch(/^backreference `\\1` is not RE2 syntax/);
    expect(regexError('(?<n>a)\\k<n>')).toMatch(/^backreference `\\k<…>` is not RE2 syntax/);
    expect(regexError('a\\Z')).toMatch(/^not RE2 syntax: invalid escape sequence/);
    expect(regexError('fo(o')).toMatch(/Unterminated group/);
    expect(regexError('[(?=]')).toBeUndefined();
    expect(regexError(EVIL)).toBeUndefined();
    expect(() => compileRegex('(?<=x)a')).toThrow(SyntaxError);
  });

  // A backtracking engine takes about 2^40 steps on FORTY: these calls return only on RE2.
  // Matching speed is measured by `npm run bench` (inputs), not asserted here.
  it('matches (a+)+$ with RE2 (linear time): 40 a and 1 MB', () => {
    expect(compileRegex(EVIL)).toBeInstanceOf(Re2RegExp);
    expect(compileRegex(EVIL).test(FORTY)).toBe(false);
    expect(compileRegex(EVIL).exec(MEGABYTE)).toBeNull();
    expect(compileRegex(EVIL).test(MEGABYTE.slice(0, -1))).toBe(true);
  });
});

describe('user patterns on hostile output', () => {
  // As above: on a backtracking engine these calls would not return (FORTY).
  it('output_matches with (a+)+$ finishes on 40 a + "!" and on a 1 MB final message', async () => {
    for (const text of [FORTY, MEGABYTE]) {
      const r = await evaluateRule({ outputMatches: { all: [EVIL], not: ['(x+x+)+y'] } }, inputWith(text));
      expect(r.holds).toBe(false);
      expect(r.evidence).toContain('did not match');
    }
  });

  it('a capture pattern finishes on 1 MB and keeps the named group `value`', () => {
    expect(captureDetail(FORTY, { variable: 'v', pattern: EVIL }).ok).toBe(false);
    expect(captureDetail(MEGABYTE, { variable: 'v', pattern: EVIL })).toEqual({ ok: false, reason: `pattern /${EVIL}/ did not match` });
    const got = captureDetail(`id: ${MEGABYTE}`, { variable: 'v', pattern: '(?P<value>(a+)+)!' });
    expect(got.ok && got.value.length).toBe(1024 * 1024);
  });

  it('the scripted model matches prompt_matches with RE2 and refuses a lookbehind with file:line', () => {
    const script = parseModelScript('rules:\n  - when: { prompt_matches: "(?i)^(a+)+$" }\n    reply: [ { say: ok } ]\n', 'model.yaml');
    const re = script.rules[0]!.when.promptMatches!;
    expect(re).toBeInstanceOf(Re2RegExp);
    expect(re.test(MEGABYTE)).toBe(false);
    expect(re.test('AAA')).toBe(true);
    expect(() => parseModelScript('rules:\n  - when: { prompt_matches: "(?<=x)a" }\n    reply: [ { say: ok } ]\n', 'model.yaml')).toThrow(
      /model\.yaml:2:\d+: rules\[0\]\.when\.prompt_matches: invalid regular expression: lookbehind .* is not RE2 syntax/,
    );
  });
});

describe('skill-up validate (built CLI)', () => {
  it('reports a lookbehind in output_matches and a backreference in capture as not RE2 syntax, with file:line', async () => {
    const skill = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files: [evals/cases/*.yaml]\n',
      'evals/cases/a.yaml': [
        'input:',
        '  turns:',
        '    - content: hi',
        '      capture: [{variable: t, pattern: "(?P<value>a)\\\\1"}]',
        '    - content: "{{t}}"',
        'judge:',
        '  type: rule_based',
        '  success:',
        '    - output_matches: {all: ["(?<=foo)bar"]}',
        '',
      ].join('\n'),
    });
    const r = await runCli(['validate', skill], { cwd: ROOT });
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const file = join('evals', 'cases', 'a.yaml');
    expect(r.stderr).toMatch(new RegExp(`${file.replace(/[.]/g, '\\.')}:4:\\d+: .*capture.*backreference \`\\\\1\` is not RE2 syntax`));
    expect(r.stderr).toMatch(new RegExp(`${file.replace(/[.]/g, '\\.')}:9:\\d+: .*output_matches.*lookbehind \`\\(\\?<=…\\)\` is not RE2 syntax`));
  });
});
