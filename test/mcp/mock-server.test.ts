/**
 * The mocked MCP server in-process, driven by the SDK's own client: in memory for the tools'
 * behaviour, and over streamable HTTP once. Filesystem confinement (`..`, absolute paths,
 * links to a file or a parent folder outside), size caps, canned answers, the call log.
 */
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES, MAX_LIST_ENTRIES } from '../../src/mcp/mock/filesystem.js';
import { MAX_LOGGED_CHARS } from '../../src/mcp/mock/log.js';
import { createMockMcp, serveHttp } from '../../src/mcp/mock/server.js';
import type { MockServerSpec } from '../../src/mcp/mock/spec.js';
import { callText, inMemoryClient } from './helpers.js';

let base: string;
let root: string;
let outside: string;
const clients: Client[] = [];

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'su-mcp-'));
  root = join(base, 'workspace');
  outside = join(base, 'outside');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'README.md'), 'hello\n');
  writeFileSync(join(root, 'src', 'a.py'), 'print(1)\n');
  writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET');
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
});

async function connect(spec: MockServerSpec): Promise<Client> {
  const c = await inMemoryClient(await createMockMcp(spec));
  clients.push(c);
  return c;
}

const TICKETS: MockServerSpec = {
  name: 'tickets',
  tool_responses: {
    get_ticket: {
      description: 'Look up a ticket by id',
      input_schema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      responses: [
        { when: { id: 'T-1' }, response: { id: 'T-1', status: 'open' } },
        { when: { id: 'T-2', filter: { state: ['open', 'closed'] } }, response: 'T-2 with filter' },
        { when: { id: 'T-2' }, response: 'T-2 for {{params.user | default:"anyone"}}' },
      ],
      default: "ticket {{params.id}} not found in {{params.project | default:'main'}}",
    },
    no_default: { responses: [{ when: { q: 1 }, response: 'one' }] },
  },
};

describe('builtin: filesystem', () => {
  it('lists its three tools with input schemas', async () => {
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(['list_directory', 'read_file', 'write_file']);
    expect(tools.find((t) => t.name === 'write_file')!.inputSchema.required).toEqual(['path', 'content']);
  });

  it('lists, reads and writes inside the root (parents created, absolute paths inside accepted)', async () => {
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    expect(await callText(c, 'list_directory', { path: '.' })).toEqual({ text: '[FILE] README.md\n[DIR] src', isError: false });
    expect(await callText(c, 'read_file', { path: 'src/a.py' })).toEqual({ text: 'print(1)\n', isError: false });
    expect(await callText(c, 'read_file', { path: join(root, 'README.md') })).toEqual({ text: 'hello\n', isError: false });
    const w = await callText(c, 'write_file', { path: 'out/deep/new.txt', content: 'héllo' });
    expect(w).toEqual({ text: 'wrote 6 bytes to out/deep/new.txt', isError: false });
    expect(readFileSync(join(root, 'out/deep/new.txt'), 'utf8')).toBe('héllo');
    expect((await callText(c, 'list_directory', { path: 'out/deep' })).text).toBe('[FILE] new.txt');
  });

  it.each([
    ['../outside/secret.txt', 'resolves to'],
    ['src/../../outside/secret.txt', 'resolves to'],
    ['/etc/passwd', 'resolves to'],
  ])('refuses read_file %s, naming the path', async (p, how) => {
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    const r = await callText(c, 'read_file', { path: p });
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`\`${p}\``);
    expect(r.text).toContain(how);
    expect(r.text).not.toContain('TOP SECRET');
  });

  it('refuses a link inside the root pointing to a file outside, for reading and writing', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    const r = await callText(c, 'read_file', { path: 'link.txt' });
    expect(r).toMatchObject({ isError: true });
    expect(r.text).toContain('`link.txt` leads through a symbolic link to');
    expect((await callText(c, 'write_file', { path: 'link.txt', content: 'pwned' })).isError).toBe(true);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
  });

  it('refuses a symlinked parent folder pointing outside, for list, read and write (also of a new file)', async () => {
    symlinkSync(outside, join(root, 'escape'));
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    for (const [tool, args] of [
      ['list_directory', { path: 'escape' }],
      ['read_file', { path: 'escape/secret.txt' }],
      ['write_file', { path: 'escape/new.txt', content: 'x' }],
      ['write_file', { path: 'escape/sub/new.txt', content: 'x' }],
    ] as const) {
      const r = await callText(c, tool, args);
      expect(r.isError, `${tool} ${args.path}`).toBe(true);
      expect(r.text).toContain(`\`${args.path}\``);
      expect(r.text).toContain('symbolic link');
    }
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'sub'))).toBe(false);
  });

  it('follows a link that stays inside the root', async () => {
    symlinkSync(join(root, 'src'), join(root, 'code'));
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    expect(await callText(c, 'read_file', { path: 'code/a.py' })).toEqual({ text: 'print(1)\n', isError: false });
  });

  it('refuses files over 1 MiB for reading and writing, and says so', async () => {
    writeFileSync(join(root, 'big.bin'), Buffer.alloc(MAX_FILE_BYTES + 1, 97));
    writeFileSync(join(root, 'edge.txt'), Buffer.alloc(MAX_FILE_BYTES, 98));
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    const big = await callText(c, 'read_file', { path: 'big.bin' });
    expect(big.isError).toBe(true);
    expect(big.text).toContain('1 MiB');
    expect((await callText(c, 'read_file', { path: 'edge.txt' })).text).toHaveLength(MAX_FILE_BYTES);
    const w = await callText(c, 'write_file', { path: 'w.txt', content: 'x'.repeat(MAX_FILE_BYTES + 1) });
    expect(w.isError).toBe(true);
    expect(w.text).toContain('1 MiB');
    expect(existsSync(join(root, 'w.txt'))).toBe(false);
  });

  it('lists at most 1,000 entries and says when it cut', async () => {
    mkdirSync(join(root, 'many'));
    for (let i = 0; i < MAX_LIST_ENTRIES + 5; i++) writeFileSync(join(root, 'many', `f${i}`), '');
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    const lines = (await callText(c, 'list_directory', { path: 'many' })).text.split('\n');
    expect(lines).toHaveLength(MAX_LIST_ENTRIES + 1);
    expect(lines.at(-1)).toBe('(listing cut at 1000 entries: the folder has more)');
  });

  it('answers bad arguments and missing files with tool errors', async () => {
    const c = await connect({ name: 'fs', builtin: 'filesystem', root });
    expect(await callText(c, 'read_file', {})).toEqual({ text: 'argument `path` must be a string, got nothing', isError: true });
    expect(await callText(c, 'write_file', { path: 'x.txt' })).toEqual({ text: 'argument `content` must be a string, got nothing', isError: true });
    expect(await callText(c, 'read_file', { path: 'nope.txt' })).toEqual({ text: 'path `nope.txt` does not exist', isError: true });
    expect(await callText(c, 'read_file', { path: 'src' })).toMatchObject({ isError: true });
  });
});

describe('tool_responses', () => {
  it('lists each tool with its description and schema, or an open object schema by default', async () => {
    const c = await connect(TICKETS);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).toEqual(['get_ticket', 'no_default']);
    expect(tools[0]).toMatchObject({ description: 'Look up a ticket by id', inputSchema: { type: 'object', required: ['id'] } });
    expect(tools[1]!.inputSchema).toEqual({ type: 'object', additionalProperties: true });
  });

  it('answers the first matching `when` (deep equal per key), else the default template', async () => {
    const c = await connect(TICKETS);
    expect(JSON.parse((await callText(c, 'get_ticket', { id: 'T-1', extra: true })).text)).toEqual({ id: 'T-1', status: 'open' });
    // Key order of an object argument does not matter; a different array does.
    expect((await callText(c, 'get_ticket', { id: 'T-2', filter: { state: ['open', 'closed'] } })).text).toBe('T-2 with filter');
    expect((await callText(c, 'get_ticket', { id: 'T-2', filter: { state: ['closed', 'open'] }, user: 'ann' })).text).toBe('T-2 for ann');
    expect((await callText(c, 'get_ticket', { id: 'T-2' })).text).toBe('T-2 for anyone');
    expect(await callText(c, 'get_ticket', { id: 'T-9', project: 'web' })).toEqual({ text: 'ticket T-9 not found in web', isError: false });
    expect((await callText(c, 'get_ticket', { id: 1 })).text).toBe('ticket 1 not found in main');
  });

  it('is a tool error without a match or default, and for an unknown tool', async () => {
    const c = await connect(TICKETS);
    expect((await callText(c, 'no_default', { q: 1 })).text).toBe('one');
    expect(await callText(c, 'no_default', { q: '1' })).toEqual({ text: 'no response configured for no_default with these arguments', isError: true });
    expect(await callText(c, 'delete_all', {})).toEqual({ text: 'unknown tool `delete_all`; tickets offers: get_ticket, no_default', isError: true });
  });

  it('serves canned tools beside the filesystem mock', async () => {
    const c = await connect({ name: 'both', builtin: 'filesystem', root, tool_responses: { ping: { default: 'pong' } } });
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['list_directory', 'read_file', 'write_file', 'ping']);
    expect((await callText(c, 'ping')).text).toBe('pong');
  });

  it('refuses an invalid spec passed in-process, listing the problems', async () => {
    await expect(createMockMcp({ name: 'x y', tool_responses: { t: { default: '{{oops}}' } } })).rejects.toThrow(/name: .*not a server name.*tool_responses\.t\.default: placeholder `\{\{oops\}\}`/);
    await expect(createMockMcp({ name: 'fs', builtin: 'filesystem' })).rejects.toThrow('root:');
  });
});

describe('call log', () => {
  it('appends one bounded JSON line per call, with how the answer was chosen', async () => {
    const log = join(base, 'logs', 'calls.jsonl');
    const c = await connect({ ...TICKETS, log_file: log });
    await callText(c, 'get_ticket', { id: 'T-1' });
    await callText(c, 'get_ticket', { id: 'T-2', note: 'x'.repeat(MAX_LOGGED_CHARS) });
    await callText(c, 'no_default', {});
    await callText(c, 'nope', {});
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatchObject({ server: 'tickets', tool: 'get_ticket', arguments: { id: 'T-1' }, isError: false, matched: 'responses[0]' });
    expect(JSON.parse(lines[0]!.result as string)).toEqual({ id: 'T-1', status: 'open' });
    expect(Number.isNaN(Date.parse(lines[0]!.ts as string))).toBe(false);
    expect(lines[1]).toMatchObject({ matched: 'responses[2]', result: 'T-2 for anyone' });
    expect(lines[1]!.arguments).toBeUndefined();
    expect((lines[1]!.arguments_cut as string).length).toBe(MAX_LOGGED_CHARS);
    expect(lines[2]).toMatchObject({ tool: 'no_default', isError: true, result: 'no response configured for no_default with these arguments' });
    expect(lines[3]).toMatchObject({ tool: 'nope', isError: true });
  });

  it('records template arguments that were missing without a default', async () => {
    const log = join(base, 'calls.jsonl');
    const c = await connect({ name: 'm', tool_responses: { t: { default: 'a={{params.a}}' } }, log_file: log });
    expect((await callText(c, 't')).text).toBe('a=');
    expect(JSON.parse(readFileSync(log, 'utf8'))).toMatchObject({ missing_params: ['a'], result: 'a=' });
  });

  it('cuts a long result to 64 KiB in the log, not in the answer', async () => {
    writeFileSync(join(root, 'long.txt'), 'y'.repeat(MAX_LOGGED_CHARS * 2));
    const log = join(base, 'calls.jsonl');
    const c = await connect({ name: 'fs', builtin: 'filesystem', root, log_file: log });
    expect((await callText(c, 'read_file', { path: 'long.txt' })).text).toHaveLength(MAX_LOGGED_CHARS * 2);
    const line = JSON.parse(readFileSync(log, 'utf8')) as { result: string };
    expect(line.result).toHaveLength(MAX_LOGGED_CHARS);
    expect(line.result.endsWith('…')).toBe(true);
  });

  it('keeps answering when the log cannot be written, and counts the lost lines', async () => {
    const ro = join(base, 'ro');
    mkdirSync(ro);
    chmodSync(ro, 0o500);
    const mock = await createMockMcp({ ...TICKETS, log_file: join(ro, 'sub', 'calls.jsonl') });
    const c = await inMemoryClient(mock);
    clients.push(c);
    // root ignores permissions: the test can only show the failure as another user.
    const isRoot = process.getuid?.() === 0;
    expect((await callText(c, 'get_ticket', { id: 'T-9' })).text).toBe('ticket T-9 not found in main');
    expect((await callText(c, 'get_ticket', { id: 'T-8' })).isError).toBe(false);
    if (!isRoot) {
      expect(mock.log!.failures).toBe(2);
      expect(mock.log!.firstError).toBe('EACCES');
    }
  });

  it('counts lost lines when the log path is a folder (also as root)', async () => {
    const mock = await createMockMcp({ ...TICKETS, log_file: root });
    const c = await inMemoryClient(mock);
    clients.push(c);
    expect((await callText(c, 'get_ticket', { id: 'T-1' })).isError).toBe(false);
    expect(mock.log!.failures).toBe(1);
    expect(mock.log!.firstError).toBe('EISDIR');
  });
});

describe('streamable HTTP', () => {
  it('serves on 127.0.0.1 to several SDK clients, and refuses other hosts and methods', async () => {
    const log = join(base, 'http.jsonl');
    const http = await serveHttp(await createMockMcp({ ...TICKETS, builtin: 'filesystem', root, log_file: log }), 0);
    try {
      expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      const a = new Client({ name: 'a', version: '0' });
      const b = new Client({ name: 'b', version: '0' });
      await a.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      await b.connect(new StreamableHTTPClientTransport(new URL(http.url)));
      clients.push(a, b);
      expect((await a.listTools()).tools).toHaveLength(5);
      expect((await callText(a, 'get_ticket', { id: 'T-7' })).text).toBe('ticket T-7 not found in main');
      expect((await callText(b, 'read_file', { path: 'README.md' })).text).toBe('hello\n');
      expect((await callText(b, 'read_file', { path: '../outside/secret.txt' })).isError).toBe(true);
      expect(readFileSync(log, 'utf8').trimEnd().split('\n')).toHaveLength(3);

      // fetch cannot set Host: a raw request as a DNS-rebinding page's would arrive.
      const evil = await new Promise<number>((resolve, reject) => {
        const req = request(http.url, { method: 'POST', headers: { host: `evil.example:${http.port}`, 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end('{}');
      });
      expect(evil).toBe(403);
      expect((await fetch(http.url, { method: 'GET' })).status).toBe(405);
      expect((await fetch(http.url.replace('/mcp', '/other'), { method: 'POST' })).status).toBe(404);
    } finally {
      await http.close();
    }
  });

  it('reports a port in use', async () => {
    const first = await serveHttp(await createMockMcp(TICKETS), 0);
    try {
      await expect(serveHttp(await createMockMcp(TICKETS), first.port)).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});
