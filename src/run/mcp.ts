/**
 * A job's MCP servers, ready for its engine (issue 16): each configured server
 * (src/config/mcp.ts) becomes a {@link McpServerLaunch}, identical for both variants of a
 * case. A real server's `command`, `args`, `env`, `endpoint` and `headers` have their `${VAR}`
 * templates expanded from skill-up's environment, and the expanded `env`/`headers` values are
 * taught to the redactor as `environment.env`'s are (`suiteValueIsSecret`: all but plain words). A mocked server becomes
 * `node <skill-up> mcp-mock --config <job>/mcp/<name>.json`, the filesystem mock confined to
 * the job's workspace and every call logged to `<job>/mcp/<name>.calls.jsonl`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { McpServerSpec } from '../config/mcp.js';
import { expandEnvTemplate, SuiteEnvError } from '../engine/env.js';
import type { McpServerLaunch } from '../engine/mcp.js';
import { packageRoot } from '../util/package-root.js';
import { redactor, suiteValueIsSecret } from '../util/redact.js';

/** A server that cannot be offered: the job is an `error` with this message, before the agent runs. */
export class McpSetupError extends Error {}

/**
 * The problems of `servers` that the run can see before any job: a `required_env` variable
 * that is unset or empty in `env`, one line per server and variable.
 */
export function requiredEnvProblems(servers: McpServerSpec[], env: Readonly<Record<string, string | undefined>> = process.env): string[] {
  const out: string[] = [];
  for (const s of servers) {
    const missing = s.requiredEnv.filter((v) => !env[v]);
    if (missing.length) out.push(`mcp server \`${s.name}\` (${s.at}) needs ${missing.map((v) => `\`${v}\``).join(', ')} set in skill-up's environment; ${missing.length === 1 ? 'it is' : 'they are'} not`);
  }
  return out;
}

/** Where a job's mocked servers keep their spec and call log. */
export function mcpDir(jobDir: string): string {
  return path.join(jobDir, 'mcp');
}

/** The executable `mcp-mock` runs from: this package's CLI, started by the running Node. */
function skillUpCli(): string {
  return path.join(packageRoot(), 'dist', 'src', 'cli', 'skill-up.cjs');
}

/**
 * The launches of `servers` for one job: `workspace` is what a filesystem mock is confined to;
 * `jobDir` holds the mocks' specs and call logs.
 * @throws McpSetupError naming the server: a required variable unset, a `${VAR?}` template unset,
 *   a mock spec that cannot be written
 */
export async function mcpLaunches(servers: McpServerSpec[], job: { workspace: string; jobDir: string }, env: Readonly<Record<string, string | undefined>> = process.env): Promise<McpServerLaunch[]> {
  const problems = requiredEnvProblems(servers, env);
  if (problems.length) throw new McpSetupError(problems.join('; '));
  const out: McpServerLaunch[] = [];
  for (const s of servers) out.push(s.mode === 'mocked' ? await mockedLaunch(s, job) : realLaunch(s, env));
  return out;
}

function realLaunch(s: McpServerSpec, env: Readonly<Record<string, string | undefined>>): McpServerLaunch {
  const expand = (t: string, what: string) => {
    try {
      return expandEnvTemplate(t, env, `mcp server \`${s.name}\` ${what}`);
    } catch (e) {
      if (e instanceof SuiteEnvError) throw new McpSetupError(e.message);
      throw e;
    }
  };
  const secrets = (values: Record<string, string>) => {
    // As `environment.env`'s values: a plain word under an ordinary name is no secret, the rest are.
    for (const [k, v] of Object.entries(values)) if (v && suiteValueIsSecret(k, v)) redactor().add(v);
    return values;
  };
  // `${VAR}` of an unset variable is empty (as in a shell): an empty command or endpoint cannot start anything.
  const nonEmpty = (t: string, what: string) => {
    const v = expand(t, what);
    if (!v.trim()) throw new McpSetupError(`mcp server \`${s.name}\` (${s.at}): its ${what} \`${t}\` is empty once expanded from skill-up's environment; set the variables it names`);
    return v;
  };
  if (s.transport === 'http') {
    const headers = secrets(Object.fromEntries(Object.entries(s.headers).map(([k, v]) => [k, expand(v, `headers.${k}`)])));
    const url = nonEmpty(s.endpoint ?? '', 'endpoint');
    if (!/^https?:\/\/\S+$/.test(url)) throw new McpSetupError(`mcp server \`${s.name}\` (${s.at}): its endpoint \`${s.endpoint}\` is not an http(s) URL once expanded`);
    return { name: s.name, transport: 'http', url, headers };
  }
  const launch: McpServerLaunch = {
    name: s.name,
    transport: 'stdio',
    command: nonEmpty(s.command ?? '', 'command'),
    args: s.args.map((a, i) => expand(a, `args[${i}]`)),
    env: secrets(Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, expand(v, `env.${k}`)]))),
  };
  return launch;
}

async function mockedLaunch(s: McpServerSpec, job: { workspace: string; jobDir: string }): Promise<McpServerLaunch> {
  const dir = mcpDir(job.jobDir);
  const config = path.join(dir, `${s.name}.json`);
  const spec = {
    name: s.name,
    ...(s.builtin ? { builtin: s.builtin, root: job.workspace } : {}),
    ...(s.toolResponses ? { tool_responses: s.toolResponses } : {}),
    log_file: path.join(dir, `${s.name}.calls.jsonl`),
  };
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(config, `${JSON.stringify(spec, null, 2)}\n`, { mode: 0o600 });
  } catch (e) {
    throw new McpSetupError(`mcp server \`${s.name}\`: cannot write its mock spec ${config}: ${(e as Error).message}`);
  }
  return { name: s.name, transport: 'stdio', command: process.execPath, args: [skillUpCli(), 'mcp-mock', '--config', config], env: {} };
}
