/**
 * MCP servers on Gemini CLI (issue 16): the `mcpServers` key of the job's user settings
 * (`<job home>/.gemini/settings.json`), and the names Gemini CLI 0.61.0 gives MCP tools.
 * Facts (verified against the real binary, engines/gemini-cli/mcp.test.ts; source: the bundle's
 * `createTransport`, `generateValidName`, `expandEnvVars`, and `bundle/docs/tools/mcp-server.md`):
 *
 * - stdio: `{command, args, env, trust: true}`; the server inherits gemini's environment with
 *   credential-looking variables removed (`sanitizeEnvironment`), then `env` on top;
 *   `NODE_OPTIONS`, `NODE_PATH`, `PYTHONPATH`, … in `env` are dropped by the CLI
 *   ("dangerous execution environment variable"). Needs a trusted folder (the adapter sets
 *   `GEMINI_CLI_TRUST_WORKSPACE=true`).
 * - streamable HTTP: `{url, type: "http", headers, trust: true}` (`httpUrl` is the deprecated
 *   spelling; `url` without `type` would be tried as streamable HTTP then SSE).
 * - `trust: true` skips the per-call confirmation (yolo approves it too; trust keeps a policy
 *   change from blocking a headless run).
 * - `$` is expanded twice. (1) Loading settings.json resolves `$NAME`, `${NAME}` and
 *   `${NAME:-default}` in every string (command, args, url, env, headers) from gemini's
 *   environment, leaving unknown names as written, with no escape. (2) `env` and `headers` values
 *   then go through dotenv-expand against the sanitised environment: unknown names become empty,
 *   `\$` is a literal `$`. A launch's values are final, so each `$` is written as
 *   `${SKILL_UP_LITERAL_DOLLAR:-$}` (pass 1 gives `$`, and its output is not rescanned), with a
 *   `\` before it in `env`/`headers` for pass 2 ({@link escapeGeminiExpansion}); the adapter keeps
 *   `SKILL_UP_LITERAL_DOLLAR` out of gemini's environment. Verified: `a$HOME-${PATH}\$x` arrives
 *   verbatim in the server's environment.
 * - The model sees tool `t` of server `s` as `mcp_<s>_<t>` ({@link geminiModelToolName}), and the
 *   stream-json `tool_use.tool_name` is that same name.
 */
import { mcpToolCallName, type McpServerLaunch } from '../../src/engine/mcp.js';

/** One entry of `mcpServers` in Gemini CLI's settings.json. */
export interface GeminiMcpServerSettings {
  /** stdio: the program (`$` escaped, as every string here). */
  command?: string;
  /** stdio: its arguments. */
  args?: string[];
  /** stdio: added to the server's environment (`$` escaped). */
  env?: Record<string, string>;
  /** http: the streamable HTTP endpoint. */
  url?: string;
  /** http: `http` = streamable HTTP. */
  type?: 'http';
  /** http: request headers (`$` escaped). */
  headers?: Record<string, string>;
  /** Always true: no confirmation prompt for the server's tools. */
  trust: true;
}

/** A variable name gemini's environment never has: `${<it>:-$}` is how settings.json spells a literal `$`. */
export const LITERAL_DOLLAR_VAR = 'SKILL_UP_LITERAL_DOLLAR';

const DOLLAR = `\${${LITERAL_DOLLAR_VAR}:-$}`;

/**
 * A string written into settings.json so that gemini reads it back verbatim: every `$` becomes
 * `${SKILL_UP_LITERAL_DOLLAR:-$}`, preceded by a backslash when `expanded` (an `env` or `headers` value,
 * which dotenv-expand reads a second time). Other characters are untouched.
 */
export function escapeGeminiExpansion(value: string, expanded = false): string {
  const to = expanded ? `\\${DOLLAR}` : DOLLAR;
  return value.replace(/\$/g, () => to);
}

function escapedMap(m: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!m || Object.keys(m).length === 0) return undefined;
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, escapeGeminiExpansion(v, true)]));
}

/**
 * The `mcpServers` settings value for `servers`, keyed by server name; undefined when there is
 * none (then settings.json carries no MCP key at all).
 * @throws Error when a stdio server has no `command` or an http server no `url`.
 */
export function buildGeminiMcpServers(servers: readonly McpServerLaunch[] | undefined): Record<string, GeminiMcpServerSettings> | undefined {
  if (!servers?.length) return undefined;
  const out: Record<string, GeminiMcpServerSettings> = {};
  for (const s of servers) {
    if (s.transport === 'http') {
      if (!s.url) throw new Error(`MCP server \`${s.name}\`: transport http needs a url`);
      const headers = escapedMap(s.headers);
      out[s.name] = { url: escapeGeminiExpansion(s.url), type: 'http', ...(headers ? { headers } : {}), trust: true };
    } else {
      if (!s.command) throw new Error(`MCP server \`${s.name}\`: transport stdio needs a command`);
      const env = escapedMap(s.env);
      out[s.name] = { command: escapeGeminiExpansion(s.command), args: (s.args ?? []).map((a) => escapeGeminiExpansion(a)), ...(env ? { env } : {}), trust: true };
    }
  }
  return out;
}

/** Longest function name Gemini CLI keeps (`MAX_FUNCTION_NAME_LENGTH - 1`); longer ones are cut in the middle. */
const MAX_NAME = 63;

/**
 * The name Gemini CLI 0.61.0 presents tool `tool` of server `server` under (its
 * `generateValidName("<server>_<tool>")`): `mcp_<server>_<tool>` (no second `mcp_` when
 * `<server>_<tool>` already starts with one), characters outside `[A-Za-z0-9_.:-]` as `_`, and a
 * name over 63 characters cut to its first 30 + `...` + last 30.
 */
export function geminiModelToolName(server: string, tool: string): string {
  const joined = `${server}_${tool}`;
  let name = joined.startsWith('mcp_') ? joined : `mcp_${joined}`;
  name = name.replace(/[^a-zA-Z0-9_\-.:]/g, '_');
  if (/^[^a-zA-Z_]/.test(name)) name = `_${name}`;
  if (name.length > MAX_NAME) name = `${name.slice(0, 30)}...${name.slice(-30)}`;
  return name;
}


/**
 * `{server, tool}` of a Gemini tool name, resolved against the configured server names (the
 * name alone is ambiguous: `mcp_a_b_c` is server `a_b`, tool `c` or server `a`, tool `b_c`).
 * The longest server name whose prefix `mcp_<server>_` (after the CLI's sanitising) starts the
 * name wins. Undefined for a name no configured server explains (a built-in tool, or a name the
 * CLI cut for length).
 */
export function resolveGeminiMcpToolName(name: string, servers: readonly string[]): { server: string; tool: string } | undefined {
  const sorted = [...servers].sort((a, b) => b.length - a.length);
  for (const server of sorted) {
    const prefix = geminiModelToolName(server, '');
    if (name.length > prefix.length && name.startsWith(prefix) && !name.includes('...')) {
      return { server, tool: name.slice(prefix.length) };
    }
  }
  return undefined;
}

/** The transcript name (`mcp__<server>__<tool>`) of a Gemini tool call, or `name` unchanged when it is no configured server's tool. */
export function geminiTranscriptToolName(name: string, servers: readonly string[]): string {
  const hit = servers.length ? resolveGeminiMcpToolName(name, servers) : undefined;
  return hit ? mcpToolCallName(hit.server, hit.tool) : name;
}
