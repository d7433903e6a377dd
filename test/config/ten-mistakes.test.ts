/**
 * A whole suite with ten deliberate, different mistakes spread over eval.yaml and two case
 * files (test/config/fixtures/ten-mistakes, each mistake marked with a comment): one load
 * reports all ten, each at its line, and nothing else.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadSuite } from '../../src/config/load.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'ten-mistakes');

async function problems(): Promise<string[]> {
  try {
    await loadSuite(dir, { cwd: dir });
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).diagnostics.filter((d) => d.severity === 'error').map((d) => formatDiagnostic(d, dir));
  }
  throw new Error('the ten-mistakes suite loaded without errors');
}

describe('a suite with ten mistakes', () => {
  it('reports exactly ten problems (the whole-suite count)', async () => {
    expect(await problems()).toHaveLength(10);
  });

  it('reports each one at its file, line and column, with its field path', async () => {
    const got = await problems();
    const where = got.map((p) => p.split(': ').slice(0, 2).join(': '));
    expect(where).toEqual([
      'evals/cases/review.yaml:5:3: input.turns', // 5: prompt and turns both set
      'evals/cases/review.yaml:8:17: context.repo_fixture', // 6: escapes the skill folder
      'evals/cases/review.yaml:12:31: judge.success[0].output_matches.all[0]', // 7: regex
      'evals/cases/setup.yaml:6:39: input.turns[0].capture[0].pattern', // 8: capture group
      'evals/cases/setup.yaml:10:5: context.files["/etc/hosts"]', // 9: absolute workspace path
      'evals/cases/setup.yaml:12:20: constraints.timeout_seconds', // 10: range
      'evals/eval.yaml:4:9: engine.name', // 1: unknown engine
      'evals/eval.yaml:10:7: cases.files[2]', // 2: missing case file
      'evals/eval.yaml:14:7: cases.defaults.expect.must_contian', // 3: unknown key
      'evals/eval.yaml:16:12: report.formats', // 4: wrong type
    ]);
  });

  it('says what is wrong and what was expected in each', async () => {
    const messages = (await problems()).map((p) => p.split(': ').slice(2).join(': '));
    const expected = [
      /^`input.prompt` \(line 4\) and `input.turns` are both set/,
      /^repo fixture `\.\.\/\.\.\/etc\/passwd` is outside the skill folder/,
      /^regular expression `null \(pointer\|dereference` does not compile: Unterminated group$/,
      /^capture pattern `token=\\w\+` must have a group named `value`.*it has no group$/,
      /^file name `\/etc\/hosts` is an absolute path; it must be relative to the workspace/,
      /^expected a whole number of seconds \(`0` = default, `-1` = no deadline\), got a number `-5`$/,
      /^unknown engine `claude-cod`; did you mean `claude_code`\?/,
      /^case file `evals\/cases\/reveiw-2\.yaml` not found in the skill folder/,
      /^unknown key `must_contian`; did you mean `must_contain`\?$/,
      /^expected a list of report formats \(json, junit, html, markdown, benchmark\), got a string `"json"`$/,
    ];
    expect(messages).toHaveLength(expected.length);
    messages.forEach((m, i) => expect(m).toMatch(expected[i]!));
  });

  it('every problem line holds the mistake comment of the fixture', async () => {
    const { readFileSync } = await import('node:fs');
    for (const p of await problems()) {
      const [file, line] = p.split(':') as [string, string];
      const text = readFileSync(path.join(dir, file), 'utf8').split('\n')[Number(line) - 1]!;
      expect(text, p).toMatch(/# \d+:/);
    }
  });
});
