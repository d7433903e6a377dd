/**
 * MCP servers on Codex (issue 16): the `[mcp_servers.<name>]` tables of the job's
 * `$CODEX_HOME/config.toml` and the tool names the model sees. Verified against codex 0.171.0
 * (engines/codex/README.md, "MCP servers"; the real-binary tests in mcp.test.ts).
 */
import type { McpServerLaunch } from '../../src/engine/mcp.js';

/** A TOML basic string: JSON string escapes are valid TOML escapes. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** A TOML key: bare when it is `[A-Za-z0-9_-]+`, else quoted. */
function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k);
}

/** A TOML inline table of strings: `{ K = "v", … }`. */
function tomlInlineTable(m: Readonly<Record<string, string>>): string {
  const parts = Object.entries(m).map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`);
  return parts.length ? `{ ${parts.join(', ')} }` : '{}';
}

/**
 * The `config.toml` text declaring `servers` (empty string for none), one table each:
 * stdio → `command`, `args`, `env` (an inline table); http → `url` (streamable HTTP) and
 * `http_headers`. Every server gets `startup_timeout_sec = 30` (codex's default is 10 s, short for
 * an `npx` launch on a busy machine) and `default_tools_approval_mode = "approve"` (else a headless
 * run refuses every call: approval is needed but the policy is `never`) and `required = true` (a
 * server that fails to start is a crash naming it, not a silent run without it). Env and header values are written as given: codex reads them
 * from this file, which lives in the job's private `CODEX_HOME` (written 0600).
 * @throws Error when a stdio server has no `command`, an http server no `url`, or two servers share a name.
 */
export function buildCodexMcpToml(servers: readonly McpServerLaunch[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const s of servers) {
    if (seen.has(s.name)) throw new Error(`MCP server \`${s.name}\` is given twice`);
    seen.add(s.name);
    out.push(`[mcp_servers.${tomlKey(s.name)}]`);
    if (s.transport === 'stdio') {
      if (!s.command) throw new Error(`MCP server \`${s.name}\`: a stdio server needs a command`);
      out.push(`command = ${tomlString(s.command)}`, `args = [${(s.args ?? []).map(tomlString).join(', ')}]`);
      if (s.env && Object.keys(s.env).length) out.push(`env = ${tomlInlineTable(s.env)}`);
    } else {
      if (!s.url) throw new Error(`MCP server \`${s.name}\`: an http server needs a url`);
      out.push(`url = ${tomlString(s.url)}`);
      if (s.headers && Object.keys(s.headers).length) out.push(`http_headers = ${tomlInlineTable(s.headers)}`);
    }
    // `approval_policy = "never"` refuses an MCP call that needs approval ("MCP tool call requires
    // approval, but approval policy is never"); `approve` runs every tool of the server unasked.
    // `required`: a server that cannot start ends codex (exit 1, the server named on stderr)
    // instead of a turn that silently runs without it.
    out.push('startup_timeout_sec = 30', 'default_tools_approval_mode = "approve"', 'required = true', '');
  }
  return out.join('\n');
}

/**
 * How the model addresses tool `tool` of server `server` on codex: the Responses API
 * namespace `mcp__<server>` holding the function `<tool>` (verified in the logged requests: with
 * gpt-5.5 the namespace is deferred, listed as `Deferred tool namespaces: - mcp__<server>` in a
 * developer message behind a `tool_search` tool; with a model codex has no metadata for, it is in
 * `tools` as `{type: "namespace", name: "mcp__<server>", tools: [{type: "function", name: "<tool>"}]}`).
 * A call must be `function_call {namespace: "mcp__<server>", name: "<tool>"}`; a flat
 * `name: "mcp__<server>__<tool>"` is answered `unsupported call: …` and never reaches the server.
 * A namespaced call of a deferred tool works without a `tool_search` first.
 */
export function modelToolAddress(server: string, tool: string): { namespace: string; name: string } {
  return { namespace: `mcp__${server}`, name: tool };
}

/**
 * `namespace__name` of {@link modelToolAddress}: `mcp__<server>__<tool>`, the flat name a script
 * gives (the scripted model must send it split, see modelToolAddress) and the transcript's name.
 */
export function modelToolName(server: string, tool: string): string {
  const a = modelToolAddress(server, tool);
  return `${a.namespace}__${a.name}`;
}
