/**
 * The OpenCode adapter against the REAL `opencode` binary (opencode-ai@1.18.33) and skill-up's
 * scripted model server (src/model/, OpenAI Chat Completions). Nothing leaves 127.0.0.1.
 *
 * The binary is `SKILL_UP_OPENCODE_BIN`, which the global set-up (test/setup/engines.ts)
 * installs into a test cache with the same resolver a run uses. When it cannot be had, the tests
 * FAIL with the reason: they are never skipped. OpenCode also needs `rg` (ripgrep) on PATH.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseSpec, EngineConfig } from '../../src/config/types.js';
import type { EngineContext, TranscriptTurn } from '../../src/engine/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import {
  buildOpencodeArgs,
  buildOpencodeConfig,
  buildOpencodeEnv,
  decideOpencodeError,
  opencodeAdapter,
  opencodeModel,
  openaiBaseUrl,
  ripgrepOnPath,
} from './adapter.js';
import { parseOpencodeJson } from './parse.js';
import { adapterTestCase } from '../../test/support/engine.js';

const VERSION = '1.18.33';

const SCRIPT = `
rules:
  - name: fail
    when: { prompt_contains: "please fail" }
    error: { status: 500, message: "scripted failure for the opencode test" }
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
  name: 'opencode',
  displayName: 'opencode',
  version: VERSION,
  model: { provider: 'scripted' },
  kwargs: {},
  ...over,
});

const caseSpec = (maxTurns = 10): CaseSpec => adapterTestCase('opencode-adapter-test', maxTurns);

let jobs = 0;
async function makeCtx(opts: { skill?: boolean; maxTurns?: number; signal?: AbortSignal; engine?: EngineConfig } = {}): Promise<EngineContext> {
  const n = ++jobs;
  const dir = join(root, `job-${n}`);
  const ctx: EngineContext = {
    jobId: `opencode-adapter-test/job-${n}`,
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
    const at = join(ctx.workspace, opencodeAdapter.skillDirs[0]!, 'hello');
    await mkdir(at, { recursive: true });
    await writeFile(join(at, 'SKILL.md'), SKILL_MD);
  }
  return ctx;
}

async function oneTurn(ctx: EngineContext, prompt: string, timeoutMs = 90_000): Promise<TranscriptTurn> {
  const prepared = await opencodeAdapter.prepare(ctx);
  return opencodeAdapter.runTurn(ctx, prepared, { index: 1, prompt, history: [prompt], timeoutMs });
}


describe('opencode adapter (real binary, scripted model)', () => {
  beforeAll(async () => {
    binPath = process.env.SKILL_UP_OPENCODE_BIN ?? '';
    if (!binPath) throw new Error('SKILL_UP_OPENCODE_BIN is not set: run the tests through vitest.config.ts (its global set-up installs OpenCode)');
    if (!(await ripgrepOnPath(process.env.PATH))) throw new Error('opencode needs ripgrep (`rg`) on PATH for its skill tool: apt-get install ripgrep');
    server = await startModelServer({ script: parseModelScript(SCRIPT, 'opencode-adapter-test.yaml') });
    root = await mkdtemp(join(tmpdir(), 'skill-up-opencode-test-'));
  }, 600_000);

  afterAll(async () => {
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

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
    ctx.baseEnv = { PATH: join(root, 'empty-bin'), LANG: 'C.UTF-8' };
    const turn = await oneTurn(ctx, 'write hello');
    expect(turn.error?.kind).toBe('missing');
    expect(turn.error?.message).toMatch(/ripgrep/);
  });
});

describe('opencode adapter (pure parts)', () => {
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
    baseEnv: { PATH: '/usr/bin', OPENAI_API_KEY: 'sk-real', OPENCODE_CONFIG_CONTENT: '{}', OPENCODE_PERMISSION: '{}' },
    signal: new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: 'http://127.0.0.1:1234/',
    ...over,
  });

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

  it('error precedence: start failure, timeout, cancel, output error, exit code, no step', () => {
    const ok = parseOpencodeJson('{"type":"step_start","sessionID":"s"}\n{"type":"step_finish","sessionID":"s","part":{"reason":"stop"}}');
    const none = parseOpencodeJson('');
    const apiErr = parseOpencodeJson('{"type":"error","error":{"name":"APIError","data":{"message":"m"}}}');
    const base = { exitCode: 0, timedOut: false, cancelled: false, durationMs: 1, stdoutBytes: 0, stderrBytes: 0 };
    expect(decideOpencodeError({ ...base, exitCode: null, startError: 'command not found: /x', startErrorCode: 'ENOENT' }, none, 1000, '')?.kind).toBe('missing');
    expect(decideOpencodeError({ ...base, exitCode: null, timedOut: true }, ok, 1000, '')).toEqual({ kind: 'timeout', message: 'timed out after 1.0 s (process group killed)' });
    expect(decideOpencodeError({ ...base, exitCode: null, cancelled: true }, ok, 1000, '')?.kind).toBe('cancelled');
    expect(decideOpencodeError({ ...base, exitCode: 1 }, apiErr, 1000, '')).toEqual({ kind: 'api', message: 'm' });
    expect(decideOpencodeError({ ...base, exitCode: 1 }, none, 1000, 'Error: boom\n')).toEqual({ kind: 'crash', message: 'exited with code 1: Error: boom' });
    expect(decideOpencodeError(base, none, 1000, '')?.kind).toBe('protocol');
    expect(decideOpencodeError(base, ok, 1000, '')).toBeUndefined();
  });
});
