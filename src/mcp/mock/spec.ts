/**
 * The spec of one mocked MCP server (what `skill-up mcp-mock --config FILE` reads): its name,
 * an optional built-in `filesystem` mock confined to `root`, canned `tool_responses`, and a
 * call log. {@link checkMockSpec} checks a plain object (from YAML, JSON or a caller) and
 * reports every problem at its field path; {@link loadMockSpec} reads a file and throws a
 * `ConfigError` whose diagnostics name the file, line, column and field.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { DiagnosticBag } from '../../config/diagnostics.js';
import { formatPath, positionOf, readYamlSource, type Segment } from '../../config/yaml-source.js';
import { MCP_SERVER_NAME } from '../../engine/mcp.js';
import { parseTemplate, TemplateError } from './template.js';

/** One canned answer: used when every key of `when` deep-equals the call's argument of that name. */
export interface MockResponse {
  when: Record<string, unknown>;
  /** A string is a template ({@link parseTemplate}); any other value is answered as its JSON text. */
  response: string | object;
}

/** A tool the mock offers with canned answers. */
export interface MockTool {
  description?: string;
  /** The tool's JSON Schema for its arguments (`type: object`); default: an object accepting any properties. */
  input_schema?: Record<string, unknown>;
  /** The answer when no `responses[]` entry matches (string template or JSON value). */
  default?: string | object;
  /** Tried in order; the first whose `when` matches answers. */
  responses?: MockResponse[];
}

/** One mocked MCP server. */
export interface MockServerSpec {
  /** The server's name (letters, digits, `_`, `-`): engines name its tools `mcp__<name>__<tool>`. */
  name: string;
  /** `filesystem`: `list_directory`, `read_file`, `write_file`, confined to `root`. */
  builtin?: 'filesystem';
  /** The folder the filesystem mock is confined to (the job's workspace); required with `builtin: filesystem`. */
  root?: string;
  /** Tools with canned answers, by tool name. */
  tool_responses?: Record<string, MockTool>;
  /** Appends one JSON line per call to this file. */
  log_file?: string;
}

/** The tools of `builtin: filesystem`, with alibaba/skill-up's names. */
export const FILESYSTEM_TOOLS = ['list_directory', 'read_file', 'write_file'] as const;

const TOP_KEYS = ['name', 'builtin', 'root', 'tool_responses', 'log_file'];
const TOOL_KEYS = ['description', 'input_schema', 'default', 'responses'];
const RESPONSE_KEYS = ['when', 'response'];
/** MCP's tool-name alphabet (letters, digits, `_`, `-`, `.`), at most 64 characters (engines prefix it). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** Reports one problem at a field path (`[]` is the whole spec). */
export type Report = (at: Segment[], message: string) => void;

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  return `a ${typeof v}`;
}

function unknownKeys(v: Record<string, unknown>, allowed: string[], at: Segment[], report: Report): void {
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) report([...at, k], `unknown field \`${k}\` (expected one of: ${allowed.join(', ')})`);
  }
}

/** Checks an answer (`default` or `responses[].response`): a string must parse as a template. */
function checkAnswer(v: unknown, at: Segment[], report: Report): void {
  if (typeof v === 'string') {
    try {
      parseTemplate(v);
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      report(at, e.message);
    }
  } else if (typeof v !== 'object' || v === null) {
    report(at, `expected a string (a template) or a map or list (answered as JSON), got ${typeName(v)}`);
  }
}

function checkTool(tool: unknown, at: Segment[], report: Report): void {
  if (!isMap(tool)) return report(at, `expected a map (description, input_schema, default, responses), got ${typeName(tool)}`);
  unknownKeys(tool, TOOL_KEYS, at, report);
  if (tool.description !== undefined && typeof tool.description !== 'string') report([...at, 'description'], `expected a string, got ${typeName(tool.description)}`);
  if (tool.input_schema !== undefined) {
    const s = tool.input_schema;
    if (!isMap(s)) report([...at, 'input_schema'], `expected a JSON Schema map with \`type: object\`, got ${typeName(s)}`);
    else if (s.type !== 'object') report([...at, 'input_schema', 'type'], 'MCP tool input schemas must have `type: object`');
  }
  if (tool.default !== undefined) checkAnswer(tool.default, [...at, 'default'], report);
  if (tool.responses !== undefined) {
    if (!Array.isArray(tool.responses)) return report([...at, 'responses'], `expected a list of {when, response}, got ${typeName(tool.responses)}`);
    tool.responses.forEach((r: unknown, i) => {
      const ra = [...at, 'responses', i];
      if (!isMap(r)) return report(ra, `expected a map {when, response}, got ${typeName(r)}`);
      unknownKeys(r, RESPONSE_KEYS, ra, report);
      if (!isMap(r.when)) report([...ra, 'when'], `expected a map of argument name to value, got ${typeName(r.when)}`);
      if (r.response === undefined) report([...ra, 'response'], 'is required: the answer when `when` matches');
      else checkAnswer(r.response, [...ra, 'response'], report);
    });
  }
}

/**
 * Checks `data` as a {@link MockServerSpec}, reporting every problem (unknown fields, wrong
 * types, bad names, unparsable templates, a tool that clashes with a filesystem tool, a spec
 * that serves no tool). Paths are not resolved and `root` is not required here: callers check
 * it once flags are applied. Returns `data` typed when nothing was reported.
 */
export function checkMockSpec(data: unknown, report: Report): MockServerSpec | undefined {
  let problems = 0;
  const r: Report = (at, m) => {
    problems++;
    report(at, m);
  };
  if (!isMap(data)) {
    r([], `expected a map with the server's fields (${TOP_KEYS.join(', ')}), got ${typeName(data)}`);
    return undefined;
  }
  unknownKeys(data, TOP_KEYS, [], r);
  if (typeof data.name !== 'string') r(['name'], data.name === undefined ? 'is required: the server name' : `expected a string, got ${typeName(data.name)}`);
  else if (!MCP_SERVER_NAME.test(data.name)) r(['name'], `\`${data.name.slice(0, 80)}\` is not a server name: 1 to 64 letters, digits, \`_\` or \`-\``);
  if (data.builtin !== undefined && data.builtin !== 'filesystem') r(['builtin'], `expected \`filesystem\` (the only built-in mock), got ${JSON.stringify(data.builtin)}`);
  for (const k of ['root', 'log_file'] as const) {
    if (data[k] !== undefined && (typeof data[k] !== 'string' || data[k] === '')) r([k], `expected a path (a non-empty string), got ${typeName(data[k])}`);
  }
  if (data.tool_responses !== undefined) {
    if (!isMap(data.tool_responses)) r(['tool_responses'], `expected a map of tool name to {description, input_schema, default, responses}, got ${typeName(data.tool_responses)}`);
    else {
      for (const [name, tool] of Object.entries(data.tool_responses)) {
        const at = ['tool_responses', name];
        if (!TOOL_NAME.test(name)) r(at, `\`${name.slice(0, 80)}\` is not a tool name: 1 to 64 letters, digits, \`_\`, \`-\` or \`.\``);
        else if (data.builtin === 'filesystem' && (FILESYSTEM_TOOLS as readonly string[]).includes(name)) r(at, `\`${name}\` is already a tool of \`builtin: filesystem\`; name it differently`);
        checkTool(tool, at, r);
      }
    }
  }
  if (data.builtin === undefined && (!isMap(data.tool_responses) || Object.keys(data.tool_responses).length === 0)) {
    r([], 'the server offers no tool: give `builtin: filesystem` or at least one entry in `tool_responses`');
  }
  return problems === 0 ? (data as unknown as MockServerSpec) : undefined;
}

/** Flags that override the file (`skill-up mcp-mock --root DIR --log FILE`), resolved against the current folder. */
export interface SpecOverrides {
  root?: string;
  log_file?: string;
}

/**
 * Reads the spec in `file` (YAML, or JSON, which is YAML too), checks it, applies `overrides`,
 * and resolves `root` and `log_file`: the file's own relative paths against the file's folder.
 * `root` must then be an existing folder when `builtin: filesystem` is set.
 * @throws ConfigError whose diagnostics say file, line, column, field and what was expected.
 */
export function loadMockSpec(file: string, overrides: SpecOverrides = {}): MockServerSpec {
  const bag = new DiagnosticBag();
  const src = readYamlSource(file, bag);
  bag.throwIfErrors();
  const report: Report = (at, message) => {
    const { line, col } = positionOf(src, at, at.length > 0 && typeof at[at.length - 1] === 'string' && message.startsWith('unknown field') ? 'key' : 'value');
    bag.error(file, line, col, formatPath(at), message);
  };
  const spec = checkMockSpec(src.data, report);
  bag.throwIfErrors();
  const dir = path.dirname(path.resolve(file));
  const out: MockServerSpec = { ...spec! };
  if (out.root !== undefined) out.root = path.resolve(dir, out.root);
  if (out.log_file !== undefined) out.log_file = path.resolve(dir, out.log_file);
  if (overrides.root !== undefined) out.root = path.resolve(overrides.root);
  if (overrides.log_file !== undefined) out.log_file = path.resolve(overrides.log_file);
  if (out.builtin === 'filesystem') {
    const at = positionOf(src, out.root !== undefined && overrides.root === undefined ? ['root'] : ['builtin']);
    if (out.root === undefined) bag.error(file, at.line, at.col, 'root', '`builtin: filesystem` needs `root` (or --root DIR): the folder the mock is confined to');
    else if (!isFolder(out.root)) {
      const how = overrides.root !== undefined ? '--root ' : '';
      bag.error(file, at.line, at.col, 'root', `${how}\`${out.root}\` is not an existing folder${how ? '' : ' (a relative root is resolved against the spec file\'s folder)'}`);
    }
  }
  bag.throwIfErrors();
  return out;
}

function isFolder(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
