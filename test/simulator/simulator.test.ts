import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { UserSimulatorConfig } from '../../src/config/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { userSimulatorFor, type SimulatorAsk } from '../../src/simulator/index.js';

const SCRIPTED: UserSimulatorConfig = { provider: 'scripted', protocol: 'anthropic', model: 'scripted-simulator', timeoutSeconds: 5 };
const ask = (over: Partial<SimulatorAsk> = {}): SimulatorAsk => ({
  turn: 2,
  history: [{ user: 'Pick a colour.', agent: 'I pick BLUE-7.' }],
  mode: 'may_stop',
  signal: new AbortController().signal,
  deadline: Infinity,
  ...over,
});

let servers: ModelServer[] = [];
let plain: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(plain.map((s) => new Promise((r) => s.close(r))));
  servers = [];
  plain = [];
});

async function scripted(yaml: string): Promise<ModelServer> {
  const s = await startModelServer({ script: parseModelScript(yaml, 'model.yaml') });
  servers.push(s);
  return s;
}

describe('the user simulator against the scripted model', () => {
  for (const protocol of ['anthropic', 'openai'] as const) {
    it(`(${protocol}) marks its requests \`simulator: true\`, with the conversation in the prompt`, async () => {
      const s = await scripted(`rules:
  - when: { simulator: true, prompt_contains: BLUE-7 }
    reply: [ { say: '{"action":"reply","message":"Not blue."}' } ]
  - when: { simulator: false }
    reply: [ { say: '{"action":"stop","reason":"the agent rule answered"}' } ]
`);
      const sim = userSimulatorFor({ ...SCRIPTED, protocol }, { jobId: 'c/with_skill/run-1', modelBaseUrl: s.url, env: {} });
      if (typeof sim === 'string') throw new Error(sim);
      expect(await sim.decide(ask())).toEqual({ action: 'reply', message: 'Not blue.' });
      expect(s.requestsFor('c/with_skill/run-1/simulator')).toHaveLength(1);
    });
  }

  it('sends exactly one correction after a malformed answer, and takes the corrected decision', async () => {
    const s = await scripted(`rules:
  - when: { simulator: true, turn: 2, prompt_contains: "not valid JSON" }
    reply: [ { say: '{"action":"stop","reason":"corrected"}' } ]
  - when: { simulator: true }
    reply: [ { say: "Sure, I will reply now." } ]
`);
    const sim = userSimulatorFor(SCRIPTED, { jobId: 'j', modelBaseUrl: s.url, env: {} }) as Exclude<ReturnType<typeof userSimulatorFor>, string>;
    expect(await sim.decide(ask())).toEqual({ action: 'stop', reason: 'corrected' });
    expect(s.requestsFor('j/simulator')).toHaveLength(2);
  });

  it('a second malformed answer is an error naming the simulator and quoting the answer\'s start', async () => {
    const s = await scripted(`rules:
  - when: { simulator: true }
    reply: [ { say: "${'I refuse to answer in JSON. '.repeat(10)}" } ]
`);
    const sim = userSimulatorFor(SCRIPTED, { jobId: 'j', modelBaseUrl: s.url, env: {} }) as Exclude<ReturnType<typeof userSimulatorFor>, string>;
    const out = await sim.decide(ask());
    expect(out.action).toBe('error');
    const reason = (out as { reason: string }).reason;
    expect(reason).toMatch(/^user simulator \(scripted\) gave no valid decision for turn 2 after one correction: the answer is not valid JSON/);
    expect(reason).toMatch(/its answer began: "I refuse to answer in JSON\. I refuse.*…"$/);
    expect(s.requestsFor('j/simulator')).toHaveLength(2);
  });

  it('a stop in a respond turn (must reply) is corrected once, then an error', async () => {
    const s = await scripted(`rules:
  - when: { simulator: true }
    reply: [ { say: '{"action":"stop","reason":"bored"}' } ]
`);
    const sim = userSimulatorFor(SCRIPTED, { jobId: 'j', modelBaseUrl: s.url, env: {} }) as Exclude<ReturnType<typeof userSimulatorFor>, string>;
    const out = await sim.decide(ask({ mode: 'must_reply' }));
    expect(out).toMatchObject({ action: 'error', reason: expect.stringContaining('`"action":"stop"` is not allowed here') });
  });

  it('a simulator that does not answer in time is an error naming timeout_seconds', async () => {
    const s = await scripted(`rules:
  - when: { simulator: true }
    delay_ms: 3000
    reply: [ { say: '{"action":"stop","reason":"late"}' } ]
`);
    const sim = userSimulatorFor({ ...SCRIPTED, timeoutSeconds: 1 }, { jobId: 'j', modelBaseUrl: s.url, env: {} }) as Exclude<ReturnType<typeof userSimulatorFor>, string>;
    const out = await sim.decide(ask());
    expect(out).toMatchObject({ action: 'error', timeout: true, reason: expect.stringContaining('no answer within 1 s (user_simulator.timeout_seconds: 1)') });
  });

  it('without a scripted model server, provider: scripted has no simulator', () => {
    expect(userSimulatorFor(SCRIPTED, { jobId: 'j', env: {} })).toMatch(/scripted model server is not running/);
  });
});

describe('the user simulator against a real provider', () => {
  it('sends the key from api_key_env only in the auth header; an unset variable is named, never a value', async () => {
    const seen: { auth?: string; url?: string; body?: string }[] = [];
    const srv = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d)).on('end', () => {
        seen.push({ auth: req.headers.authorization, url: req.url, body });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: '{"action":"reply","message":"ok"}' } }] }));
      });
    });
    plain.push(srv);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`;
    const cfg: UserSimulatorConfig = { provider: 'openai', protocol: 'openai', model: 'gpt-test', timeoutSeconds: 5, baseUrl: base, apiKeyEnv: 'SIM_TEST_CRED' };
    expect(userSimulatorFor(cfg, { jobId: 'j', env: {} })).toBe('user simulator (openai, openai model gpt-test): the environment variable SIM_TEST_CRED (user_simulator.api_key_env) is not set');
    const sim = userSimulatorFor(cfg, { jobId: 'j', env: { SIM_TEST_CRED: 'sk-sim-0123456789abcdef' } }) as Exclude<ReturnType<typeof userSimulatorFor>, string>;
    expect(await sim.decide(ask())).toEqual({ action: 'reply', message: 'ok' });
    expect(seen[0]!.url).toBe('/v1/chat/completions');
    expect(seen[0]!.auth).toBe('Bearer sk-sim-0123456789abcdef');
    expect(seen[0]!.body).not.toContain('sk-sim-0123456789abcdef');
    expect(JSON.parse(seen[0]!.body!).model).toBe('gpt-test');
  });
});
