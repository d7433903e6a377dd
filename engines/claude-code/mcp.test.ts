/**
 * MCP servers on the REAL `claude` binary (@anthropic-ai/claude-code@2.1.332), offline: a
 * `skill-up mcp-mock` server (stdio, launched by claude; and streamable HTTP, started here)
 * and the scripted model, whose `mcp_tool` rule (guarded by `tool_listed`) calls the mock's tool by
 * the name claude offers it under.
 * Needs the built CLI (`npm run build`) for the mock. Nothing leaves 127.0.0.1.
 */
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClaudeArgs } from './adapter.js';
import { CLAUDE_MCP_CONFIG_FILE, buildClaudeMcpConfig, claudeMcpArgs, modelToolName } from './mcp.js';
import { parseStreamJson } from './parse.js';
import { mcpToolCallName } from '../../src/engine/mcp.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { realEngineHarness } from '../../test/support/engine.js';
import { MCP_MOCK, mcpCallScript, readCalls, requestBodies, startHttpMock, stdioMock, writeMockSpec } from '../../test/support/mcp-engine-kit.js';

const TOOL = modelToolName(MCP_MOCK.server, MCP_MOCK.tool);

/** The names in a request's "deferred tools … available via ToolSearch" list (a system message's text). */
function deferredTools(body: unknown): string[] {
  const texts: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') texts.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(body);
  const text = texts.find((t) => t.includes('deferred tools are now available via ToolSearch')) ?? '';
  return /ToolSearch[^\n]*:\n((?:[^\n]+\n)+)/.exec(text)?.[1]?.trim().split('\n') ?? [];
}

describe('claude_code MCP servers (real binary, scripted model, mcp-mock)', () => {
  const h = realEngineHarness('claude_code', 'claude_code-mcp-test');
  let model: ModelServer;
  let logDir: string;
  beforeAll(async () => {
    logDir = await mkdtemp(join(tmpdir(), 'skill-up-claude-mcp-log-'));
    model = await startModelServer({ script: parseModelScript(mcpCallScript(), 'claude-mcp.yaml'), logDir });
  });
  afterAll(async () => {
    await model?.close();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  /** The tool names claude sent in the job's first model request's `tools`. */
  const offered = (jobId: string) => model.requestsFor(jobId).find((e) => e.kind === 'generate')?.conversation?.toolsOffered ?? [];
  /** The job's first model request as JSON text (system prompt, messages, tools). */
  const firstRequest = (jobId: string) => JSON.stringify(requestBodies(logDir, jobId)[0] ?? {});
  /** A fresh job whose folder also holds the mock's spec and call log. */
  const jobWithMock = async () => {
    const ctx = await h.makeCtx({ modelBaseUrl: model.url });
    return { ctx, ...(await writeMockSpec(dirname(ctx.homeDir))) };
  };

  it('stdio: claude starts the mock, lists mcp__tickets__get_ticket, and the call is in the transcript and the mock log', async () => {
    const { ctx, config, log } = await jobWithMock();
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log, { TICKETS_TOKEN: 'sk-test-0123456789abcdef' })];
    const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
    expect(turn.error).toBeUndefined();
    // Claude Code's tool search defers MCP tools: the name is listed in the system prompt, not in `tools`.
    expect(offered(ctx.jobId!)).toContain('ToolSearch');
    expect(offered(ctx.jobId!)).not.toContain(TOOL);
    expect(deferredTools(requestBodies(logDir, ctx.jobId!)[0])).toContain(TOOL);
    // The server read the same list: `tool_listed` held (else rule `not-listed` answers), and the `mcp_tool` call went out under claude's name.
    const first = model.requestsFor(ctx.jobId!).find((e) => e.kind === 'generate')!;
    expect(first.trace).toMatchObject({ ruleName: 'call-mcp', step: 0 });
    expect(first.reply?.blocks).toMatchObject([{ type: 'tool_call', name: TOOL, input: MCP_MOCK.args }]);
    expect(turn.toolCalls).toEqual([{ name: mcpToolCallName(MCP_MOCK.server, MCP_MOCK.tool), input: MCP_MOCK.args, output: MCP_MOCK.answer, isError: false }]);
    expect(turn.finalText).toBe('Looked it up.');
    expect(readCalls(log)).toMatchObject([{ server: MCP_MOCK.server, tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer, isError: false }]);
    // The config (with the server's env, which may be a secret) is the owner's alone.
    const file = join(ctx.homeDir, 'claude-config', CLAUDE_MCP_CONFIG_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(buildClaudeMcpConfig(ctx.mcpServers));
    // The init line reports the server connected; the raw stream parses the same offline.
    const raw = await readFile(join(ctx.outputDir, turn.rawFiles[0]!), 'utf8');
    expect(raw).toContain('"mcp_servers":[{"name":"tickets","status":"connected"');
    expect(parseStreamJson(raw).toolCalls).toEqual(turn.toolCalls);
    await h.expectNoProcessLeft(ctx);
  });

  it('stdio: a tool error of the server is the call’s error output', async () => {
    const { ctx, config, log } = await jobWithMock();
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log)];
    const turn = await h.oneTurn(ctx, 'Please close ticket T-9');
    expect(turn.error).toBeUndefined();
    expect(turn.toolCalls).toEqual([{ name: mcpToolCallName(MCP_MOCK.server, MCP_MOCK.failingTool), input: MCP_MOCK.failingArgs, output: expect.any(String), isError: true }]);
    // What the model read: the server's error, then (the tool was deferred, never loaded) Claude Code's own hint.
    const [first, ...hint] = turn.toolCalls[0]!.output!.split('\n\n');
    expect(first).toBe(MCP_MOCK.failingAnswer);
    expect(hint.join('\n\n')).toMatch(/^This tool's input schema was not in your prompt when you called it\./);
    expect(readCalls(log)).toMatchObject([{ tool: MCP_MOCK.failingTool, arguments: MCP_MOCK.failingArgs, isError: true }]);
  });

  it('tool search off (suite env ENABLE_TOOL_SEARCH=false): the MCP tool is in the request’s tools', async () => {
    const { ctx, config, log } = await jobWithMock();
    ctx.suiteEnv = { ENABLE_TOOL_SEARCH: 'false' };
    ctx.mcpServers = [stdioMock(MCP_MOCK.server, config, log)];
    const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
    expect(turn.error).toBeUndefined();
    expect(offered(ctx.jobId!)).toContain(TOOL);
    expect(offered(ctx.jobId!)).not.toContain('ToolSearch');
    expect(turn.toolCalls.map((c) => c.name)).toEqual([TOOL]);
    expect(turn.finalText).toBe('Looked it up.');
  });

  it('http: claude connects to a running mock at its URL', async () => {
    const { ctx, config, log } = await jobWithMock();
    const mock = await startHttpMock(config, log);
    try {
      ctx.mcpServers = [{ name: MCP_MOCK.server, transport: 'http', url: mock.url, headers: { 'X-Test': 'yes' } }];
      const turn = await h.oneTurn(ctx, 'Please look up ticket T-7');
      expect(turn.error).toBeUndefined();
      expect(deferredTools(requestBodies(logDir, ctx.jobId!)[0])).toContain(TOOL);
      expect(turn.toolCalls).toEqual([{ name: mcpToolCallName(MCP_MOCK.server, MCP_MOCK.tool), input: MCP_MOCK.args, output: MCP_MOCK.answer, isError: false }]);
      expect(readCalls(log)).toMatchObject([{ tool: MCP_MOCK.tool, arguments: MCP_MOCK.args, result: MCP_MOCK.answer }]);
    } finally {
      await mock.stop();
    }
  });

  it('a server that cannot start: the turn is a crash naming it (Claude Code itself would run on without it)', async () => {
    const ctx = await h.makeCtx({ modelBaseUrl: model.url });
    ctx.mcpServers = [{ name: 'broken', transport: 'stdio', command: join(dirname(ctx.homeDir), 'no-such-server') }];
    const turn = await h.oneTurn(ctx, 'hello');
    expect(turn.error).toEqual({ kind: 'crash', message: 'MCP server `broken` (failed) could not be used: Claude Code reports it in its init line' });
    expect(turn.finalText).toBe('No tools needed.');
  });

  it('no servers (unset or []): no MCP file, no mcp__ tool anywhere in the request, the same settings.json', async () => {
    const plain = await h.makeCtx({ modelBaseUrl: model.url });
    const empty = await h.makeCtx({ modelBaseUrl: model.url });
    empty.mcpServers = [];
    for (const ctx of [plain, empty]) {
      const turn = await h.oneTurn(ctx, 'hello');
      expect(turn.error).toBeUndefined();
      expect(turn.finalText).toBe('No tools needed.');
      expect(firstRequest(ctx.jobId!)).not.toContain('mcp__');
      expect(await readdir(join(ctx.homeDir, 'claude-config'))).not.toContain(CLAUDE_MCP_CONFIG_FILE);
      expect(await readFile(join(ctx.outputDir, 'outputs/turn-1.stream.jsonl'), 'utf8')).toContain('"mcp_servers":[]');
    }
    const settings = async (ctx: typeof plain) => readFile(join(ctx.homeDir, 'claude-config', 'settings.json'), 'utf8');
    expect(await settings(empty)).toBe(await settings(plain));
  });
});

describe('claude_code MCP config (pure)', () => {
  it('stdio and http entries; flags only with a config file', () => {
    expect(
      buildClaudeMcpConfig([
        { name: 'a', transport: 'stdio', command: 'node', args: ['s.js'], env: { K: 'v' } },
        { name: 'b', transport: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } },
        { name: 'c', transport: 'stdio', command: 'srv' },
      ]),
    ).toEqual({
      mcpServers: {
        a: { type: 'stdio', command: 'node', args: ['s.js'], env: { K: 'v' } },
        b: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } },
        c: { type: 'stdio', command: 'srv', args: [], env: {} },
      },
    });
    expect(() => buildClaudeMcpConfig([{ name: 'a', transport: 'http' }])).toThrow(/`a`: an http server needs a url/);
    expect(() => buildClaudeMcpConfig([{ name: 'a', transport: 'stdio' }])).toThrow(/`a`: a stdio server needs a command/);
    expect(() => buildClaudeMcpConfig([{ name: 'a', transport: 'stdio', command: 'x' }, { name: 'a', transport: 'stdio', command: 'y' }])).toThrow(/given twice/);
    expect(claudeMcpArgs('/h/c/m.json')).toEqual(['--mcp-config', '/h/c/m.json', '--strict-mcp-config']);
    const withMcp = buildClaudeArgs({ prompt: '-x', maxTurns: 3, mcpConfigFile: '/h/c/m.json' }).args;
    expect(withMcp.slice(-5)).toEqual(['--mcp-config', '/h/c/m.json', '--strict-mcp-config', '--', '-x']);
    expect(buildClaudeArgs({ prompt: 'p', maxTurns: 3 }).args.join(' ')).not.toMatch(/mcp/);
    expect(modelToolName('s-1', 'do_it')).toBe('mcp__s-1__do_it');
  });

  it('the init line’s mcp_servers: failed or needs-auth is a crash naming them; connected is fine; a stream error wins', () => {
    const init = (servers: unknown) => JSON.stringify({ type: 'system', subtype: 'init', session_id: 's', mcp_servers: servers });
    const ok = '{"type":"result","is_error":false,"result":"x","session_id":"s"}';
    expect(parseStreamJson(`${init([{ name: 'a', status: 'connected' }])}\n${ok}`)).toMatchObject({ mcpServers: [{ name: 'a', status: 'connected' }], error: undefined });
    expect(parseStreamJson(`${init([{ name: 'a', status: 'failed' }, { name: 'b', status: 'needs-auth' }, { name: 'c', status: 'connected' }])}\n${ok}`).error).toEqual({
      kind: 'crash',
      message: 'MCP servers `a` (failed), `b` (needs-auth) could not be used: Claude Code reports it in its init line',
    });
    const maxTurns = '{"type":"result","is_error":true,"terminal_reason":"max_turns","num_turns":3,"session_id":"s"}';
    expect(parseStreamJson(`${init([{ name: 'a', status: 'failed' }])}\n${maxTurns}`).error?.kind).toBe('protocol');
    expect(parseStreamJson(ok).mcpServers).toBeUndefined();
  });
});
