import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadModelScript, parseModelScript } from '../../src/model/script.js';
import { FIXTURES } from './helpers.js';

/** Diagnostics of a script that must fail, formatted `file:line:col: path: message`. */
function errorsOf(yaml: string): string[] {
  try {
    parseModelScript(yaml, '/s/model.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).diagnostics.map((d) => formatDiagnostic(d, '/s'));
  }
  throw new Error('expected a ConfigError');
}

describe('loadModelScript', () => {
  it('loads the design example into typed rules', async () => {
    const s = await loadModelScript(join(FIXTURES, 'hello-world.yaml'));
    expect(s.rules).toHaveLength(3);
    expect(s.rules[0]).toMatchObject({ index: 0, name: 'activate', line: 3, when: { skillListed: 'hello-world', skillLoaded: false } });
    expect(s.rules[0]!.reply).toEqual([{ kind: 'use_skill', skill: 'hello-world' }]);
    expect(s.rules[1]!.reply).toEqual([
      { kind: 'write_file', path: 'hello.py', content: "print('Hello, World!')\n" },
      { kind: 'say', text: 'Created hello.py' },
    ]);
    expect(s.rules[2]!.when).toEqual({});
    expect(s.warnings).toEqual([]);
  });

  it('points an unknown action at its line with a did-you-mean', async () => {
    await expect(loadModelScript(join(FIXTURES, 'bad-action.yaml'))).rejects.toThrow(ConfigError);
    try {
      await loadModelScript(join(FIXTURES, 'bad-action.yaml'));
    } catch (e) {
      const [d] = (e as ConfigError).diagnostics;
      expect(d).toMatchObject({ line: 5, col: 9, path: 'rules[0].reply[1].writ_file', severity: 'error' });
      expect(d!.message).toBe('unknown action "writ_file"; did you mean "write_file"?');
      expect(formatDiagnostic(d!, FIXTURES)).toBe('bad-action.yaml:5:9: rules[0].reply[1].writ_file: unknown action "writ_file"; did you mean "write_file"?');
    }
  });

  it('suggests the full name of an action cut short (`write` → `write_file`)', async () => {
    const { suggest } = await import('../../src/model/script.js');
    expect(suggest('write', ['say', 'write_file', 'read_file', 'run'])).toBe('; did you mean "write_file"?');
    expect(suggest('wr', ['say', 'write_file'])).toBe(' (expected one of: say, write_file)');
  });

  it('reports a missing file without a stack trace', async () => {
    await expect(loadModelScript('/nonexistent/model.yaml')).rejects.toThrow(/nonexistent\/model.yaml: cannot read model script: file not found/);
  });

  it('reads a file written at runtime', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-script-'));
    writeFileSync(join(dir, 'm.yaml'), 'rules:\n  - reply: [ { say: hi } ]\n');
    const s = await loadModelScript(join(dir, 'm.yaml'));
    expect(s.file).toBe(join(dir, 'm.yaml'));
  });
});

describe('parseModelScript diagnostics', () => {
  it('gives yaml line/col for malformed YAML', () => {
    const errs = errorsOf('rules:\n  - when: { prompt_contains: "x"\n    reply: []\n');
    expect(errs.length).toBeGreaterThan(0);
    expect(errs[0]).toMatch(/^model\.yaml:\d+:\d+: YAML syntax error: /);
    const dup = errorsOf('rules:\n  - reply: [ { say: a } ]\n    reply: [ { say: b } ]\n');
    expect(dup[0]).toMatch(/^model\.yaml:3:5: YAML syntax error: Map keys must be unique/);
  });

  it('requires `rules`', () => {
    expect(errorsOf('rule:\n  - reply: [ { say: hi } ]\n')).toEqual([
      'model.yaml:1:1: missing required key "rules"',
      'model.yaml:1:1: rule: unknown key "rule"; did you mean "rules"?',
    ]);
    expect(errorsOf('')).toEqual(['model.yaml:1:1: the script is empty: expected a mapping with `rules:` (a list of rules)']);
    expect(errorsOf('rules: []\n')).toEqual(['model.yaml:1:8: rules: must not be empty']);
  });

  it('suggests condition names and lists actions when nothing is close', () => {
    const errs = errorsOf('rules:\n  - when: { skill_listd: x }\n    reply:\n      - { frobnicate: 1 }\n');
    expect(errs).toEqual([
      'model.yaml:2:13: rules[0].when.skill_listd: unknown key "skill_listd"; did you mean "skill_listed"?',
      'model.yaml:4:11: rules[0].reply[0].frobnicate: unknown action "frobnicate" (expected one of: use_skill, write_file, run, read_file, say, tool, mcp_tool)',
    ]);
  });

  it('checks types, one key per action, and reply xor error', () => {
    expect(
      errorsOf(
        [
          'rules:',
          '  - when: { turn: first, skill_loaded: 3 }',
          '    reply:',
          '      - { say: a, run: ls }',
          '      - { write_file: { path: a.txt } }',
          '  - when: { prompt_contains: x }',
          '  - reply: [ { say: a } ]',
          '    error: { status: 500 }',
          '',
        ].join('\n'),
      ),
    ).toEqual([
      'model.yaml:2:19: rules[0].when.turn: must be an integer or a list, got "first"',
      'model.yaml:2:40: rules[0].when.skill_loaded: must be a string or true or false, got 3',
      'model.yaml:4:9: rules[0].reply[0]: an action has exactly one key, found 2: say, run (write them as separate steps)',
      'model.yaml:5:23: rules[0].reply[1].write_file: missing required key "content"',
      'model.yaml:6:5: rules[1]: a rule needs `reply` (steps to answer with) or `error` (an HTTP error to answer with)',
      'model.yaml:8:5: rules[2].error: `reply` and `error` are exclusive: keep one',
    ]);
  });

  it('checks engines, regexes, placeholders and error statuses', () => {
    expect(
      errorsOf(
        [
          'rules:',
          '  - when: { engine: [claude_code, claud_code], prompt_matches: "(" }',
          '    reply: [ { say: "in {{cwd}} at turn {{turn}}: {{cdw}}" } ]',
          '  - error: { status: 200, message: "{{nope}}" }',
          '',
        ].join('\n'),
      ),
    ).toEqual([
      'model.yaml:2:35: rules[0].when.engine[1]: unknown engine "claud_code"; did you mean "claude_code"?',
      'model.yaml:2:64: rules[0].when.prompt_matches: invalid regular expression: Invalid regular expression: /(/: Unterminated group',
      'model.yaml:3:21: rules[0].reply[0].say: unknown placeholder "{{cdw}}"; did you mean "cwd"?',
      'model.yaml:4:22: rules[1].error.status: must be >= 400, got 200',
      'model.yaml:4:36: rules[1].error.message: unknown placeholder "{{nope}}" (expected one of: cwd, turn, prompt)',
    ]);
  });

  it('an engine alias eval.yaml accepts names its engine in `when.engine`, as its canonical name', () => {
    const s = parseModelScript(
      ['rules:', '  - when: { engine: claude-code }', '    reply: [ { say: a } ]', '  - when: { engine: [gemini, qwen-code, custom, codex] }', '    reply: [ { say: b } ]', ''].join('\n'),
      '/s/model.yaml',
    );
    expect(s.rules.map((r) => r.when.engine)).toEqual([['claude_code'], ['gemini_cli', 'qwen_code', 'custom', 'codex']]);
    expect(errorsOf('rules:\n  - when: { engine: claude-cod }\n    reply: [ { say: a } ]\n')).toEqual([
      'model.yaml:2:21: rules[0].when.engine: unknown engine "claude-cod"; did you mean "claude_code"?',
    ]);
  });

  it('warns about rules after a catch-all', () => {
    const s = parseModelScript('rules:\n  - reply: [ { say: a } ]\n  - when: { turn: 2 }\n    reply: [ { say: b } ]\n', '/s/model.yaml');
    expect(s.warnings.map((w) => formatDiagnostic(w, '/s'))).toEqual([
      'model.yaml:3:5: warning: rules[1]: unreachable: rules[0] (line 2) has no `when` and answers every request',
    ]);
  });

  it('normalises scalar-or-list conditions and error defaults', () => {
    const s = parseModelScript(
      [
        'rules:',
        '  - name: boom',
        '    when: { prompt_contains: Hello, turn: 2, engine: claude_code, tool_result_contains: [a, b], prompt_matches: "(?i)^make" }',
        '    error: { status: 529 }',
        '    delay_ms: 25',
        '',
      ].join('\n'),
      '/s/model.yaml',
    );
    const r = s.rules[0]!;
    expect(r.when).toMatchObject({ promptContains: ['Hello'], turn: [2], engine: ['claude_code'], toolResultContains: ['a', 'b'] });
    expect(r.when.promptMatches!.test('MAKE it')).toBe(true);
    expect(r.error).toEqual({ status: 529, message: 'scripted error 529' });
    expect(r.delayMs).toBe(25);
  });
});
