import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PINNED } from '../setup/engines.js';
import { runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every engine whose real binary the global set-up installed. */
const ENGINES = Object.keys(PINNED);

describe.each(ENGINES)('a three-turn case with a capture on %s (real binary, scripted model)', (engine) => {
  it('captures in turn 1, templates turn 2, resumes the session for turn 3, grades per turn', async () => {
    const dir = mkdtempSync(join(tmpdir(), `su-mt-${engine}-`));
    cpSync(join(ROOT, 'test/fixtures/multi-turn'), join(dir, 'multi-turn'), { recursive: true });
    const out = join(dir, 'out');
    const r = await runCli(['run', join(dir, 'multi-turn'), '--engine', engine, '--output-dir', out]);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    const job = doc.jobs[0];
    expect(job.status, `${job.reason ?? ''} ${JSON.stringify(job.assertions)}`).toBe('pass');
    expect(r.code).toBe(0);
    expect(job.turns.map((t: { status: string }) => t.status)).toEqual(['completed', 'completed', 'completed']);
    expect(job.turns[1].prompt).toBe('Save the token abc123XYZ into token.txt.');
    const sessions = new Set(job.turns.map((t: { session_id?: string }) => t.session_id));
    expect(sessions.size).toBe(1);
    expect([...sessions][0]).toBeTruthy();
  });

  it('an unresolved {{variable}} is an error before the engine starts the turn', async () => {
    const dir = mkdtempSync(join(tmpdir(), `su-mt2-${engine}-`));
    cpSync(join(ROOT, 'test/fixtures/multi-turn'), join(dir, 'multi-turn'), { recursive: true });
    const kase = join(dir, 'multi-turn/evals/cases/token-flow.yaml');
    writeFileSync(kase, readFileSync(kase, 'utf8').replace('{{token}}', '{{tokn}}'));
    const out = join(dir, 'out');
    const r = await runCli(['run', join(dir, 'multi-turn'), '--engine', engine, '--output-dir', out]);
    expect(r.code).toBe(3);
    const job = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs[0];
    expect(job.status).toBe('error');
    expect(job.reason).toBe('turn 2 uses {{tokn}}, which no earlier turn captured');
    expect(job.turns.length).toBe(2);
  });
});
