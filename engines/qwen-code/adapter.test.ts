/**
 * The Qwen Code adapter against the REAL `qwen` CLI (@qwen-code/qwen-code@0.24.4) and skill-up's
 * scripted model server (src/model/, OpenAI Chat Completions). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_QWEN_CODE_BIN`, which the global set-up (test/setup/engines.ts)
 * installs into a test cache with the same resolver a run uses. When it cannot be had, the tests
 * FAIL with the reason: they are never skipped.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { buildQwenArgs, buildQwenEnv, buildQwenSettings, decideQwenError, openaiBaseUrl, qwenAuthType } from './adapter.js';
import { parseQwenOutput } from './parse.js';
import { engineConfig, procResult, pureCtx, realEngineHarness } from '../../test/support/engine.js';

const engine = (over: Partial<EngineConfig> = {}): EngineConfig => engineConfig('qwen_code', over);

describe('qwen_code adapter (real binary, scripted model)', () => {
  const h = realEngineHarness('qwen_code');
  const { makeCtx, oneTurn, resumedPair } = h;

  it('two turns: the second resumes the first session and sees it; tokens per turn', async () => {
    const ctx = await makeCtx();
    const { t1, t2 } = await resumedPair(ctx);
    const last = h.server.requestsFor(ctx.jobId!).at(-1)!;
    expect(last.conversation).toMatchObject({ turn: 2, prompt: 'What did you do?', replies: 0 });
    // Qwen's result.usage is cumulative over the session; the adapter reports turn 2's own:
    // one model call, fewer input tokens than turn 1's two, and no more than the raw figure.
    const raw2 = parseQwenOutput(await readFile(join(ctx.outputDir, t2.rawFiles[0]!), 'utf8'));
    expect(raw2.cumulativeUsage!.input).toBe(t1.usage.input + t2.usage.input);
    expect(t2.usage.input).toBeGreaterThan(0);
    expect(t2.usage.input).toBeLessThan(t1.usage.input);
  }, 180_000);

  it('an HTTP error from the model is an api error carrying the API message', async () => {
    const ctx = await makeCtx();
    const t0 = performance.now();
    const turn = await oneTurn(ctx, 'bad request now');
    expect(performance.now() - t0).toBeLessThan(45_000);
    expect(turn.error).toEqual({ kind: 'api', message: '[API Error: 400 scripted bad request]' });
    expect(turn.exitCode).toBe(1);
  }, 120_000);

  it('more model calls than max_turns is a protocol error', async () => {
    const ctx = await makeCtx({ maxTurns: 2 });
    const turn = await oneTurn(ctx, 'loop forever');
    expect(turn.error).toEqual({ kind: 'protocol', message: 'max turns reached (2)' });
    expect(turn.toolCalls.map((c) => c.name)).toEqual(['run_shell_command', 'run_shell_command']);
  }, 120_000);

  it('the prompt reaches the model verbatim (stdin: a leading "-" is no option)', async () => {
    const ctx = await makeCtx();
    const prompt = '--echo: say "hi" twice\nand keep this line';
    const turn = await oneTurn(ctx, prompt);
    expect(turn.error).toBeUndefined();
    expect(turn.finalText).toBe(`You said <${prompt}>`);
  }, 120_000);

});

describe('qwen_code adapter (pure parts)', () => {
  const baseCtx = (over: Partial<EngineContext> = {}) => pureCtx('qwen_code', { PATH: '/usr/bin', OPENAI_API_KEY: 'sk-real', OPENAI_BASE_URL: 'https://proxy.example/v1', DASHSCOPE_API_KEY: 'ds', QWEN_CODE_UNATTENDED_RETRY: '1' }, over);

  it('argv: auth type, stream-json, yolo, max session turns, model, resume', () => {
    expect(buildQwenArgs({ authType: 'openai', maxTurns: 6 })).toEqual(['--auth-type', 'openai', '--output-format', 'stream-json', '--yolo', '--max-session-turns', '6']);
    expect(buildQwenArgs({ authType: 'anthropic', maxTurns: 0, model: 'm', resume: 'abc' })).toEqual([
      '--auth-type', 'anthropic', '--output-format', 'stream-json', '--yolo', '-m', 'm', '--resume', 'abc',
    ]);
  });

  it('env, scripted: isolated homes, the job key, the server URL, other providers dropped', () => {
    const env = buildQwenEnv(baseCtx(), '/h/.qwen');
    expect(env).toMatchObject({
      HOME: '/h',
      QWEN_HOME: '/h/.qwen',
      XDG_CONFIG_HOME: '/h/.config',
      QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
      OPENAI_BASE_URL: 'http://127.0.0.1:1234/v1',
      OPENAI_API_KEY: 'skill-up-job:case/with_skill/run-1',
      OPENAI_MODEL: 'scripted-model',
      PATH: '/usr/bin',
    });
    expect(env.DASHSCOPE_API_KEY).toBeUndefined();
    expect(env.QWEN_CODE_UNATTENDED_RETRY).toBeUndefined();
    expect(() => buildQwenEnv(baseCtx({ modelBaseUrl: undefined }), '/h/.qwen')).toThrow(/scripted/);
  });

  it('env, real model: credentials pass through; engine.model.baseUrl wins', () => {
    const pass = buildQwenEnv(baseCtx({ engine: engine({ model: { provider: 'openai', name: 'qwen3-coder' } }), modelBaseUrl: undefined }), '/h/.qwen');
    expect(pass.OPENAI_API_KEY).toBe('sk-real');
    expect(pass.OPENAI_BASE_URL).toBe('https://proxy.example/v1');
    expect(pass.DASHSCOPE_API_KEY).toBe('ds');
    const over = buildQwenEnv(baseCtx({ engine: engine({ model: { provider: 'openai', baseUrl: 'https://gw.example/v1' } }) }), '/h/.qwen');
    expect(over.OPENAI_BASE_URL).toBe('https://gw.example/v1');
    expect(qwenAuthType(engine({ model: { provider: 'anthropic' } }))).toBe('anthropic');
    expect(qwenAuthType(engine({ model: { provider: 'openrouter' } }))).toBe('openai');
    expect(qwenAuthType(engine())).toBe('openai');
  });

  it('settings: memory, bundled skills, updates and telemetry off; no retries when scripted', () => {
    expect(buildQwenSettings(true)).toEqual({
      general: { enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
      skills: { disabledLevels: ['bundled'] },
      model: { generationConfig: { maxRetries: 0 } },
    });
    expect(buildQwenSettings(false).model).toBeUndefined();
    expect(openaiBaseUrl('http://h:1/')).toBe('http://h:1/v1');
  });

  it('its error facts: exit 53 or the max-turns message on stderr is max turns; no result line is a protocol error', () => {
    const ok = parseQwenOutput('{"type":"result","is_error":false,"result":"x","session_id":"s"}');
    const none = parseQwenOutput('');
    expect(decideQwenError(procResult({ exitCode: 53 }), none, 1000, '', 4)).toEqual({ kind: 'protocol', message: 'max turns reached (4)' });
    expect(decideQwenError(procResult({ exitCode: 1 }), none, 1000, 'Reached max session turns for this session.', 0)).toEqual({ kind: 'protocol', message: 'max turns reached (?)' });
    expect(decideQwenError(procResult(), none, 1000, '', 0)).toEqual({ kind: 'protocol', message: 'qwen exited 0 without a "result" line in its stream-json output' });
    expect(decideQwenError(procResult(), ok, 1000, '', 0)).toBeUndefined();
  });
});
