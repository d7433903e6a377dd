/**
 * `skill-up mcp-mock` through the built CLI (`npm run build` first): as the stdio command an
 * engine launches (driven by the SDK's stdio client; stdout carries only the protocol), over
 * streamable HTTP until SIGTERM, and bad input (exit 2, one message naming file and field).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../cli/helpers.js';
import { callText } from './helpers.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'su-mcp-cli-'));
  mkdirSync(join(dir, 'ws'));
  writeFileSync(join(dir, 'ws', 'notes.txt'), 'from the workspace');
});

const SPEC_YAML = `name: tickets
builtin: filesystem
root: ws
log_file: logs/calls.jsonl
tool_responses:
  get_ticket:
    description: Look up a ticket
    input_schema: {type: object, properties: {id: {type: string}}}
    responses:
      - when: {id: T-1}
        response: {id: T-1, status: open}
    default: "ticket {{params.id}} not found ({{params.project | default:'main'}})"
`;

describe('skill-up mcp-mock over stdio', () => {
  it('serves the SDK stdio client: tools, filesystem in root, templates, log beside the spec', async () => {
    const config = join(dir, 'tickets.yaml');
    writeFileSync(config, SPEC_YAML);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp-mock', '--config', config], stderr: 'pipe', cwd: tmpdir() });
    let stderr = '';
    transport.stderr?.on('data', (d) => (stderr += String(d)));
    const client = new Client({ name: 'cli-test', version: '0' });
    // A line on stdout that is not JSON-RPC would surface here as a transport error.
    const errors: Error[] = [];
    client.onerror = (e) => errors.push(e);
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe('tickets');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_directory', 'read_file', 'write_file', 'get_ticket']);
      expect((await callText(client, 'read_file', { path: 'notes.txt' })).text).toBe('from the workspace');
      expect((await callText(client, 'read_file', { path: '../tickets.yaml' })).isError).toBe(true);
      expect((await callText(client, 'write_file', { path: 'out.txt', content: 'ok' })).isError).toBe(false);
      expect((await callText(client, 'get_ticket', { id: 'T-5' })).text).toBe('ticket T-5 not found (main)');
    } finally {
      await client.close();
    }
    expect(errors).toEqual([]);
    expect(stderr).toBe('');
    expect(readFileSync(join(dir, 'ws', 'out.txt'), 'utf8')).toBe('ok');
    const log = readFileSync(join(dir, 'logs', 'calls.jsonl'), 'utf8').trimEnd().split('\n');
    expect(log.map((l) => (JSON.parse(l) as { tool: string }).tool)).toEqual(['read_file', 'read_file', 'write_file', 'get_ticket']);
  });

  it('answers a call whose client closes stdin right after it, and --root / --log override the file', async () => {
    const config = join(dir, 'fs.json');
    writeFileSync(config, JSON.stringify({ name: 'fs', builtin: 'filesystem', root: '/nonexistent' }));
    const other = join(dir, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'x.txt'), 'X');
    const input = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'x.txt' } } },
    ]
      .map((m) => JSON.stringify(m))
      .join('\n');
    const child = spawn(process.execPath, [BIN, 'mcp-mock', '--config', config, '--root', other, '--log', join(dir, 'l.jsonl')]);
    let out = '';
    child.stdout.on('data', (d) => (out += String(d)));
    child.stdin.end(input + '\n');
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(0);
    const replies = out.trimEnd().split('\n').map((l) => JSON.parse(l) as { id: number; result: { content?: { text: string }[] } });
    expect(replies.map((r) => r.id)).toEqual([1, 2]);
    expect(replies[1]!.result.content![0]!.text).toBe('X');
    expect(JSON.parse(readFileSync(join(dir, 'l.jsonl'), 'utf8'))).toMatchObject({ server: 'fs', tool: 'read_file', result: 'X' });
  });
});

describe('skill-up mcp-mock over HTTP', () => {
  it('prints its URL, serves the SDK HTTP client, stops on SIGTERM with exit 0', async () => {
    const config = join(dir, 'tickets.yaml');
    writeFileSync(config, SPEC_YAML);
    const child = spawn(process.execPath, [BIN, 'mcp-mock', '--config', config, '--transport', 'http', '--port', '0']);
    const closed = new Promise<number | null>((r) => child.on('close', r));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += String(d);
        const m = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on('close', () => reject(new Error(`exited before listening: ${out}`)));
    });
    const client = new Client({ name: 'cli-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    expect(JSON.parse((await callText(client, 'get_ticket', { id: 'T-1' })).text)).toEqual({ id: 'T-1', status: 'open' });
    await client.close();
    child.kill('SIGTERM');
    expect(await closed).toBe(0);
  });
});

describe('skill-up mcp-mock: bad input', () => {
  it.each([
    ['name: 3\ntool_responses: {t: {default: ok}}\n', 'spec.yaml:1:7: name: expected a string, got a number'],
    ['name: t\ntool_responses:\n  t:\n    default: "{{params.x | upper}}"\n', 'spec.yaml:4:14: tool_responses.t.default: placeholder `{{params.x | upper}}` has a filter other than'],
    ['name: t\ntool_responses:\n  t:\n    responses:\n      - when: 3\n        response: x\n', 'spec.yaml:5:15: tool_responses.t.responses[0].when: expected a map of argument name to value'],
    ['name: t\nbuiltin: filesystem\n', 'spec.yaml:2:10: root: `builtin: filesystem` needs `root` (or --root DIR)'],
    ['name: t\nbuiltin: filesystem\nroot: missing-folder\n', "/missing-folder` is not an existing folder (a relative root is resolved against the spec file's folder)"],
    ['name: t\ntools: {}\n', 'spec.yaml:2:1: tools: unknown field `tools` (expected one of: name, builtin, root, tool_responses, log_file)'],
    ['name: t\n', 'spec.yaml:1:1: the server offers no tool: give `builtin: filesystem` or at least one entry in `tool_responses`'],
    ['name: [unclosed\n', 'spec.yaml:2:1: YAML syntax error'],
  ])('%j → exit 2: %s', async (text, message) => {
    writeFileSync(join(dir, 'spec.yaml'), text);
    const r = await runCli(['mcp-mock', '--config', 'spec.yaml'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a missing file, a bad flag, --port without http: exit 2 without a stack trace', async () => {
    const missing = await runCli(['mcp-mock', '--config', join(dir, 'nope.yaml')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.yaml: cannot read file: ENOENT');
    const flag = await runCli(['mcp-mock', '--config', 'x', '--transport', 'sse']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--transport must be stdio or http, got `sse`');
    const port = await runCli(['mcp-mock', '--config', 'x', '--port', '80']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port applies to --transport http only');
    const none = await runCli(['mcp-mock']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('--config FILE is required');
  });

  it('--help has examples, and the top-level help names the command in the commands column', async () => {
    const help = await runCli(['mcp-mock', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('\nExamples:\n  skill-up mcp-mock --config ');
    expect(help.stdout).toContain('--transport http --port');
    const top = await runCli(['--help']);
    const line = top.stdout.split('\n').find((l) => l.startsWith('  mcp-mock '))!;
    const engines = top.stdout.split('\n').find((l) => l.startsWith('  engines '))!;
    expect(line.indexOf(' serve a') + 1).toBe(engines.indexOf('the agent CLIs'));
  });
});
