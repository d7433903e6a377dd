/**
 * The OpenCode adapter against the REAL `opencode` binary (opencode-ai@1.18.33) and skill-up's
 * scripted model server (src/model/, OpenAI Chat Completions). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_OPENCODE_BIN`, which the global set-up (test/setup/engines.ts)
 * installs into a test cache with the same resolver a run uses. When it cannot be had, the tests
 * FAIL with the reason: they are never skipped. OpenCode also needs `rg` (ripgrep) on PATH.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { buildOpencodeArgs, buildOpencodeConfig, buildOpencodeEnv, decideOpencodeError, opencodeModel, openaiBaseUrl, ripgrepOnPath } from './adapter.js';
import { parseOpencodeJson } from './parse.js';
import { engineConfig, procResult, pureCtx, realEngineHarness } from '../../test/support/engine.js';

const engine = (over: Partial<EngineConfig> = {}): EngineConfig => engineConfig('opencode', over);

describe('opencode adapter (real binary, scripted model)', () => {
  const h = realEngineHarness('opencode', 'opencode-adapter-test', async () => {
    if (!(await ripgrepOnPath(process.env.PATH))) throw new Error('opencode needs ripgrep (`rg`) on PATH for its skill tool: apt-get install ripgrep');
  });
  const { makeCtx, oneTurn } = h;

  it('more model calls than max_turns is a protocol error', async () => {
    const ctx = await makeCtx({ maxTurns: 2 });
    const turn = await oneTurn(ctx, 'loop forever');
    expect(turn.error).toEqual({ kind: 'protocol', message: 'max turns reached (2)' });
    expect(turn.toolCalls.map((c) => c.name)).toEqual(['bash', 'bash']);
  }, 120_000);

  it('the prompt reaches the model verbatim (stdin: no quoting, a leading "-" is no option)', async () => {
    const ctx = await makeCtx();
    const prompt = '--echo: say "hi" twice\nand keep this line';
    const turn = await oneTurn(ctx, prompt);
    expect(turn.error).toBeUndefined();
    expect(turn.finalText).toBe(`You said <${prompt}>`);
  }, 120_000);

  it('no rg on PATH is reported as kind "missing" naming ripgrep', async () => {
    const ctx = await makeCtx();
    ctx.baseEnv = { PATH: join(h.root, 'empty-bin'), LANG: 'C.UTF-8' };
    const turn = await oneTurn(ctx, 'write hello');
    expect(turn.error?.kind).toBe('missing');
    expect(turn.error?.message).toMatch(/ripgrep/);
  });
});

describe('opencode adapter (pure parts)', () => {
  const baseCtx = (over: Partial<EngineContext> = {}) => pureCtx('opencode', { PATH: '/usr/bin', OPENAI_API_KEY: 'sk-real', OPENCODE_CONFIG_CONTENT: '{}', OPENCODE_PERMISSION: '{}' }, over);

  it('argv: json events, auto-approve, model; --title on a first turn, --session on later ones', () => {
    expect(buildOpencodeArgs({ model: 'skillup/m', title: 'skill-up x' })).toEqual(['run', '--format', 'json', '--auto', '-m', 'skillup/m', '--title', 'skill-up x']);
    expect(buildOpencodeArgs({ model: 'skillup/m', session: 'ses_1', title: 'ignored' })).toEqual(['run', '--format', 'json', '--auto', '-m', 'skillup/m', '--session', 'ses_1']);
  });

  it('config, scripted: the provider points at the server with the job key; permissions open; steps', () => {
    const cfg = buildOpencodeConfig(baseCtx(), 6);
    expect(cfg).toEqual({
      $schema: 'https://opencode.ai/config.json',
      autoupdate: false,
      share: 'disabled',
      snapshot: false,
      permission: { '*': 'allow', skill: { '*': 'allow', 'customize-opencode': 'deny' } },
      provider: {
        skillup: {
          npm: '@ai-sdk/openai-compatible',
          name: 'skill-up scripted model',
          options: { baseURL: 'http://127.0.0.1:1234/v1', apiKey: 'skill-up-job:case/with_skill/run-1' },
          models: { 'scripted-model': { name: 'scripted-model', tool_call: true } },
        },
      },
      model: 'skillup/scripted-model',
      small_model: 'skillup/scripted-model',
      agent: { build: { steps: 7 } },
    });
    expect(() => buildOpencodeConfig(baseCtx({ modelBaseUrl: undefined }), 0)).toThrow(/scripted/);
  });

  it('config, real model: provider/model from engine.model, baseURL override, no secret written', () => {
    const ctx = baseCtx({ engine: engine({ model: { provider: 'openai', name: 'gpt-5', baseUrl: 'https://gw.example/v1' } }), modelBaseUrl: undefined });
    const cfg = buildOpencodeConfig(ctx, 0);
    expect(cfg.model).toBe('openai/gpt-5');
    expect(cfg.provider).toEqual({ openai: { options: { baseURL: 'https://gw.example/v1' } } });
    expect(JSON.stringify(cfg)).not.toContain('sk-real');
    expect(cfg.agent).toBeUndefined();
    expect(opencodeModel(engine({ model: { name: 'anthropic/claude-x' } }))).toBe('anthropic/claude-x');
    expect(opencodeModel(engine({ model: {} }))).toBeUndefined();
  });

  it('env: isolated homes, offline hygiene, outside config variables dropped, credentials kept', () => {
    const env = buildOpencodeEnv(baseCtx());
    expect(env).toMatchObject({
      HOME: '/h',
      XDG_CONFIG_HOME: '/h/.config',
      XDG_DATA_HOME: '/h/.local/share',
      XDG_CACHE_HOME: '/h/.cache',
      XDG_STATE_HOME: '/h/.local/state',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      npm_config_registry: 'http://127.0.0.1:9/',
      PATH: '/usr/bin',
    });
    expect(env.OPENCODE_CONFIG_CONTENT).toBeUndefined();
    expect(env.OPENCODE_PERMISSION).toBeUndefined();
    // Credentials are the allow-list's (src/engine/env.ts): none with the scripted model, the provider's with a real one.
    expect(env.OPENAI_API_KEY).toBeUndefined();
    const real = buildOpencodeEnv(baseCtx({ engine: engine({ model: { provider: 'openai', name: 'gpt-x' } }) }));
    expect(real.OPENAI_API_KEY).toBe('sk-real');
    expect(real.OPENCODE_CONFIG_CONTENT).toBeUndefined();
  });

  it('base URL gets exactly one /v1', () => {
    expect(openaiBaseUrl('http://127.0.0.1:9')).toBe('http://127.0.0.1:9/v1');
    expect(openaiBaseUrl('http://127.0.0.1:9/v1/')).toBe('http://127.0.0.1:9/v1');
  });

  it('its error facts: an error line wins over the exit code; no finished step is a protocol error', () => {
    const ok = parseOpencodeJson('{"type":"step_start","sessionID":"s"}\n{"type":"step_finish","sessionID":"s","part":{"reason":"stop"}}');
    const apiErr = parseOpencodeJson('{"type":"error","error":{"name":"APIError","data":{"message":"m"}}}');
    expect(decideOpencodeError(procResult({ exitCode: 1 }), apiErr, 1000, '')).toEqual({ kind: 'api', message: 'm' });
    expect(decideOpencodeError(procResult(), parseOpencodeJson('{"type":"step_start","sessionID":"s"}'), 1000, '')).toEqual({
      kind: 'protocol',
      message: 'opencode exited 0 without a finished step in its --format json output',
    });
    expect(decideOpencodeError(procResult(), ok, 1000, '')).toBeUndefined();
  });
});
