/**
 * MCP servers as an engine receives them (issue 16). The run resolves a suite's
 * `mcp.servers[]` (a mocked server becomes a `skill-up mcp-mock` command, src/mcp/mock/) into
 * {@link McpServerLaunch}es, the same for both variants of a case, and each engine writes them
 * into its own configuration inside the job's isolated home or workspace
 * (engines/<name>/mcp.ts), so the skill stays the only difference between the arms.
 *
 * Names: a tool call of MCP server `s`, tool `t` is recorded in the transcript as
 * `mcp__<s>__<t>` on every engine ({@link mcpToolCallName}), whatever the engine itself calls it.
 */

/** The JSON Schema pattern of an MCP server name: 1–64 of `[A-Za-z0-9_-]` (what every engine accepts in its config keys and tool names). */
export const MCP_SERVER_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

/** {@link MCP_SERVER_NAME_PATTERN} as a RegExp (suite, rules and mock specs check names with it). */
export const MCP_SERVER_NAME = new RegExp(MCP_SERVER_NAME_PATTERN);

/** One MCP server to offer the agent, ready to start. */
export interface McpServerLaunch {
  /** The server's name (1–64 of `[A-Za-z0-9_-]`), as the agent's configuration keys it. */
  name: string;
  /** `stdio`: the engine starts `command args` itself; `http`: it connects to `url` (streamable HTTP). */
  transport: 'stdio' | 'http';
  /** stdio: the program (an absolute path, or a name on the agent's PATH). */
  command?: string;
  /** stdio: its arguments. */
  args?: string[];
  /** stdio: variables added to the server's environment (values may be secrets: never written to reports). */
  env?: Record<string, string>;
  /** http: the endpoint. */
  url?: string;
  /** http: headers sent with every request (values may be secrets). */
  headers?: Record<string, string>;
}

/** The transcript name of a call of `tool` on MCP server `server`: `mcp__<server>__<tool>` (Claude Code's own naming). */
export function mcpToolCallName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** `{server, tool}` of a transcript name {@link mcpToolCallName} made; undefined for any other name. */
export function parseMcpToolCallName(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith('mcp__')) return undefined;
  const rest = name.slice('mcp__'.length);
  const cut = rest.indexOf('__');
  if (cut <= 0 || cut + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, cut), tool: rest.slice(cut + 2) };
}
