/**
 * `skill-up mcp-mock --config FILE [--transport stdio|http] [--port N] [--root DIR] [--log FILE]`
 *
 * Serves one mocked MCP server (src/mcp/mock/) in the foreground. Over stdio (the default,
 * what an engine launches as the server's command) stdout carries only the protocol and every
 * diagnostic goes to stderr; the command ends when stdin does. Over HTTP it prints the URL
 * and runs until SIGINT or SIGTERM. Exit codes: 0 after a clean stop, 2 for a usage error or an
 * invalid spec (`file:line:col: field: message`), 3 when the port cannot be bound.
 */
import { untilStopped } from '../util/stop.js';
import { ConfigError, formatDiagnostic } from '../config/diagnostics.js';
import { loadMockSpec, type SpecOverrides } from '../mcp/mock/spec.js';
import { createMockMcp, serveHttp, serveStdio, type MockMcp } from '../mcp/mock/server.js';
import { intFlag, parse, UsageError } from '../util/args.js';

const USAGE = `usage: skill-up mcp-mock --config FILE [--transport stdio|http] [--port N] [--root DIR] [--log FILE]

Serves a mocked MCP server whose answers the suite's author controls.
  --config FILE       the server spec (YAML or JSON): name, builtin: filesystem, root,
                      tool_responses.<tool> {description, input_schema, default, responses[{when, response}]}, log_file
  --transport T       stdio (default; stdout carries only the protocol) or http (streamable HTTP on 127.0.0.1)
  --port N            HTTP port (default 0: a free port; the URL is printed)
  --root DIR          the folder \`builtin: filesystem\` is confined to (overrides \`root\`)
  --log FILE          append one JSON line per tool call (overrides \`log_file\`)

Examples:
  skill-up mcp-mock --config evals/mcp/tickets.yaml
  skill-up mcp-mock --config evals/mcp/fs.yaml --root ./workspace --log calls.jsonl
  skill-up mcp-mock --config evals/mcp/tickets.yaml --transport http --port 8931
  # an MCP client config launching it over stdio:
  {"mcpServers": {"tickets": {"command": "skill-up", "args": ["mcp-mock", "--config", "evals/mcp/tickets.yaml"]}}}

A spec (tickets.yaml):
  name: tickets
  tool_responses:
    get_ticket:
      description: Look up a ticket by id
      input_schema: {type: object, properties: {id: {type: string}}, required: [id]}
      responses:
        - when: {id: "T-1"}
          response: {id: T-1, status: open}
      default: "ticket {{params.id}} not found (project {{params.project | default:'main'}})"`;

/** Where the command writes, and what stops it (tests pass their own). */
export interface McpMockIO {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** Stops an HTTP server like SIGINT does. */
  signal?: AbortSignal;
}

const defaultIO: McpMockIO = {
  stdout: (l) => process.stdout.write(l + '\n'),
  stderr: (l) => process.stderr.write(l + '\n'),
};

interface Args {
  config?: string;
  transport: 'stdio' | 'http';
  port: number;
  overrides: SpecOverrides;
  help: boolean;
}

function parseArgs(argv: string[]): Args {
  const rest = argv[0] === 'mcp-mock' ? argv.slice(1) : argv;
  const { values, positionals } = parse(rest, {
    config: { type: 'string' },
    transport: { type: 'string' },
    port: { type: 'string' },
    root: { type: 'string' },
    log: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (positionals.length > 0) throw new UsageError(`unknown argument ${positionals[0]!}`);
  const transport = values.transport ?? 'stdio';
  if (transport !== 'stdio' && transport !== 'http') throw new UsageError(`--transport must be stdio or http, got \`${transport}\``);
  for (const k of ['config', 'root', 'log'] as const) if (values[k] === '') throw new UsageError(`--${k} needs a path`);
  const port = intFlag('port', values.port, 0, 65535);
  if (port !== undefined && transport !== 'http') throw new UsageError('--port applies to --transport http only');
  const overrides: SpecOverrides = {};
  if (values.root !== undefined) overrides.root = values.root;
  if (values.log !== undefined) overrides.log_file = values.log;
  return { ...(values.config !== undefined ? { config: values.config } : {}), transport, port: port ?? 0, overrides, help: values.help === true };
}

/** Says on stderr how many call log lines were lost, if any. */
function reportLog(mock: MockMcp, io: McpMockIO): void {
  const log = mock.log;
  if (log && log.failures > 0) io.stderr(`skill-up mcp-mock: ${log.failures} call log line${log.failures === 1 ? '' : 's'} could not be written to ${log.file}: ${log.firstError ?? '?'}`);
}

/**
 * Runs the command. `argv` are the arguments after `mcp-mock` (a leading `mcp-mock` is skipped too).
 * @returns the exit code (see the module doc).
 */
export async function mcpMockCommand(argv: string[], io: McpMockIO = defaultIO): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    io.stderr(`skill-up mcp-mock: ${e.message}`);
    io.stderr(USAGE);
    return 2;
  }
  if (args.help) {
    io.stdout(USAGE);
    return 0;
  }
  if (!args.config) {
    io.stderr('skill-up mcp-mock: --config FILE is required');
    io.stderr(USAGE);
    return 2;
  }
  let mock: MockMcp;
  try {
    mock = await createMockMcp(loadMockSpec(args.config, args.overrides));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    for (const d of e.diagnostics) io.stderr(formatDiagnostic(d));
    return 2;
  }

  if (args.transport === 'stdio') {
    await serveStdio(mock);
    reportLog(mock, io);
    return 0;
  }
  let http;
  try {
    http = await serveHttp(mock, args.port);
  } catch (e) {
    io.stderr(`skill-up mcp-mock: cannot listen on 127.0.0.1:${args.port}: ${(e as Error).message}`);
    return 3;
  }
  io.stdout(`${mock.name}: MCP streamable HTTP on ${http.url} (${mock.tools.length} tool${mock.tools.length === 1 ? '' : 's'}: ${mock.tools.map((t) => t.name).join(', ')})`);
  await untilStopped(io.signal);
  await http.close();
  reportLog(mock, io);
  return 0;
}
