/**
 * Newcomer check finding (issue 13 review): an agent that replaces its own output file with a
 * FIFO froze the whole run once the answer was read back with a blocking open, and a FIFO left
 * in place of the next turn's stdout file (with a reader that never reads) froze the spawn
 * helper's blocking writes. Output files are now opened without waiting (O_NONBLOCK) and must be
 * regular files; FIFOs, sockets and devices are removed from the job folder like planted links.
 * The run ends, only the agent's own job is an `error`, the others pass.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from '../cli/helpers.js';

/** eval.yaml for a custom engine running `evals/agent.sh <case> <trial> <output_dir>`, `cases` case ids × `trials`. */
function suite(agent: string, cases: string[], trials: number, extra: string[] = []): string {
  return writeSkill({
    'evals/agent.sh': agent,
    'evals/eval.yaml': [
      'schema_version: v1alpha1',
      'engine:',
      '  name: fifo-agent',
      '  custom:',
      '    transport: local',
      '    response_format: text',
      '    local: { command: ./evals/agent.sh, args: ["${case_id}", "${trial}", "${output_dir}"] }',
      ...extra,
      `trials: ${trials}`,
      'cases:',
      '  parallelism: 4',
      '  inline:',
      ...cases.map((id) => `    - { id: ${id}, input: { turns: [{ content: one }, { content: two }] }, constraints: { timeout_seconds: 30 }, judges: [{ id: ok, type: rule_based, success: [{ output_contains: { all: ["hello"] } }] }] }`),
    ].join('\n'),
  });
}

function jobsOf(out: string): { case_id: string; trial: number; status: string; reason?: string; output_dir: string }[] {
  return JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs;
}

describe.runIf(process.platform === 'linux')('an agent that plants a FIFO where skill-up reads or writes its output', () => {
  it('its own stdout file swapped for a FIFO during the turn (16+ jobs: the spawn helper): that job is an error, the run ends', async () => {
    const skill = suite(
      [
        '#!/bin/sh',
        'if [ "$1/$2" = "c1/1" ]; then rm -f "$3/outputs/turn-1.stdout.txt"; mkfifo "$3/outputs/turn-1.stdout.txt"; echo hello; exit 0; fi',
        'echo "hello $1 $2"',
      ].join('\n'),
      ['c1', 'c2', 'c3', 'c4'],
      4,
    );
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    const jobs = jobsOf(out);
    expect(jobs, r.stderr).toHaveLength(16);
    const bad = jobs.find((j) => j.case_id === 'c1' && j.trial === 1)!;
    expect(bad.status).toBe('error');
    expect(bad.reason).toMatch(/not a regular file/);
    expect(jobs.filter((j) => j !== bad).every((j) => j.status === 'pass'), JSON.stringify(jobs.filter((j) => j.status !== 'pass'))).toBe(true);
    expect(r.code).toBe(3);
  }, 120_000);

  it('its own stdout file swapped for a link to a file outside: never read, that job an error, the link gone from the kept folder', async () => {
    const victim = join(mkdtempSync(join(tmpdir(), 'su-victim-')), 'victim.txt');
    writeFileSync(victim, 'victim secret');
    const skill = suite(
      [
        '#!/bin/sh',
        `if [ "$1/$2" = "c1/1" ]; then rm -f "$3/outputs/turn-1.stdout.txt"; ln -s "${victim}" "$3/outputs/turn-1.stdout.txt"; fi`,
        'echo "hello $1 $2"',
      ].join('\n'),
      ['c1'],
      2,
    );
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    const jobs = jobsOf(out);
    const bad = jobs.find((j) => j.case_id === 'c1' && j.trial === 1)!;
    expect(bad.status, r.stderr).toBe('error');
    expect(bad.reason).toMatch(/outputs\/turn-1\.stdout\.txt is a symbolic link \(the agent replaced it\); not read/);
    expect(bad.reason).toMatch(/planted in the job folder when the job ended: outputs\/turn-1\.stdout\.txt/);
    expect(existsSync(join(out, 'iteration-1', bad.output_dir, 'outputs/turn-1.stdout.txt'))).toBe(false);
    expect(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).not.toContain('victim secret');
    expect(readFileSync(victim, 'utf8')).toBe('victim secret');
    expect(jobs.find((j) => j.trial === 2)?.status).toBe('pass');
  }, 120_000);

  it('a FIFO with a reader that never reads left in place of turn 2\'s stdout file: removed before turn 2, nothing blocks', async () => {
    const skill = suite(
      [
        '#!/bin/sh',
        'F="$3/outputs/turn-2.stdout.txt"',
        'if [ "$1/$2" = "c1/1" ] && [ ! -e "$3/turned" ]; then',
        '  touch "$3/turned"; mkfifo "$F"',
        // The reader waits in its open() until a writer comes: none does (the FIFO is removed), so the test kills it.
        '  setsid sh -c \'exec 3<"$1"; sleep 15\' sh "$F" </dev/null >/dev/null 2>&1 & echo $! > "$3/reader.pid"',
        'fi',
        // 300 KB: more than a pipe holds, so a write into the FIFO would block.
        'head -c 300000 /dev/zero | tr "\\0" x; echo " hello $1 $2"',
      ].join('\n'),
      ['c1', 'c2', 'c3', 'c4'],
      4,
      ['    conversation_mode: stateful'],
    );
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out], { env: { SKILL_UP_SPAWN_HELPER: '1' } });
    const jobs = jobsOf(out);
    expect(jobs, r.stderr).toHaveLength(16);
    expect(jobs.every((j) => j.status === 'pass'), JSON.stringify(jobs.filter((j) => j.status !== 'pass'))).toBe(true);
    const planted = jobs.find((j) => j.case_id === 'c1' && j.trial === 1)!;
    try {
      process.kill(Number(readFileSync(join(out, 'iteration-1', planted.output_dir, 'reader.pid'), 'utf8')), 'SIGKILL');
    } catch {
      /* gone already */
    }
    expect(planted.reason).toMatch(/special file\(s\) planted in the job folder before turn 2: outputs\/turn-2\.stdout\.txt/);
  }, 120_000);
});
