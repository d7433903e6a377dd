/**
 * `skill-up regrade`: the judges of the suite as it is now grade a saved run again, and the
 * agents do not run. Proven with the agents made unable to run between the run and the
 * regrade (the custom agent replaced by one that exits 1), on a rebuilt workspace (the rubric
 * reads a file the agent wrote, restored from outputs/changes/), and with an agent_judge
 * whose threshold changed, graded again by a real Claude Code grader on the scripted model.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

interface Job {
  id: string;
  case_id: string;
  variant: string;
  status: string;
  reason?: string;
  assertions: { text: string; passed: boolean; evidence: string }[];
  judge?: { runs: number; tokens: { total: number } };
  changes?: { added: number };
}
interface Doc {
  jobs: Job[];
  regrade?: { from: string; regraded: number; kept: { id: string; reason: string }[] };
  exit_code: number;
}

function copy(example: string): string {
  const src = fileURLToPath(new URL(`../../examples/${example}`, import.meta.url));
  const dir = join(mkdtempSync(join(tmpdir(), 'su-regrade-')), example);
  cpSync(src, dir, { recursive: true });
  return dir;
}

const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as Doc;

describe('skill-up regrade', () => {
  it('grades a saved run with the changed rubric, on the restored workspace, without running the agent', async () => {
    const skill = copy('greeting-files');
    const out = mkdtempSync(join(tmpdir(), 'su-regrade-out-'));
    const first = await runCli(['run', skill, '--trials', '1', '--output-dir', out]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = read(join(out, 'iteration-1', 'result.json'));
    const hello = before.jobs.find((j) => j.case_id === 'hello-file' && j.variant === 'with_skill')!;
    expect(hello.status).toBe('pass');
    expect(hello.changes?.added).toBeGreaterThan(0);
    expect(existsSync(join(out, 'iteration-1', hello.id, 'outputs', 'changes', 'files', 'hello.md'))).toBe(true);

    // The agent can no longer run: a regrade that started it would make every job an error.
    writeFileSync(join(skill, 'evals/agent/agent.mjs'), 'process.exit(1);\n');
    // The rubric changes: the house style is now v3 (hello.md says v2), and one case is gone.
    const caseFile = join(skill, 'evals/cases/hello-file.yaml');
    writeFileSync(caseFile, readFileSync(caseFile, 'utf8').replace('<!-- house-style: v2 -->', '<!-- house-style: v3 -->'));
    rmSync(join(skill, 'evals/cases/welcome-note.yaml'));

    const r = await runCli(['regrade', join(out, 'iteration-1')]);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const after = read(join(out, 'iteration-2', 'result.json'));
    const regraded = after.jobs.find((j) => j.id === hello.id)!;
    expect(regraded.status).toBe('fail');
    const check = regraded.assertions.find((a) => a.text.includes('house-style: v3'))!;
    expect(check.passed).toBe(false);
    // The file the agent wrote was restored: the check read it and found v2, not v3.
    expect(regraded.assertions.find((a) => a.text.startsWith('files_exist'))?.passed).toBe(true);
    expect(after.regrade?.regraded).toBe(2);
    expect(after.regrade?.kept.map((k) => k.reason)).toEqual(["case `welcome-note` is no longer in the suite", "case `welcome-note` is no longer in the suite"]);
    const kept = after.jobs.filter((j) => j.case_id === 'welcome-note');
    expect(kept.map((j) => j.status)).toEqual(before.jobs.filter((j) => j.case_id === 'welcome-note').map((j) => j.status));
    expect(readFileSync(join(out, 'iteration-2', hello.id, 'grading.json'), 'utf8')).toContain('house-style: v3');
    for (const f of ['report.html', 'summary.md', 'report.xml']) expect(existsSync(join(out, 'iteration-2', f)), f).toBe(true);
    expect(r.stdout).toContain('regraded 2 job(s); kept 2 as graded');
    // The saved run is untouched.
    expect(read(join(out, 'iteration-1', 'result.json')).jobs.find((j) => j.id === hello.id)!.status).toBe('pass');
    expect(r.code).toBe(1);
  }, 120_000);

  it('re-runs an agent_judge grader with a changed pass_threshold, and only the grader', async () => {
    const skill = copy('internal-comms');
    const imported = await runCli(['import', skill]);
    expect(imported.code, imported.stderr).toBe(0);
    const out = mkdtempSync(join(tmpdir(), 'su-regrade-out-'));
    const script = join(skill, 'evals/model.yaml');
    const first = await runCli(['run', skill, '--model-script', script, '--trials', '1', '--output-dir', out]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = read(join(out, 'iteration-1', 'result.json'));
    const without = before.jobs.find((j) => j.variant === 'without_skill')!;
    expect(without.status).toBe('fail');
    const agentRequests = readFileSync(join(out, 'iteration-1', without.id, 'model-requests.jsonl'), 'utf8');

    // One criterion of four holds without the skill: at a threshold of 0.25 that is a pass.
    const file = readdirSync(join(skill, 'evals/cases')).map((f) => join(skill, 'evals/cases', f)).find((f) => readFileSync(f, 'utf8').includes('agent_judge'))!;
    const text = readFileSync(file, 'utf8');
    const changed = text.replace(/^(\s*)type: agent_judge\n/m, (m, indent: string) => `${m}${indent}pass_threshold: 0.25\n`);
    expect(changed).not.toBe(text);
    writeFileSync(file, changed);

    const missing = await runCli(['regrade', join(out, 'iteration-1')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--model-script');

    const r = await runCli(['regrade', join(out, 'iteration-1'), '--model-script', script]);
    const after = read(join(out, 'iteration-2', 'result.json'));
    const regraded = after.jobs.find((j) => j.id === without.id)!;
    expect(regraded.status, regraded.reason).toBe('pass');
    expect(regraded.assertions.filter((a) => /^c\d+: /.test(a.text) && a.passed)).toHaveLength(1);
    expect(regraded.judge?.runs).toBe(1);
    // The grader ran again (its requests are in the new job folder); the agent did not.
    expect(existsSync(join(out, 'iteration-2', without.id, 'judge-1', 'model-requests.jsonl'))).toBe(true);
    expect(readFileSync(join(out, 'iteration-2', without.id, 'model-requests.jsonl'), 'utf8')).toBe(agentRequests);
    expect(after.regrade?.regraded).toBe(2);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }, 300_000);

  it('refuses bad input with one message and exit 2', async () => {
    const none = await runCli(['regrade']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('regrade needs one saved run');
    const gone = await runCli(['regrade', join(tmpdir(), 'no-such-run-folder')]);
    expect(gone.code).toBe(2);
    expect(gone.stderr).not.toMatch(/\n\s+at /);
    const par = await runCli(['regrade', '.', '--parallel', '0']);
    expect(par.code).toBe(2);
    expect(par.stderr).toContain('--parallel must be an integer from 1 to 256');
  }, 60_000);
});
