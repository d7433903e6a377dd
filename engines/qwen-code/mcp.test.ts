/**
 * MCP servers on the REAL `qwen` binary (@qwen-code/qwen-code@0.24.4), offline: a
 * `skill-up mcp-mock` server launched by qwen over stdio, or started here over streamable
 * HTTP, and skill-up's scripted model, whose `mcp_tool` rule (guarded by `tool_listed`) calls
 * the mock's tool by the name qwen offers it under (mcp.ts `qwenModelToolName`). Needs the built CLI (`npm run build`) for the mock. The
 * binary comes from the global set-up, as for adapter.test.ts; never skipped.
 */
import { readFile, stat } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerLaunch } from '../../src/engine/mcp.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { pureCtx, realEngineHarness } from '../../test/support/engine.js';
import { MCP_MOCK, mcpCallScript, readCalls, startHttpMock, stdioMock, writeMockSpec, type HttpMock } from '../../test/support/mcp-engine-kit.js';
import { buildQwenEnv, buildQwenSettings } from './adapter.js';
import { buildQwenMcpServers, escapeQwenExpansion, qwenModelToolName } from './mcp.js';

/** An HTTP proxy in front of `target` (`http://127.0.0.1:<port>/mcp`) that records every request's headers. */
async function headerProxy(target: string): Promise<{ url: string; seen: IncomingHttpHeaders[]; server: Server }> {
  const t = new URL(target);
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const fwd = request({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers: { ...req.headers, host: t.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    fwd.on('error', () => res.destroy());
    req.pipe(fwd);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, seen, server };
}

describe('qwen_code MCP servers (real binary, scripted model, mcp-mock)', () => {
  const h = realEngineHarness('qwen_code', 'qwen_code-mcp-test');
  /** The script of each job (by job id): the server name differs per test. */
  const scripts = new Map<string, string>();
  let model: ModelServer;
  const http: HttpMock[] = [];

  beforeAll(async () => {
    model = await startModelServer({ script: ({ jobId }) => parseModelScript(scripts.get(jobId ?? '') ?? mcpCallScript(), 'mcp.yaml') });
  });
  afterAll(async () => {
    await model?.close();
    for (const m of http) await m.stop();
  });

  /** A job offering `servers`, whose model calls the tools of `server` (`mcpCallScript`; the server picks qwen's names for them). */
  async function mcpJob(servers: McpServerLaunch[], server: string) {
    const base = await h.makeCtx({ modelBaseUrl: model.url });
    const ctx = { ...base, mcpServers: servers };
    scripts.set(ctx.jobId!, mcpCallScript(server));
    return ctx;
  }

  it('stdio: qwen launches the mock, offers `mcp__<server>__<tool>`, the call reaches the mock and is recorded as mcp__<server>__<tool>', async () => {
    const server = 'help_desk';
    const { config, log } = await writeMockSpec(h.root, server);
    const name = qwenModelToolName(server, MCP_MOCK.tool);
    expect(name).toBe('mcp__help_desk__get_ticket');
    const ctx = await mcpJob([stdioMock(server, config, log)], server);
    const next = await h.session(ctx, 120_000);
    const turn = await next('look up ticket T-7 please');
    expect(turn.error).toBeUndefined();
    // The name qwen offered the model is the one modelToolName predicts.
    const first = model.requestsFor(ctx.jobId!)[0]!;
    expect(first.conversation?.toolsOffered).toContain(name);
    expect(first.conversation?.toolsOffered).toContain(qwenModelToolName(server, MCP_MOCK.failingTool));
    expect(first.trace).toMatchObject({ ruleName: 'call-mcp', step: 0 });
    expect(turn.toolCalls).toEqual([{ name: `mcp__${server}__${MCP_MOCK.tool}`, input: MCP_MOCK.args, output: MCP_MOCK.answer, isError: false }]);
    expect(turn.finalText).toBe('Looked it up.');
    expect(readCalls(log)).toMatchObject([{ server, tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer, isError: false }]);
    // A resumed turn reconnects; a tool error is the call's error.
    const failed = await next('close ticket T-9');
    expect(failed.error).toBeUndefined();
    expect(failed.toolCalls).toHaveLength(1);
    expect(failed.toolCalls[0]).toMatchObject({ name: `mcp__${server}__${MCP_MOCK.failingTool}`, input: MCP_MOCK.failingArgs, isError: true });
    expect(failed.toolCalls[0]!.output).toBe(MCP_MOCK.failingAnswer);
    expect(readCalls(log)[1]).toMatchObject({ tool: MCP_MOCK.failingTool, arguments: MCP_MOCK.failingArgs, isError: true });
    // The settings hold the server (env/header values may be secrets): readable by the job's user
    // only, still after qwen ran (it rewrites a file whose `$version` is old, with mode 0644).
    const file = join(ctx.homeDir, '.qwen', 'settings.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(ctx.homeDir, '.qwen'))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(file, 'utf8')).mcpServers[server]).toEqual({ command: process.execPath, args: stdioMock(server, config, log).args, trust: true, alwaysLoadTools: true });
  }, 180_000);

  it('http: qwen connects to a streamable HTTP mock; a header value with `$` arrives verbatim', async () => {
    const server = 'tickets-http';
    const { config, log } = await writeMockSpec(h.root, server);
    const mock = await startHttpMock(config, log);
    http.push(mock);
    const proxy = await headerProxy(mock.url);
    try {
      const secret = 'Bearer k$HOME-${PATH}\\$x';
      const ctx = await mcpJob([{ name: server, transport: 'http', url: proxy.url, headers: { 'X-Api-Key': secret } }], server);
      const turn = await h.oneTurn(ctx, 'look up ticket T-7 over http', 120_000);
      expect(turn.error).toBeUndefined();
      expect(turn.toolCalls).toEqual([{ name: `mcp__${server}__${MCP_MOCK.tool}`, input: MCP_MOCK.args, output: MCP_MOCK.answer, isError: false }]);
      expect(readCalls(log)).toMatchObject([{ server, tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer }]);
      expect(proxy.seen.length).toBeGreaterThan(0);
      expect(proxy.seen.every((hd) => hd['x-api-key'] === secret)).toBe(true);
      const settings = JSON.parse(await readFile(join(ctx.homeDir, '.qwen', 'settings.json'), 'utf8'));
      expect(settings.mcpServers[server]).toEqual({ httpUrl: proxy.url, headers: { 'X-Api-Key': escapeQwenExpansion(secret) }, trust: true, alwaysLoadTools: true });
    } finally {
      proxy.server.close();
    }
  }, 180_000);

  it('stdio env: a value with `$` reaches the server unexpanded', async () => {
    const server = 'envcheck';
    const { config, log } = await writeMockSpec(h.root, server);
    const dump = join(h.root, 'envcheck.txt');
    // A wrapper that records the variable, then runs the mock.
    const launch: McpServerLaunch = {
      name: server,
      transport: 'stdio',
      command: '/bin/sh',
      // `$MOCK_SECRET` and `$HOME` in args must reach sh as written too.
      args: ['-c', `printf %s "$MOCK_SECRET" > '${dump}'; printf %s '$HOME' >> '${dump}'; exec "$0" "$@"`, stdioMock(server, config, log).command!, ...stdioMock(server, config, log).args!],
      env: { MOCK_SECRET: 'a$HOME-${PATH}\\$x' },
    };
    const ctx = await mcpJob([launch], server);
    const turn = await h.oneTurn(ctx, 'look up ticket T-7 with env', 120_000);
    expect(turn.error).toBeUndefined();
    expect(await readFile(dump, 'utf8')).toBe('a$HOME-${PATH}\\$x$HOME');
    expect(turn.toolCalls.map((c) => c.name)).toEqual([`mcp__${server}__${MCP_MOCK.tool}`]);
  }, 180_000);

  it('without servers: settings.json has no MCP key and keeps its mode; with them only `mcpServers` is added', async () => {
    const plain = await h.makeCtx({ modelBaseUrl: model.url });
    await h.adapter.prepare(plain);
    const file = join(plain.homeDir, '.qwen', 'settings.json');
    const without = JSON.parse(await readFile(file, 'utf8'));
    expect(JSON.stringify(without)).not.toMatch(/mcp/i);
    expect((await stat(file)).mode & 0o777).not.toBe(0o600);
    const { config, log } = await writeMockSpec(h.root, 'cmp');
    const withCtx = { ...(await h.makeCtx({ modelBaseUrl: model.url })), mcpServers: [stdioMock('cmp', config, log)] };
    await h.adapter.prepare(withCtx);
    const withServers = JSON.parse(await readFile(join(withCtx.homeDir, '.qwen', 'settings.json'), 'utf8'));
    // `$version` keeps qwen from rewriting the file (and its 0600 mode) on load.
    const { mcpServers, $version, ...rest } = withServers;
    expect(rest).toEqual(without);
    expect($version).toBe(4);
    expect(Object.keys(mcpServers)).toEqual(['cmp']);
  });
});

describe('qwen_code MCP (pure parts)', () => {
  it('settings: stdio and http entries, every `$` escaped, none without servers', () => {
    const D = '${SKILL_UP_LITERAL_DOLLAR}';
    expect(buildQwenMcpServers(undefined)).toBeUndefined();
    expect(buildQwenMcpServers([])).toBeUndefined();
    expect(
      buildQwenMcpServers([
        { name: 'a', transport: 'stdio', command: 'node', args: ['s.js', '$X'], env: { TOKEN: 'p$w' } },
        { name: 'b', transport: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer ${T}' } },
        { name: 'c', transport: 'stdio', command: 'srv' },
      ]),
    ).toEqual({
      a: { command: 'node', args: ['s.js', `${D}X`], env: { TOKEN: `p${D}w` }, trust: true, alwaysLoadTools: true },
      b: { httpUrl: 'http://127.0.0.1:1/mcp', headers: { Authorization: `Bearer ${D}{T}` }, trust: true, alwaysLoadTools: true },
      c: { command: 'srv', args: [], trust: true, alwaysLoadTools: true },
    });
    expect(() => buildQwenMcpServers([{ name: 'x', transport: 'http' }])).toThrow(/`x`.*url/);
    expect(() => buildQwenMcpServers([{ name: 'y', transport: 'stdio' }])).toThrow(/`y`.*command/);
    expect(escapeQwenExpansion('$$&')).toBe(`${D}${D}&`);
  });

  it('settings and env of a job: MCP only when the context has servers, the same for both variants', () => {
    const servers: McpServerLaunch[] = [{ name: 's', transport: 'stdio', command: 'srv' }];
    expect(buildQwenSettings(true)).not.toHaveProperty('mcpServers');
    expect(buildQwenSettings(true, [])).toEqual(buildQwenSettings(true));
    const { mcpServers, $version, ...rest } = buildQwenSettings(true, servers);
    expect(rest).toEqual(buildQwenSettings(true));
    expect($version).toBe(4);
    expect(mcpServers).toEqual({ s: { command: 'srv', args: [], trust: true, alwaysLoadTools: true } });
    expect(buildQwenEnv(pureCtx('qwen_code', { SKILL_UP_LITERAL_DOLLAR: 'x' }), '/h/.qwen').SKILL_UP_LITERAL_DOLLAR).toBeUndefined();
    expect(buildQwenEnv(pureCtx('qwen_code', {}, { mcpServers: servers, variant: 'with_skill' }), '/h/.qwen').SKILL_UP_LITERAL_DOLLAR).toBe('$');
    expect(buildQwenEnv(pureCtx('qwen_code', {}, { mcpServers: servers, variant: 'without_skill' }), '/h/.qwen').SKILL_UP_LITERAL_DOLLAR).toBe('$');
  });

  it('model tool names follow qwen’s normalizeToolNameForProvider', () => {
    expect(qwenModelToolName('tickets', 'get_ticket')).toBe('mcp__tickets__get_ticket');
    expect(qwenModelToolName('a__b', 't')).toBe('mcp__a__b__t');
    const odd = qwenModelToolName('s', 'a.b');
    expect(odd).toMatch(/^mcp__s__a_b_[0-9a-z]{7,}$/);
    const long = qwenModelToolName('server', 'x'.repeat(80));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^mcp__server__x+_[0-9a-z]{7,}$/);
  });
});
