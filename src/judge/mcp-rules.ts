/**
 * The MCP rule kinds of a `rule_based` judge (issue 16): `mcp_tool_called` and
 * `mcp_tool_not_called`, declared in src/judge/rules.ts RULE_KINDS.
 *
 * Every engine records a call of tool `t` of MCP server `s` as `mcp__<s>__<t>`
 * (src/engine/mcp.ts); the run also marks it `call.mcp = {server, tool}` when the job offered
 * `s`. A rule names the server and optionally the tool (none: any tool of that server); server
 * and tool compare case-insensitively, like every tool name of the rules. `args` matches the
 * call's input partially, exactly as `tool_called` does (src/judge/args.ts). The evidence
 * quotes the MCP calls seen (the first {@link MAX_MCP_CALLS_SHOWN}, inputs clipped) and names
 * the other tools called.
 */
import type { Field } from '../config/yaml-source.js';
import { MCP_SERVER_NAME, MCP_SERVER_NAME_PATTERN, mcpToolCallName, parseMcpToolCallName } from '../engine/mcp.js';
import type { ToolCall } from '../engine/types.js';
import { argsMismatch } from './args.js';
import { jsonClip, nameList } from './evidence.js';

/** What an MCP rule names: a server, and one of its tools (any when unset). */
export interface McpToolSpec {
  server: string;
  tool?: string;
}

/** One tool call with the (1-based) turn it was made in. */
export type TurnCall = { turn: number; call: ToolCall };

/** MCP calls quoted in the evidence, at most. */
export const MAX_MCP_CALLS_SHOWN = 5;


/** The JSON Schema of a rule's `server` field. */
export const mcpServerSchema = {
  description: "The MCP server's name, as `mcp.servers[].name` gives it (eval.yaml or the case).",
  'x-expected': 'an MCP server name (1–64 letters, digits, `_` or `-`)',
  type: 'string',
  pattern: MCP_SERVER_NAME_PATTERN,
};

/** The JSON Schema of a rule's `tool` field. */
export const mcpToolSchema = {
  description: 'The tool, as the server names it (e.g. `create_ticket`); leave it out for any tool of the server.',
  type: 'string',
  minLength: 1,
};

/**
 * The `server` of an MCP rule at `v` (a map with `server`), checked: a name with `__` is reported
 * at its field (the transcript could not tell server from tool); when `offered` is given (the
 * servers the case offers), a server not among them is reported too. Shape problems are the schema's.
 */
export function parseMcpServer(v: Field, key: string, offered: readonly string[] | undefined): string {
  const f = v.get('server');
  const server = f.str() ?? '';
  if (server === '' || !MCP_SERVER_NAME.test(server)) return server;
  if (server.includes('__')) {
    f.error(`\`${key}\` server \`${server}\` cannot contain \`__\`: tools are named \`mcp__<server>__<tool>\`, and no server name has it (src/config/mcp.ts)`);
  } else if (offered !== undefined && !offered.some((s) => sameName(s, server))) {
    f.error(
      offered.length === 0
        ? `\`${key}\` names mcp server \`${server}\`, but this case offers no MCP server; declare it under \`mcp.servers\` in eval.yaml or the case`
        : `\`${key}\` names mcp server \`${server}\`, which this case does not offer (offered: ${offered.map((s) => `\`${s}\``).join(', ')})`,
    );
  }
  return server;
}

/** The rule's text: `{server: tickets, tool: create_ticket, args: {…}}`. */
export function mcpRuleText(key: string, spec: McpToolSpec & { args?: Record<string, unknown> }): string {
  const parts = [`server: ${spec.server}`, ...(spec.tool !== undefined ? [`tool: ${spec.tool}`] : []), ...(hasArgs(spec.args) ? [`args: ${jsonClip(spec.args, 160)}`] : [])];
  return `${key} {${parts.join(', ')}}`;
}

/**
 * Whether some call of `spec` among `calls` has an input matching `args` partially (any input
 * when `args` is unset or empty), with evidence. Never throws.
 */
export function mcpToolCalled(calls: readonly TurnCall[], spec: McpToolSpec, args: Record<string, unknown> | undefined): { holds: boolean; evidence: string } {
  const label = mcpLabel(spec);
  const named = calls.filter((c) => callMatches(c.call, spec));
  if (named.length === 0) return { holds: false, evidence: `${label} was not called in any turn; ${mcpCallsSeen(calls)}` };
  if (!hasArgs(args)) {
    return { holds: true, evidence: `${label} called ${named.length} time(s) in any turn (first in turn ${named[0]!.turn}: ${callText(named[0]!.call)})` };
  }
  const mismatches: string[] = [];
  for (const c of named) {
    const m = argsMismatch(args, c.call.input);
    if (m === undefined) {
      return { holds: true, evidence: `${label} called ${named.length} time(s) in any turn; matching call in turn ${c.turn}: ${callText(c.call)}` };
    }
    mismatches.push(spec.tool === undefined ? `${c.call.name}: ${m}` : m);
  }
  const shown = mismatches.slice(0, 3).map((m, i) => `call ${i + 1}: ${m}`);
  return {
    holds: false,
    evidence: `${label} called ${named.length} time(s) in any turn but no call matched the arguments (${shown.join('; ')}${
      mismatches.length > 3 ? `; +${mismatches.length - 3} more` : ''
    }); ${mcpCallsSeen(calls)}`,
  };
}

/** Whether no call of `spec` is among `calls`, with evidence (the calls that break it, else the MCP calls seen). Never throws. */
export function mcpToolNotCalled(calls: readonly TurnCall[], spec: McpToolSpec): { holds: boolean; evidence: string } {
  const label = mcpLabel(spec);
  const named = calls.filter((c) => callMatches(c.call, spec));
  if (named.length === 0) return { holds: true, evidence: `${label} was not called in any turn; ${mcpCallsSeen(calls)}` };
  const turns = [...new Set(named.map((c) => c.turn))].join(', ');
  return { holds: false, evidence: `${label} called ${named.length} time(s) in any turn (turn ${turns}; first: ${callText(named[0]!.call)}); ${mcpCallsSeen(calls)}` };
}

/** `mcp__tickets__create_ticket`, or `mcp__tickets__*` for any tool of the server. */
function mcpLabel(spec: McpToolSpec): string {
  return spec.tool !== undefined ? mcpToolCallName(spec.server, spec.tool) : mcpToolCallName(spec.server, '*');
}

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** The server and tool of an MCP call: as the run marked it, else read from its name; undefined for any other call. */
function mcpOf(call: ToolCall): { server: string; tool: string } | undefined {
  return call.mcp ?? parseMcpToolCallName(call.name);
}

function callMatches(call: ToolCall, spec: McpToolSpec): boolean {
  const m = mcpOf(call);
  return m !== undefined && sameName(m.server, spec.server) && (spec.tool === undefined || sameName(m.tool, spec.tool));
}

function callText(call: ToolCall): string {
  return `${call.name} ${jsonClip(call.input, 200)}`;
}

/** The MCP calls of the job (the first few, with turn and clipped input) and the other tools called. */
function mcpCallsSeen(calls: readonly TurnCall[]): string {
  const mcp = calls.filter((c) => mcpOf(c.call) !== undefined);
  const others = calls.filter((c) => mcpOf(c.call) === undefined).map((c) => c.call.name);
  const shown = mcp.slice(0, MAX_MCP_CALLS_SHOWN).map((c) => `turn ${c.turn} ${c.call.name} ${jsonClip(c.call.input, 120)}`);
  const more = mcp.length > MAX_MCP_CALLS_SHOWN ? ` (+${mcp.length - MAX_MCP_CALLS_SHOWN} more)` : '';
  return `${mcp.length === 0 ? 'MCP calls: none' : `MCP calls (${mcp.length}): ${shown.join('; ')}${more}`}; other tools called: ${nameList(others)}`;
}

function hasArgs(args: Record<string, unknown> | undefined): args is Record<string, unknown> {
  return args !== undefined && Object.keys(args).length > 0;
}
