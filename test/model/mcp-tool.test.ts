/**
 * The scripted model's `mcp_tool` action and `tool_listed` condition (issue 16): the script
 * checks, each engine's name for an MCP server's tool (its definition's `model.mcpTool`), the
 * deferred listings (Claude Code's ToolSearch list, Codex's deferred namespaces), and the wire
 * form of the call (Codex: `function_call {namespace, name}`). The requests are the first model
 * calls of real runs with one mcp-mock server `tickets` (fixtures/<engine>/request-mcp-*.json,
 * captured from skill-up's server log); the real binaries are driven in engines/<name>/mcp.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, formatDiagnostic } from '../../src/config/diagnostics.js';
import { deferredNamespaces, deferredTools, toolListed, viewConversation } from '../../src/model/conversation.js';
import { planResponse } from '../../src/model/plan.js';
import { mcpToolAddress } from '../../src/model/protocols/engines.js';
import type { ProtocolModule, WireContext } from '../../src/model/protocols/protocol.js';
import { parseModelScript } from '../../src/model/script.js';
import { PROTOCOLS } from '../../src/model/server.js';
import { mapToolAction } from '../../src/model/tools.js';
import type { ModelReply, ModelRequest, ProtocolId } from '../../src/model/types.js';
import { registerEngine } from '../../engines/index.js';
import { opencode } from '../../engines/opencode/index.js';
import { FIXTURES, parseSse, script } from './helpers.js';

/** A captured request: `{url, headers, body}` (fixtures/<engine>/request-mcp-*.trimmed.json). */
interface Captured {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

function load(folder: string, name: string): Captured {
  return JSON.parse(readFileSync(join(FIXTURES, folder, name), 'utf8')) as Captured;
}

const CAPTURES = {
  claude_code: { protocol: 'anthropic', file: ['claude-code', 'request-mcp-deferred.trimmed.json'] },
  codex: { protocol: 'openai_responses', file: ['codex', 'request-mcp-deferred-namespace.trimmed.json'] },
  codex_in_tools: { protocol: 'openai_responses', file: ['codex', 'request-mcp-namespace-in-tools.trimmed.json'] },
  opencode: { protocol: 'openai_chat', file: ['opencode', 'request-mcp-tickets.trimmed.json'] },
  gemini_cli: { protocol: 'gemini', file: ['gemini-cli', 'request-mcp-tickets.trimmed.json'] },
  qwen_code: { protocol: 'openai_chat', file: ['qwen-code', 'request-mcp-tickets.trimmed.json'] },
} as const satisfies Record<string, { protocol: ProtocolId; file: readonly [string, string] }>;
type CaptureName = keyof typeof CAPTURES;

function protocolOf(id: ProtocolId): ProtocolModule {
  return PROTOCOLS.find((p) => p.id === id)!;
}

function ctxOf(c: Captured, jobEngine?: string): WireContext {
  const url = new URL(c.url, 'http://127.0.0.1');
  return { method: 'POST', pathname: url.pathname, query: url.searchParams, headers: c.headers, rawChars: JSON.stringify(c.body).length, ...(jobEngine ? { jobEngine } : {}) };
}

/** A captured request parsed as the server would, with its protocol module; `edit` changes the body first. */
function captured(name: CaptureName, edit?: (body: Record<string, unknown>) => void): { req: ModelRequest; protocol: ProtocolModule } {
  const { protocol: id, file } = CAPTURES[name];
  const c = load(file[0], file[1]);
  if (edit) edit(c.body);
  const protocol = protocolOf(id);
  return { req: protocol.parse(c.body, ctxOf(c)), protocol };
}

/** The look-up rule every engine test uses: guarded by `tool_listed`, then the call, then a final text. */
const LOOKUP = script(`
rules:
  - name: lookup
    when: { tool_listed: mcp__tickets__get_ticket }
    reply:
      - { mcp_tool: { server: tickets, tool: get_ticket, input: { id: "T-{{turn}}" } } }
      - { say: Looked it up. }
  - reply: [ { say: "no tickets tool" } ]
`);

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

describe('mcp_tool and tool_listed in a script', () => {
  it('load into typed actions and conditions (input optional, one name or a list)', () => {
    const s = script(`
rules:
  - when: { tool_listed: [Bash, mcp__tickets__get_ticket] }
    reply: [ { mcp_tool: { server: help-desk_2, tool: get_ticket, input: { id: T-7, tags: [a] } } } ]
  - when: { tool_listed: ToolSearch }
    reply: [ { mcp_tool: { server: tickets, tool: list } } ]
`);
    expect(s.rules[0]!.when).toEqual({ toolListed: ['Bash', 'mcp__tickets__get_ticket'] });
    expect(s.rules[0]!.reply).toEqual([{ kind: 'mcp_tool', server: 'help-desk_2', tool: 'get_ticket', input: { id: 'T-7', tags: ['a'] } }]);
    expect(s.rules[1]!.when).toEqual({ toolListed: ['ToolSearch'] });
    expect(s.rules[1]!.reply).toEqual([{ kind: 'mcp_tool', server: 'tickets', tool: 'list', input: {} }]);
  });

  it('a bad mcp_tool or tool_listed is reported at its line, all problems at once', () => {
    expect(
      errorsOf(`rules:
  - reply:
      - mcp_tool: { server: tickets }
      - mcp_tool: { server: "my server", tool: get_ticket }
      - mcp_tool: { server: tickets, tool: mcp__tickets__get_ticket }
      - mcp_tool: { server: a__b, tool: t, input: { id: "{{ticket}}" } }
      - mcp_tool: { server: tickets, tool: t, args: { id: 1 } }
      - mcp_tool: { server: tickets, tool: t, input: [1] }
  - when: { tool_listed: [] }
    reply: [ { mcp_tol: { server: s, tool: t } } ]
`),
    ).toEqual([
      'model.yaml:3:19: rules[0].reply[0].mcp_tool: missing required key "tool"',
      'model.yaml:4:29: rules[0].reply[1].mcp_tool.server: must be an MCP server name (1–64 letters, digits, `_` or `-`), got "my server"',
      'model.yaml:5:44: rules[0].reply[2].mcp_tool.tool: `tool` is the tool\'s own name on the server: write `server: tickets, tool: get_ticket`, not the engine\'s name "mcp__tickets__get_ticket"',
      'model.yaml:6:29: rules[0].reply[3].mcp_tool.server: an MCP server name has no `__` (tools are named `mcp__<server>__<tool>`), got "a__b"',
      'model.yaml:6:57: rules[0].reply[3].mcp_tool.input.id: unknown placeholder "{{ticket}}" (expected one of: cwd, turn, prompt)',
      'model.yaml:7:47: rules[0].reply[4].mcp_tool.args: unknown key "args" (expected one of: server, tool, input)',
      'model.yaml:8:54: rules[0].reply[5].mcp_tool.input: must be a mapping, got a list',
      'model.yaml:9:26: rules[1].when.tool_listed: must not be empty',
      'model.yaml:10:16: rules[1].reply[0].mcp_tol: unknown action "mcp_tol"; did you mean "mcp_tool"?',
    ]);
  });
});

describe('tool listings of real requests', () => {
  it('Claude Code: the MCP tools are deferred (the system message’s ToolSearch list), ToolSearch is in `tools`', () => {
    const { req } = captured('claude_code');
    const conv = viewConversation(req);
    expect(conv.engine).toBe('claude_code');
    expect(conv.toolsOffered).toContain('ToolSearch');
    expect(conv.toolsOffered).not.toContain('mcp__tickets__get_ticket');
    expect(conv.toolsDeferred).toEqual([
      'CronCreate',
      'CronDelete',
      'CronList',
      'EnterWorktree',
      'ExitWorktree',
      'Monitor',
      'NotebookEdit',
      'SendMessage',
      'TaskStop',
      'WebFetch',
      'WebSearch',
      'mcp__tickets__close_ticket',
      'mcp__tickets__get_ticket',
    ]);
    expect(toolListed(conv, 'mcp__tickets__get_ticket')).toBe(true);
    expect(toolListed(conv, 'WebFetch')).toBe(true);
    expect(toolListed(conv, 'Bash')).toBe(true);
    expect(toolListed(conv, 'mcp__tickets__delete_ticket')).toBe(false);
    expect(toolListed(conv, 'mcp__wiki__get_ticket')).toBe(false);
    expect(toolListed(conv, 'bash')).toBe(false); // names are exact
  });

  it('Claude Code: without the list (tool search off) only `tools` counts; a shortened list’s `prefix*` row counts for its server', () => {
    const { req } = captured('claude_code', (b) => {
      b.messages = (b.messages as { role: string }[]).filter((m) => m.role !== 'system');
    });
    const conv = viewConversation(req);
    expect(conv.toolsDeferred).toEqual([]);
    expect(toolListed(conv, 'mcp__tickets__get_ticket')).toBe(false);
    const shortened =
      'The following deferred tools are available via ToolSearch. Their schemas are NOT loaded. This list is shortened to save room: a row such as mcp__claude_ai_Slack__* (42) stands for 42 tools of that server. The tools are:\nWebFetch\nmcp__slack__* (42)\n\nAfter the list.';
    expect(deferredTools([shortened])).toEqual(['WebFetch', 'mcp__slack__*']);
    expect(toolListed({ ...conv, toolsDeferred: deferredTools([shortened]) }, 'mcp__slack__post_message')).toBe(true);
    expect(deferredTools(['The following skills are available for use with the Skill tool:\n- a: b'])).toEqual([]);
  });

  it('Codex (gpt-5.5): the namespace is deferred; a listed namespace counts for each of its tools', () => {
    const { req } = captured('codex');
    const conv = viewConversation(req);
    expect(conv.engine).toBe('codex');
    expect(conv.namespacesDeferred).toEqual(['mcp__tickets', 'multi_agent_v1']);
    expect(conv.toolNamespaces).toEqual({});
    expect(toolListed(conv, 'mcp__tickets__get_ticket')).toBe(true);
    expect(toolListed(conv, 'mcp__tickets__close_ticket')).toBe(true);
    expect(toolListed(conv, 'mcp__wiki__search')).toBe(false);
    expect(toolListed(conv, 'exec_command')).toBe(true);
    expect(deferredNamespaces(['<tools>\nDeferred tool namespaces:\n- mcp__a\n- b: Some tools.\n</tools>\n- mcp__c'])).toEqual(['mcp__a', 'b']);
  });

  it('Codex (a model without metadata): `{type: "namespace"}` tools become one tool per function', () => {
    const { req } = captured('codex_in_tools');
    expect(req.tools.filter((t) => t.namespace === 'mcp__tickets').map((t) => t.name)).toEqual(['close_ticket', 'get_ticket']);
    expect(req.tools.find((t) => t.name === 'get_ticket')!.schema).toMatchObject({ properties: { id: { type: 'string' } }, required: ['id'] });
    const conv = viewConversation(req);
    expect(conv.namespacesDeferred).toEqual([]);
    expect(conv.toolNamespaces.mcp__tickets).toEqual(['close_ticket', 'get_ticket']);
    expect(conv.toolsOffered).toContain('mcp__tickets__get_ticket');
    expect(conv.toolsOffered).not.toContain('mcp__tickets');
    expect(toolListed(conv, 'mcp__tickets__get_ticket')).toBe(true);
    expect(toolListed(conv, 'mcp__tickets__delete_ticket')).toBe(false);
    expect(toolListed(conv, 'multi_agent_v1__spawn_agent')).toBe(true);
    // A namespaced function never carries an abstract action: only the flat shell does.
    expect(mapToolAction({ kind: 'run', command: 'ls' }, [{ name: 'exec_command', namespace: 'mcp__x' }], protocolOf('openai_responses').toolTable, {})).toEqual({ ok: false, wanted: 'exec_command' });
  });

  it.each([
    ['opencode', 'tickets_get_ticket'],
    ['gemini_cli', 'mcp_tickets_get_ticket'],
    ['qwen_code', 'mcp__tickets__get_ticket'],
  ] as const)('%s offers the tool in `tools` as %s', (name, tool) => {
    const conv = viewConversation(captured(name).req);
    expect(conv.engine).toBe(name);
    expect(conv.toolsOffered).toContain(tool);
    expect(conv.toolsDeferred).toEqual([]);
    expect(toolListed(conv, 'mcp__tickets__get_ticket')).toBe(true);
    expect(toolListed(conv, tool)).toBe(true);
    expect(toolListed(conv, 'mcp__tickets__nope')).toBe(false);
  });
});

/** The tool call a rendered reply carries on the wire, streamed and not: `{name, namespace?, input}`. */
function wireCalls(protocol: ProtocolModule, reply: ModelReply): { stream: unknown[]; json: unknown[] } {
  // Chat Completions ends its stream with `data: [DONE]`, which is no JSON.
  const streamed = parseSse(protocol.render(reply, true).chunks.join('').replace(/^data: \[DONE\]\n\n/m, ''));
  const json = JSON.parse(protocol.render(reply, false).chunks.join('')) as Record<string, any>;
  switch (protocol.id) {
    case 'anthropic': {
      const start = streamed.filter((e) => e.event === 'content_block_start').map((e) => e.data.content_block as Record<string, unknown>);
      const delta = streamed.find((e) => (e.data.delta as { type?: string } | undefined)?.type === 'input_json_delta')!.data.delta as { partial_json: string };
      const tu = start.filter((b) => b.type === 'tool_use');
      return { stream: tu.map((b) => ({ name: b.name, input: JSON.parse(delta.partial_json) })), json: (json.content as any[]).filter((b) => b.type === 'tool_use').map((b) => ({ name: b.name, input: b.input })) };
    }
    case 'openai_responses': {
      const items = streamed.filter((e) => e.event === 'response.output_item.done').map((e) => e.data.item as Record<string, any>);
      const pick = (i: Record<string, any>) => ({ name: i.name, ...(i.namespace !== undefined ? { namespace: i.namespace } : {}), input: JSON.parse(i.arguments) });
      return { stream: items.filter((i) => i.type === 'function_call').map(pick), json: (json.output as any[]).filter((i) => i.type === 'function_call').map(pick) };
    }
    case 'openai_chat': {
      const calls = streamed.flatMap((e) => ((e.data.choices as any[] | undefined)?.[0]?.delta?.tool_calls as any[] | undefined) ?? []);
      const name = calls.find((c) => c.function?.name)?.function.name;
      const args = calls.map((c) => c.function?.arguments ?? '').join('');
      return { stream: [{ name, input: JSON.parse(args) }], json: (json.choices[0].message.tool_calls as any[]).map((c) => ({ name: c.function.name, input: JSON.parse(c.function.arguments) })) };
    }
    case 'gemini': {
      const parts = streamed.flatMap((e) => ((e.data.candidates as any[] | undefined)?.[0]?.content?.parts as any[] | undefined) ?? []);
      const pick = (p: any) => ({ name: p.functionCall.name, input: p.functionCall.args });
      return { stream: parts.filter((p) => p.functionCall).map(pick), json: (json.candidates[0].content.parts as any[]).filter((p) => p.functionCall).map(pick) };
    }
  }
}

describe('mcp_tool: the engine’s name for the tool, rendered on its wire', () => {
  it.each([
    ['claude_code', { name: 'mcp__tickets__get_ticket' }],
    ['codex', { name: 'get_ticket', namespace: 'mcp__tickets' }],
    ['codex_in_tools', { name: 'get_ticket', namespace: 'mcp__tickets' }],
    ['opencode', { name: 'tickets_get_ticket' }],
    ['gemini_cli', { name: 'mcp_tickets_get_ticket' }],
    ['qwen_code', { name: 'mcp__tickets__get_ticket' }],
  ] as const)('%s: %j, input templated, streamed and not', (name, address) => {
    const { req, protocol } = captured(name);
    const { plan } = planResponse(LOOKUP, req, protocol.toolTable);
    expect(plan.trace).toMatchObject({ rule: 0, ruleName: 'lookup', step: 0 });
    expect(plan.trace.missingTool).toBeUndefined();
    if (plan.kind !== 'reply') throw new Error('expected a reply');
    expect(plan.reply.stop).toBe('tool_use');
    expect(plan.reply.blocks).toEqual([{ type: 'tool_call', id: expect.stringMatching(/^[0-9a-f]{24}$/), ...address, input: { id: 'T-1' } }]);
    const wire = wireCalls(protocol, plan.reply);
    expect(wire.stream).toEqual([{ ...address, input: { id: 'T-1' } }]);
    expect(wire.json).toEqual(wire.stream);
  });

  it.each([
    ['claude_code', 'mcp__wiki__search'],
    ['codex', 'mcp__wiki__search'],
    ['opencode', 'wiki_search'],
    ['gemini_cli', 'mcp_wiki_search'],
    ['qwen_code', 'mcp__wiki__search'],
  ] as const)('%s: a tool the request neither offers nor lists is the "not offered" text naming %s', (name, shown) => {
    const { req, protocol } = captured(name);
    const s = script('rules:\n  - reply: [ { mcp_tool: { server: wiki, tool: search, input: { q: x } } }, { say: done } ]\n');
    const { plan } = planResponse(s, req, protocol.toolTable);
    if (plan.kind !== 'reply') throw new Error('expected a reply');
    expect(plan.trace.missingTool).toBe(shown);
    expect(plan.reply.blocks).toEqual([{ type: 'text', text: `[scripted-model] tool ${shown} not offered by this engine` }]);
    expect(plan.reply.stop).toBe('end_turn');
  });

  it('tool_listed guards the rule: without the server the next rule answers', () => {
    const { req, protocol } = captured('claude_code', (b) => {
      b.messages = (b.messages as { role: string }[]).filter((m) => m.role !== 'system');
    });
    const { plan } = planResponse(LOOKUP, req, protocol.toolTable);
    expect(plan.trace.rule).toBe(1);
    expect(plan.kind === 'reply' && plan.reply.blocks).toEqual([{ type: 'text', text: 'no tickets tool' }]);
  });

  it('Codex: after the namespaced call and its output (engines/codex/samples), the rule goes on to its next step', () => {
    const sample = JSON.parse(readFileSync(join(FIXTURES, '..', '..', '..', 'engines', 'codex', 'samples', 'request-mcp-deferred-namespace.trimmed.json'), 'utf8')) as {
      request_2_last_input_items: Record<string, unknown>[];
    };
    const { req, protocol } = captured('codex', (b) => {
      (b.input as unknown[]).push(...sample.request_2_last_input_items);
    });
    const call = req.messages.at(-2)!.parts[0]!;
    expect(call).toMatchObject({ type: 'tool_call', name: 'mcp__tickets__get_ticket', input: { id: 'T-7' } });
    const { plan } = planResponse(LOOKUP, req, protocol.toolTable);
    expect(plan.trace).toMatchObject({ rule: 0, step: 1 });
    expect(plan.kind === 'reply' && plan.reply.blocks).toEqual([{ type: 'text', text: 'Looked it up.' }]);
  });

  describe('an engine without mcpTool, and a plug-in with its own', () => {
    let unregister: (() => void) | undefined;
    afterEach(() => {
      unregister?.();
      unregister = undefined;
    });

    it('custom (no definition): the canonical mcp__<server>__<tool>', () => {
      expect(mcpToolAddress('custom', 'tickets', 'get_ticket')).toEqual({ name: 'mcp__tickets__get_ticket' });
      const { req, protocol } = captured('qwen_code');
      const { plan } = planResponse(LOOKUP, { ...req, engine: 'custom' }, protocol.toolTable);
      expect(plan.kind === 'reply' && plan.reply.blocks[0]).toMatchObject({ type: 'tool_call', name: 'mcp__tickets__get_ticket' });
    });

    it('a registered engine’s mcpTool is all the server needs', () => {
      unregister = registerEngine({
        ...opencode,
        name: 'dotted_engine',
        aliases: [],
        model: { protocol: 'openai_chat', userAgent: ['dotted-engine'], mcpTool: (server, tool) => ({ name: `${server}.${tool}` }) },
      });
      const c = load('opencode', 'request-mcp-tickets.trimmed.json');
      const tools = c.body.tools as { function: { name: string } }[];
      for (const t of tools) t.function.name = t.function.name.replace(/^tickets_/, 'tickets.');
      const protocol = protocolOf('openai_chat');
      const req = protocol.parse(c.body, ctxOf(c, 'dotted_engine'));
      expect(req.engine).toBe('dotted_engine');
      const { plan } = planResponse(LOOKUP, req, protocol.toolTable);
      expect(plan.kind === 'reply' && plan.reply.blocks[0]).toMatchObject({ type: 'tool_call', name: 'tickets.get_ticket', input: { id: 'T-1' } });
    });
  });
});
