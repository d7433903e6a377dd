import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/diagnostics.js';
import { parseEvalsJson, readEvalsJson, skillRootOfEvalsJson } from '../../src/import/evals-json.js';
import { writeSkillWithEvals } from './helpers.js';

const errorsOf = (text: string) => {
  try {
    parseEvalsJson('/s/evals/evals.json', text);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).diagnostics.map((d) => `${d.line}:${d.col}: ${d.path ? `${d.path}: ` : ''}${d.message}`);
  }
  throw new Error('accepted');
};

describe('readEvalsJson', () => {
  it("reads skill-creator's fields, `expectations` or `assertions`, with ids defaulting to the position", () => {
    const dir = writeSkillWithEvals({
      skill_name: 'csv-summary',
      evals: [
        { id: 4, prompt: 'p1', expected_output: 'e1', files: ['./evals/files/data.csv'], expectations: ['a', 'b'] },
        { prompt: 'p2', assertions: ['c', { text: 'd' }, 'c'] },
      ],
    });
    const f = readEvalsJson(join(dir, 'evals/evals.json'));
    expect(f.skillDir).toBe(dir);
    expect(f.skillName).toBe('csv-summary');
    expect(f.evals.map(({ at: _at, ...e }) => e)).toEqual([
      { index: 0, id: 4, prompt: 'p1', expectedOutput: 'e1', files: ['evals/files/data.csv'], expectations: ['a', 'b'] },
      { index: 1, id: 2, prompt: 'p2', files: [], expectations: ['c', 'd'] },
    ]);
  });

  it('reports every problem at its line and column, at once', () => {
    const text = `{
  "skill_name": "x",
  "evals": [
    { "id": 1, "prompt": "" },
    { "id": 1, "prompt": "ok", "files": ["/etc/passwd", "../outside.txt"] },
    { "id": "bad id!", "prompt": "p", "expectations": "not a list" },
    { "prompt": "p", "expectations": [42] },
    "just a string"
  ]
}`;
    expect(errorsOf(text)).toEqual([
      '4:26: evals[0].prompt: `prompt` must be a non-empty string',
      '5:13: evals[1].id: duplicate eval id 1 (also at line 4); ids must be unique',
      '5:42: evals[1].files[0]: input file `/etc/passwd` must be relative to the skill root, not absolute',
      '5:57: evals[1].files[1]: input file `../outside.txt` leaves the skill root /s',
      '6:13: evals[2].id: `id` must be a whole number ≥ 0 (or a name of letters, digits, `_`, `-` and `.`)',
      '6:55: evals[2].expectations: `expectations` must be a list of statements (strings)',
      '7:39: evals[3].expectations[0]: an expectation must be a non-empty string (or an object with a `text`)',
      '8:5: evals[4]: an eval must be an object with at least `prompt`',
    ]);
  });

  it('says what is wrong with a file that is not an evals.json', () => {
    expect(errorsOf('{"skill_name": "x"}')).toEqual(['1:1: missing `evals`: the list of evals ([{"id": 1, "prompt": "…", "expectations": [...]}])']);
    expect(errorsOf('[1, 2]')).toEqual(['1:1: an evals.json must be an object {"skill_name": "…", "evals": [...]}, but this file is a list']);
    expect(errorsOf('{"evals": []}')).toEqual(['1:11: evals: `evals` is empty: there is nothing to import']);
    expect(errorsOf('{"evals": [ {"prompt": "a",} ]}')[0]).toMatch(/^1:2\d: not valid JSON: /);
  });

  it('warns about unknown keys and both lists given, without failing', () => {
    const f = parseEvalsJson('/s/evals/evals.json', JSON.stringify({ evals: [{ prompt: 'p', expectations: ['a'], assertions: ['b'], weight: 2 }], extra: 1 }));
    expect(f.evals[0]!.expectations).toEqual(['a', 'b']);
    expect(f.bag.items.map((d) => d.message)).toEqual([
      'unknown key `extra` in evals.json; ignored (known: skill_name, evals)',
      'unknown key `weight`; ignored',
      'both `expectations` and `assertions` are given; their statements are merged',
    ]);
    expect(f.bag.hasErrors).toBe(false);
  });

  it('refuses a typo of a field the eval lacks (its grading would be dropped), with the field it meant', () => {
    expect(errorsOf(JSON.stringify({ evals: [{ prompt: 'p', expectation: ['a'] }] }))).toEqual(['1:25: evals[0].expectation: unknown key `expectation`; did you mean `expectations`?']);
  });

  it('finds the skill root above evals/ and names a missing file', () => {
    expect(skillRootOfEvalsJson('/a/skill/evals/evals.json')).toBe('/a/skill');
    expect(skillRootOfEvalsJson('/a/skill/evals.json')).toBe('/a/skill');
    expect(() => readEvalsJson('/nonexistent/evals.json')).toThrow(ConfigError);
  });
});
