import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runModelServerCommand, type CommandIO } from '../../src/model/command.js';
import { FIXTURES } from './helpers.js';

function io(signal?: AbortSignal, onListening?: (url: string) => void): CommandIO & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const res: CommandIO & { out: string[]; err: string[] } = { out, err, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
  if (signal) res.signal = signal;
  if (onListening) res.onListening = onListening;
  return res;
}

function post(url: string, body: unknown): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + '/v1/messages?beta=true', { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('skill-up model-server', () => {
  it('prints diagnostics and returns 2 for a bad script', async () => {
    const o = io();
    expect(await runModelServerCommand(['--script', join(FIXTURES, 'bad-action.yaml')], o)).toBe(2);
    expect(o.err.join('\n')).toMatch(/bad-action\.yaml:5:9: rules\[0\]\.reply\[1\]\.writ_file: unknown action "writ_file"; did you mean "write_file"\?/);
    expect(o.out).toEqual([]);
  });

  it('returns 2 for usage errors', async () => {
    for (const argv of [[], ['--port', '99999', '--script', 'x.yaml'], ['--bogus']]) {
      const o = io();
      expect(await runModelServerCommand(argv, o)).toBe(2);
      expect(o.err.join('\n')).toMatch(/usage: skill-up model-server/);
    }
  });

  it('serves until aborted, printing the URL, an example and one line per request', async () => {
    const ac = new AbortController();
    let url = '';
    const o = io(ac.signal, (u) => {
      url = u;
    });
    const done = runModelServerCommand(['model-server', `--script=${join(FIXTURES, 'hello-world.yaml')}`, '--port', '0'], o);
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (url) {
          clearInterval(t);
          resolve();
        }
      }, 5);
    });
    const text = await post(url, { model: 'm', stream: false, messages: [{ role: 'user', content: 'hi' }] });
    expect(JSON.parse(text).content[0].text).toBe("I don't know how to do that.");
    ac.abort();
    expect(await done).toBe(0);
    expect(o.out[0]).toBe(`listening on ${url}`);
    expect(o.out.join('\n')).toContain(`ANTHROPIC_BASE_URL=${url} ANTHROPIC_API_KEY=dummy`);
    expect(o.out.join('\n')).toContain('claude -p "create hello.py" --output-format stream-json --verbose');
    expect(o.out).toContain(`POST /v1/messages turn 1 rule 2 step 0 → text "I don't know how to do that."`);
    expect(o.out[o.out.length - 1]).toBe('model server stopped');
  });
});

describe('skill-up model-server --help', () => {
  /** A minimal valid request body for each API the help names, by the path it names. */
  const BODIES: Array<[RegExp, unknown]> = [
    [/\/v1\/messages$/, { model: 'm', stream: false, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }],
    [/\/v1\/responses$/, { model: 'm', stream: false, input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] }],
    [/\/v1\/chat\/completions$/, { model: 'm', stream: false, messages: [{ role: 'user', content: 'hi' }] }],
    [/:streamGenerateContent$/, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }],
  ];

  it('shows an example per engine, and the server answers every route the examples name', async () => {
    const o = io();
    expect(await runModelServerCommand(['--help'], o)).toBe(0);
    const help = o.out.join('\n');
    expect(help).toMatch(/\nExamples/);
    expect(help).toContain('skill-up model-server --script evals/model.yaml --port 8080');
    // Each engine's own way to a base URL (engines/*/adapter.ts).
    expect(help).toContain('ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ANTHROPIC_API_KEY=dummy claude -p');
    expect(help).toContain('base_url="http://127.0.0.1:8080/v1",wire_api="responses",env_key="OPENAI_API_KEY"');
    expect(help).toContain('OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=dummy OPENAI_MODEL=scripted-model qwen --auth-type openai');
    expect(help).toContain('GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8080 GEMINI_API_KEY=dummy gemini');
    expect(help).toContain('"selectedType": "gemini-api-key"');

    const paths = [...help.matchAll(/POST (\S+?)\)/g)].map((m) => m[1]!.replace('…', '/v1beta').replace('<model>', 'gemini-2.5-flash'));
    expect(paths).toEqual(['/v1/messages', '/v1/responses', '/v1/chat/completions', '/v1beta/models/gemini-2.5-flash:streamGenerateContent']);
    const { loadModelScript, startModelServer } = await import('../../src/model/index.js');
    const server = await startModelServer({ script: await loadModelScript(join(FIXTURES, 'hello-world.yaml')) });
    try {
      for (const p of paths) {
        const body = BODIES.find(([re]) => re.test(p))![1];
        const res = await fetch(server.url + p, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': 'dummy' }, body: JSON.stringify(body) });
        const text = await res.text();
        expect(res.status, `${p}: ${text}`).toBe(200);
        expect(text, p).toContain("I don't know how to do that.");
      }
    } finally {
      await server.close();
    }
  });
});
