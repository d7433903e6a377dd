/**
 * A mocked MCP server built from a {@link MockServerSpec} on `@modelcontextprotocol/sdk`, the
 * protocol's reference implementation: {@link createMockMcp} compiles the spec once;
 * {@link serveStdio} speaks MCP on stdin/stdout, {@link serveHttp} streamable HTTP on
 * 127.0.0.1 (stateless: one SDK server per request, so any number of clients may call).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { realpath } from 'node:fs/promises';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../util/version.js';
import { callFilesystemTool, FILESYSTEM_TOOL_DEFS, type ToolAnswer } from './filesystem.js';
import { CallLog } from './log.js';
import { answerCall, compileTool, type CompiledTool } from './responses.js';
import { checkMockSpec, type MockServerSpec } from './spec.js';

/** A compiled mock: what every transport's SDK server answers from. */
export interface MockMcp {
  readonly name: string;
  /** The `tools/list` answer. */
  readonly tools: Tool[];
  /** The call log, when `log_file` is set. */
  readonly log?: CallLog;
  /** Answers one `tools/call` (and logs it). Never throws. */
  call(tool: string, args: Record<string, unknown>): Promise<ToolAnswer>;
  /** A new SDK server wired to this mock, for one transport. */
  sdkServer(): Server;
  /** Resolves once no call is running (immediately when none is). */
  idle(): Promise<void>;
}

/**
 * Compiles `spec` (checked with checkMockSpec; `root` is made real once).
 * @throws Error listing every problem of the spec (`field: message`), or when `builtin: filesystem` has no `root`.
 */
export async function createMockMcp(spec: MockServerSpec): Promise<MockMcp> {
  const problems: string[] = [];
  checkMockSpec(spec, (at, m) => problems.push(`${at.join('.') || '(spec)'}: ${m}`));
  if (spec.builtin === 'filesystem' && !spec.root) problems.push('root: `builtin: filesystem` needs the folder it is confined to');
  if (problems.length) throw new Error(`invalid mocked MCP server spec: ${problems.join('; ')}`);
  const root = spec.builtin === 'filesystem' ? await realpath(spec.root!) : undefined;
  const canned = new Map<string, CompiledTool>(Object.entries(spec.tool_responses ?? {}).map(([n, t]) => [n, compileTool(n, t)]));
  const tools: Tool[] = [
    ...(root ? FILESYSTEM_TOOL_DEFS.map((t) => structuredClone(t) as unknown as Tool) : []),
    ...[...canned.values()].map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as Tool['inputSchema'] })),
  ];
  const log = spec.log_file ? new CallLog(spec.log_file) : undefined;
  const names = tools.map((t) => t.name);

  let running = 0;
  let waiters: (() => void)[] = [];
  const idle = (): Promise<void> => (running === 0 ? Promise.resolve() : new Promise((r) => waiters.push(r)));
  const call = async (tool: string, args: Record<string, unknown>): Promise<ToolAnswer> => {
    running++;
    try {
      return await answer(tool, args);
    } finally {
      if (--running === 0) {
        const w = waiters;
        waiters = [];
        for (const r of w) r();
      }
    }
  };
  const answer = async (tool: string, args: Record<string, unknown>): Promise<ToolAnswer> => {
    let answer: ToolAnswer & { matched?: string; missing?: string[] };
    const c = canned.get(tool);
    if (c) answer = answerCall(c, args);
    else answer = (root ? await callFilesystemTool(root, tool, args) : undefined) ?? { text: `unknown tool \`${tool}\`; ${spec.name} offers: ${names.join(', ')}`, isError: true };
    await log?.append({ server: spec.name, tool, arguments: args, result: answer.text, isError: answer.isError, matched: answer.matched, missing_params: answer.missing });
    return { text: answer.text, isError: answer.isError };
  };

  const sdkServer = (): Server => {
    const server = new Server({ name: spec.name, version: VERSION }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
      const a = await call(req.params.name, req.params.arguments ?? {});
      return { content: [{ type: 'text', text: a.text }], ...(a.isError ? { isError: true } : {}) };
    });
    return server;
  };

  return { name: spec.name, tools, ...(log ? { log } : {}), call, sdkServer, idle };
}

/**
 * Serves `mock` over stdio (stdout carries only the protocol) until stdin ends or the
 * transport closes; resolves then, after the call log is flushed.
 */
export async function serveStdio(mock: MockMcp): Promise<void> {
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  const server = mock.sdkServer();
  await server.connect(transport);
  await closed;
  // A client may close stdin right after its last request: answer the calls still running first.
  await mock.idle();
  await new Promise((r) => setImmediate(r));
  await server.close().catch(() => undefined);
  await mock.log?.flush();
}

/** A running streamable HTTP mock. */
export interface HttpMock {
  /** `http://127.0.0.1:<port>/mcp`, the endpoint clients post to. */
  url: string;
  port: number;
  /** Stops listening, ends open requests, and flushes the call log. */
  close(): Promise<void>;
}

function jsonError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * Serves `mock` over streamable HTTP on 127.0.0.1:`port` (0: any free port) at `/mcp`. POST
 * only (stateless mode: GET and DELETE answer 405); a Host header other than
 * 127.0.0.1/localhost with this port is refused (403), so a web page cannot reach it by DNS
 * rebinding. Request bodies are bounded by the SDK (4 MiB).
 * @throws the listen error (EADDRINUSE, EACCES) when the port cannot be bound.
 */
export async function serveHttp(mock: MockMcp, port = 0): Promise<HttpMock> {
  let bound = 0;
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${bound}` && host !== `localhost:${bound}`) return jsonError(res, 403, `host \`${host}\` is not allowed`);
    if ((req.url ?? '').split('?')[0] !== '/mcp') return jsonError(res, 404, 'not found: the MCP endpoint is /mcp');
    if (req.method !== 'POST') return jsonError(res, 405, 'method not allowed: this stateless server takes POST only');
    const server = mock.sdkServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) jsonError(res, 500, `internal error: ${(e as Error).message}`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => {
      http.off('error', reject);
      resolve();
    });
  });
  bound = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/mcp`,
    port: bound,
    close: async () => {
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await mock.log?.flush();
    },
  };
}
