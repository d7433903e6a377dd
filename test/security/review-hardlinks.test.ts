/**
 * Review finding 5: `ln /outside/file hard.txt` in the workspace made the outside content be
 * judged and collected. A file with more than one hard link is now neither collected nor read
 * by the judges, with a clear reason; skipped artifacts are recorded in the job (a note in
 * its reason) rather than dropped silently.
 */
import { linkSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWorkspaceFile } from '../../src/judge/paths.js';
import { collectArtifacts } from '../../src/runtime/artifacts.js';
import { runCli, writeSkill } from '../cli/helpers.js';

function planted(): { ws: string; outside: string } {
  const outside = join(mkdtempSync(join(tmpdir(), 'su-outside-')), 'secret.txt');
  writeFileSync(outside, 'TOP-SECRET');
  const ws = mkdtempSync(join(tmpdir(), 'su-ws-'));
  linkSync(outside, join(ws, 'hard.txt'));
  writeFileSync(join(ws, 'plain.txt'), 'plain');
  return { ws, outside };
}

describe('hard links in the workspace', () => {
  it('are not collected; the skip is reported with the reason', async () => {
    const { ws } = planted();
    const dest = mkdtempSync(join(tmpdir(), 'su-dest-'));
    const skipped: string[] = [];
    const copied = await collectArtifacts(ws, ['**'], dest, { onSkip: (rel, why) => skipped.push(`${rel}: ${why}`) });
    expect(copied).toEqual(['plain.txt']);
    expect(skipped).toEqual([expect.stringMatching(/^hard\.txt: hard link \(2 links/)]);
    expect(readdirSync(dest)).toEqual(['plain.txt']);
  });

  it('are not read by the judges', async () => {
    const { ws } = planted();
    const r = await readWorkspaceFile(ws, 'hard.txt');
    expect(r).toEqual({ ok: false, reason: expect.stringMatching(/hard\.txt is a hard link \(2 links\).*not read/) });
    expect(await readWorkspaceFile(ws, 'plain.txt')).toMatchObject({ ok: true, text: 'plain' });
  });

  it('in a run: the outside content is neither judged nor collected, and the job notes the skipped artifact', async () => {
    const outside = join(mkdtempSync(join(tmpdir(), 'su-outside-')), 'secret.txt');
    writeFileSync(outside, 'TOP-SECRET');
    const skill = writeSkill({
      'evals/agent.sh': ['#!/usr/bin/env bash', `ln "${outside}" hard.txt`, 'echo done'].join('\n'),
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'environment: { type: none }',
        'engine:',
        '  name: linker',
        '  custom:',
        '    transport: local',
        '    response_format: text',
        '    local: { command: ./evals/agent.sh }',
        'cases:',
        '  inline:',
        '    - id: hard',
        '      input: { turns: [{ content: hi }] }',
        '      collect_artifacts: ["**"]',
        '      expect: { file_contains: [{ path: hard.txt, content: TOP-SECRET }] }',
      ].join('\n'),
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    const job = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs[0];
    expect(job.status, `${job.reason} ${JSON.stringify(job.assertions)} ${r.stderr}`).not.toBe('pass');
    expect(job.artifacts).not.toContain("hard.txt");
    expect(job.reason).toMatch(/1 artifact\(s\) not collected: hard\.txt \(hard link/);
    expect(JSON.stringify(job.assertions)).toMatch(/hard link/);
  }, 120_000);
});
