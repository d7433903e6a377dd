/**
 * MCP servers on the REAL `opencode` binary (opencode-ai@1.18.33), offline: a `skill-up
 * mcp-mock` server (stdio, launched by opencode; and streamable HTTP, started here) and the
 * scripted model, whose `mcp_tool` rule (guarded by `tool_listed`) calls the mock's tool by the
 * name opencode offers it under (`<server>_<tool>`). Needs the built CLI (`npm run build`) for the mock and `rg` on PATH for
 * opencode. Nothing leaves 127.0.0.1.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpencodeArgs, buildOpencodeConfig, ripgrepOnPath } from './adapter.js';
import { buildOpencodeMcp, mcpSecretValues, mcpToolOf, modelToolName, unavailableMcpMessage, unavailableMcpServers } from './mcp.js';
import { parseOpencodeJson } from './parse.js';
import { mcpToolCallName } from '../../src/engine/mcp.js';
import type { EngineContext } from '../../src/engine/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { redactor } from '../../src/util/redact.js';
import { pureCtx, realEngineHarness } from '../../test/support/engine.js';
import { MCP_MOCK, mcpCallScript, readCalls, requestBodies, startHttpMock, stdioMock, writeMockSpec } from '../../test/support/mcp-engine-kit.js';

const TOOL = modelToolName(MCP_MOCK.server, MCP_MOCK.tool);
const CALL = mcpToolCallName(MCP_MOCK.server, MCP_MOCK.tool);

/** The job's opencode.json as written. */
const configPath = (ctx: EngineContext) => join(ctx.homeDir, '.config', 'opencode', 'opencode.json');
const writtenConfig = async (ctx: EngineContext) => JSON.parse(await readFile(configPath(ctx), 'utf8')) as Record<string, unknown>;
/** A config with the job-specific API key replaced, so two jobs' configs compare. */
const sansJob = (cfg: Record<string, unknown>) => JSON.parse(JSON.stringify(cfg).replace(/skill-up-job:[^"]+/g, 'skill-up-job:<job>')) as Record<string, unknown>;

/** A proxy in front of `target` that records every request's headers. */
async function headerProxy(target: string): Promise<{ url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const t = new URL(target);
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    const fwd = request({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: { ...req.headers, host: t.host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${t.pathname}`,
    seen,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

describe('opencode MCP servers (real binary, scripted model, mcp-mock)', () => {
  const h = realEngineHarness('opencode', 'opencode-mcp-test', async () => {
    if (!(await ripgrepOnPath(process.env.PATH))) throw new Error('opencode needs ripgrep (`rg`) on PATH: apt-get install ripgrep');
  });
  let model: ModelServer;
  let logDir: string;
  beforeAll(async () => {
    logDir = await mkdtemp(join(tmpdir(), 'skill-up-opencode-mcp-log-'));
    model = await startModelServer({ script: parseModelScript(mcpCallScript(), 'opencode-mcp.yaml'), logDir });
  });
  afterAll(async () => {
    await model?.close();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  /** The tool names opencode sent in the job's first model request's `tools`. */
  const offered = (jobId: string) => model.requestsFor(jobId).find((e) => e.kind === 'generate')?.conversation?.toolsOffered ?? [];
  /** A fresh job whose folder also holds the mock's spec and call log. */
  const jobWithMock = async () => {
    const ctx = await h.makeCtx({ modelBaseUrl: model.url });
    return { ctx, ...(await writeMockSpec(dirname(ctx.homeDir))) };
  };

  it('stdio: opencode starts the mock, offers tickets_get_ticket, and the call is in the transcript and the mock log', async () => {
    const { ctx, config, log } = await jobWithMock();
    const token = 'sk-test-opencode-0123456789abcdef';
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log, { TICKETS_TOKEN: token })];
    const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
    expect(turn.error).toBeUndefined();
    expect(TOOL).toBe('tickets_get_ticket');
    expect(offered(ctx.jobId!)).toContain(TOOL);
    expect(offered(ctx.jobId!)).toContain(modelToolName(MCP_MOCK.server, MCP_MOCK.failingTool));
    expect(model.requestsFor(ctx.jobId!).find((e) => e.kind === 'generate' && e.conversation?.toolsOffered.length)?.trace).toMatchObject({ ruleName: 'call-mcp', step: 0 });
    expect(turn.toolCalls).toEqual([{ name: CALL, input: MCP_MOCK.args, output: MCP_MOCK.answer, isError: false }]);
    expect(turn.finalText).toBe('Looked it up.');
    expect(readCalls(log)).toMatchObject([{ server: MCP_MOCK.server, tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer, isError: false }]);
    // The config (with the server's env, a secret) is the owner's alone; the redactor knows the value.
    expect((await stat(configPath(ctx))).mode & 0o777).toBe(0o600);
    const cfg = await writtenConfig(ctx);
    expect(cfg.mcp).toEqual(buildOpencodeMcp(ctx.mcpServers));
    expect(cfg.mcp).toMatchObject({ tickets: { type: 'local', command: [process.execPath, expect.stringMatching(/skill-up\.cjs$/), 'mcp-mock', '--config', config, '--log', log], environment: { TICKETS_TOKEN: token } } });
    expect(redactor().redact(`token=${token}`)).toBe('token=[REDACTED]');
    // The raw output names the tool the OpenCode way; parsed offline without the server names it stays so.
    const raw = await readFile(join(ctx.outputDir, turn.rawFiles[0]!), 'utf8');
    expect(raw).toContain(`"tool":"${TOOL}"`);
    expect(parseOpencodeJson(raw, { mcpServers: [MCP_MOCK.server] }).toolCalls).toEqual(turn.toolCalls);
    expect(parseOpencodeJson(raw).toolCalls[0]!.name).toBe(TOOL);
    await h.expectNoProcessLeft(ctx);
  }, 120_000);

  it('stdio: a tool error of the server is the call’s error output', async () => {
    const { ctx, config, log } = await jobWithMock();
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log)];
    const turn = await h.oneTurn(ctx, 'Please close ticket T-9');
    expect(turn.error).toBeUndefined();
    expect(turn.toolCalls).toEqual([{ name: mcpToolCallName(MCP_MOCK.server, MCP_MOCK.failingTool), input: MCP_MOCK.failingArgs, output: MCP_MOCK.failingAnswer, isError: true }]);
    expect(turn.finalText).toBe('Could not close it.');
    expect(readCalls(log)).toMatchObject([{ tool: MCP_MOCK.failingTool, arguments: MCP_MOCK.failingArgs, isError: true }]);
  }, 120_000);

  it('http: opencode connects to a running mock at its URL and sends the headers', async () => {
    const { ctx, config, log } = await jobWithMock();
    const mock = await startHttpMock(config, log);
    const proxy = await headerProxy(mock.url);
    try {
      ctx.mcpServers = [{ name: MCP_MOCK.server, transport: 'http', url: proxy.url, headers: { 'X-Ticket-Token': 'hdr-0123456789-secret' } }];
      const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
      expect(turn.error).toBeUndefined();
      expect(offered(ctx.jobId!)).toContain(TOOL);
      expect(turn.toolCalls).toEqual([{ name: CALL, input: MCP_MOCK.args, output: MCP_MOCK.answer, isError: false }]);
      expect(readCalls(log)).toMatchObject([{ tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer }]);
      expect(proxy.seen.length).toBeGreaterThan(0);
      expect(proxy.seen.every((hd) => hd['x-ticket-token'] === 'hdr-0123456789-secret')).toBe(true);
      expect((await writtenConfig(ctx)).mcp).toEqual({ tickets: { type: 'remote', url: proxy.url, headers: { 'X-Ticket-Token': 'hdr-0123456789-secret' }, oauth: false } });
    } finally {
      await proxy.close();
      await mock.stop();
    }
  }, 120_000);

  it('a server that cannot start: the turn is a crash naming it (OpenCode itself runs on without its tools)', async () => {
    const ctx = await h.makeCtx({ modelBaseUrl: model.url });
    ctx.mcpServers = [{ name: 'broken', transport: 'stdio', command: join(dirname(ctx.homeDir), 'no-such-server') }];
    const turn = await h.oneTurn(ctx, 'hello');
    expect(turn.error).toEqual({ kind: 'crash', message: 'MCP server `broken` (failed) could not be used: OpenCode logs it as "server unavailable"' });
    expect(turn.finalText).toBe('No tools needed.');
  }, 120_000);

  it('no servers (unset or []): no `mcp` key, no MCP tool offered, the same config and argv as each other', async () => {
    const plain = await h.makeCtx({ modelBaseUrl: model.url });
    const empty = await h.makeCtx({ modelBaseUrl: model.url });
    empty.mcpServers = [];
    for (const ctx of [plain, empty]) {
      const turn = await h.oneTurn(ctx, 'hello');
      expect(turn.error).toBeUndefined();
      expect(turn.finalText).toBe('No tools needed.');
      expect(offered(ctx.jobId!).length).toBeGreaterThan(0);
      expect(offered(ctx.jobId!).filter((t) => t.startsWith(`${MCP_MOCK.server}_`))).toEqual([]);
      expect(JSON.stringify(requestBodies(logDir, ctx.jobId!)[0] ?? {})).not.toContain(TOOL);
      expect(await writtenConfig(ctx)).not.toHaveProperty('mcp');
      expect(await readFile(join(ctx.outputDir, 'outputs/turn-1.stderr.txt'), 'utf8')).not.toContain('level=WARN');
    }
    expect(sansJob(await writtenConfig(empty))).toEqual(sansJob(await writtenConfig(plain)));
  }, 180_000);
});

describe('opencode MCP config (pure)', () => {
  const ctx = (over: Partial<EngineContext> = {}) => pureCtx('opencode', { PATH: '/usr/bin' }, over);

  it('local and remote entries; errors name the server', () => {
    expect(
      buildOpencodeMcp([
        { name: 'a', transport: 'stdio', command: 'node', args: ['s.js'], env: { K: 'v' } },
        { name: 'b', transport: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } },
        { name: 'c', transport: 'stdio', command: 'srv' },
      ]),
    ).toEqual({
      a: { type: 'local', command: ['node', 's.js'], environment: { K: 'v' } },
      b: { type: 'remote', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' }, oauth: false },
      c: { type: 'local', command: ['srv'], environment: {} },
    });
    expect(() => buildOpencodeMcp([{ name: 'a', transport: 'http' }])).toThrow(/`a`: an http server needs a url/);
    expect(() => buildOpencodeMcp([{ name: 'a', transport: 'stdio' }])).toThrow(/`a`: a stdio server needs a command/);
    expect(() => buildOpencodeMcp([{ name: 'a', transport: 'stdio', command: 'x' }, { name: 'a', transport: 'stdio', command: 'y' }])).toThrow(/given twice/);
  });

  it('the config: `mcp` only with servers, the same in both variants; the log flags only with servers', () => {
    const servers = [{ name: 's', transport: 'stdio' as const, command: 'srv' }];
    const none = buildOpencodeConfig(ctx(), 3);
    expect(none).not.toHaveProperty('mcp');
    expect(buildOpencodeConfig(ctx({ mcpServers: [] }), 3)).toEqual(none);
    const withS = buildOpencodeConfig(ctx({ mcpServers: servers }), 3);
    const withoutS = buildOpencodeConfig(ctx({ mcpServers: servers, variant: 'without_skill' }), 3);
    expect(withS.mcp).toEqual({ s: { type: 'local', command: ['srv'], environment: {} } });
    expect(withoutS.mcp).toEqual(withS.mcp);
    const { mcp: _mcp, ...rest } = withS;
    expect(rest).toEqual(none);
    expect(buildOpencodeArgs({ model: 'm', title: 't', mcpLogs: true }).slice(-3)).toEqual(['--print-logs', '--log-level', 'WARN']);
    expect(buildOpencodeArgs({ model: 'm', title: 't' }).join(' ')).not.toMatch(/print-logs|log-level/);
  });

  it('tool names: <server>_<tool> sanitised; back to {server, tool} with the configured names, longest server first', () => {
    expect(modelToolName('my_srv-2', 'get.the ticket')).toBe('my_srv-2_get_the_ticket');
    expect(mcpToolOf('my_srv-2_get_the_ticket', ['my_srv-2'])).toEqual({ server: 'my_srv-2', tool: 'get_the_ticket' });
    expect(mcpToolOf('a_b_c', ['a', 'a_b'])).toEqual({ server: 'a_b', tool: 'c' });
    expect(mcpToolOf('a_b_c', ['a'])).toEqual({ server: 'a', tool: 'b_c' });
    expect(mcpToolOf('bash', ['a'])).toBeUndefined();
    expect(mcpToolOf('a_', ['a'])).toBeUndefined();
    expect(mcpToolOf('ab_c', ['a'])).toBeUndefined();
  });

  it('secret values: env and header values except plain words under non-credential names', () => {
    expect(
      mcpSecretValues([
        { name: 'a', transport: 'stdio', command: 'x', env: { API_TOKEN: 'tok-0123456789', MODE: 'production' } },
        { name: 'b', transport: 'http', url: 'u', headers: { Authorization: 'Bearer abcdefghij', Accept: 'text/event-stream' } },
      ]),
    ).toEqual(['tok-0123456789', 'Bearer abcdefghij', 'text/event-stream']);
  });

  it('unavailable servers from the stderr log lines (captured sample), once each', async () => {
    const line = (await readFile(new URL('./samples/mcp-unavailable.stderr.txt', import.meta.url), 'utf8')).trim();
    expect(unavailableMcpServers(line)).toEqual([{ name: 'broken', status: 'failed' }]);
    expect(unavailableMcpServers(`${line}\n${line}\nother\n${line.replace('key=broken type=local', 'key=web type=remote').replace('failed', 'needs_auth')}`)).toEqual([
      { name: 'broken', status: 'failed' },
      { name: 'web', status: 'needs_auth' },
    ]);
    expect(unavailableMcpServers('level=INFO message=started')).toEqual([]);
    expect(unavailableMcpMessage([{ name: 'a', status: 'failed' }, { name: 'b', status: 'failed' }])).toBe('MCP servers `a` (failed), `b` (failed) could not be used: OpenCode logs it as "server unavailable"');
  });
});
