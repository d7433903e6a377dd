/**
 * The engine contract, once for every CLI engine in the registry (test/support/engine.ts
 * `contractEngines`), each against its REAL binary at the pinned `testedVersion` (installed by
 * the global set-up, test/setup/engines.ts, as `SKILL_UP_<ENGINE>_BIN`) and skill-up's scripted
 * model server. Nothing leaves 127.0.0.1. What only one engine does stays in that engine's
 * engines/<name>/adapter.test.ts.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineDefinition } from '../../src/engine/definition.js';
import { binOverrideVar } from '../../src/engine/known.js';
import { contractEngines, realEngineHarness } from '../support/engine.js';

describe.each(contractEngines().map((d) => [d.name, d] as const))('%s: the engine contract (real binary, scripted model)', (_name, def: EngineDefinition) => {
  const h = realEngineHarness(def.name, `contract/${def.name}`);
  const { makeCtx, oneTurn, resumedPair, expectNoProcessLeft } = h;
  const engine = () => h.engine();

  it('the adapter carries its definition, and check() reports the pinned version', async () => {
    expect(h.adapter).toMatchObject({ name: def.name, skillDirs: [...def.skillDirs], supportsResume: def.supportsResume });
    await expect(h.adapter.check!(engine())).resolves.toEqual({ version: def.testedVersion });
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
    // What the arms are compared on (the HTML report's arm check): the tools offered and the permission mode, on every engine.
    expect(turn.toolsOffered).toEqual(expect.any(Array));
    expect(turn.toolsOffered!.length).toBeGreaterThan(0);
    expect(turn.toolsOffered!.every((t) => typeof t === 'string' && t !== '')).toBe(true);
    expect(turn.permissionMode).toEqual(expect.any(String));
    expect(turn.permissionMode!.trim()).not.toBe('');
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
    // Turn 2's rule matches only when the engine sent turn 1 along: the session was resumed.
    const { t1, t2 } = await resumedPair(ctx);
    expect(t1.rawFiles[0]).toMatch(/^outputs\/turn-1\./);
    expect(t2.rawFiles[0]).toMatch(/^outputs\/turn-2\./);
  }, 200_000);

  it('an HTTP 500 from the model is an api error carrying the API message', async () => {
    const ctx = await makeCtx();
    const turn = await oneTurn(ctx, 'please fail now', 150_000);
    expect(turn.error?.kind).toBe('api');
    expect(turn.error?.message).toContain('scripted failure for the engine test');
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
    process.env[variable] = join(h.root, `no-such-${def.bin}`);
    try {
      const turn = await oneTurn(await makeCtx(), 'write hello');
      expect(turn.error?.kind).toBe('missing');
      expect(turn.error?.message).toContain(variable);
      await expect(h.adapter.check!(engine())).rejects.toThrow(/no such executable/);
    } finally {
      if (saved === undefined) delete process.env[variable];
      else process.env[variable] = saved;
    }
  });
});
