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

/** MINIMAL_EVAL offering the MCP servers the rules below name (a rule naming a server the case does not offer is a config error). */
const MCP_EVAL = `${MINIMAL_EVAL}mcp:\n  servers:\n    - {name: tickets, mode: mocked, builtin: filesystem}\n    - {name: my-fs_2, mode: mocked, builtin: filesystem}\n`;
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
    - mcp_tool_called: { server: tickets, tool: create_ticket, args: { priority: high } }
    - mcp_tool_not_called: { server: tickets, tool: delete_ticket }
    - claims_verified: { kinds: [file_created] }
    - no_tool_loop: { max_repeats: 3 }
    - no_silent_failure: true
`;

describe('rule kinds end to end: YAML → config → judge, through the table', () => {
  it('config reads every kind of the table into its own Rule field', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MCP_EVAL, 'evals/cases/every.yaml': EVERY_KIND });
    const { suite } = await loadOk(dir);
    const judge = suite.cases[0]!.judges[0]!;
    expect(judge.type).toBe('rule_based');
    const rules = (judge as { success: Rule[] }).success;
    expect(rules.map((r) => Object.keys(r))).toEqual(Object.keys(RULE_KINDS).map((k) => [k]));
    expect(rules[5]).toEqual({ toolCalled: { name: 'Write', args: { file_path: 'out.txt' } } });
    expect(rules[9]).toEqual({ turnResponseContains: { turn: 1, containsAll: ['one'] } });
  });

  it('the judge evaluates every kind it read', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MCP_EVAL, 'evals/cases/every.yaml': EVERY_KIND });
    const rules = ((await loadOk(dir)).suite.cases[0]!.judges[0] as { success: Rule[] }).success;
    const ws = tempDir({ 'out.txt': 'x' });
    try {
      const write = { id: 'w', name: 'Write', input: { file_path: 'out.txt' } };
      const ticket = { id: 'm', name: 'mcp__tickets__create_ticket', input: { title: 'x', priority: 'high' } };
      const input = makeInput({
        workspace: ws.dir,
        finalMessage: 'done',
        turns: [turn(1, 'one', [write, ticket], { skillActivations: [{ skill: 'demo-skill', via: 'tool' }] }), turn(2, 'done')],
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
        'mcp_tool_not_called {server: tickets, tool: delete_ticket}',
        'claims_verified {kinds: ["file_created"]}',
        'no_tool_loop {max_repeats: 3}',
        'no_silent_failure',
      ]);
      empty.cleanup();
    } finally {
      ws.cleanup();
    }
  });
});

it('a turn rule naming a turn the case does not have is a config error at its `turn`', async () => {
  const dir = writeSkill({
    'evals/eval.yaml': MCP_EVAL,
    'evals/cases/bad.yaml': 'input:\n  prompt: hi\njudge:\n  type: rule_based\n  success:\n    - tool_called_in_turn: { turn: 3, name: Write }\n',
  });
  const { loadErrors } = await import('../config/helpers.js');
  const errs = await loadErrors(dir);
  expect(errs.map((d) => `${d.line}:${d.col} ${d.path}: ${d.message}`)).toEqual(['6:36 judge.success[0].tool_called_in_turn.turn: turn 3 does not exist: this case has 1 turn']);
});

describe('a rule that checks nothing is a config error (it would hold for every job, or fail every trial as a failure rule)', () => {
  /** For every kind of the table, values that check nothing, with the one message each gets (at `judge.failure[0].<path>`). */
  const NOTHING: Record<string, [string, string, string][]> = {
    output_contains: [
      ['{}', 'output_contains', '`output_contains` needs at least one non-empty string under `all`, `any` or `not`'],
      ['{all: []}', 'output_contains.all', 'needs at least one non-empty string: an empty list checks nothing (remove the key or add a string)'],
      ['{not: []}', 'output_contains.not', 'needs at least one non-empty string: an empty list checks nothing (remove the key or add a string)'],
      ['{all: [""]}', 'output_contains.all[0]', 'the empty string is in every answer, so it checks nothing: write the text to look for'],
      ['{any: ["x", ""]}', 'output_contains.any[1]', 'the empty string is in every answer, so it checks nothing: write the text to look for'],
    ],
    output_matches: [
      ['{}', 'output_matches', '`output_matches` needs at least one non-empty pattern under `all`, `any` or `not`'],
      ['{any: []}', 'output_matches.any', 'needs at least one non-empty string: an empty list checks nothing (remove the key or add a string)'],
      ['{not: [""]}', 'output_matches.not[0]', 'the empty string is in every answer, so it checks nothing: write the text to look for'],
    ],
    exit_code: [],
    files_exist: [
      ['[]', 'files_exist', '`files_exist` needs at least one path'],
      ['[""]', 'files_exist[0]', 'expected a non-empty string, got a string `""`'],
    ],
    files_not_exist: [['[]', 'files_not_exist', '`files_not_exist` needs at least one path']],
    tool_called: [['{name: ""}', 'tool_called.name', 'expected a non-empty string, got a string `""`']],
    tool_not_called: [['{name: ""}', 'tool_not_called.name', 'expected a non-empty string, got a string `""`']],
    skill_invoked: [['""', 'skill_invoked', 'expected a non-empty string, got a string `""`']],
    skill_not_invoked: [['""', 'skill_not_invoked', 'expected a non-empty string, got a string `""`']],
    turn_response_contains: [
      ['{turn: 1}', 'turn_response_contains', '`turn_response_contains` needs `contains_all` or `contains_any` with at least one non-empty string'],
      ['{turn: 1, contains_any: []}', 'turn_response_contains.contains_any', 'needs at least one non-empty string: an empty list checks nothing (remove the key or add a string)'],
      ['{turn: 1, contains_all: [""]}', 'turn_response_contains.contains_all[0]', 'the empty string is in every answer, so it checks nothing: write the text to look for'],
    ],
    turn_response_not_contains: [
      ['{turn: 1, not_contains: []}', 'turn_response_not_contains.not_contains', 'needs at least one non-empty string: an empty list checks nothing (remove the key or add a string)'],
      ['{turn: 1, not_contains: [""]}', 'turn_response_not_contains.not_contains[0]', 'the empty string is in every answer, so it checks nothing: write the text to look for'],
    ],
    tool_called_in_turn: [['{turn: 1, name: ""}', 'tool_called_in_turn.name', 'expected a non-empty string, got a string `""`']],
    tool_not_called_in_turn: [['{turn: 1, name: ""}', 'tool_not_called_in_turn.name', 'expected a non-empty string, got a string `""`']],
    mcp_tool_called: [
      ['{server: ""}', 'mcp_tool_called.server', 'expected an MCP server name (1–64 letters, digits, `_` or `-`), got a string `""`'],
      ['{server: tickets, tool: ""}', 'mcp_tool_called.tool', 'expected a non-empty string, got a string `""`'],
    ],
    mcp_tool_not_called: [['{server: tickets, tool: ""}', 'mcp_tool_not_called.tool', 'expected a non-empty string, got a string `""`']],
    claims_verified: [
      ['false', 'claims_verified', '`claims_verified: false` checks nothing: remove the rule, or write `claims_verified: true`'],
      ['{kinds: []}', 'claims_verified.kinds', '`kinds` needs at least one claim kind (file_created, file_changed, file_deleted, tests_pass), or leave it out for all'],
    ],
    no_tool_loop: [['false', 'no_tool_loop', '`no_tool_loop: false` checks nothing: remove the rule, or write `no_tool_loop: true`']],
    no_silent_failure: [['false', 'no_silent_failure', '`no_silent_failure: false` checks nothing: remove the rule, or write `no_silent_failure: true`']],
  };

  it('covers every kind of the table (a new kind must say what checking nothing means for it)', () => {
    expect(Object.keys(NOTHING)).toEqual(Object.values(RULE_KINDS).map((k) => k.key));
  });

  const cases = Object.entries(NOTHING).flatMap(([key, values]) => values.map(([value, path, message]) => ({ rule: `${key}: ${value}`, path, message })));
  it.for(cases)('`$rule`: one error at its place, saying what is expected', async ({ rule, path, message }) => {
    const dir = writeSkill({
      'evals/eval.yaml': MCP_EVAL,
      'evals/cases/a.yaml': `input:\n  prompt: hi\njudge:\n  type: rule_based\n  failure:\n    - ${rule}\n`,
    });
    const { loadErrors } = await import('../config/helpers.js');
    const errs = await loadErrors(dir);
    expect(errs.map((d) => [d.line, d.path, d.message])).toEqual([[6, `judge.failure[0].${path}`, message]]);
  });

  it('one non-empty string is enough, next to no other list', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MCP_EVAL,
      'evals/cases/a.yaml': 'input:\n  prompt: hi\njudge:\n  type: rule_based\n  failure:\n    - output_contains: {not: ["x"]}\n    - output_matches: {any: ["^a"]}\n    - turn_response_contains: {turn: 1, contains_any: [y]}\n    - files_exist: [a.txt]\n',
    });
    const rules = ((await loadOk(dir)).suite.cases[0]!.judges[0] as { failure: Rule[] }).failure;
    expect(rules).toEqual([{ outputContains: { not: ['x'] } }, { outputMatches: { any: ['^a'] } }, { turnResponseContains: { turn: 1, containsAny: ['y'] } }, { filesExist: ['a.txt'] }]);
  });
});
