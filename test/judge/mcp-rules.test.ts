/**
 * The MCP rule kinds `mcp_tool_called` / `mcp_tool_not_called` (src/judge/mcp-rules.ts):
 * verdicts and evidence over the transcript's `mcp__<server>__<tool>` calls, and their
 * config-time checks (YAML → Rule, with file:line messages).
 */
import { describe, expect, it } from 'vitest';
import { DiagnosticBag } from '../../src/config/diagnostics.js';
import type { Rule } from '../../src/config/types.js';
import { Field, parseYaml } from '../../src/config/yaml-source.js';
import type { ToolCall } from '../../src/engine/types.js';
import { evaluateRule, parseRule, runRuleJudge } from '../../src/judge/rules.js';
import { loadErrors, loadOk, MINIMAL_EVAL, writeSkill } from '../config/helpers.js';

/** MINIMAL_EVAL offering the MCP servers the rules below name (a rule naming a server the case does not offer is a config error). */
const MCP_EVAL = `${MINIMAL_EVAL}mcp:\n  servers:\n    - {name: tickets, mode: mocked, builtin: filesystem}\n    - {name: my-fs_2, mode: mocked, builtin: filesystem}\n`;
import { makeInput, turn } from './helpers.js';

const call = (name: string, input: unknown, id = name): ToolCall => ({ id, name, input }) as ToolCall;
const create = call('mcp__tickets__create_ticket', { title: 'Login broken', priority: 'high', labels: ['auth', 'bug'], meta: { team: 'web', n: 3 } }, 'c1');
const list = call('mcp__tickets__list_tickets', { status: 'open' }, 'c2');
const read = call('mcp__files__read_file', { path: '/tmp/ws/notes.md' }, 'c3');
const bash = call('Bash', { command: 'ls' }, 'c4');

/** A job of two turns: Bash and list_tickets, then create_ticket and the files server's read_file. */
const job = makeInput({ workspace: '/nonexistent', turns: [turn(1, 'listed', [bash, list]), turn(2, 'created', [create, read])] });
const eval1 = (rule: Rule) => evaluateRule(rule, job);

describe('mcp_tool_called', () => {
  it('holds when the server called that tool in some turn, naming the first call', async () => {
    const r = await eval1({ mcpToolCalled: { server: 'tickets', tool: 'create_ticket' } });
    expect(r.text).toBe('mcp_tool_called {server: tickets, tool: create_ticket}');
    expect(r.holds).toBe(true);
    expect(r.evidence).toBe(`mcp__tickets__create_ticket called 1 time(s) in any turn (first in turn 2: mcp__tickets__create_ticket ${JSON.stringify(create.input)})`);
  });

  it('fails when the tool was never called, quoting the MCP calls seen and the other tools', async () => {
    const r = await eval1({ mcpToolCalled: { server: 'tickets', tool: 'close_ticket' } });
    expect(r.holds).toBe(false);
    expect(r.evidence).toBe(
      'mcp__tickets__close_ticket was not called in any turn; MCP calls (3): turn 1 mcp__tickets__list_tickets {"status":"open"}; ' +
        `turn 2 mcp__tickets__create_ticket ${JSON.stringify(create.input)}; turn 2 mcp__files__read_file {"path":"/tmp/ws/notes.md"}; other tools called: Bash`,
    );
  });

  it('matches `args` partially with structured equality, as tool_called does', async () => {
    const hit = await eval1({ mcpToolCalled: { server: 'tickets', tool: 'create_ticket', args: { priority: 'high', labels: ['auth', 'bug'], meta: { n: 3 } } } });
    expect(hit.holds).toBe(true);
    expect(hit.text).toBe('mcp_tool_called {server: tickets, tool: create_ticket, args: {"priority":"high","labels":["auth","bug"],"meta":{"n":3}}}');
    expect(hit.evidence).toContain('matching call in turn 2: mcp__tickets__create_ticket');
    // A number is not its string; an array must have the same length; a nested key must match.
    for (const args of [{ meta: { n: '3' } }, { labels: ['auth'] }, { meta: { team: 'api' } }, { priority: 'low' }, { assignee: 'me' }]) {
      const miss = await eval1({ mcpToolCalled: { server: 'tickets', tool: 'create_ticket', args } });
      expect(miss.holds, JSON.stringify(args)).toBe(false);
      expect(miss.evidence).toMatch(/^mcp__tickets__create_ticket called 1 time\(s\) in any turn but no call matched the arguments \(call 1: .+\); MCP calls \(3\)/);
    }
    const miss = await eval1({ mcpToolCalled: { server: 'tickets', tool: 'create_ticket', args: { priority: 'low' } } });
    expect(miss.evidence).toContain('(call 1: priority: expected "low", got "high")');
  });

  it('a string argument matches the end of the actual one (an engine\'s absolute path)', async () => {
    expect((await eval1({ mcpToolCalled: { server: 'files', tool: 'read_file', args: { path: 'notes.md' } } })).holds).toBe(true);
  });

  it('does not count a call of the same tool name on another server', async () => {
    const r = await eval1({ mcpToolCalled: { server: 'files', tool: 'create_ticket' } });
    expect(r.holds).toBe(false);
    expect(r.evidence).toMatch(/^mcp__files__create_ticket was not called in any turn; MCP calls \(3\)/);
    expect((await eval1({ mcpToolCalled: { server: 'ticket', tool: 'create_ticket' } })).holds).toBe(false);
    // Nor a built-in tool of that name.
    const plain = makeInput({ workspace: '/nonexistent', turns: [turn(1, 'x', [call('create_ticket', {})])] });
    const r2 = await evaluateRule({ mcpToolCalled: { server: 'tickets', tool: 'create_ticket' } }, plain);
    expect(r2.holds).toBe(false);
    expect(r2.evidence).toBe('mcp__tickets__create_ticket was not called in any turn; MCP calls: none; other tools called: create_ticket');
  });

  it('with `tool` left out, any tool of the server counts; `args` then applies to any of its calls', async () => {
    const any = await eval1({ mcpToolCalled: { server: 'tickets' } });
    expect(any.text).toBe('mcp_tool_called {server: tickets}');
    expect(any.holds).toBe(true);
    expect(any.evidence).toBe('mcp__tickets__* called 2 time(s) in any turn (first in turn 1: mcp__tickets__list_tickets {"status":"open"})');
    expect((await eval1({ mcpToolCalled: { server: 'tickets', args: { priority: 'high' } } })).holds).toBe(true);
    const none = await eval1({ mcpToolCalled: { server: 'tickets', args: { status: 'closed' } } });
    expect(none.holds).toBe(false);
    expect(none.evidence).toContain('(call 1: mcp__tickets__list_tickets: status: expected "closed", got "open"; call 2: mcp__tickets__create_ticket: status: missing)');
    expect((await eval1({ mcpToolCalled: { server: 'github' } })).holds).toBe(false);
  });

  it('server and tool compare case-insensitively, like every tool name of the rules', async () => {
    expect((await eval1({ mcpToolCalled: { server: 'Tickets', tool: 'Create_Ticket' } })).holds).toBe(true);
  });

  it('uses the server and tool the run marked on a call', async () => {
    const marked = makeInput({ workspace: '/nonexistent', turns: [turn(1, 'x', [{ ...call('mcp__tickets__create_ticket', {}), mcp: { server: 'tickets', tool: 'create_ticket' } }])] });
    expect((await evaluateRule({ mcpToolCalled: { server: 'tickets', tool: 'create_ticket' } }, marked)).holds).toBe(true);
  });

  it('bounds the evidence: at most 5 MCP calls quoted, each input clipped', async () => {
    const many = Array.from({ length: 12 }, (_, i) => call('mcp__tickets__get_ticket', { id: i, body: 'x'.repeat(500) }, `g${i}`));
    const r = await evaluateRule({ mcpToolCalled: { server: 'tickets', tool: 'close_ticket' } }, makeInput({ workspace: '/nonexistent', turns: [turn(1, 'x', many)] }));
    expect(r.evidence).toContain('MCP calls (12): ');
    expect(r.evidence).toContain(' (+7 more); other tools called: none');
    expect(r.evidence.match(/mcp__tickets__get_ticket/g)).toHaveLength(5);
    expect(r.evidence.length).toBeLessThan(1000);
  });
});

describe('mcp_tool_not_called', () => {
  it('holds when no call of that tool was made, with the MCP calls seen', async () => {
    const r = await eval1({ mcpToolNotCalled: { server: 'tickets', tool: 'delete_ticket' } });
    expect(r.text).toBe('mcp_tool_not_called {server: tickets, tool: delete_ticket}');
    expect(r.holds).toBe(true);
    expect(r.evidence).toMatch(/^mcp__tickets__delete_ticket was not called in any turn; MCP calls \(3\): turn 1 mcp__tickets__list_tickets/);
  });

  it('fails when it was called, naming the turns and the first call', async () => {
    const r = await eval1({ mcpToolNotCalled: { server: 'files', tool: 'read_file' } });
    expect(r.holds).toBe(false);
    expect(r.evidence).toMatch(/^mcp__files__read_file called 1 time\(s\) in any turn \(turn 2; first: mcp__files__read_file \{"path":"\/tmp\/ws\/notes.md"\}\); MCP calls \(3\)/);
  });

  it('with `tool` left out, any call of the server breaks it; another server\'s calls do not', async () => {
    const r = await eval1({ mcpToolNotCalled: { server: 'tickets' } });
    expect(r.text).toBe('mcp_tool_not_called {server: tickets}');
    expect(r.holds).toBe(false);
    expect(r.evidence).toMatch(/^mcp__tickets__\* called 2 time\(s\) in any turn \(turn 1, 2; first: mcp__tickets__list_tickets/);
    expect((await eval1({ mcpToolNotCalled: { server: 'github' } })).holds).toBe(true);
  });

  it('as a failure rule, fails the judge when the server was used', async () => {
    const out = await runRuleJudge({ success: [{ mcpToolCalled: { server: 'tickets', tool: 'create_ticket', args: { priority: 'high' } } }], failure: [{ mcpToolCalled: { server: 'tickets', tool: 'delete_ticket' } }] }, job);
    expect(out.status).toBe('pass');
    expect(out.assertions.map((a) => [a.text, a.passed])).toEqual([
      ['mcp_tool_called {server: tickets, tool: create_ticket, args: {"priority":"high"}}', true],
      ['no failure: mcp_tool_called {server: tickets, tool: delete_ticket}', true],
    ]);
    const failed = await runRuleJudge({ success: [], failure: [{ mcpToolCalled: { server: 'files' } }] }, job);
    expect(failed.status).toBe('fail');
    expect(failed.reason).toBe('failure rule matched: mcp_tool_called {server: files}');
  });
});

describe('MCP rules in config', () => {
  const caseWith = (rules: string) => `input:\n  prompt: hi\njudge:\n  type: rule_based\n  success:\n${rules}`;

  it('reads server, tool and args into the Rule', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MCP_EVAL,
      'evals/cases/a.yaml': caseWith('    - mcp_tool_called: { server: tickets, tool: create_ticket, args: { priority: high, n: 2 } }\n    - mcp_tool_called: { server: tickets }\n    - mcp_tool_not_called: { server: my-fs_2 }\n'),
    });
    const rules = ((await loadOk(dir)).suite.cases[0]!.judges[0] as { success: Rule[] }).success;
    expect(rules).toEqual([
      { mcpToolCalled: { server: 'tickets', tool: 'create_ticket', args: { priority: 'high', n: 2 } } },
      { mcpToolCalled: { server: 'tickets' } },
      { mcpToolNotCalled: { server: 'my-fs_2' } },
    ]);
  });

  it('reports a bad server name, a missing server, an unknown key and `args` on not_called at file:line', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MCP_EVAL,
      'evals/cases/a.yaml': caseWith(
        '    - mcp_tool_called: { server: "my server" }\n' +
          '    - mcp_tool_called: { server: my__fs }\n' +
          '    - mcp_tool_called: { tool: create_ticket }\n' +
          '    - mcp_tool_not_called: { server: tickets, args: { a: 1 } }\n' +
          '    - mcp_tool_called: { server: tickets, name: x }\n',
      ),
    });
    const errs = await loadErrors(dir);
    const shown = errs.map((d) => `${d.line} ${d.path}: ${d.message}`);
    expect(shown).toEqual([
      '6 judge.success[0].mcp_tool_called.server: expected an MCP server name (1–64 letters, digits, `_` or `-`), got a string `"my server"`',
      '7 judge.success[1].mcp_tool_called.server: `mcp_tool_called` server `my__fs` cannot contain `__`: tools are named `mcp__<server>__<tool>`, and no server name has it (src/config/mcp.ts)',
      '8 judge.success[2].mcp_tool_called: missing required key `server` (an MCP server name (1–64 letters, digits, `_` or `-`))',
      '9 judge.success[3].mcp_tool_not_called.args: unknown key `args`; expected one of `server`, `tool`',
      '10 judge.success[4].mcp_tool_called.name: unknown key `name`; expected one of `server`, `tool`, `args`',
    ]);
    expect(errs.every((d) => d.file.endsWith('a.yaml'))).toBe(true);
  });

  /** One rule item parsed through the table, with the servers the case offers. */
  const parseOne = (yaml: string, mcpServers?: string[]) => {
    const bag = new DiagnosticBag();
    const src = parseYaml('/skill/evals/cases/a.yaml', yaml, bag);
    const rule = parseRule(Field.root(src, bag), { checkRegex: () => undefined, checkWorkspacePath: () => undefined, ...(mcpServers ? { mcpServers } : {}) });
    return { rule, errors: bag.sorted().map((d) => `${d.line}:${d.col} ${d.message}`) };
  };

  it('with the case\'s servers known, a server the case does not offer is an error at `server`', () => {
    expect(parseOne('mcp_tool_called: { server: Tickets }\n', ['tickets', 'files']).errors).toEqual([]);
    expect(parseOne('mcp_tool_called: { server: github }\n', ['tickets', 'files']).errors).toEqual(['1:28 `mcp_tool_called` names mcp server `github`, which this case does not offer (offered: `tickets`, `files`)']);
    expect(parseOne('mcp_tool_not_called: { server: github }\n', []).errors).toEqual([
      '1:32 `mcp_tool_not_called` names mcp server `github`, but this case offers no MCP server; declare it under `mcp.servers` in eval.yaml or the case',
    ]);
    // Unknown (eval-level judges): not checked.
    expect(parseOne('mcp_tool_called: { server: github }\n').errors).toEqual([]);
  });
});
