/**
 * MCP servers end to end (issue 16), through the built CLI on each of the five real engines with
 * the scripted model: a REAL stdio server from npm (@modelcontextprotocol/server-filesystem, a
 * devDependency) beside a MOCKED one with templated answers; a real server over streamable HTTP
 * with a secret header; and a `required_env` that is not set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'vitest';
import { PINNED } from '../setup/engines.js';
import { BIN, runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(ROOT, 'test/fixtures/mcp');
/** The filesystem server's entry (its package.json `bin`), started by the engine as `node <entry> .`. */
const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const ENGINES = Object.keys(PINNED);
/** Per test: one run of one case in both variants (opencode and gemini take ~20 s a job on 2 busy cores). */
const TIMEOUT = 180_000;

interface ToolCallJson {
  name: string;
  input: Record<string, unknown>;
  output?: string;
  isError?: boolean;
  mcp?: { server: string; tool: string };
}
interface JobJson {
  case_id: string;
  variant: 'with_skill' | 'without_skill';
  status: string;
  reason?: string;
  output_dir: string;
  assertions?: { text: string; passed: boolean; evidence?: string }[];
  mcp_servers?: { name: string; mode: string; transport: string }[];
}

/** A copy of a fixture skill in a fresh temp folder (the run writes beside it), with `@KEY@` replaced in its eval.yaml. */
function copyFixture(name: string, tag: string, replace: Record<string, string> = {}): { skill: string; out: string } {
  const dir = mkdtempSync(join(tmpdir(), `su-mcp-${tag}-`));
  const skill = join(dir, name);
  cpSync(join(FIXTURES, name), skill, { recursive: true });
  const evalFile = join(skill, 'evals/eval.yaml');
  let text = readFileSync(evalFile, 'utf8');
  for (const [k, v] of Object.entries(replace)) text = text.replaceAll(`@${k}@`, v);
  writeFileSync(evalFile, text);
  return { skill, out: join(dir, 'out') };
}

function jobsOf(out: string): JobJson[] {
  return JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs;
}

function job(jobs: JobJson[], variant: string): JobJson {
  const j = jobs.find((x) => x.variant === variant);
  if (!j) throw new Error(`no ${variant} job in ${JSON.stringify(jobs.map((x) => x.variant))}`);
  return j;
}

/** Every tool call of a job's transcript, all turns in order. */
function callsOf(out: string, j: JobJson): ToolCallJson[] {
  const t = JSON.parse(readFileSync(join(out, 'iteration-1', j.output_dir, 'transcript.json'), 'utf8'));
  return t.turns.flatMap((turn: { toolCalls?: ToolCallJson[] }) => turn.toolCalls ?? []);
}

function why(j: JobJson): string {
  return `${j.reason ?? ''} ${JSON.stringify(j.assertions)}`;
}

/** Every regular file under `dir` holding `needle`, as paths relative to it. */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && readFileSync(p).includes(needle)) hits.push(p.slice(dir.length + 1));
    }
  };
  walk(dir);
  return hits;
}

/** Every regular file under `dir`, as sorted paths relative to it. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => statSync(join(dir, p)).isFile()).sort();
}

/** `skill-up mcp-mock --transport http --port 0` on `spec`: resolves once it printed its URL. */
async function startHttpMock(spec: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'mcp-mock', '--config', spec, '--transport', 'http', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const url = await new Promise<string>((res, rej) => {
    const seen = (d: Buffer) => {
      text += d.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(text);
      if (m) res(m[0]);
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('exit', (code) => rej(new Error(`mcp-mock exited ${code} before printing its URL: ${text}`)));
    setTimeout(() => rej(new Error(`mcp-mock printed no URL in 15 s: ${text}`)), 15_000).unref();
  });
  return { url, child };
}

/**
 * A pass-through HTTP proxy in front of `target` that records every `Authorization` header it
 * forwards: proof that the engine sent the secret header, which the mock itself does not log.
 */
async function startRecordingProxy(target: string): Promise<{ url: string; authorizations: string[]; close: () => Promise<void> }> {
  const to = new URL(target);
  const authorizations: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization) authorizations.push(req.headers.authorization);
    // The mock refuses a Host other than its own (DNS rebinding), so the forwarded request names it.
    const fwd = request({ host: to.hostname, port: to.port, path: req.url, method: req.method, headers: { ...req.headers, host: to.host } }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    fwd.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(fwd);
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    close: () =>
      new Promise<void>((res) => {
        server.closeAllConnections();
        server.close(() => res());
      }),
  };
}

describe.concurrent.each(ENGINES)('MCP servers on %s (real binary, scripted model)', (engine) => {
  it('offers a real stdio server from npm and a mocked one to both variants; only with the skill is the mocked tool called, with its templated answer', async ({ expect }) => {
    const { skill, out } = copyFixture('ticket-triage', engine);
    const r = await runCli(['run', skill, '--engine', engine, '--baseline', '--trials', '1', '--output-dir', out], { env: { SKILL_UP_TEST_FS_SERVER: FS_SERVER } });
    const jobs = jobsOf(out);
    const withSkill = job(jobs, 'with_skill');
    const without = job(jobs, 'without_skill');

    // The rules: mcp_tool_called {tickets, get_ticket, {id: T-42}} holds with the skill only.
    expect(withSkill.status, why(withSkill)).toBe('pass');
    expect(without.status, why(without)).toBe('fail');
    const ticketRule = (j: JobJson) => j.assertions?.find((a) => a.text.includes('mcp_tool_called') && a.text.includes('get_ticket'));
    expect(ticketRule(withSkill)?.passed, why(withSkill)).toBe(true);
    expect(ticketRule(without)?.passed, why(without)).toBe(false);
    const fsRule = (j: JobJson) => j.assertions?.find((a) => a.text.includes('mcp_tool_called') && a.text.includes('read_text_file'));
    expect(fsRule(without)?.passed, why(without)).toBe(true);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);

    // Both arms were offered the same servers; result.json names them and never their command.
    const offered = [
      { name: 'fs', mode: 'real', transport: 'stdio' },
      { name: 'tickets', mode: 'mocked', transport: 'stdio' },
    ];
    expect(withSkill.mcp_servers).toEqual(offered);
    expect(without.mcp_servers).toEqual(offered);

    // The transcript names the calls mcp__<server>__<tool>, whatever the engine calls them.
    const calls = callsOf(out, withSkill);
    const ticket = calls.find((c) => c.name === 'mcp__tickets__get_ticket');
    expect(ticket, JSON.stringify(calls)).toMatchObject({ input: { id: 'T-42' }, isError: false, mcp: { server: 'tickets', tool: 'get_ticket' } });
    // The mock's `default` template, rendered: {{params.id}} from the call, the priority's default.
    expect(ticket!.output).toContain('ticket T-42 is open: login fails (priority P2)');
    const read = calls.find((c) => c.name === 'mcp__fs__read_text_file');
    expect(read, JSON.stringify(calls)).toMatchObject({ isError: false, mcp: { server: 'fs', tool: 'read_text_file' } });
    // The real server read the case's file from the job's workspace.
    expect(read!.output).toContain('RUNBOOK-7: an open login ticket goes to the identity team.');
    const baseline = callsOf(out, without);
    expect(baseline.filter((c) => c.name.startsWith('mcp__tickets__'))).toEqual([]);
    expect(baseline.find((c) => c.name === 'mcp__fs__read_text_file')?.output).toContain('RUNBOOK-7');

    // The mock's call log in the job folder: one call with the skill, none without.
    const log = join(out, 'iteration-1', withSkill.output_dir, 'mcp/tickets.calls.jsonl');
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ server: 'tickets', tool: 'get_ticket', arguments: { id: 'T-42' }, result: 'ticket T-42 is open: login fails (priority P2)', isError: false, matched: 'default' });
    expect(existsSync(join(out, 'iteration-1', without.output_dir, 'mcp/tickets.calls.jsonl'))).toBe(false);
  }, TIMEOUT);

  it('reaches a real server over streamable HTTP with a secret header that appears in no file the run wrote and on no printed line', async ({ expect }) => {
    const token = `sk-ordr-${engine.replace(/_/g, '')}-9f2c7e41a8b3d6`;
    const mockDir = mkdtempSync(join(tmpdir(), `su-mcp-http-${engine}-`));
    cpSync(join(FIXTURES, 'order-status/evals/orders-mock.yaml'), join(mockDir, 'orders.yaml'));
    const mock = await startHttpMock(join(mockDir, 'orders.yaml'));
    const proxy = await startRecordingProxy(mock.url);
    try {
      const { skill, out } = copyFixture('order-status', `http-${engine}`, { ENDPOINT: proxy.url });
      const r = await runCli(['run', skill, '--engine', engine, '--baseline', '--trials', '1', '--output-dir', out], { env: { SKILL_UP_TEST_ORDERS_TOKEN: token } });
      const jobs = jobsOf(out);
      const withSkill = job(jobs, 'with_skill');
      const without = job(jobs, 'without_skill');
      expect(withSkill.status, why(withSkill)).toBe('pass');
      expect(without.status, why(without)).toBe('fail');
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(withSkill.mcp_servers).toEqual([{ name: 'orders', mode: 'real', transport: 'http' }]);
      expect(without.mcp_servers).toEqual(withSkill.mcp_servers);
      const lookup = callsOf(out, withSkill).find((c) => c.name === 'mcp__orders__lookup');
      expect(lookup, JSON.stringify(callsOf(out, withSkill))).toMatchObject({ input: { order: '5512' }, isError: false });
      expect(lookup!.output).toContain('order 5512 shipped on 2026-03-02');

      // The engine sent the expanded header (so the secret was in play) ...
      expect(proxy.authorizations.length).toBeGreaterThan(0);
      expect(new Set(proxy.authorizations)).toEqual(new Set([`Bearer ${token}`]));
      // ... and it is in no file under the output folder and on no line the run printed.
      expect(filesContaining(out, token)).toEqual([]);
      expect(r.stdout).not.toContain(token);
      expect(r.stderr).not.toContain(token);
    } finally {
      await proxy.close();
      mock.child.kill('SIGTERM');
    }
  }, TIMEOUT);

  it('a required_env variable that is not set: the run says which server needs which variable, every job is an error before its engine runs, exit 3', async ({ expect }) => {
    // Nothing listens at the endpoint: the engine must never get as far as connecting.
    const { skill, out } = copyFixture('order-status', `env-${engine}`, { ENDPOINT: 'http://127.0.0.1:9/mcp' });
    const env = { SKILL_UP_TEST_ORDERS_TOKEN: '' };
    const r = await runCli(['run', skill, '--engine', engine, '--baseline', '--trials', '1', '--output-dir', out], { env });
    const message = "mcp server `orders` (evals/eval.yaml:11) needs `SKILL_UP_TEST_ORDERS_TOKEN` set in skill-up's environment";
    expect(r.stderr + r.stdout).toContain(`error: ${message}`);
    const jobs = jobsOf(out);
    expect(jobs.map((j) => j.variant).sort()).toEqual(['with_skill', 'without_skill']);
    for (const j of jobs) {
      expect(j.status).toBe('error');
      expect(j.reason).toContain(message);
      // The engine never ran: no model request, no engine output, no transcript; only the record of why.
      expect(filesUnder(join(out, 'iteration-1', j.output_dir))).toEqual(['ungraded.json']);
    }
    // Errors above the allowed rate (0): exit 3, never a pass or a fail.
    expect(r.code, r.stderr.slice(-2000)).toBe(3);
  }, TIMEOUT);
});
