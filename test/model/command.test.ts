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
