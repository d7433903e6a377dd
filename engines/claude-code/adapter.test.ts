/**
 * The Claude Code adapter against the REAL `claude` binary (@anthropic-ai/claude-code@2.1.332)
 * and skill-up's scripted model server (src/model/). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_CLAUDE_CODE_BIN`, which the global set-up (test/setup/claude.ts)
 * installs into a test cache with the same resolver a run uses (~8 s the first time). When it
 * cannot be had, the tests FAIL with the reason: they are never skipped.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseSpec, EngineConfig } from '../../src/config/types.js';
import type { EngineContext, TranscriptTurn } from '../../src/engine/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { buildClaudeArgs, buildClaudeEnv, claudeCodeAdapter, decideError, normaliseAnthropicBaseUrl } from './adapter.js';
import { parseStreamJson } from './parse.js';
import { adapterTestCase } from '../../test/support/engine.js';

const VERSION = '2.1.332';

const SCRIPT = `
rules:
  - name: fail
    when: { prompt_contains: "please fail" }
    error: { status: 500, message: "scripted failure for the adapter test" }
  - name: slow
    when: { prompt_contains: "be slow" }
    delay_ms: 120000
    reply: [ { say: "too late" } ]
  - name: load-skill
    when: { prompt_contains: "greet", skill_listed: hello, skill_loaded: false }
    reply: [ { use_skill: hello } ]
  - name: after-skill
    when: { skill_loaded: hello }
    reply:
      - { write_file: { path: greeting.txt, content: "Hello, World!\\n" } }
      - { say: "Greeted as the skill says." }
  - name: write
    when: { prompt_contains: "write hello" }
    reply:
      - { write_file: { path: hello.txt, content: "hi\\n" } }
      - { say: "Wrote hello.txt" }
  - name: loop
    when: { prompt_contains: "loop forever" }
    reply:
      - { run: "true" }
      - { run: "true" }
      - { run: "true" }
      - { say: "never reached" }
  - name: second-turn
    when: { turn: 2 }
    reply: [ { say: "Turn {{turn}}: earlier I wrote hello.txt." } ]
  - reply: [ { say: "I don't know how to do that." } ]
`;

const SKILL_MD = `---
name: hello
description: Greets the user warmly. Use when the user asks for a greeting.
---
# Hello
Write greeting.txt with "Hello, World!".
`;

let server: ModelServer;
let root: string;
let binPath: string;

const engine = (over: Partial<EngineConfig> = {}): EngineConfig => ({
  name: 'claude_code',
  displayName: 'claude_code',
  version: VERSION,
  model: { provider: 'scripted' },
  kwargs: {},
  ...over,
});

const caseSpec = (maxTurns = 10): CaseSpec => adapterTestCase('claude-adapter-test', maxTurns);

let jobs = 0;
async function makeCtx(opts: { skill?: boolean; maxTurns?: number; signal?: AbortSignal; engine?: EngineConfig } = {}): Promise<EngineContext> {
  const dir = join(root, `job-${++jobs}`);
  const ctx: EngineContext = {
    engine: opts.engine ?? engine(),
    case: caseSpec(opts.maxTurns),
    variant: opts.skill ? 'with_skill' : 'without_skill',
    trial: 1,
    workspace: join(dir, 'workspace'),
    homeDir: join(dir, 'home'),
    outputDir: join(dir, 'out'),
    installedSkills: opts.skill ? ['hello'] : [],
    baseEnv: { PATH: process.env.PATH, LANG: 'C.UTF-8' },
    signal: opts.signal ?? new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: server.url,
  };
  await mkdir(ctx.workspace, { recursive: true });
  if (opts.skill) {
    await mkdir(join(ctx.workspace, '.claude/skills/hello'), { recursive: true });
    await writeFile(join(ctx.workspace, '.claude/skills/hello/SKILL.md'), SKILL_MD);
  }
  return ctx;
}

async function oneTurn(ctx: EngineContext, prompt: string, timeoutMs = 60_000, sessionId?: string, index = 1): Promise<TranscriptTurn> {
  const prepared = await claudeCodeAdapter.prepare(ctx);
  return claudeCodeAdapter.runTurn(ctx, prepared, { index, prompt, sessionId, history: [prompt], timeoutMs });
}


describe('claude_code adapter (real binary, scripted model)', () => {
  beforeAll(async () => {
    // The global set-up (test/setup/claude.ts) installs the pinned binary and sets this.
    binPath = process.env.SKILL_UP_CLAUDE_CODE_BIN ?? '';
    if (!binPath) throw new Error('SKILL_UP_CLAUDE_CODE_BIN is not set: run the tests through vitest.config.ts (its global set-up installs Claude Code)');
    server = await startModelServer({ script: parseModelScript(SCRIPT, 'adapter-test-script.yaml') });
    root = await mkdtemp(join(tmpdir(), 'skill-up-claude-test-'));
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

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
    const prepared = await claudeCodeAdapter.prepare(ctx);
    const t1 = await claudeCodeAdapter.runTurn(ctx, prepared, { index: 1, prompt: 'write hello please', history: ['write hello please'], timeoutMs: 60_000 });
    expect(t1.error).toBeUndefined();
    const t2 = await claudeCodeAdapter.runTurn(ctx, prepared, {
      index: 2,
      prompt: 'What did you do?',
      sessionId: t1.sessionId,
      history: ['write hello please', 'What did you do?'],
      timeoutMs: 60_000,
    });
    expect(t2.error).toBeUndefined();
    expect(t2.sessionId).toBe(t1.sessionId);
    expect(t2.finalText).toBe('Turn 2: earlier I wrote hello.txt.');
    expect(t2.toolCalls).toEqual([]);
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
  const baseCtx = (over: Partial<EngineContext> = {}): EngineContext => ({
    engine: engine(),
    case: caseSpec(),
    variant: 'with_skill',
    trial: 1,
    workspace: '/w',
    homeDir: '/h',
    outputDir: '/o',
    installedSkills: [],
    baseEnv: { PATH: '/usr/bin', ANTHROPIC_API_KEY: 'sk-real', ANTHROPIC_AUTH_TOKEN: 'tok', ANTHROPIC_BASE_URL: 'https://proxy.example' },
    signal: new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: 'http://127.0.0.1:1234/',
    ...over,
  });

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

  it('error precedence: start failure, timeout, cancel, stream error, exit code, missing result', () => {
    const ok = parseStreamJson('{"type":"result","is_error":false,"result":"x","session_id":"s"}');
    const none = parseStreamJson('');
    const base = { exitCode: 0, timedOut: false, cancelled: false, durationMs: 1, stdoutBytes: 0, stderrBytes: 0 };
    expect(decideError({ ...base, exitCode: null, startError: 'command not found: /x', startErrorCode: 'ENOENT' }, none, 1000, '')?.kind).toBe('missing');
    expect(decideError({ ...base, exitCode: null, timedOut: true }, ok, 1000, '')).toEqual({ kind: 'timeout', message: 'timed out after 1.0 s (process group killed)' });
    expect(decideError({ ...base, exitCode: null, cancelled: true }, ok, 1000, '')?.kind).toBe('cancelled');
    expect(decideError({ ...base, exitCode: 1 }, none, 1000, 'Error: boom\n')).toEqual({ kind: 'crash', message: 'exited with code 1: Error: boom' });
    expect(decideError(base, none, 1000, '')?.kind).toBe('protocol');
    expect(decideError(base, ok, 1000, '')).toBeUndefined();
  });
});
