/**
 * The Claude Code adapter against the REAL `claude` binary (@anthropic-ai/claude-code@2.1.332)
 * and skill-up's scripted model server (src/model/). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_CLAUDE_CODE_BIN`, which the global set-up (test/setup/claude.ts)
 * installs into a test cache with the same resolver a run uses (~8 s the first time). When it
 * cannot be had, the tests FAIL with the reason: they are never skipped.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildClaudeArgs, buildClaudeEnv, decideError, normaliseAnthropicBaseUrl } from './adapter.js';
import { parseStreamJson } from './parse.js';
import type { EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { engineConfig, procResult, pureCtx, realEngineHarness } from '../../test/support/engine.js';

describe('claude_code adapter (real binary, scripted model)', () => {
  const { makeCtx, oneTurn, resumedPair } = realEngineHarness('claude_code');

  it('one turn that writes a file', async () => {
    const ctx = await makeCtx();
    const t0 = performance.now();
    const turn = await oneTurn(ctx, 'Please write hello.txt for me');
    const wall = performance.now() - t0;
    console.log(`one scripted claude turn (Write + final answer): process ${turn.durationMs} ms, prepare+run ${wall.toFixed(0)} ms`);
    expect(turn.error).toBeUndefined();
    expect(turn.exitCode).toBe(0);
    expect(turn.finalText).toBe('Wrote hello.txt');
    expect(await readFile(join(ctx.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ name: 'Write', input: { file_path: join(ctx.workspace, 'hello.txt'), content: 'hi\n' }, isError: false });
    expect(turn.toolCalls[0]!.output).toMatch(/File created successfully/);
    expect(turn.skillActivations).toEqual([]);
    expect(turn.skillsListed).toEqual([]); // bundled skills and plugin-authoring are switched off
    expect(turn.usage.input).toBeGreaterThan(0);
    expect(turn.usage.output).toBeGreaterThan(0);
    expect(turn.costUsd).toBeGreaterThan(0);
    expect(turn.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(turn.rawFiles).toEqual(['outputs/turn-1.stream.jsonl', 'outputs/turn-1.stderr.txt']);
    for (const f of turn.rawFiles) expect(existsSync(join(ctx.outputDir, f))).toBe(true);
    // Isolation: claude's state went to the job's config dir, nothing to a real HOME.
    expect(existsSync(join(ctx.homeDir, 'claude-config', '.claude.json'))).toBe(true);
    expect(existsSync(join(ctx.homeDir, 'claude-config', 'projects'))).toBe(true);
    // The raw file parses the same way offline.
    const again = parseStreamJson(await readFile(join(ctx.outputDir, turn.rawFiles[0]!), 'utf8'));
    expect(again.finalText).toBe(turn.finalText);
  });

  it('two turns: the second resumes the first session', async () => {
    const ctx = await makeCtx();
    const { t1, t2 } = await resumedPair(ctx);
    expect(t2.rawFiles).toEqual(['outputs/turn-2.stream.jsonl', 'outputs/turn-2.stderr.txt']);
    // Per-turn figures, although claude's total_cost_usd is cumulative over the session.
    const raw2 = parseStreamJson(await readFile(join(ctx.outputDir, t2.rawFiles[0]!), 'utf8'));
    expect(raw2.totalCostUsd!).toBeGreaterThan(t2.costUsd!);
    expect(t2.costUsd! + t1.costUsd!).toBeCloseTo(raw2.totalCostUsd!, 8);
  });

  it('max turns reached is a protocol error', async () => {
    const ctx = await makeCtx({ maxTurns: 2 });
    const turn = await oneTurn(ctx, 'loop forever');
    expect(turn.error).toEqual({ kind: 'protocol', message: 'max turns reached (2)' });
    expect(turn.toolCalls.length).toBeGreaterThanOrEqual(1);
  });

});

describe('claude_code adapter (pure parts)', () => {
  const engine = (over: Partial<EngineConfig> = {}) => engineConfig('claude_code', over);
  // No job id: the scripted key falls back to `dummy`.
  const baseCtx = (over: Partial<EngineContext> = {}) =>
    pureCtx('claude_code', { PATH: '/usr/bin', ANTHROPIC_API_KEY: 'sk-real', ANTHROPIC_AUTH_TOKEN: 'tok', ANTHROPIC_BASE_URL: 'https://proxy.example' }, { jobId: undefined, ...over });
  it('argv: the documented flags, prompt last behind --, optional model and resume', () => {
    expect(buildClaudeArgs({ prompt: 'hi', maxTurns: 5 })).toEqual({
      args: ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', '--max-turns', '5', '--', 'hi'],
    });
    expect(buildClaudeArgs({ prompt: 'hi', maxTurns: 0, model: 'claude-x', resume: 'abc' }).args).toEqual([
      '-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', '--model', 'claude-x', '--resume', 'abc', '--', 'hi',
    ]);
    const big = 'x'.repeat(200_000);
    const r = buildClaudeArgs({ prompt: big, maxTurns: 1 });
    expect(r.stdin).toBe(big);
    expect(r.args).not.toContain(big);
  });

  it('env, scripted: isolated homes, dummy key, server URL, no retries, routing variables dropped', () => {
    const env = buildClaudeEnv(baseCtx(), '/h/claude-config');
    expect(env).toMatchObject({
      HOME: '/h',
      CLAUDE_CONFIG_DIR: '/h/claude-config',
      IS_SANDBOX: '1',
      CLAUDE_CODE_MAX_RETRIES: '0',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_BUNDLED_SKILLS: '1',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:1234',
      ANTHROPIC_API_KEY: 'dummy',
      PATH: '/usr/bin',
    });
    expect(env.ANTHROPIC_AUTH_TOKEN).toBeUndefined();
  });

  it('env, real model: credentials and base URL pass through; engine.model.baseUrl wins; retries left default', () => {
    const passthrough = buildClaudeEnv(baseCtx({ engine: engine({ model: { provider: 'anthropic' } }), modelBaseUrl: undefined }), '/h/c');
    expect(passthrough.ANTHROPIC_API_KEY).toBe('sk-real');
    expect(passthrough.ANTHROPIC_AUTH_TOKEN).toBe('tok');
    expect(passthrough.ANTHROPIC_BASE_URL).toBe('https://proxy.example');
    expect(passthrough.CLAUDE_CODE_MAX_RETRIES).toBeUndefined();
    const configured = buildClaudeEnv(baseCtx({ engine: engine({ model: { provider: 'anthropic', baseUrl: 'https://gw.example/v1/' } }) }), '/h/c');
    expect(configured.ANTHROPIC_BASE_URL).toBe('https://gw.example');
    expect(() => buildClaudeEnv(baseCtx({ modelBaseUrl: undefined }), '/h/c')).toThrow(/scripted/);
  });

  it('normaliseAnthropicBaseUrl drops a trailing slash and /v1', () => {
    expect(normaliseAnthropicBaseUrl('http://127.0.0.1:9/v1/')).toBe('http://127.0.0.1:9');
    expect(normaliseAnthropicBaseUrl('http://h/api')).toBe('http://h/api');
  });

  it('its error facts: a result line completes the turn, none is a protocol error; the stream’s error wins over the exit code', () => {
    const ok = parseStreamJson('{"type":"result","is_error":false,"result":"x","session_id":"s"}');
    const maxTurns = parseStreamJson('{"type":"result","is_error":true,"terminal_reason":"max_turns","num_turns":3,"session_id":"s"}');
    expect(decideError(procResult(), ok, 1000, '')).toBeUndefined();
    expect(decideError(procResult(), parseStreamJson(''), 1000, '')).toEqual({ kind: 'protocol', message: 'claude exited 0 without a "result" line in its stream-json output' });
    expect(decideError(procResult({ exitCode: 1 }), maxTurns, 1000, 'x')).toEqual({ kind: 'protocol', message: 'max turns reached (3)' });
  });
});
