/**
 * The Codex adapter against the REAL `codex` binary (@openai/codex@0.171.0) and skill-up's
 * scripted model server (src/model/, OpenAI Responses protocol). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_CODEX_BIN`, which the global set-up (test/setup/engines.ts) installs
 * into a test cache with the same resolver a run uses (~20 s the first time). When it cannot be
 * had, the tests FAIL with the reason: they are never skipped.
 */
import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { buildCodexArgs, buildCodexConfig, buildCodexEnv, codexAdapter, codexBaseUrl, codexPermissionMode, decideError } from './adapter.js';
import { parseCodexJson } from './parse.js';
import { engineConfig, procResult, processesIn, pureCtx, realEngineHarness } from '../../test/support/engine.js';

const engine = (over: Partial<EngineConfig> = {}): EngineConfig => engineConfig('codex', over);

describe('codex adapter (real binary, scripted model)', () => {
  const h = realEngineHarness('codex');
  const { makeCtx, oneTurn, resumedPair } = h;
  const server = () => h.server;

  it('one turn that writes a file through apply_patch', async () => {
    const ctx = await makeCtx();
    const t0 = performance.now();
    const turn = await oneTurn(ctx, 'Please write hello please');
    const wall = performance.now() - t0;
    console.log(`one scripted codex turn (apply_patch + final answer): process ${turn.durationMs} ms, prepare+run ${wall.toFixed(0)} ms`);
    expect(turn.error).toBeUndefined();
    expect(turn.exitCode).toBe(0);
    expect(turn.finalText).toBe('Wrote hello.txt');
    expect(await readFile(join(ctx.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
    expect(turn.toolCalls).toEqual([
      { name: 'file_change', input: { changes: [{ path: join(ctx.workspace, 'hello.txt'), kind: 'add' }] }, output: `add ${join(ctx.workspace, 'hello.txt')}`, isError: false },
    ]);
    expect(turn.skillActivations).toEqual([]);
    expect(turn.skillsListed).toEqual([]); // bundled skills are switched off
    expect(turn.usage.input).toBeGreaterThan(0);
    expect(turn.usage.output).toBeGreaterThan(0);
    expect(turn.costUsd).toBeUndefined();
    expect(turn.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(turn.rawFiles).toEqual(['outputs/turn-1.jsonl', 'outputs/turn-1.stderr.txt', 'outputs/turn-1.last-message.txt']);
    for (const f of turn.rawFiles) expect(existsSync(join(ctx.outputDir, f))).toBe(true);
    // Isolation: codex's state went to the job's CODEX_HOME.
    expect(existsSync(join(ctx.homeDir, 'codex-home', 'sessions'))).toBe(true);
    // Each exchange was filed under the job (API key skill-up-job:<jobId>) and the thread id.
    const byJob = server().requestsFor(ctx.jobId!);
    expect(byJob.map((e) => e.protocol)).toEqual(['openai_responses', 'openai_responses']);
    expect(server().requestsFor(turn.sessionId!)).toHaveLength(2);
    expect(byJob[0]!.conversation?.engine).toBe('codex');
    expect(byJob[0]!.conversation?.cwd).toBe(ctx.workspace);
    // The raw file parses the same way offline.
    const again = parseCodexJson(await readFile(join(ctx.outputDir, turn.rawFiles[0]!), 'utf8'));
    expect(again.finalText).toBe(turn.finalText);
  });

  it('a shell command runs in the workspace-write sandbox; its output is the tool output', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'run a command for me');
    expect(turn.error).toBeUndefined();
    expect(await readFile(join(ctx.workspace, 'sub/ran.txt'), 'utf8')).toBe("it's");
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ name: 'command_execution', output: "it's", isError: false });
    expect(turn.finalText).toBe('Ran: run a command for me');
  });

  it('the permission mode recorded is what skill-up passed: the config’s policy, or the bypass flag with bypass_sandbox', async () => {
    const plain = await oneTurn(await makeCtx(), 'Please write hello please');
    expect(plain.error).toBeUndefined();
    expect(plain.permissionMode).toBe('approval_policy "never", sandbox_mode "workspace-write"');
    const ctx = await makeCtx({ engine: engine({ kwargs: { bypass_sandbox: 'true' } }) });
    const bypassed = await oneTurn(ctx, 'Please write hello please');
    expect(bypassed.error).toBeUndefined();
    expect(await readFile(join(ctx.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
    expect(bypassed.permissionMode).toBe('--dangerously-bypass-approvals-and-sandbox');
    expect(codexPermissionMode(true)).toBe(bypassed.permissionMode);
  }, 120_000);

  it('a skill in .codex/skills is found too', async () => {
    const ctx = await makeCtx({ skill: true, skillDir: '.codex/skills' });
    const turn = await oneTurn(ctx, 'Please greet me');
    expect(turn.error).toBeUndefined();
    expect(turn.skillsListed).toEqual(['hello']);
    expect(turn.skillActivations).toEqual([{ skill: 'hello', via: 'read SKILL.md' }]);
  });

  it('a $skill mention (codex pastes SKILL.md into the prompt) is an activation too', async () => {
    const ctx = await makeCtx({ skill: true });
    const turn = await oneTurn(ctx, '$hello say something');
    expect(turn.error).toBeUndefined();
    expect(turn.finalText).toBe("I don't know how to do that.");
    expect(turn.toolCalls).toEqual([]);
    expect(turn.skillActivations).toEqual([{ skill: 'hello', via: '$skill mention' }]);
    // The pasted <skill> block is engine-injected context, not a second prompt.
    expect(server().requestsFor(turn.sessionId!)[0]!.conversation).toMatchObject({ turn: 1, prompt: '$hello say something' });
  });

  it('two turns: the second resumes the first thread and sees it; tokens are per turn', async () => {
    const ctx = await makeCtx();
    const { t1, t2 } = await resumedPair(ctx);
    expect(t2.skillsListed).toEqual([]);
    expect(t2.skillActivations).toEqual([]);
    expect(readdirSync(join(ctx.homeDir, 'codex-home', 'sessions'), { recursive: true }).filter((f) => String(f).endsWith('.jsonl'))).toHaveLength(1);
    expect(t2.rawFiles).toEqual(['outputs/turn-2.jsonl', 'outputs/turn-2.stderr.txt', 'outputs/turn-2.last-message.txt']);
    // The resumed request replays turn 1 (prompt, apply_patch call and result) before turn 2's prompt.
    const requests = server().requestsFor(t1.sessionId!);
    expect(requests).toHaveLength(3);
    expect(requests[2]!.conversation).toMatchObject({ turn: 2, prompt: 'What did you do?' });
    // Per-turn tokens although codex's counters are cumulative over the thread.
    const raw2 = parseCodexJson(await readFile(join(ctx.outputDir, t2.rawFiles[0]!), 'utf8'));
    expect(raw2.cumulativeUsage!.input_tokens).toBe(t1.usage.input + t2.usage.input);
    expect(t2.usage.input).toBeGreaterThan(0);
    expect(t2.usage.input).toBeLessThan(raw2.cumulativeUsage!.input_tokens);
  });

  it('an HTTP 400 is an api error carrying the message too', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'bad request now');
    expect(turn.error?.kind).toBe('api');
    expect(turn.error?.message).toContain('scripted bad request');
  });

  it('an unreachable endpoint (codex retries forever) ends at the time limit', async () => {
    const ctx = await makeCtx();
    ctx.modelBaseUrl = 'http://127.0.0.1:9'; // discard port: connection refused
    const turn = await oneTurn(ctx, 'write hello please', 3_000);
    expect(turn.error?.kind).toBe('timeout');
    expect(processesIn(ctx.workspace, 'never-matches')).toEqual([]);
  });

  it('a model name codex does not know still works (shell writes instead of apply_patch)', async () => {
    const ctx = await makeCtx({ engine: engine({ model: { provider: 'scripted', name: 'claude-sonnet-4-5' } }) });
    const turn = await oneTurn(ctx, 'Please write hello please');
    expect(turn.error).toBeUndefined();
    expect(await readFile(join(ctx.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
    expect(turn.toolCalls.map((c) => c.name)).toEqual(['command_execution']);
  });

  it('the generated config.toml passes --strict-config', async () => {
    const ctx = await makeCtx();
    const prepared = await codexAdapter.prepare(ctx);
    const { execa } = await import('execa');
    const r = await execa(prepared.bin!, ['exec', '--strict-config', '--json', '--skip-git-repo-check', '--', 'write hello please'], {
      cwd: ctx.workspace,
      env: prepared.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    expect(r.exitCode).toBe(0);
    expect(parseCodexJson(String(r.stdout)).finalText).toBe('Wrote hello.txt');
  });

});

describe('codex adapter (pure parts)', () => {
  const baseCtx = (over: Partial<EngineContext> = {}) =>
    pureCtx('codex', { PATH: '/usr/bin', OPENAI_API_KEY: 'sk-real', CODEX_API_KEY: 'ck', OPENAI_BASE_URL: 'https://proxy.example/v1' }, over);

  it('argv: exec or exec resume, positionals behind --, bypass flag, big prompts on stdin', () => {
    expect(buildCodexArgs({ prompt: 'hi', lastMessageFile: '/o/l.txt' })).toEqual({ args: ['exec', '--json', '--skip-git-repo-check', '-o', '/o/l.txt', '--', 'hi'] });
    expect(buildCodexArgs({ prompt: 'hi', lastMessageFile: '/o/l.txt', resume: 'T', bypassSandbox: true }).args).toEqual([
      'exec', 'resume', '--json', '--skip-git-repo-check', '-o', '/o/l.txt', '--dangerously-bypass-approvals-and-sandbox', '--', 'T', 'hi',
    ]);
    const big = 'x'.repeat(200_000);
    const r = buildCodexArgs({ prompt: big, lastMessageFile: '/o/l.txt' });
    expect(r.stdin).toBe(big);
    expect(r.args.at(-1)).toBe('-');
  });

  it('env, scripted: private HOME and CODEX_HOME, job key, routing variables dropped', () => {
    const env = buildCodexEnv(baseCtx(), '/h/codex-home');
    expect(env).toMatchObject({ HOME: '/h', CODEX_HOME: '/h/codex-home', OPENAI_API_KEY: 'skill-up-job:case/with_skill/run-1', PATH: '/usr/bin', XDG_CONFIG_HOME: '/h/.config' });
    expect(env.CODEX_API_KEY).toBeUndefined();
    expect(env.OPENAI_BASE_URL).toBeUndefined();
  });

  it('env, real model: the key passes through untouched', () => {
    const env = buildCodexEnv(baseCtx({ engine: engine({ model: { provider: 'openai' } }) }), '/h/c');
    expect(env.OPENAI_API_KEY).toBe('sk-real');
  });

  it('config: scripted provider with /v1, no retries, sandbox, telemetry and bundled skills off', () => {
    const toml = buildCodexConfig(baseCtx());
    expect(toml).toContain('model = "gpt-5.5"');
    expect(toml).toContain('model_provider = "skillup"');
    expect(toml).toContain('base_url = "http://127.0.0.1:1234/v1"');
    expect(toml).toContain('wire_api = "responses"');
    expect(toml).toContain('env_key = "OPENAI_API_KEY"');
    expect(toml).toContain('request_max_retries = 0');
    expect(toml).toContain('stream_max_retries = 0');
    expect(toml).toContain('sandbox_mode = "workspace-write"');
    expect(toml).toContain('[analytics]\nenabled = false');
    expect(toml).toContain('[skills.bundled]\nenabled = false');
    expect(toml).not.toContain('sk-real');
    expect(buildCodexConfig(baseCtx(), { bypassSandbox: true })).toContain('sandbox_mode = "danger-full-access"');
    expect(() => buildCodexConfig(baseCtx({ modelBaseUrl: undefined }))).toThrow(/scripted/);
  });

  it('config, real model: engine.model.baseUrl or the OpenAI API, default retries, model only when named', () => {
    const real = buildCodexConfig(baseCtx({ engine: engine({ model: { provider: 'openai', baseUrl: 'https://gw.example/openai/v1/', name: 'gpt-5.5-codex' } }) }));
    expect(real).toContain('base_url = "https://gw.example/openai/v1"');
    expect(real).toContain('model = "gpt-5.5-codex"');
    expect(real).not.toContain('max_retries');
    const dflt = buildCodexConfig(baseCtx({ engine: engine({ model: { provider: 'openai' } }) }));
    expect(dflt).toContain('base_url = "https://api.openai.com/v1"');
    expect(dflt).not.toMatch(/^model = /m);
  });

  it('codexBaseUrl adds /v1 to the scripted server URL only', () => {
    expect(codexBaseUrl('http://127.0.0.1:9/', true)).toBe('http://127.0.0.1:9/v1');
    expect(codexBaseUrl('http://127.0.0.1:9/v1', true)).toBe('http://127.0.0.1:9/v1');
    expect(codexBaseUrl('https://h/api/', false)).toBe('https://h/api');
  });

  it('its error facts: a timeout names codex’s last error line; turn.failed is an api error; no turn.completed is a protocol error', () => {
    const ok = parseCodexJson('{"type":"thread.started","thread_id":"t"}\n{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}');
    const hang = parseCodexJson('{"type":"error","message":"Reconnecting... waiting for network (x)"}');
    const failed = parseCodexJson('{"type":"turn.failed","error":{"message":"boom"}}');
    expect(decideError(procResult({ exitCode: null, timedOut: true }), hang, 1000, '')).toEqual({
      kind: 'timeout',
      message: "timed out after 1.0 s (process group killed); codex's last error: Reconnecting... waiting for network (x)",
    });
    expect(decideError(procResult({ exitCode: 1 }), failed, 1000, '')).toEqual({ kind: 'api', message: 'boom' });
    expect(decideError(procResult(), parseCodexJson(''), 1000, '')).toEqual({ kind: 'protocol', message: 'codex exited 0 without a "turn.completed" line in its --json output' });
    expect(decideError(procResult(), ok, 1000, '')).toBeUndefined();
  });
});
