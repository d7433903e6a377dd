/**
 * `mcp.servers[]` of eval.yaml and of a case file (alibaba/skill-up's fields): the MCP servers
 * offered to the agent, identically in both variants (issue 16). A case's list merges with the
 * suite's by `name` (the case's entry replaces the suite's of the same name).
 *
 * Fields: `name`; `mode: real | mocked` (default real); `transport: stdio | http` (default
 * stdio); real stdio: `command`, `args`, `env`; real http: `endpoint`, `headers`;
 * `required_env` (variables that must be set when the run starts); `config_ref` (a YAML file
 * in the skill folder holding `transport`, `endpoint`, `headers`, `required_env` and
 * `tool_responses`, as alibaba has it; the entry's own fields win); mocked: `builtin:
 * filesystem` and/or `tool_responses` (checked as `skill-up mcp-mock` checks them,
 * src/mcp/mock/spec.ts). `env` and `headers` values may use `${VAR}` (expanded when the run
 * starts, src/run/mcp.ts; every expanded value is a secret).
 */
import path from 'node:path';
import { skillPath } from './paths.js';
import { Field, formatPath, positionOf, readYamlSource, type Segment } from './yaml-source.js';
import { checkMockSpec, type MockTool } from '../mcp/mock/spec.js';
import { MCP_SERVER_NAME } from '../engine/mcp.js';

/** One MCP server of a suite or case, as configured (nothing expanded or started yet). */
export interface McpServerSpec {
  /** 1–64 of `[A-Za-z0-9_-]`, no `__` (the transcript names its tools `mcp__<name>__<tool>`). */
  name: string;
  mode: 'real' | 'mocked';
  transport: 'stdio' | 'http';
  /** real stdio: the program (a name on PATH, or a path; `${VAR}` expanded at run time). */
  command?: string;
  args: string[];
  /** real stdio: variables for the server (templates; values are secrets once expanded). */
  env: Record<string, string>;
  /** real http: the streamable HTTP endpoint. */
  endpoint?: string;
  /** real http: request headers (templates; values are secrets once expanded). */
  headers: Record<string, string>;
  /** Variables that must be set (non-empty) in skill-up's environment when the run starts. */
  requiredEnv: string[];
  /** mocked: the built-in filesystem mock, confined to the job's workspace. */
  builtin?: 'filesystem';
  /** mocked: tools with canned answers (src/mcp/mock/spec.ts). */
  toolResponses?: Record<string, MockTool>;
  /** Where it was declared, for messages: `file:line`. */
  at: string;
}


/** Keys a `config_ref` file may hold. */
const REF_KEYS = new Set(['transport', 'endpoint', 'headers', 'required_env', 'tool_responses']);

/**
 * The servers of `owner.mcp.servers` (owner: the eval.yaml or case file root). Problems are
 * reported at their field; a server with a problem is left out.
 */
export function buildMcpServers(owner: Field, skillDir: string): McpServerSpec[] {
  const mcp = owner.get('mcp');
  if (mcp.missing) return [];
  for (const [k, f] of mcp.entries()) if (k !== 'servers') f.error(`unknown key \`${k}\` in mcp; expected \`servers\``, 'key');
  const out: McpServerSpec[] = [];
  const seen = new Set<string>();
  for (const item of mcp.get('servers').items()) {
    const spec = buildServer(item, skillDir);
    if (!spec) continue;
    if (seen.has(spec.name)) {
      item.get('name').error(`mcp server \`${spec.name}\` is listed twice; names must be unique`);
      continue;
    }
    seen.add(spec.name);
    out.push(spec);
  }
  return out;
}

/**
 * The names `owner.mcp.servers` declares, a server with a problem included: what an MCP rule may
 * name without a second error (the server's own problem is reported where it is).
 */
export function declaredMcpServerNames(owner: Field): string[] {
  const servers = owner.get('mcp').get('servers');
  return servers.missing ? [] : servers.items().flatMap((i) => (i.isMap() && i.get('name').str() ? [i.get('name').str()!] : []));
}

/** The suite's servers with a case's merged in by name (the case's entry replaces the suite's). */
export function mergeMcpServers(suite: McpServerSpec[], ofCase: McpServerSpec[]): McpServerSpec[] {
  const byName = new Map(suite.map((s) => [s.name, s]));
  for (const s of ofCase) byName.set(s.name, s);
  return [...byName.values()];
}

function buildServer(item: Field, skillDir: string): McpServerSpec | undefined {
  if (!item.isMap()) {
    item.error('an mcp server is a map with at least `name`');
    return undefined;
  }
  // Unknown keys are the schema's to report (schemas/eval.schema.json `mcp`), with a did-you-mean.
  const errorsBefore = errorCount(item);
  const name = item.get('name').str();
  if (name === undefined) item.get('name').error('an mcp server needs `name`');
  else if (!MCP_SERVER_NAME.test(name) || name.includes('__')) item.get('name').error(`mcp server name \`${name}\` must be 1–64 letters, digits, \`_\` or \`-\`, without \`__\` (tools are named \`mcp__<name>__<tool>\`)`);
  const ref = readConfigRef(item, skillDir);
  const pick = <T>(key: string, get: (f: Field) => T | undefined): T | undefined => {
    const own = item.get(key);
    return own.missing ? (ref?.has(key) ? get(ref.get(key)) : undefined) : get(own);
  };
  const mode = item.get('mode').str() ?? 'real';
  if (mode !== 'real' && mode !== 'mocked') item.get('mode').error(`mode \`${mode}\`: expected \`real\` or \`mocked\``);
  const transport = pick('transport', (f) => f.str()) ?? 'stdio';
  if (transport !== 'stdio' && transport !== 'http') (item.has('transport') ? item.get('transport') : item).error(`transport \`${transport}\`: expected \`stdio\` or \`http\``);
  const spec: McpServerSpec = {
    name: name ?? '',
    mode: mode === 'mocked' ? 'mocked' : 'real',
    transport: transport === 'http' ? 'http' : 'stdio',
    args: item.get('args').strings(),
    env: item.get('env').scalarMap(),
    headers: pick('headers', (f) => f.scalarMap()) ?? {},
    requiredEnv: pick('required_env', (f) => f.strings()) ?? [],
    at: `${path.relative(skillDir, item.src.file) || item.src.file}:${item.position().line}`,
  };
  const command = item.get('command').str();
  const endpoint = pick('endpoint', (f) => f.str());
  if (command !== undefined) spec.command = command;
  if (endpoint !== undefined) spec.endpoint = endpoint;
  for (const v of spec.requiredEnv) if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) item.get('required_env').error(`required_env \`${v}\` is not a variable name`);
  if (spec.mode === 'real') {
    for (const k of ['builtin', 'tool_responses']) if (item.has(k)) item.get(k).error(`\`${k}\` is for \`mode: mocked\` servers (this one is real: skill-up starts nothing of its own)`, 'key');
    if (spec.transport === 'stdio' && !command) item.error(`mcp server \`${spec.name}\` (real, stdio) needs \`command\`: the program the engine starts`);
    if (spec.transport === 'http') {
      if (!endpoint) item.error(`mcp server \`${spec.name}\` (real, http) needs \`endpoint\`: the server's URL`);
      else if (!endpoint.includes('${') && !/^https?:\/\/[^\s]+$/.test(endpoint)) (item.has('endpoint') ? item.get('endpoint') : item).error(`endpoint \`${endpoint}\` is not an http(s) URL`);
      if (command !== undefined) item.get('command').error('`command` is for stdio servers; an http server is reached at `endpoint`', 'key');
    }
  } else {
    for (const k of ['command', 'args', 'env', 'endpoint', 'headers']) if (item.has(k)) item.get(k).error(`\`${k}\` is for \`mode: real\` servers; a mocked server is served by skill-up itself (\`builtin\`, \`tool_responses\`)`, 'key');
    if (spec.transport === 'http') (item.has('transport') ? item.get('transport') : item).error('a mocked server is served over stdio (the engine starts it); `transport: http` is for real servers');
    checkMocked(item, ref, spec);
  }
  return errorCount(item) > errorsBefore ? undefined : spec;
}

/** `builtin` and `tool_responses` of a mocked server, checked as `skill-up mcp-mock` checks them. */
function checkMocked(item: Field, ref: Field | undefined, spec: McpServerSpec): void {
  const builtin = item.get('builtin');
  const responses = item.has('tool_responses') ? item.get('tool_responses') : ref?.has('tool_responses') ? ref.get('tool_responses') : undefined;
  if (builtin.missing && !responses) {
    // A config_ref that could not be read is already reported at its field.
    if (item.has('config_ref') && !ref) return;
    item.error(`mocked mcp server \`${spec.name}\` offers nothing: give \`builtin: filesystem\`, \`tool_responses\`, or both`);
    return;
  }
  const data: Record<string, unknown> = { name: spec.name };
  if (!builtin.missing) data.builtin = builtin.value;
  if (responses) data.tool_responses = responses.value;
  const owner = responses ?? item;
  const checked = checkMockSpec(data, (at: Segment[], message: string) => {
    // Point at the field in whichever file holds it: the entry, or its config_ref.
    const [top, ...rest] = at;
    if (top === 'builtin') builtin.error(message);
    else if (top === 'tool_responses') {
      const { line, col } = positionOf(owner.src, [...owner.segments, ...rest], 'value');
      owner.bag.error(owner.src.file, line, col, formatPath([...owner.segments, ...rest]), message);
    } else item.error(message);
  });
  if (checked?.builtin) spec.builtin = checked.builtin;
  if (checked?.tool_responses) spec.toolResponses = checked.tool_responses;
}

/** The `config_ref` file's root field (its problems reported in that file), or undefined. */
function readConfigRef(item: Field, skillDir: string): Field | undefined {
  const f = item.get('config_ref');
  if (f.missing) return undefined;
  const file = skillPath(f, skillDir, 'file', 'config_ref');
  if (!file) return undefined;
  const src = readYamlSource(file, item.bag);
  if (!src.ok) return undefined;
  const root = Field.root(src, item.bag);
  if (!root.isMap()) {
    root.error('a config_ref file is a map of transport, endpoint, headers, required_env and tool_responses');
    return undefined;
  }
  for (const [k, v] of root.entries()) if (!REF_KEYS.has(k)) v.error(`unknown key \`${k}\` in a config_ref file; expected one of ${[...REF_KEYS].join(', ')}`, 'key');
  return root;
}

/** Errors collected so far in `f`'s bag. */
function errorCount(f: Field): number {
  return f.bag.items.filter((d) => d.severity === 'error').length;
}
