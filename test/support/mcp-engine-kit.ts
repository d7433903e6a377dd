/**
 * Shared by the engines' MCP tests (engines/<name>/mcp.test.ts): a `skill-up mcp-mock` server
 * with one canned tool, launched by the engine over stdio or started here over streamable HTTP,
 * its call log, and a scripted model whose rule calls that tool with the `mcp_tool` action (the
 * server picks the engine's own name for it).
 * Needs the built CLI (`npm run build`): the mock is `node dist/src/cli/skill-up.cjs mcp-mock`.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpServerLaunch } from '../../src/engine/mcp.js';

/** The built CLI the mock runs from. */
export const SKILL_UP_BIN = fileURLToPath(new URL('../../dist/src/cli/skill-up.cjs', import.meta.url));

/** The mock's server name, tool, the argument the script sends and the answer the mock gives it. */
export const MCP_MOCK = {
  server: 'tickets',
  tool: 'get_ticket',
  args: { id: 'T-7' },
  answer: 'ticket T-7 is open: Login fails on Safari',
  /** A second tool that answers only `T-7`: the script calls it with `failingArgs`, a tool error. */
  failingTool: 'close_ticket',
  failingArgs: { id: 'T-9' },
  failingAnswer: 'no response configured for close_ticket with these arguments',
} as const;

/**
 * Writes `<dir>/<server>.yaml`, a mock spec of server `server` offering `get_ticket {id}`
 * (answer for `T-7`: `MCP_MOCK.answer`; any other id: `ticket <id> not found`) and
 * `close_ticket {id}` (answers `T-7` only, else the tool error `MCP_MOCK.failingAnswer`), and returns it
 * with the call log path `<dir>/<server>-calls.jsonl` (not created yet).
 * @throws Error when the CLI is not built.
 */
export async function writeMockSpec(dir: string, server: string = MCP_MOCK.server): Promise<{ config: string; log: string }> {
  if (!existsSync(SKILL_UP_BIN)) throw new Error(`${SKILL_UP_BIN} is missing: run \`npm run build\` first`);
  const config = join(dir, `${server}.yaml`);
  await writeFile(
    config,
    [
      `name: ${server}`,
      'tool_responses:',
      `  ${MCP_MOCK.tool}:`,
      '    description: Look up a ticket by its id',
      '    input_schema: {type: object, properties: {id: {type: string}}, required: [id]}',
      '    responses:',
      `      - when: {id: ${MCP_MOCK.args.id}}`,
      `        response: "${MCP_MOCK.answer}"`,
      `    default: "ticket {{params.id}} not found"`,
      `  ${MCP_MOCK.failingTool}:`,
      '    description: Close a ticket',
      '    input_schema: {type: object, properties: {id: {type: string}}, required: [id]}',
      '    responses:',
      `      - when: {id: ${MCP_MOCK.args.id}}`,
      '        response: closed',
      '',
    ].join('\n'),
  );
  return { config, log: join(dir, `${server}-calls.jsonl`) };
}

/** The stdio launch of the mock: `node <skill-up> mcp-mock --config <config> --log <log>`, plus `env`. */
export function stdioMock(server: string, config: string, log: string, env?: Record<string, string>): McpServerLaunch {
  return { name: server, transport: 'stdio', command: process.execPath, args: [SKILL_UP_BIN, 'mcp-mock', '--config', config, '--log', log], ...(env ? { env } : {}) };
}

/** A mock serving streamable HTTP until `stop`. */
export interface HttpMock {
  /** `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts `skill-up mcp-mock --transport http --port 0` on `config` (calls logged to `log`) and
 * resolves once it printed its URL.
 * @throws Error when it exits first (its output in the message).
 */
export async function startHttpMock(config: string, log: string): Promise<HttpMock> {
  const child = spawn(process.execPath, [SKILL_UP_BIN, 'mcp-mock', '--config', config, '--log', log, '--transport', 'http', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const closed = new Promise<void>((r) => child.on('close', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += String(d);
      const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('close', () => reject(new Error(`mcp-mock exited before listening: ${out}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await closed;
    },
  };
}

/** One line of the mock's call log (README "Mocked MCP servers", "Call log"). */
export interface MockCall {
  server: string;
  tool: string;
  arguments: Record<string, unknown>;
  result: string;
  isError: boolean;
}

/** The call log's lines; `[]` when the file does not exist (no call was made). */
export function readCalls(log: string): MockCall[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as MockCall);
}

/** What `mcpCallScript` answers a `look up ticket` prompt whose request neither offers nor lists the tool. */
export const NOT_LISTED_ANSWER = 'The tickets tool is not listed.';

/**
 * A model script (src/model/script.ts) for the mock's server `server`: prompt `look up ticket`
 * calls `get_ticket` with `MCP_MOCK.args` through the `mcp_tool` action (under the engine's own
 * name for it, src/model/plan.ts), then says `Looked it up.`, but only when the request offers or
 * lists the tool (`tool_listed: mcp__<server>__get_ticket`); otherwise it says
 * `NOT_LISTED_ANSWER`. `close ticket` calls `close_ticket` with `MCP_MOCK.failingArgs` (a tool
 * error), then says `Could not close it.`; any other prompt gets `No tools needed.`.
 */
export function mcpCallScript(server: string = MCP_MOCK.server): string {
  const call = (tool: string, args: Record<string, string>) => `{ mcp_tool: { server: ${JSON.stringify(server)}, tool: ${tool}, input: ${JSON.stringify(args)} } }`;
  return `
rules:
  - name: call-mcp
    when: { prompt_contains: "look up ticket", tool_listed: ${JSON.stringify(`mcp__${server}__${MCP_MOCK.tool}`)} }
    reply:
      - ${call(MCP_MOCK.tool, MCP_MOCK.args)}
      - { say: "Looked it up." }
  - name: not-listed
    when: { prompt_contains: "look up ticket" }
    reply: [ { say: ${JSON.stringify(NOT_LISTED_ANSWER)} } ]
  - name: call-mcp-failing
    when: { prompt_contains: "close ticket" }
    reply:
      - ${call(MCP_MOCK.failingTool, MCP_MOCK.failingArgs)}
      - { say: "Could not close it." }
  - reply: [ { say: "No tools needed." } ]
`;
}

/**
 * The request bodies of a job's model calls, read from the scripted server's exchange log
 * (`<logDir>/<jobId>/model-requests.jsonl`, src/model/log.ts), in order.
 */
export function requestBodies(logDir: string, jobId: string): Record<string, unknown>[] {
  const file = join(logDir, ...jobId.split('/'), 'model-requests.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { kind?: string; request?: { body?: unknown } })
    .filter((e) => e.kind === 'generate')
    .map((e) => (e.request?.body ?? {}) as Record<string, unknown>);
}
