/**
 * The Gemini CLI adapter against the REAL `gemini` binary (@google/gemini-cli@0.61.0) and
 * skill-up's scripted model server (src/model/, Gemini API). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_GEMINI_CLI_BIN`, which the global set-up (test/setup/engines.ts)
 * installs into a test cache with the same resolver a run uses (~20 s the first time). When it
 * cannot be had, the tests FAIL with the reason: they are never skipped.
 */
import { readdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { buildGeminiArgs, buildGeminiEnv, buildGeminiSettings, decideError, geminiCliAdapter } from './adapter.js';
import { parseGeminiStream } from './parse.js';
import { adapterTestCase, engineConfig, procResult, pureCtx, realEngineHarness } from '../../test/support/engine.js';

const engine = (over: Partial<EngineConfig> = {}): EngineConfig => engineConfig('gemini_cli', over);

/** A local port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

describe('gemini_cli adapter (real binary, scripted model)', () => {
  const h = realEngineHarness('gemini_cli');
  const { makeCtx, oneTurn, resumedPair } = h;

  it('resumed turns: the second and third resume the first session, history replayed, still in yolo mode', async () => {
    const ctx = await makeCtx();
    const { t1, t2, next } = await resumedPair(ctx);
    expect(t2.rawFiles).toEqual(['outputs/turn-2.stream.jsonl', 'outputs/turn-2.stderr.txt']);
    // Per-turn tokens: turn 2 made one request, turn 1 two, over a longer history in turn 2.
    expect(t2.usage.input).toBeGreaterThan(0);
    expect(t2.usage.input).toBeLessThan(t1.usage.input);
    // A resumed turn still runs in yolo mode: its write goes through without a prompt.
    await rm(join(ctx.workspace, 'hello.txt'));
    const t3 = await next('write hello again');
    expect(t3.error).toBeUndefined();
    expect(t3.sessionId).toBe(t1.sessionId);
    expect(t3.toolCalls).toEqual([{ name: 'write_file', input: { file_path: join(ctx.workspace, 'hello.txt'), content: 'hi\n' }, isError: false }]);
    expect(await readFile(join(ctx.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
    const requests = h.server.requestsFor(ctx.jobId!);
    expect(requests.map((r) => r.conversation?.turn)).toEqual([1, 1, 2, 3, 3]);
  }, 180_000);

  it('an unreachable model endpoint is an api error, quickly (no retry loop)', async () => {
    const ctx = await makeCtx({ modelBaseUrl: `http://127.0.0.1:${await deadPort()}` });
    const t0 = performance.now();
    const turn = await oneTurn(ctx, 'write hello please');
    expect(performance.now() - t0).toBeLessThan(20_000); // retryFetchErrors = false
    expect(turn.error).toEqual({ kind: 'api', message: '[API Error: exception TypeError: fetch failed sending request]' });
    // The CLI's error report went to the job's TMPDIR, not the machine's /tmp.
    expect(readdirSync(join(ctx.homeDir, 'tmp')).some((f) => f.startsWith('gemini-client-error-'))).toBe(true);
  });

  it('max turns reached is a protocol error', async () => {
    const ctx = await makeCtx({ maxTurns: 2 });
    const turn = await oneTurn(ctx, 'loop forever');
    expect(turn.error).toEqual({ kind: 'protocol', message: 'max turns reached (2)' });
    expect(turn.exitCode).toBe(53);
    expect(turn.toolCalls.length).toBeGreaterThanOrEqual(1);
  });

  it('a prompt starting with "-" is a prompt, and one over 100 kB goes through stdin', async () => {
    const ctx = await makeCtx();
    const dash = await oneTurn(ctx, '--write hello now');
    expect(dash.error).toBeUndefined();
    expect(dash.finalText).toBe('Wrote hello.txt');
    const ctx2 = await makeCtx();
    const big = `write hello ${'x'.repeat(150_000)}`;
    const t = await oneTurn(ctx2, big);
    expect(t.error).toBeUndefined();
    expect(t.finalText).toBe('Wrote hello.txt');
  }, 120_000);

});

describe('gemini_cli adapter (pure parts)', () => {
  const baseCtx = (over: Partial<EngineContext> = {}) =>
    pureCtx(
      'gemini_cli',
      {
        PATH: '/usr/bin',
        GEMINI_API_KEY: 'real-key',
        GOOGLE_API_KEY: 'g-key',
        GOOGLE_GENAI_USE_VERTEXAI: 'true',
        GOOGLE_GEMINI_BASE_URL: 'https://proxy.example',
        GEMINI_CLI_IDE_SERVER_PORT: '1234',
      },
      over,
    );

  it('argv: the documented flags, --prompt= last, session preset or resumed', () => {
    expect(buildGeminiArgs({ prompt: 'hi', model: 'm', sessionId: 'u' })).toEqual({
      args: ['--output-format', 'stream-json', '--approval-mode', 'yolo', '--extensions', 'none', '-m', 'm', '--session-id', 'u', '--prompt=hi'],
    });
    expect(buildGeminiArgs({ prompt: '-x', resume: 'abc', sessionId: 'ignored' }).args).toEqual([
      '--output-format', 'stream-json', '--approval-mode', 'yolo', '--extensions', 'none', '--resume', 'abc', '--prompt=-x',
    ]);
    const big = 'x'.repeat(200_000);
    const r = buildGeminiArgs({ prompt: big });
    expect(r.stdin).toBe(big);
    expect(r.args.at(-1)).toBe('--prompt=');
  });

  it('env, scripted: isolated homes, job key, server URL, routing variables dropped', () => {
    const env = buildGeminiEnv(baseCtx());
    expect(env).toMatchObject({
      HOME: '/h',
      GEMINI_CLI_HOME: '/h',
      TMPDIR: '/h/tmp',
      XDG_CONFIG_HOME: '/h/.config',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      GEMINI_CLI_NO_RELAUNCH: 'true',
      GEMINI_TELEMETRY_ENABLED: 'false',
      GEMINI_SANDBOX: 'false',
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: '/h/.gemini/no-system-settings.json',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:1234',
      GEMINI_API_KEY: 'skill-up-job:case/with_skill/run-1',
      PATH: '/usr/bin',
    });
    expect(env.GOOGLE_API_KEY).toBeUndefined();
    expect(env.GOOGLE_GENAI_USE_VERTEXAI).toBeUndefined();
    expect(env.GEMINI_CLI_IDE_SERVER_PORT).toBeUndefined();
    expect(() => buildGeminiEnv(baseCtx({ modelBaseUrl: undefined }))).toThrow(/scripted/);
  });

  it('env, real model: credentials and base URL pass through; engine.model.baseUrl wins', () => {
    const passthrough = buildGeminiEnv(baseCtx({ engine: engine({ model: { provider: 'google' } }), modelBaseUrl: undefined }));
    expect(passthrough.GEMINI_API_KEY).toBe('real-key');
    expect(passthrough.GOOGLE_API_KEY).toBe('g-key');
    expect(passthrough.GOOGLE_GEMINI_BASE_URL).toBe('https://proxy.example');
    expect(passthrough.GEMINI_CLI_IDE_SERVER_PORT).toBeUndefined();
    const configured = buildGeminiEnv(baseCtx({ engine: engine({ model: { provider: 'google', baseUrl: 'https://gw.example/' } }) }));
    expect(configured.GOOGLE_GEMINI_BASE_URL).toBe('https://gw.example');
  });

  it('settings: api-key auth, no telemetry or updates, bounded retries when scripted, max turns, built-in skills off', () => {
    const s = buildGeminiSettings(baseCtx({ case: adapterTestCase('gemini-pure', 6) }));
    expect(s).toMatchObject({
      security: { auth: { selectedType: 'gemini-api-key' } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1, retryFetchErrors: false },
      model: { maxSessionTurns: 6 },
      skills: { disabled: ['skill-creator', 'antigravity-support'] },
    });
    expect(JSON.stringify(s)).not.toContain('real-key');
    const real = buildGeminiSettings(baseCtx({ engine: engine({ model: { provider: 'google' } }), case: adapterTestCase('gemini-pure', 0), installedSkills: ['skill-creator'] }));
    expect(real.general.maxAttempts).toBeUndefined();
    expect(real.model.maxSessionTurns).toBe(-1);
    expect(real.skills.disabled).toEqual(['antigravity-support']);
    const vertex = buildGeminiSettings(baseCtx({ engine: engine({ model: { provider: 'google' } }), baseEnv: { GOOGLE_GENAI_USE_VERTEXAI: 'true' } }));
    expect(vertex.security.auth).toEqual({ selectedType: 'vertex-ai' });
  });

  it('its error facts: the stream’s api error wins over exit 244; no result line is a protocol error', () => {
    const ok = parseGeminiStream('{"type":"init","session_id":"s"}\n{"type":"result","status":"success","stats":{}}');
    const api = parseGeminiStream('{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: x]"},"stats":{}}');
    expect(decideError(procResult({ exitCode: 244 }), api, 1000, 'stack')).toEqual({ kind: 'api', message: '[API Error: x]' });
    expect(decideError(procResult({ exitCode: 41 }), parseGeminiStream(''), 1000, 'Invalid auth method selected.\n')).toEqual({ kind: 'crash', message: 'exited with code 41: Invalid auth method selected.' });
    expect(decideError(procResult(), parseGeminiStream(''), 1000, '')).toEqual({ kind: 'protocol', message: 'gemini exited 0 without a "result" line in its stream-json output' });
    expect(decideError(procResult(), ok, 1000, '')).toBeUndefined();
  });

  it('the adapter contract', () => {
    expect(geminiCliAdapter).toMatchObject({ name: 'gemini_cli', skillDirs: ['.agents/skills', '.gemini/skills'], supportsResume: true });
  });
});
