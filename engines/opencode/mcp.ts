/**
 * MCP servers on OpenCode (issue 16): the `mcp` key of the job's opencode.json, the name under
 * which OpenCode offers a server's tool to the model, the way back from that name to
 * `{server, tool}`, and the servers OpenCode reports it could not use. Verified against
 * opencode-ai 1.18.33 (engines/opencode/README.md, "MCP servers"; the real-binary tests in
 * mcp.test.ts).
 */
import type { McpServerLaunch } from '../../src/engine/mcp.js';
import { suiteValueIsSecret } from '../../src/util/redact.js';

/** One entry of the config's `mcp` map (OpenCode's `McpLocalConfig` / `McpRemoteConfig`). */
export type OpencodeMcpEntry =
  | { type: 'local'; command: string[]; environment: Record<string, string> }
  | { type: 'remote'; url: string; headers: Record<string, string>; oauth: false };

/**
 * The config's `mcp` map for `servers`: stdio → `{type: "local", command: [command, ...args],
 * environment}` (OpenCode starts it in the workspace with its own environment plus
 * `environment`), http → `{type: "remote", url, headers, oauth: false}` (streamable HTTP;
 * `oauth: false` so a 401 never starts OpenCode's OAuth flow, which a headless run cannot finish).
 * Values are written as given: OpenCode reads them from this file, which lives in the job's
 * private home and is written mode 0600 (adapter.ts).
 * @throws Error when a stdio server has no `command`, an http server no `url`, or two servers share a name.
 */
export function buildOpencodeMcp(servers: readonly McpServerLaunch[]): Record<string, OpencodeMcpEntry> {
  const mcp: Record<string, OpencodeMcpEntry> = {};
  for (const s of servers) {
    if (Object.hasOwn(mcp, s.name)) throw new Error(`MCP server \`${s.name}\` is given twice`);
    if (s.transport === 'stdio') {
      if (!s.command) throw new Error(`MCP server \`${s.name}\`: a stdio server needs a command`);
      mcp[s.name] = { type: 'local', command: [s.command, ...(s.args ?? [])], environment: { ...(s.env ?? {}) } };
    } else {
      if (!s.url) throw new Error(`MCP server \`${s.name}\`: an http server needs a url`);
      mcp[s.name] = { type: 'remote', url: s.url, headers: { ...(s.headers ?? {}) }, oauth: false };
    }
  }
  return mcp;
}

/** OpenCode's name sanitiser for MCP names: every character outside `[A-Za-z0-9_-]` becomes `_`. */
function sanitize(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/**
 * The name under which OpenCode offers tool `tool` of server `server` to the model (and reports
 * its calls, `part.tool`): `<server>_<tool>`, each part with every character outside
 * `[A-Za-z0-9_-]` replaced by `_` (verified in the logged requests' `tools` and in the binary).
 */
export function modelToolName(server: string, tool: string): string {
  return `${sanitize(server)}_${sanitize(tool)}`;
}

/**
 * `{server, tool}` of an OpenCode tool name, given the configured server names: the longest
 * server name `s` such that the name starts with `modelToolName(s, '')` (`<s>_`) and has
 * something after it. `<server>_<tool>` alone cannot say where the server ends when both hold
 * `_` (`my_srv_get_x`), hence the names. The tool is as OpenCode sanitised it. Undefined for any
 * other tool (built-ins such as `bash` or `webfetch`). With servers `a` and `a_b` configured,
 * `a_b_c` is read as server `a_b`, tool `c`.
 */
export function mcpToolOf(name: string, servers: readonly string[]): { server: string; tool: string } | undefined {
  let best: string | undefined;
  for (const s of servers) {
    const prefix = `${sanitize(s)}_`;
    if (name.length > prefix.length && name.startsWith(prefix) && (best === undefined || s.length > best.length)) best = s;
  }
  return best === undefined ? undefined : { server: best, tool: name.slice(sanitize(best).length + 1) };
}

/**
 * The values of `servers`' `env` and `headers` skill-up must treat as secrets (the suite rule,
 * `suiteValueIsSecret`: anything but a plain word under a non-credential name), for the redactor.
 */
export function mcpSecretValues(servers: readonly McpServerLaunch[]): string[] {
  const out: string[] = [];
  for (const s of servers) {
    for (const [k, v] of [...Object.entries(s.env ?? {}), ...Object.entries(s.headers ?? {})]) if (suiteValueIsSecret(k, v)) out.push(v);
  }
  return out;
}

/**
 * The command-line flags that make OpenCode print its warnings on stderr (`--print-logs
 * --log-level WARN`), added only when the job has MCP servers: a server OpenCode cannot use is
 * reported nowhere else but its log (`message="server unavailable" key=<name> … status=failed`),
 * and the run goes on without that server's tools.
 */
export const OPENCODE_MCP_LOG_ARGS = ['--print-logs', '--log-level', 'WARN'] as const;

/** `{name, status}` of each server OpenCode logged as unavailable (stderr text of one turn, `OPENCODE_MCP_LOG_ARGS`), in order, once each. */
export function unavailableMcpServers(stderr: string): { name: string; status: string }[] {
  const found = new Map<string, string>();
  for (const m of stderr.matchAll(/message="server unavailable" key=(\S+)(?: [^\n]*?)? status=(\S+)/g)) if (!found.has(m[1]!)) found.set(m[1]!, m[2]!);
  return [...found].map(([name, status]) => ({ name, status }));
}

/** The turn error for servers OpenCode could not use: `MCP server(s) `a` (failed), … could not be used: OpenCode logs it as "server unavailable"`. */
export function unavailableMcpMessage(servers: readonly { name: string; status: string }[]): string {
  const list = servers.map((s) => `\`${s.name}\` (${s.status})`).join(', ');
  return `MCP server${servers.length > 1 ? 's' : ''} ${list} could not be used: OpenCode logs it as "server unavailable"`;
}
