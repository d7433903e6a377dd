/**
 * Review finding 2: skill-up wrote through a symbolic link to a FOLDER that an agent planted
 * in its job folder (`${output_dir}`): a link at `outputs/workspace/sub` made collected
 * artifacts land outside, and in a stateful conversation turn 1 swapping `outputs` for a link
 * sent response.md, turn 2's raw output and the collected workspace into the victim folder.
 * Planted links are now removed before each turn and after the last (noted in the job), and
 * artifact collection creates its folders itself, never through a link.
 */
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectArtifacts } from '../../src/runtime/artifacts.js';
import { removePlantedLinks, unlinkPlantedAncestors } from '../../src/util/contain.js';
import { runCli, writeSkill } from '../cli/helpers.js';

function victim(): string {
  return mkdtempSync(join(tmpdir(), 'su-victim-'));
}

describe('removePlantedLinks', () => {
  it('unlinks every symbolic link under the folder (not their targets) and names them', async () => {
    const v = victim();
    writeFileSync(join(v, 'keep.txt'), 'keep');
    const dir = mkdtempSync(join(tmpdir(), 'su-job-'));
    mkdirSync(join(dir, 'outputs/deep'), { recursive: true });
    writeFileSync(join(dir, 'outputs/file.txt'), 'x');
    symlinkSync(v, join(dir, 'outputs/deep/sub'));
    symlinkSync(join(v, 'keep.txt'), join(dir, 'f-link'));
    symlinkSync('/nonexistent', join(dir, 'outputs/dangling'));
    const removed = await removePlantedLinks(dir);
    expect(removed.sort()).toEqual(['f-link', 'outputs/dangling', 'outputs/deep/sub']);
    expect(readdirSync(join(dir, 'outputs')).sort()).toEqual(['deep', 'file.txt']);
    expect(readFileSync(join(v, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('a hard-linked file name is unlinked too; the other file keeps its content', async () => {
    const v = victim();
    writeFileSync(join(v, 'bashrc'), 'original');
    const dir = mkdtempSync(join(tmpdir(), 'su-job-'));
    mkdirSync(join(dir, 'outputs'));
    linkSync(join(v, 'bashrc'), join(dir, 'outputs/response.md'));
    expect(await removePlantedLinks(dir)).toEqual(['outputs/response.md']);
    expect(readdirSync(join(dir, 'outputs'))).toEqual([]);
    expect(readFileSync(join(v, 'bashrc'), 'utf8')).toBe('original');
  });

  it('a folder an agent filled (6,000 entries) is scanned whole, links past the first slices included, and the event loop turns meanwhile', async () => {
    const v = victim();
    const dir = mkdtempSync(join(tmpdir(), 'su-job-'));
    mkdirSync(join(dir, 'outputs/many'), { recursive: true });
    for (let i = 0; i < 6000; i++) writeFileSync(join(dir, 'outputs/many', `f${i}`), '');
    symlinkSync(v, join(dir, 'outputs/many/zz-late-link'));
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const removed = await removePlantedLinks(dir);
    clearInterval(ticker);
    expect(removed).toEqual(['outputs/many/zz-late-link']);
    expect(existsSync(join(dir, 'outputs/many/zz-late-link'))).toBe(false);
    expect(turns, 'timers ran while the folder was scanned').toBeGreaterThan(0);
  });

  it('a job folder that is itself a link is unlinked', async () => {
    const v = victim();
    const dir = join(mkdtempSync(join(tmpdir(), 'su-job-')), 'run-1');
    symlinkSync(v, dir);
    expect(await removePlantedLinks(dir)).toEqual(['.']);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(v)).toBe(true);
  });
});

describe('unlinkPlantedAncestors (a link an earlier agent planted at the iteration level)', () => {
  it('unlinks a link standing where a later job folder goes, so mkdir -p cannot follow it', async () => {
    const v = victim();
    const iteration = mkdtempSync(join(tmpdir(), 'su-iter-'));
    symlinkSync(v, join(iteration, 'c2'));
    expect(await unlinkPlantedAncestors(iteration, 'c2/with_skill/run-1')).toEqual([join(iteration, 'c2')]);
    expect(existsSync(join(iteration, 'c2'))).toBe(false);
    expect(readdirSync(v)).toEqual([]);
  });

  it('leaves real folders alone and stops at the first missing one', async () => {
    const iteration = mkdtempSync(join(tmpdir(), 'su-iter-'));
    mkdirSync(join(iteration, 'c1', 'with_skill'), { recursive: true });
    expect(await unlinkPlantedAncestors(iteration, 'c1/with_skill/run-1')).toEqual([]);
    expect(existsSync(join(iteration, 'c1', 'with_skill'))).toBe(true);
  });
});

describe('collectArtifacts never writes through a planted folder link', () => {
  it('skips a file whose destination folder is a link, and the victim stays empty', async () => {
    const v = victim();
    const ws = mkdtempSync(join(tmpdir(), 'su-ws-'));
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub/pwn.txt'), 'pwned');
    writeFileSync(join(ws, 'ok.txt'), 'fine');
    const job = mkdtempSync(join(tmpdir(), 'su-job-'));
    mkdirSync(join(job, 'outputs/workspace'), { recursive: true });
    symlinkSync(v, join(job, 'outputs/workspace/sub'));
    const skipped: string[] = [];
    const copied = await collectArtifacts(ws, ['**'], join(job, 'outputs/workspace'), { destRoot: job, onSkip: (rel, why) => skipped.push(`${rel}: ${why}`) });
    expect(copied).toEqual(['ok.txt']);
    expect(skipped.join('\n')).toMatch(/sub\/pwn\.txt: destination .*symbolic link/);
    expect(readdirSync(v)).toEqual([]);
  });

  it('an `outputs` folder swapped for a link is refused too', async () => {
    const v = victim();
    const ws = mkdtempSync(join(tmpdir(), 'su-ws-'));
    writeFileSync(join(ws, 'a.txt'), 'a');
    const job = mkdtempSync(join(tmpdir(), 'su-job-'));
    symlinkSync(v, join(job, 'outputs'));
    const skipped: string[] = [];
    expect(await collectArtifacts(ws, ['**'], join(job, 'outputs/workspace'), { destRoot: job, onSkip: (rel) => skipped.push(rel) })).toEqual([]);
    expect(skipped).toEqual(['a.txt']);
    expect(readdirSync(v)).toEqual([]);
  });
});

const head = (command: string, args: string, extra: string[] = []) => [
  'schema_version: v1alpha1',
  'environment: { type: none }',
  'engine:',
  '  name: planter',
  '  custom:',
  '    transport: local',
  ...extra,
  `    local: { command: ${command}, args: ${args} }`,
];

describe('a run with an agent that plants links in its job folder (built CLI)', () => {
  it('collect_artifacts ["**"] with outputs/workspace/sub → victim: the victim stays empty, the link is noted', async () => {
    const v = victim();
    const skill = writeSkill({
      'evals/agent.sh': [
        '#!/usr/bin/env bash',
        `mkdir -p "$1/outputs/workspace" && ln -s "${v}" "$1/outputs/workspace/sub"`,
        'mkdir -p sub && echo pwned > sub/pwn.txt && echo fine > ok.txt',
        'echo done',
      ].join('\n'),
      'evals/eval.yaml': [
        ...head('./evals/agent.sh', '["${output_dir}"]', ['    response_format: text']),
        'cases:',
        '  inline:',
        '    - id: plant',
        '      input: { turns: [{ content: hi }] }',
        '      collect_artifacts: ["**"]',
        '      judges: [{ id: ans, type: rule_based, success: [{ output_contains: { all: ["done"] } }] }]',
      ].join('\n'),
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(readdirSync(v), r.stderr).toEqual([]);
    const job = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs[0];
    expect(job.reason).toMatch(/removed 1 symbolic or hard link\(s\) or special file\(s\) planted in the job folder after the last turn: outputs\/workspace\/sub/);
    expect(job.artifacts).toEqual(expect.arrayContaining(['ok.txt', 'sub/pwn.txt']));
    // Collected into the real job folder, not the victim.
    expect(readFileSync(join(out, 'iteration-1', job.output_dir, 'outputs/workspace/sub/pwn.txt'), 'utf8')).toBe('pwned\n');
  }, 120_000);

  it('stateful 2 turns, turn 1 swaps outputs/ for a link: nothing lands in the victim folder', async () => {
    const v = victim();
    const skill = writeSkill({
      'evals/agent.sh': [
        '#!/usr/bin/env bash',
        'OUT=$2',
        // The pause lets skill-up open this turn's stdout/stderr files first: src/engine/proc.ts opens
        // them asynchronously after the spawn, a race of its own (reported, not covered here).
        'if [ ! -e "$OUT/turned" ]; then sleep 0.3; touch "$OUT/turned"; mv "$OUT/outputs" "$OUT/outputs.moved"; ln -s "' + v + '" "$OUT/outputs"; fi',
        'echo data > art.txt',
        'printf \'{"exit_code":0,"final_message":"answer","session_id":"s1"}\' > "$3"',
      ].join('\n'),
      'evals/eval.yaml': [
        // The answer goes to output_file (in the workspace): turn 1 still parses after the swap.
        ...head('./evals/agent.sh', '["${input_file}", "${output_dir}", "${output_file}"], output_file: answer.json', ['    conversation_mode: stateful']),
        'cases:',
        '  inline:',
        '    - id: swap',
        '      input: { turns: [{ content: one }, { content: two }] }',
        '      collect_artifacts: ["**"]',
        '      judges: [{ id: ans, type: rule_based, success: [{ output_contains: { all: ["answer"] } }] }]',
      ].join('\n'),
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(readdirSync(v), r.stderr).toEqual([]);
    const job = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs[0];
    expect(job.reason).toMatch(/removed 1 symbolic or hard link\(s\) or special file\(s\) planted in the job folder before turn 2: outputs/);
    const dir = join(out, 'iteration-1', job.output_dir);
    expect(readFileSync(join(dir, 'outputs/response.md'), 'utf8')).toBe('answer');
    expect(existsSync(join(dir, 'outputs/workspace/art.txt'))).toBe(true);
  }, 120_000);
});
