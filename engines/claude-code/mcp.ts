/**
 * MCP servers on Claude Code (issue 16): the job's `--mcp-config` file and the tool names the
 * model sees. Verified against Claude Code 2.1.332 (engines/claude-code/README.md, "MCP servers";
 * the real-binary tests in mcp.test.ts).
 */
import type { McpServerLaunch } from '../../src/engine/mcp.js';
import { mcpToolCallName } from '../../src/engine/mcp.js';

/** File name of the MCP config inside the job's `CLAUDE_CONFIG_DIR` (written mode 0600: it may hold secrets). */
export const CLAUDE_MCP_CONFIG_FILE = 'skill-up-mcp.json';

/** One entry of `mcpServers` in a Claude Code MCP config file. */
export type ClaudeMcpServerEntry =
  | { type: 'stdio'; command: string; args: string[]; env: Record<string, string> }
  | { type: 'http'; url: string; headers: Record<string, string> };

/** The whole `--mcp-config` file: `{mcpServers: {<name>: entry}}`. */
export interface ClaudeMcpConfig {
  mcpServers: Record<string, ClaudeMcpServerEntry>;
}

/**
 * The `--mcp-config` JSON of `servers`: stdio → `{type: "stdio", command, args, env}`, http →
 * `{type: "http", url, headers}` (streamable HTTP). Env and header values are written as given
 * (Claude Code reads them from this file, which lives in the job's private config folder).
 * @throws Error when a stdio server has no `command`, an http server no `url`, or two servers share a name.
 */
export function buildClaudeMcpConfig(servers: readonly McpServerLaunch[]): ClaudeMcpConfig {
  const mcpServers: Record<string, ClaudeMcpServerEntry> = {};
  for (const s of servers) {
    if (Object.hasOwn(mcpServers, s.name)) throw new Error(`MCP server \`${s.name}\` is given twice`);
    if (s.transport === 'stdio') {
      if (!s.command) throw new Error(`MCP server \`${s.name}\`: a stdio server needs a command`);
      mcpServers[s.name] = { type: 'stdio', command: s.command, args: [...(s.args ?? [])], env: { ...(s.env ?? {}) } };
    } else {
      if (!s.url) throw new Error(`MCP server \`${s.name}\`: an http server needs a url`);
      mcpServers[s.name] = { type: 'http', url: s.url, headers: { ...(s.headers ?? {}) } };
    }
  }
  return { mcpServers };
}

/**
 * The flags that load `configFile` and nothing else: `--mcp-config <file> --strict-mcp-config`
 * (strict: no user-, project- or `.mcp.json`-level server of the workspace joins in).
 */
export function claudeMcpArgs(configFile: string): string[] {
  return ['--mcp-config', configFile, '--strict-mcp-config'];
}

/**
 * The name under which Claude Code offers tool `tool` of server `server` to the model:
 * `mcp__<server>__<tool>` (verified in the logged requests' `tools`), which is also the
 * transcript's canonical name.
 */
export function modelToolName(server: string, tool: string): string {
  return mcpToolCallName(server, tool);
}
