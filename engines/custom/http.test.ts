import { mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CaseSpec, CustomEngineConfig, EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { createCustomAdapter } from './adapter.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

const servers: { close(): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
  delete process.env.SKILL_UP_MAX_OUTPUT_BYTES;
});

async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push({ close: () => { server.closeAllConnections(); server.close(); } });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function call(url: string, responseFormat: CustomEngineConfig['responseFormat'] = 'session_result', timeoutMs = 10_000) {
  const root = mkdtempSync(join(tmpdir(), 'su-http-'));
  const dirs = ['ws', 'home', 'out'].map((d) => join(root, d));
  for (const d of dirs) mkdirSync(d, { recursive: true });
  const cfg: CustomEngineConfig = { transport: 'http', responseFormat, conversationMode: 'batch', env: {}, kwargs: {}, http: { url, headers: {} } };
  const engine: EngineConfig = { name: 'custom', displayName: 'agent', model: {}, kwargs: {}, custom: cfg };
  const ctx: EngineContext = {
    engine, case: { id: 'c1', maxTurns: 5, turns: [] } as unknown as CaseSpec, variant: 'with_skill', trial: 1,
    workspace: dirs[0]!, homeDir: dirs[1]!, outputDir: dirs[2]!, installedSkills: [], baseEnv: { PATH: process.env.PATH }, signal: new AbortController().signal, deadline: Infinity,
  };
  const adapter = createCustomAdapter(cfg, root);
  const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), { index: 1, prompt: 'hi', history: ['hi'], timeoutMs });
  return { t, out: dirs[2]! };
}

describe('custom engine over HTTP: the answer is streamed to disk', () => {
  it('follows a 307 redirect with the same POST body', async () => {
    const seen: string[] = [];
    const url = await serve((req, body, res) => {
      seen.push(`${req.method} ${req.url} ${body.length > 0}`);
      if (req.url === '/old') res.writeHead(307, { location: '/new' }).end();
      else res.writeHead(200).end(JSON.stringify({ exit_code: 0, final_message: 'moved' }));
    });
    const { t } = await call(`${url}/old`);
    expect(t.error).toBeUndefined();
    expect(t.finalText).toBe('moved');
    expect(seen).toEqual(['POST /old true', 'POST /new true']);
  });

  it('an answer that is no SessionResult: names the URL it came from and quotes it', async () => {
    const url = await serve((_req, _body, res) => res.writeHead(200).end('<html>Login required</html>'));
    const { t } = await call(`${url}/agent`);
    expect(t.error?.kind).toBe('protocol');
    expect(t.error?.message).toMatch(new RegExp(`^the answer of POST ${url}/agent: not a SessionResult JSON \\(.+\\); it starts with: <html>Login required</html>$`));
  });

  it('times out on an answer that stalls after its headers', async () => {
    const url = await serve((_req, _body, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const { t } = await call(url, 'text', 500);
    expect(t.error?.kind).toBe('timeout');
  });

  it('cuts an answer off at the cap, keeps the first cap bytes, and reports it', async () => {
    process.env.SKILL_UP_MAX_OUTPUT_BYTES = String(1024 * 1024);
    const url = await serve((_req, _body, res) => {
      res.writeHead(200);
      res.end(Buffer.alloc(5 * 1024 * 1024, 'x'));
    });
    const { t, out } = await call(url, 'text');
    expect(t.error?.kind).toBe('protocol');
    expect(t.error?.message).toContain('the answer larger than 1048576 bytes');
    expect(statSync(join(out, 'outputs/turn-1.response.json')).size).toBe(1024 * 1024);
  });

  it('stores a large final message of a SessionResult once, as a file the turn refers to', async () => {
    const message = 'é'.repeat(1_500_000) + 'THE END';
    const url = await serve((_req, _body, res) => res.writeHead(200).end(JSON.stringify({ exit_code: 0, final_message: message })));
    const { t, out } = await call(url);
    expect(t.error).toBeUndefined();
    expect(t.finalTextFile).toBe('outputs/turn-1.final.txt');
    expect(t.finalTextBytes).toBe(Buffer.byteLength(message));
    expect(readFileSync(join(out, t.finalTextFile!), 'utf8') === message).toBe(true);
    expect(t.finalText.endsWith('THE END')).toBe(true);
  });

  it('keeps a large text answer in the raw response file itself', async () => {
    const answer = 'y'.repeat(2 * 1024 * 1024) + ' done\n\n';
    const url = await serve((_req, _body, res) => res.writeHead(200).end(answer));
    const { t, out } = await call(url, 'text');
    expect(t.error).toBeUndefined();
    expect(t.finalTextFile).toBe('outputs/turn-1.response.json');
    expect(t.finalTextBytes).toBe(answer.trimEnd().length);
    expect(readFileSync(join(out, t.finalTextFile!), 'utf8') === answer).toBe(true);
  });
});
