/**
 * The rule-kind table (src/judge/rules.ts RULE_KINDS) is the one place a rule kind lives: the
 * schema's rule part must be the table's fragments, config must read every kind through it,
 * and the judge must evaluate every kind through it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaPath } from '../../src/config/schema.js';
import type { Rule } from '../../src/config/types.js';
import { loadOk, MINIMAL_EVAL, writeSkill } from '../config/helpers.js';
import { evaluateRule, RULE_KINDS } from '../../src/judge/rules.js';
import { makeInput, tempDir, turn } from './helpers.js';

const caseSchema = JSON.parse(readFileSync(schemaPath('case.schema.json'), 'utf8')) as { $defs: { rule: { properties: Record<string, unknown> } } };

describe('RULE_KINDS', () => {
  it('is the rule part of schemas/case.schema.json, kind for kind and in order', () => {
    const fromTable = Object.fromEntries(Object.values(RULE_KINDS).map((k) => [k.key, k.schema]));
    expect(Object.keys(caseSchema.$defs.rule.properties)).toEqual(Object.keys(fromTable));
    expect(caseSchema.$defs.rule.properties).toEqual(fromTable);
  });

  it('has one YAML key per Rule field', () => {
    const keys = Object.values(RULE_KINDS).map((k) => k.key);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

/** A case using every rule kind once, as a user writes it. */
const EVERY_KIND = `input:
  turns:
    - content: "first"
    - content: "second"
judge:
  type: rule_based
  success:
    - output_contains: { all: ["done"] }
    - output_matches: { any: ["d[aeiou]ne"] }
    - exit_code: 0
    - files_exist: [out.txt]
    - files_not_exist: [missing.txt]
    - tool_called: { name: Write, args: { file_path: out.txt } }
    - tool_not_called: { name: Bash }
    - skill_invoked: demo-skill
    - skill_not_invoked: other-skill
    - turn_response_contains: { turn: 1, contains_all: ["one"] }
    - turn_response_not_contains: { turn: 2, not_contains: ["error"] }
    - tool_called_in_turn: { turn: 1, name: Write }
    - tool_not_called_in_turn: { turn: 2, name: Write }
`;

describe('rule kinds end to end: YAML → config → judge, through the table', () => {
  it('config reads every kind of the table into its own Rule field', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/every.yaml': EVERY_KIND });
    const { suite } = await loadOk(dir);
    const judge = suite.cases[0]!.judges[0]!;
    expect(judge.type).toBe('rule_based');
    const rules = (judge as { success: Rule[] }).success;
    expect(rules.map((r) => Object.keys(r))).toEqual(Object.keys(RULE_KINDS).map((k) => [k]));
    expect(rules[5]).toEqual({ toolCalled: { name: 'Write', args: { file_path: 'out.txt' } } });
    expect(rules[9]).toEqual({ turnResponseContains: { turn: 1, containsAll: ['one'] } });
  });

  it('the judge evaluates every kind it read', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/every.yaml': EVERY_KIND });
    const rules = ((await loadOk(dir)).suite.cases[0]!.judges[0] as { success: Rule[] }).success;
    const ws = tempDir({ 'out.txt': 'x' });
    try {
      const write = { id: 'w', name: 'Write', input: { file_path: 'out.txt' } };
      const input = makeInput({
        workspace: ws.dir,
        finalMessage: 'done',
        turns: [turn(1, 'one', [write], { skillActivations: [{ skill: 'demo-skill', via: 'tool' }] }), turn(2, 'done')],
      });
      const results = await Promise.all(rules.map((r) => evaluateRule(r, input)));
      expect(results.filter((r) => !r.holds).map((r) => `${r.text}: ${r.evidence}`)).toEqual([]);
      expect(results.map((r) => r.text.split(/[ :]/)[0])).toEqual(Object.values(RULE_KINDS).map((k) => k.key));
      // The same rules fail on a job that did none of it.
      const empty = tempDir();
      const idle = makeInput({ workspace: empty.dir, finalMessage: '', exitCode: 1, turns: [turn(1, 'error'), turn(2, 'error')] });
      const idleResults = await Promise.all(rules.map((r) => evaluateRule(r, idle)));
      expect(idleResults.filter((r) => r.holds).map((r) => r.text)).toEqual([
        'files_not_exist: ["missing.txt"]',
        'tool_not_called: Bash',
        'skill_not_invoked: other-skill',
        'tool_not_called_in_turn {turn: 2, name: Write}',
      ]);
      empty.cleanup();
    } finally {
      ws.cleanup();
    }
  });
});

it('a turn rule naming a turn the case does not have is a config error at its `turn`', async () => {
  const dir = writeSkill({
    'evals/eval.yaml': MINIMAL_EVAL,
    'evals/cases/bad.yaml': 'input:\n  prompt: hi\njudge:\n  type: rule_based\n  success:\n    - tool_called_in_turn: { turn: 3, name: Write }\n',
  });
  const { loadErrors } = await import('../config/helpers.js');
  const errs = await loadErrors(dir);
  expect(errs.map((d) => `${d.line}:${d.col} ${d.path}: ${d.message}`)).toEqual(['6:36 judge.success[0].tool_called_in_turn.turn: turn 3 does not exist: this case has 1 turn']);
});
