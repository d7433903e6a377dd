/**
 * The Qwen Code adapter against the REAL `qwen` CLI (@qwen-code/qwen-code@0.24.4) and skill-up's
 * scripted model server (src/model/, OpenAI Chat Completions). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_QWEN_CODE_BIN`, which the global set-up (test/setup/engines.ts)
 * installs into a test cache with the same resolver a run uses. When it cannot be had, the tests
 * FAIL with the reason: they are never skipped.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseSpec, EngineConfig } from '../../src/config/types.js';
import type { EngineContext, TranscriptTurn } from '../../src/engine/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { buildQwenArgs, buildQwenEnv, buildQwenSettings, decideQwenError, openaiBaseUrl, qwenAuthType, qwenCodeAdapter } from './adapter.js';
import { parseQwenOutput } from './parse.js';
import { adapterTestCase } from '../../test/support/engine.js';

const VERSION = '0.24.4';

const SCRIPT = `
rules:
  - name: fail
    when: { prompt_contains: "please fail" }
    error: { status: 400, message: "scripted failure for the qwen test" }
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
      - { run: "true" }
      - { say: "never reached" }
  - name: second-turn
    when: { turn: 2 }
    reply: [ { say: "Turn {{turn}}: earlier I wrote hello.txt." } ]
  - name: echo
    when: { prompt_contains: "echo:" }
    reply: [ { say: "You said <{{prompt}}>" } ]
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
  name: 'qwen_code',
  displayName: 'qwen_code',
  version: VERSION,
  model: { provider: 'scripted' },
  kwargs: {},
  ...over,
});

const caseSpec = (maxTurns = 10): CaseSpec => adapterTestCase('qwen-adapter-test', maxTurns);

let jobs = 0;
async function makeCtx(opts: { skill?: boolean; maxTurns?: number; signal?: AbortSignal; engine?: EngineConfig } = {}): Promise<EngineContext> {
  const n = ++jobs;
  const dir = join(root, `job-${n}`);
  const ctx: EngineContext = {
    jobId: `qwen-adapter-test/job-${n}`,
    engine: opts.engine ?? engine(),
    case: caseSpec(opts.maxTurns),
    variant: opts.skill ? 'with_skill' : 'without_skill',
    trial: 1,
    workspace: join(dir, 'workspace'),
    homeDir: join(dir, 'home'),
    outputDir: join(dir, 'out'),
    installedSkills: opts.skill ? ['hello'] : [],
    // An inherited PWD naming another folder, as when skill-up runs from a shell: it must not win.
    baseEnv: { PATH: process.env.PATH, LANG: 'C.UTF-8', PWD: root },
    signal: opts.signal ?? new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: server.url,
  };
  await mkdir(ctx.workspace, { recursive: true });
  if (opts.skill) {
    const at = join(ctx.workspace, qwenCodeAdapter.skillDirs[0]!, 'hello');
    await mkdir(at, { recursive: true });
    await writeFile(join(at, 'SKILL.md'), SKILL_MD);
  }
  return ctx;
}

async function oneTurn(ctx: EngineContext, prompt: string, timeoutMs = 90_000): Promise<TranscriptTurn> {
  const prepared = await qwenCodeAdapter.prepare(ctx);
  return qwenCodeAdapter.runTurn(ctx, prepared, { index: 1, prompt, history: [prompt], timeoutMs });
}


describe('qwen_code adapter (real binary, scripted model)', () => {
  beforeAll(async () => {
    binPath = process.env.SKILL_UP_QWEN_CODE_BIN ?? '';
    if (!binPath) throw new Error('SKILL_UP_QWEN_CODE_BIN is not set: run the tests through vitest.config.ts (its global set-up installs Qwen Code)');
    server = await startModelServer({ script: parseModelScript(SCRIPT, 'qwen-adapter-test.yaml') });
    root = await mkdtemp(join(tmpdir(), 'skill-up-qwen-test-'));
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('two turns: the second resumes the first session and sees it; tokens per turn', async () => {
    const ctx = await makeCtx();
    const prepared = await qwenCodeAdapter.prepare(ctx);
    const t1 = await qwenCodeAdapter.runTurn(ctx, prepared, { index: 1, prompt: 'write hello please', history: ['write hello please'], timeoutMs: 90_000 });
    expect(t1.error).toBeUndefined();
    const t2 = await qwenCodeAdapter.runTurn(ctx, prepared, {
      index: 2,
      prompt: 'What did you do?',
      sessionId: t1.sessionId,
      history: ['write hello please', 'What did you do?'],
      timeoutMs: 90_000,
    });
    expect(t2.error).toBeUndefined();
    expect(t2.sessionId).toBe(t1.sessionId);
    expect(t2.finalText).toBe('Turn 2: earlier I wrote hello.txt.');
    expect(t2.toolCalls).toEqual([]);
    const last = server.requestsFor(ctx.jobId!).at(-1)!;
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
    const turn = await oneTurn(ctx, 'please fail now');
    expect(performance.now() - t0).toBeLessThan(45_000);
    expect(turn.error).toEqual({ kind: 'api', message: '[API Error: 400 scripted failure for the qwen test]' });
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
  const baseCtx = (over: Partial<EngineContext> = {}): EngineContext => ({
    jobId: 'case/with_skill/run-1',
    engine: engine(),
    case: caseSpec(),
    variant: 'with_skill',
    trial: 1,
    workspace: '/w',
    homeDir: '/h',
    outputDir: '/o',
    installedSkills: [],
    baseEnv: { PATH: '/usr/bin', OPENAI_API_KEY: 'sk-real', OPENAI_BASE_URL: 'https://proxy.example/v1', DASHSCOPE_API_KEY: 'ds', QWEN_CODE_UNATTENDED_RETRY: '1' },
    signal: new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: 'http://127.0.0.1:1234/',
    ...over,
  });

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

  it('error precedence: start failure, timeout, cancel, output error, max turns, exit code, no result', () => {
    const ok = parseQwenOutput('{"type":"result","is_error":false,"result":"x","session_id":"s"}');
    const none = parseQwenOutput('');
    const base = { exitCode: 0, timedOut: false, cancelled: false, durationMs: 1, stdoutBytes: 0, stderrBytes: 0 };
    expect(decideQwenError({ ...base, exitCode: null, startError: 'command not found: /x', startErrorCode: 'ENOENT' }, none, 1000, '', 0)?.kind).toBe('missing');
    expect(decideQwenError({ ...base, exitCode: null, timedOut: true }, ok, 1000, '', 0)).toEqual({ kind: 'timeout', message: 'timed out after 1.0 s (process group killed)' });
    expect(decideQwenError({ ...base, exitCode: null, cancelled: true }, ok, 1000, '', 0)?.kind).toBe('cancelled');
    expect(decideQwenError({ ...base, exitCode: 53 }, none, 1000, 'Reached max session turns for this session.', 4)).toEqual({ kind: 'protocol', message: 'max turns reached (4)' });
    expect(decideQwenError({ ...base, exitCode: 1 }, none, 1000, 'boom\n', 0)).toEqual({ kind: 'crash', message: 'exited with code 1: boom' });
    expect(decideQwenError(base, none, 1000, '', 0)?.kind).toBe('protocol');
    expect(decideQwenError(base, ok, 1000, '', 0)).toBeUndefined();
  });
});
