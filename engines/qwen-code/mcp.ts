/**
 * MCP servers on Qwen Code (issue 16): the `mcpServers` key of the job's user settings
 * (`$QWEN_HOME/settings.json`), and the names Qwen Code 0.24.4 gives MCP tools. Facts (verified
 * against the real binary, engines/qwen-code/mcp.test.ts; source: the bundle's `createTransport`,
 * `DiscoveredMCPTool`, `normalizeToolNameForProvider`, `resolveEnvVarsInString`):
 *
 * - stdio: `{command, args, env}`; the server inherits qwen's environment (minus qwen's
 *   internal secrets), `env` on top, no expansion at launch.
 * - streamable HTTP: `{httpUrl, headers}`. (`url` alone is SSE in this version.)
 * - `trust: true`: no confirmation (yolo approves too). `alwaysLoadTools: true`: Qwen Code
 *   otherwise *defers* every MCP tool (`shouldDefer`: the model sees only a ToolSearch tool and
 *   must look the tool up first); loaded, the tools are declared to the model like built-in ones,
 *   as on the other engines, so a skill is measured on calling the tool, not on finding it.
 * - Loading settings.json replaces `$NAME` / `${NAME}` in every string with qwen's environment
 *   (unknown names stay as written), with no escape. A launch's values are final, so each `$`
 *   is written `${SKILL_UP_LITERAL_DOLLAR}` and the adapter sets `SKILL_UP_LITERAL_DOLLAR=$` in
 *   qwen's environment when MCP servers are configured (the replacement is one pass: its output
 *   is not rescanned). Verified: `a$HOME-${PATH}\$x` arrives verbatim.
 * - The model sees tool `t` of server `s` as `mcp__<s>__<t>` ({@link qwenModelToolName}) — the
 *   transcript name itself — and stream-json `tool_use.name` is that name.
 */
import type { McpServerLaunch } from '../../src/engine/mcp.js';

/** One entry of `mcpServers` in Qwen Code's settings.json. */
export interface QwenMcpServerSettings {
  /** stdio: the program (`$` escaped, as every string here). */
  command?: string;
  /** stdio: its arguments. */
  args?: string[];
  /** stdio: added to the server's environment. */
  env?: Record<string, string>;
  /** http: the streamable HTTP endpoint. */
  httpUrl?: string;
  /** http: request headers. */
  headers?: Record<string, string>;
  /** Always true: no confirmation prompt for the server's tools. */
  trust: true;
  /** Always true: the tools are declared to the model, not deferred behind ToolSearch. */
  alwaysLoadTools: true;
}

/** The variable through which settings.json spells a literal `$` (`${SKILL_UP_LITERAL_DOLLAR}`); its value is `$`. */
export const LITERAL_DOLLAR_VAR = 'SKILL_UP_LITERAL_DOLLAR';

const DOLLAR = `\${${LITERAL_DOLLAR_VAR}}`;

/** A string written into settings.json so that qwen (with `SKILL_UP_LITERAL_DOLLAR=$`) reads it back verbatim: every `$` → `${SKILL_UP_LITERAL_DOLLAR}`. */
export function escapeQwenExpansion(value: string): string {
  return value.replace(/\$/g, () => DOLLAR);
}

function escapedMap(m: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!m || Object.keys(m).length === 0) return undefined;
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, escapeQwenExpansion(v)]));
}

/**
 * The `mcpServers` settings value for `servers`, keyed by server name; undefined when there is
 * none (then settings.json carries no MCP key at all).
 * @throws Error when a stdio server has no `command` or an http server no `url`.
 */
export function buildQwenMcpServers(servers: readonly McpServerLaunch[] | undefined): Record<string, QwenMcpServerSettings> | undefined {
  if (!servers?.length) return undefined;
  const out: Record<string, QwenMcpServerSettings> = {};
  for (const s of servers) {
    if (s.transport === 'http') {
      if (!s.url) throw new Error(`MCP server \`${s.name}\`: transport http needs a url`);
      const headers = escapedMap(s.headers);
      out[s.name] = { httpUrl: escapeQwenExpansion(s.url), ...(headers ? { headers } : {}), trust: true, alwaysLoadTools: true };
    } else {
      if (!s.command) throw new Error(`MCP server \`${s.name}\`: transport stdio needs a command`);
      const env = escapedMap(s.env);
      out[s.name] = { command: escapeQwenExpansion(s.command), args: (s.args ?? []).map(escapeQwenExpansion), ...(env ? { env } : {}), trust: true, alwaysLoadTools: true };
    }
  }
  return out;
}

/** Longest tool name Qwen Code sends to a provider. */
const MAX_NAME = 63;

/** FNV-1a of `name`, base 36, 7 digits at least (Qwen Code's `stableToolNameHash`). */
function stableHash(name: string): string {
  let hash = 2166136261;
  for (let i = 0; i < name.length; i += 1) hash = Math.imul(hash ^ name.charCodeAt(i), 16777619);
  return (hash >>> 0).toString(36).padStart(7, '0');
}

/**
 * The name Qwen Code 0.24.4 presents tool `tool` of server `server` under
 * (`normalizeToolNameForProvider("mcp__<server>__<tool>")`): that name itself when it has at
 * most 63 characters of `[A-Za-z0-9_-]` starting with a letter; otherwise the name with other
 * characters as `_`, cut to leave room for `_<hash>` (a 7+-digit base-36 FNV-1a of the full name).
 */
export function qwenModelToolName(server: string, tool: string): string {
  const name = `mcp__${server}__${tool}`;
  if (name.length <= MAX_NAME && /^[A-Za-z][A-Za-z0-9_-]*$/.test(name)) return name;
  const sanitized = name.replace(/[^A-Za-z0-9_-]/g, '_');
  const normalized = /^[A-Za-z]/.test(sanitized) ? sanitized : `tool_${sanitized}`;
  const suffix = `_${stableHash(name)}`;
  return `${normalized.slice(0, MAX_NAME - suffix.length)}${suffix}`;
}

