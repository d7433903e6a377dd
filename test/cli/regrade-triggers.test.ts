/**
 * `skill-up regrade` of a run with trigger cases: a trigger job stays a trigger job (graded on
 * the skill's activation, kept out of the pass rates), the trigger statistics and gates come
 * back the same, and the task case is graded with its changed rubric. Real Claude Code on the
 * scripted model (test/fixtures/triggers/palette-helper).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/triggers/palette-helper', import.meta.url));

interface Doc {
  jobs: { id: string; case_id: string; status: string; trigger?: { activated: boolean } }[];
  triggers?: { engines: { tp: number; fp: number; fn: number; tn: number }[] };
  summary: { variants: { variant: string; trials: number; passed: number }[] };
  gates: { name: string; state: string }[];
  regrade?: { regraded: number; kept: unknown[] };
}
const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Doc;

describe('skill-up regrade with trigger cases', () => {
  it('keeps trigger jobs trigger jobs, with the same statistics and gates, and regrades the task case', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-regrade-trigger-'));
    const skill = join(dir, 'palette-helper');
    cpSync(FIXTURE, skill, { recursive: true });
    const out = join(dir, 'out');
    const first = await runCli(['run', skill, '--min-trigger-recall', '0.9', '--output-dir', out]);
    const before = read(join(out, 'iteration-1', 'result.json'));
    expect(before.jobs.find((j) => j.case_id === 'palette-file')?.status).toBe('pass');

    // The task case's rubric changes; the trigger set does not.
    const caseFile = join(skill, 'evals/cases/palette-file.yaml');
    writeFileSync(caseFile, readFileSync(caseFile, 'utf8').replace('files_exist: [palette.txt]', 'files_exist: [palette.txt, legend.txt]'));
    const r = await runCli(['regrade', join(out, 'iteration-1')]);
    const after = read(join(out, 'iteration-2', 'result.json'));
    expect(after.regrade?.kept).toEqual([]);
    expect(after.regrade?.regraded).toBe(before.jobs.length);
    expect(after.jobs.find((j) => j.case_id === 'palette-file')?.status).toBe('fail');
    for (const j of before.jobs.filter((x) => x.trigger)) {
      const again = after.jobs.find((x) => x.id === j.id)!;
      expect(again.trigger, j.id).toEqual(j.trigger);
      expect(again.status, j.id).toBe(j.status);
    }
    expect(after.triggers).toEqual(before.triggers);
    // The pass rates see only the task case, as in the run.
    expect(after.summary.variants.find((v) => v.variant === 'with_skill')?.trials).toBe(1);
    expect(after.gates.find((g) => g.name === 'min_trigger_recall')).toEqual(before.gates.find((g) => g.name === 'min_trigger_recall'));
    expect(r.stdout).toMatch(/triggers: precision/);
    expect(r.code).toBe(first.code);
  }, 300_000);
});
