/**
 * MCP servers on the REAL `codex` binary (@openai/codex@0.171.0), offline: a `skill-up mcp-mock`
 * server (stdio, launched by codex; and streamable HTTP, started here) and the scripted model
 * (OpenAI Responses protocol). Codex addresses an MCP tool as function `<tool>` in namespace
 * `mcp__<server>` (mcp.ts, modelToolAddress, the engine's `model.mcpTool`); the script's
 * `mcp_tool` action goes out as `function_call {namespace, name}`, and its `tool_listed` guard
 * reads the deferred namespace (gpt-5.5) or the `{type: "namespace"}` tool (a model codex has no
 * metadata for). Needs the built CLI (`npm run build`) for the mock. Nothing leaves 127.0.0.1.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCodexConfig } from './adapter.js';
import { buildCodexMcpToml, modelToolAddress, modelToolName } from './mcp.js';
import { parseCodexJson } from './parse.js';
import { mcpToolCallName } from '../../src/engine/mcp.js';
import type { EngineContext } from '../../src/engine/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { engineConfig, pureCtx, realEngineHarness } from '../../test/support/engine.js';
import { MCP_MOCK, mcpCallScript, readCalls, requestBodies, startHttpMock, stdioMock, writeMockSpec } from '../../test/support/mcp-engine-kit.js';

/** Every string in a request body, for finding a developer message's text. */
function texts(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => texts(x, out));
  else if (v && typeof v === 'object') Object.values(v).forEach((x) => texts(x, out));
  return out;
}

describe('codex MCP servers (real binary, scripted model, mcp-mock)', () => {
  const h = realEngineHarness('codex', 'codex-mcp-test');
  let model: ModelServer;
  let logDir: string;
  beforeAll(async () => {
    logDir = await mkdtemp(join(tmpdir(), 'skill-up-codex-mcp-log-'));
    model = await startModelServer({ script: parseModelScript(mcpCallScript(), 'codex-mcp.yaml'), logDir });
  });
  afterAll(async () => {
    await model?.close();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  /** A fresh job whose folder also holds the mock's spec and call log. */
  const jobWithMock = async () => {
    const ctx = await h.makeCtx({ modelBaseUrl: model.url });
    return { ctx, ...(await writeMockSpec(dirname(ctx.homeDir))) };
  };
  const firstRequest = (ctx: EngineContext) => requestBodies(logDir, ctx.jobId!)[0] ?? {};
  const expectedCall = { name: mcpToolCallName(MCP_MOCK.server, MCP_MOCK.tool), input: MCP_MOCK.args, output: MCP_MOCK.answer, isError: false };

  it('stdio: codex starts the mock, lists its namespace, and the call is in the transcript and the mock log', async () => {
    const { ctx, config, log } = await jobWithMock();
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log, { TICKETS_TOKEN: 'sk-test-0123456789abcdef' })];
    const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
    expect(turn.error).toBeUndefined();
    // gpt-5.5: MCP tools are deferred behind tool_search; the namespace is named in a developer message.
    const body = firstRequest(ctx) as { tools?: { type: string }[] };
    expect(body.tools?.map((t) => t.type)).toContain('tool_search');
    expect(texts(body).find((t) => t.includes('Deferred tool namespaces:'))).toContain(`- ${modelToolAddress(MCP_MOCK.server, MCP_MOCK.tool).namespace}\n`);
    // The server read the deferred namespace (`tool_listed` held, else rule `not-listed` answers) and sent the call namespaced.
    const [first, second] = model.requestsFor(ctx.jobId!).filter((e) => e.kind === 'generate');
    expect(first!.trace).toMatchObject({ ruleName: 'call-mcp', step: 0 });
    expect(first!.reply?.blocks).toMatchObject([{ type: 'tool_call', namespace: 'mcp__tickets', name: 'get_ticket', input: MCP_MOCK.args }]);
    expect(second!.trace).toMatchObject({ ruleName: 'call-mcp', step: 1 });
    expect(turn.toolCalls).toEqual([expectedCall]);
    expect(turn.finalText).toBe('Looked it up.');
    expect(readCalls(log)).toMatchObject([{ server: MCP_MOCK.server, tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer, isError: false }]);
    // config.toml holds the server's env (maybe a secret): the owner's alone.
    const file = join(ctx.homeDir, 'codex-home', 'config.toml');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, 'utf8')).toContain(buildCodexMcpToml(ctx.mcpServers));
    expect(parseCodexJson(await readFile(join(ctx.outputDir, turn.rawFiles[0]!), 'utf8')).toolCalls).toEqual(turn.toolCalls);
    await h.expectNoProcessLeft(ctx);
  });

  it('stdio: a tool error of the server is the call’s error output', async () => {
    const { ctx, config, log } = await jobWithMock();
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log)];
    const turn = await h.oneTurn(ctx, 'Please close ticket T-9');
    expect(turn.error).toBeUndefined();
    expect(turn.toolCalls).toEqual([{ name: mcpToolCallName(MCP_MOCK.server, MCP_MOCK.failingTool), input: MCP_MOCK.failingArgs, output: MCP_MOCK.failingAnswer, isError: true }]);
    expect(readCalls(log)).toMatchObject([{ tool: MCP_MOCK.failingTool, arguments: MCP_MOCK.failingArgs, isError: true }]);
  });

  it('http: codex connects to a running mock at its URL', async () => {
    const { ctx, config, log } = await jobWithMock();
    const mock = await startHttpMock(config, log);
    try {
      ctx.mcpServers = [{ name: MCP_MOCK.server, transport: 'http', url: mock.url, headers: { 'X-Test': 'yes' } }];
      const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
      expect(turn.error).toBeUndefined();
      expect(turn.toolCalls).toEqual([expectedCall]);
      expect(readCalls(log)).toMatchObject([{ tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer }]);
    } finally {
      await mock.stop();
    }
  });

  it('a model codex has no metadata for: the namespace is in `tools`, and the namespaced call works the same', async () => {
    const { ctx, config, log } = await jobWithMock();
    ctx.engine = engineConfig('codex', { model: { provider: 'scripted', name: 'scripted-model' } });
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log)];
    const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
    expect(turn.error).toBeUndefined();
    const body = firstRequest(ctx) as { tools?: { type: string; name?: string; tools?: { name: string }[] }[] };
    const ns = body.tools?.find((t) => t.type === 'namespace' && t.name === 'mcp__tickets');
    expect(ns?.tools?.map((t) => t.name)).toContain(MCP_MOCK.tool);
    expect(texts(body).some((t) => t.includes('Deferred tool namespaces:'))).toBe(false);
    const first = model.requestsFor(ctx.jobId!).find((e) => e.kind === 'generate')!;
    expect(first.conversation?.toolsOffered).toContain(modelToolName(MCP_MOCK.server, MCP_MOCK.tool));
    expect(first.trace).toMatchObject({ ruleName: 'call-mcp', step: 0 });
    expect(turn.toolCalls).toEqual([expectedCall]);
    expect(turn.finalText).toBe('Looked it up.');
    expect(readCalls(log)).toMatchObject([{ tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer }]);
  });

  it('a server that cannot start: the turn is a crash naming it (required = true)', async () => {
    const ctx = await h.makeCtx({ modelBaseUrl: model.url });
    ctx.mcpServers = [{ name: 'broken', transport: 'stdio', command: join(dirname(ctx.homeDir), 'no-such-server') }];
    const turn = await h.oneTurn(ctx, 'hello');
    expect(turn.error?.kind).toBe('crash');
    expect(turn.error?.message).toContain('required MCP servers failed to initialize: broken: No such file or directory');
    expect(model.requestsFor(ctx.jobId!)).toEqual([]);
  });

  it('no servers (unset or []): the same config.toml, no MCP namespace in the request', async () => {
    const plain = await h.makeCtx({ modelBaseUrl: model.url });
    const empty = await h.makeCtx({ modelBaseUrl: model.url });
    empty.mcpServers = [];
    for (const ctx of [plain, empty]) {
      const turn = await h.oneTurn(ctx, 'hello');
      expect(turn.error).toBeUndefined();
      expect(turn.finalText).toBe('No tools needed.');
      expect(texts(firstRequest(ctx)).some((t) => t.includes('mcp__'))).toBe(false);
    }
    const config = async (ctx: EngineContext) => (await readFile(join(ctx.homeDir, 'codex-home', 'config.toml'), 'utf8')).replace(ctx.jobId!, 'JOB');
    expect(await config(empty)).toBe(await config(plain));
    expect(await config(plain)).not.toMatch(/mcp/i);
  });
});

describe('codex MCP config (pure)', () => {
  it('[mcp_servers.<name>] tables: stdio command/args/env, http url/http_headers, approval and timeout', () => {
    expect(
      buildCodexMcpToml([
        { name: 'a', transport: 'stdio', command: 'node', args: ['s.js', 'say "hi"'], env: { K: 'v', 'X.Y': 'w' } },
        { name: 'b-2', transport: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } },
        { name: 'c', transport: 'stdio', command: 'srv' },
      ]),
    ).toBe(
      [
        '[mcp_servers.a]',
        'command = "node"',
        'args = ["s.js", "say \\"hi\\""]',
        'env = { K = "v", "X.Y" = "w" }',
        'startup_timeout_sec = 30',
        'default_tools_approval_mode = "approve"',
        'required = true',
        '',
        '[mcp_servers.b-2]',
        'url = "http://127.0.0.1:9/mcp"',
        'http_headers = { Authorization = "Bearer x" }',
        'startup_timeout_sec = 30',
        'default_tools_approval_mode = "approve"',
        'required = true',
        '',
        '[mcp_servers.c]',
        'command = "srv"',
        'args = []',
        'startup_timeout_sec = 30',
        'default_tools_approval_mode = "approve"',
        'required = true',
        '',
      ].join('\n'),
    );
    expect(() => buildCodexMcpToml([{ name: 'a', transport: 'http' }])).toThrow(/`a`: an http server needs a url/);
    expect(() => buildCodexMcpToml([{ name: 'a', transport: 'stdio' }])).toThrow(/`a`: a stdio server needs a command/);
    expect(() => buildCodexMcpToml([{ name: 'a', transport: 'stdio', command: 'x' }, { name: 'a', transport: 'stdio', command: 'y' }])).toThrow(/given twice/);
    expect(modelToolAddress('s-1', 'do_it')).toEqual({ namespace: 'mcp__s-1', name: 'do_it' });
    expect(modelToolName('s-1', 'do_it')).toBe('mcp__s-1__do_it');
  });

  it('buildCodexConfig: the tables only with servers; identical for both variants', () => {
    const servers = [{ name: 'a', transport: 'stdio' as const, command: 'node' }];
    const none = buildCodexConfig(pureCtx('codex', {}));
    expect(none).not.toMatch(/mcp/i);
    expect(buildCodexConfig(pureCtx('codex', {}, { mcpServers: [] }))).toBe(none);
    const withSkill = buildCodexConfig(pureCtx('codex', {}, { mcpServers: servers }));
    expect(withSkill).toContain('\n[mcp_servers.a]\ncommand = "node"\n');
    expect(buildCodexConfig(pureCtx('codex', {}, { mcpServers: servers, variant: 'without_skill' }))).toBe(withSkill);
  });
});
