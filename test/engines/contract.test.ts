/**
 * The engine contract, once for every CLI engine in the registry (test/support/engine.ts
 * `contractEngines`), each against its REAL binary at the pinned `testedVersion` (installed by
 * the global set-up, test/setup/engines.ts, as `SKILL_UP_<ENGINE>_BIN`) and skill-up's scripted
 * model server. Nothing leaves 127.0.0.1. What only one engine does stays in that engine's
 * engines/<name>/adapter.test.ts.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineConfig } from '../../src/config/types.js';
import type { EngineDefinition } from '../../src/engine/definition.js';
import { binOverrideVar } from '../../src/engine/known.js';
import type { EngineAdapter, EngineContext, TranscriptTurn } from '../../src/engine/types.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { adapterTestCase, contractEngines, processesOf } from '../support/engine.js';

const SCRIPT = `
rules:
  - name: fail
    when: { prompt_contains: "please fail" }
    error: { status: 500, message: "scripted failure for the contract test" }
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
  - name: narrate
    when: { prompt_contains: "narrate" }
    reply:
      - { say: "PROGRESS: I'll write notes.txt first." }
      - { write_file: { path: notes.txt, content: "noted\\n" } }
      - { say: "All done." }
  - name: quiet-end
    when: { prompt_contains: "quietly" }
    reply:
      - { say: "PROGRESS: I'll run ls first." }
      - { run: "ls" }
      - { say: "" }
  - name: write
    when: { prompt_contains: "write hello" }
    reply:
      - { write_file: { path: hello.txt, content: "hi\\n" } }
      - { say: "Wrote hello.txt" }
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
let jobs = 0;

beforeAll(async () => {
  server = await startModelServer({ script: parseModelScript(SCRIPT, 'contract-script.yaml') });
  root = await mkdtemp(join(tmpdir(), 'skill-up-contract-'));
}, 600_000);

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe.each(contractEngines().map((d) => [d.name, d] as const))('%s: the engine contract (real binary, scripted model)', (_name, def: EngineDefinition) => {
  let adapter: EngineAdapter;
  const engine = (): EngineConfig => ({ name: def.name, displayName: def.name, version: def.testedVersion, model: { provider: 'scripted' }, kwargs: {} });

  async function makeCtx(opts: { skill?: boolean; signal?: AbortSignal } = {}): Promise<EngineContext> {
    const n = ++jobs;
    const dir = join(root, `${def.name}-job-${n}`);
    const ctx: EngineContext = {
      jobId: `contract/${def.name}/job-${n}`,
      engine: engine(),
      case: adapterTestCase(`contract-${def.name}`),
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
      const at = join(ctx.workspace, def.skillDirs[0]!, 'hello');
      await mkdir(at, { recursive: true });
      await writeFile(join(at, 'SKILL.md'), SKILL_MD);
    }
    return ctx;
  }

  async function oneTurn(ctx: EngineContext, prompt: string, timeoutMs = 90_000): Promise<TranscriptTurn> {
    const prepared = await adapter.prepare(ctx);
    return adapter.runTurn(ctx, prepared, { index: 1, prompt, history: [prompt], timeoutMs });
  }

  /** No process of the job is left: none in its workspace, none with its HOME (after a moment for the kernel to reap). */
  async function expectNoProcessLeft(ctx: EngineContext): Promise<void> {
    await new Promise((r) => setTimeout(r, 200));
    expect(processesOf(ctx.workspace, ctx.homeDir)).toEqual([]);
  }

  beforeAll(async () => {
    if (!process.env[binOverrideVar(def.name)]) throw new Error(`${binOverrideVar(def.name)} is not set: run the tests through vitest.config.ts (its global set-up installs ${def.label})`);
    adapter = await def.load();
  });

  it('the adapter carries its definition, and check() reports the pinned version', async () => {
    expect(adapter).toMatchObject({ name: def.name, skillDirs: [...def.skillDirs], supportsResume: def.supportsResume });
    await expect(adapter.check!(engine())).resolves.toEqual({ version: def.testedVersion });
  }, 120_000);

  it('writes a file in the workspace, records the tool call, and leaves no process behind', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'Please write hello.txt for me');
    expect(turn.error).toBeUndefined();
    expect(turn.exitCode).toBe(0);
    expect(await readFile(join(ctx.workspace, 'hello.txt'), 'utf8')).toBe('hi\n');
    expect(turn.toolCalls.length).toBeGreaterThanOrEqual(1);
    expect(turn.finalText).toBe('Wrote hello.txt');
    expect(turn.usage.input).toBeGreaterThan(0);
    expect(turn.sessionId).toBeTruthy();
    expect(turn.rawFiles[0]).toMatch(/^outputs\/turn-1\./);
    for (const f of turn.rawFiles) expect(existsSync(join(ctx.outputDir, f))).toBe(true);
    await expectNoProcessLeft(ctx);
  }, 120_000);

  it('the final answer is the last message of the last model reply, not an earlier narration', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'Please narrate while you work');
    expect(turn.error).toBeUndefined();
    expect(await readFile(join(ctx.workspace, 'notes.txt'), 'utf8')).toBe('noted\n');
    expect(turn.finalText).toBe('All done.');
  }, 120_000);

  it('an empty last message is an empty final answer (the narration before the tool call is not it)', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'Please list the files quietly');
    expect(turn.error).toBeUndefined();
    expect(turn.finalText.trim()).toBe('');
  }, 120_000);

  it(`a skill installed in ${def.skillDirs[0]} is offered and activated`, async () => {
    const ctx = await makeCtx({ skill: true });
    const turn = await oneTurn(ctx, 'Please greet me');
    expect(turn.error).toBeUndefined();
    expect(turn.skillsListed).toEqual(['hello']);
    expect(turn.skillActivations.map((a) => a.skill)).toContain('hello');
    expect(await readFile(join(ctx.workspace, 'greeting.txt'), 'utf8')).toBe('Hello, World!\n');
    expect(turn.finalText).toBe('Greeted as the skill says.');
  }, 120_000);

  it('without the skill, none is offered or activated and the model falls through', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'Please greet me');
    expect(turn.error).toBeUndefined();
    expect(turn.skillsListed).toEqual([]);
    expect(turn.skillActivations).toEqual([]);
    expect(turn.finalText).toBe("I don't know how to do that.");
  }, 120_000);

  it('two turns: the second resumes the first session and sees it', async () => {
    const ctx = await makeCtx();
    const prepared = await adapter.prepare(ctx);
    const t1 = await adapter.runTurn(ctx, prepared, { index: 1, prompt: 'write hello please', history: ['write hello please'], timeoutMs: 90_000 });
    expect(t1.error).toBeUndefined();
    const t2 = await adapter.runTurn(ctx, prepared, {
      index: 2,
      prompt: 'What did you do?',
      sessionId: t1.sessionId,
      history: ['write hello please', 'What did you do?'],
      timeoutMs: 90_000,
    });
    expect(t2.error).toBeUndefined();
    expect(t2.sessionId).toBe(t1.sessionId);
    // The rule matches only when the engine sent turn 1 along: the session was resumed.
    expect(t2.finalText).toBe('Turn 2: earlier I wrote hello.txt.');
    expect(t2.toolCalls).toEqual([]);
    expect(t2.rawFiles[0]).toMatch(/^outputs\/turn-2\./);
  }, 200_000);

  it('an HTTP 500 from the model is an api error carrying the API message', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'please fail now', 150_000);
    expect(turn.error?.kind).toBe('api');
    expect(turn.error?.message).toContain('scripted failure for the contract test');
    await expectNoProcessLeft(ctx);
  }, 200_000);

  it('a model that never answers is a timeout within the limit, leaving no process behind', async () => {
    const ctx = await makeCtx();
    const t0 = performance.now();
    const turn = await oneTurn(ctx, `be slow ${Date.now()}`, 3_000);
    expect(turn.error?.kind).toBe('timeout');
    expect(turn.exitCode).toBeNull();
    expect(performance.now() - t0).toBeLessThan(3_000 + 2_000 + 4_000); // limit + SIGKILL grace + slack
    await expectNoProcessLeft(ctx);
  }, 120_000);

  it('an abort signal cancels the turn and kills the process group', async () => {
    const ac = new AbortController();
    const ctx = await makeCtx({ signal: ac.signal });
    setTimeout(() => ac.abort(), 1_500);
    const turn = await oneTurn(ctx, `be slow cancel ${Date.now()}`);
    expect(turn.error?.kind).toBe('cancelled');
    await expectNoProcessLeft(ctx);
  }, 120_000);

  it('a prompt starting with "-" is a prompt, not an option', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, '--write hello now');
    expect(turn.error).toBeUndefined();
    expect(turn.finalText).toBe('Wrote hello.txt');
  }, 120_000);

  it('a missing binary is an error of kind "missing" naming the override variable', async () => {
    const variable = binOverrideVar(def.name);
    const saved = process.env[variable];
    process.env[variable] = join(root, `no-such-${def.bin}`);
    try {
      const turn = await oneTurn(await makeCtx(), 'write hello');
      expect(turn.error?.kind).toBe('missing');
      expect(turn.error?.message).toContain(variable);
      await expect(adapter.check!(engine())).rejects.toThrow(/no such executable/);
    } finally {
      if (saved === undefined) delete process.env[variable];
      else process.env[variable] = saved;
    }
  });
});
