import { cpSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8'));
const validateResult = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, validateFormats: false }).compile(schema);

function readResult(outRoot: string, iteration = 1) {
  return JSON.parse(readFileSync(join(outRoot, `iteration-${iteration}`, 'result.json'), 'utf8'));
}

/** Processes whose command line mentions `marker` (to prove nothing outlives a run). */
function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      const state = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (cmd.includes(marker) && state.slice(state.lastIndexOf(')') + 2)[0] !== 'Z') found.push(`${pid}: ${cmd}`);
    } catch {
      /* gone */
    }
  }
  return found;
}

describe('skill-up run (end to end, built CLI)', () => {
  it('runs the example suite: with_skill passes, without_skill fails, reports validate', async () => {
    const out = join(writeSkill({}), '..', 'out');
    const r = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--trials', '2', '--output-dir', out]);
    expect(r.stderr).not.toContain('internal error');
    expect(r.code).toBe(0);
    const doc = readResult(out);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(doc.totals.jobs).toBe(8);
    const by = (v: string) => doc.jobs.filter((j: { variant: string }) => j.variant === v).map((j: { status: string }) => j.status);
    expect(by('with_skill')).toEqual(['pass', 'pass', 'pass', 'pass']);
    expect(by('without_skill')).toEqual(['fail', 'fail', 'fail', 'fail']);
    const withJob = doc.jobs.find((j: { variant: string }) => j.variant === 'with_skill');
    const withoutJob = doc.jobs.find((j: { variant: string }) => j.variant === 'without_skill');
    expect(withJob.skill_activations).toEqual([{ skill: 'greeting-files', via: 'reported by agent' }]);
    expect(withoutJob.skills_installed).toEqual([]);
    expect(withoutJob.skill_activations).toEqual([]);
    expect(r.stdout).toContain('uplift: +100 points');
    const xml = readFileSync(join(out, 'iteration-1/report.xml'), 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(8);
    expect(existsSync(join(out, 'iteration-1/hello-file/with_skill/run-1/grading.json'))).toBe(true);
    expect(readFileSync(join(out, 'iteration-1/hello-file/with_skill/run-1/outputs/workspace/hello.md'), 'utf8')).toContain('house-style');
    // The next run goes to the next free iteration number.
    const again = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--case', 'hello-file', '--output-dir', out]);
    expect(again.code).toBe(0);
    expect(readResult(out, 2).totals.jobs).toBe(2);
  });

  it('never installs an output folder that lies inside the skill, and records kept workspaces', async () => {
    const dir = join(writeSkill({}), '..');
    cpSync(join(ROOT, 'examples/greeting-files'), join(dir, 'greeting-files'), { recursive: true });
    const skill = join(dir, 'greeting-files');
    const args = ['run', skill, '--case', 'hello-file', '--output-dir', join(skill, 'results'), '--keep-workspaces'];
    expect((await runCli(args)).code).toBe(0);
    const r = await runCli(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('kept 2 workspace(s)');
    const doc = readResult(join(skill, 'results'), 2);
    const ws = doc.jobs.find((j: { variant: string }) => j.variant === 'with_skill').workspace;
    expect(existsSync(join(ws, '.agents/skills/greeting-files/SKILL.md'))).toBe(true);
    expect(existsSync(join(ws, '.agents/skills/greeting-files/results'))).toBe(false);
    for (const j of doc.jobs) for (const d of [j.workspace, `${j.workspace}-home`]) rmSync(d, { recursive: true, force: true });
  });

  it('keeps running and writes its reports when its output pipe closes early (| head)', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('./helpers.js');
    const out = join(writeSkill({}), '..', 'out');
    const child = spawn(process.execPath, [BIN, 'run', join(ROOT, 'examples/greeting-files'), '--output-dir', out], { env: { ...process.env, CI: '1' } });
    // Read one chunk, then close both pipes as `head -1` would.
    await new Promise((res) => child.stderr.once('data', res));
    child.stdout.destroy();
    child.stderr.destroy();
    const code = await new Promise((res) => child.on('close', res));
    expect(code).toBe(0);
    expect(readResult(out).totals.jobs).toBe(4);
  });

  it('turns a crash, a hang past its timeout and 50 MB of output into errors within limits, while other jobs complete', async () => {
    const marker = `su-hang-${process.pid}`;
    const skill = writeSkill({
      'evals/agent.sh': [
        '#!/usr/bin/env bash',
        'prompt=$(cat "$1")',
        'case "$prompt" in',
        '  *crash*) echo "agent blew up" >&2; exit 7 ;;',
        `  *hang*) (exec -a ${marker} sleep 600) & exec -a ${marker} sleep 600 ;;`,
        '  *loud*) head -c 52428800 /dev/zero | tr "\\0" "x"; exit 0 ;;',
        '  *) echo "all good" ;;',
        'esac',
      ].join('\n'),
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'engine:',
        '  name: shell-agent',
        '  custom:',
        '    transport: local',
        '    response_format: text',
        '    local: { command: ./evals/agent.sh, args: ["${input_file}"] }',
        'cases:',
        '  files: [evals/cases/*.yaml]',
        '  parallelism: 4',
        '  defaults: { timeout_seconds: 3 }',
      ].join('\n'),
      'evals/cases/crash.yaml': 'input: { prompt: crash }\n',
      'evals/cases/hang.yaml': 'input: { prompt: hang }\n',
      'evals/cases/loud.yaml': 'input: { prompt: loud }\nexpect: { must_contain: [xxxx] }\n',
      'evals/cases/fine.yaml': 'input: { prompt: fine }\nexpect: { must_contain: [all good] }\n',
    });
    const out = join(skill, '..', 'out');
    // The hang sleeps 600 s: without its 3 s timeout this run outlasts the test's own.
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(r.code).toBe(3);
    const doc = readResult(out);
    const status = Object.fromEntries(doc.jobs.map((j: { case_id: string; status: string; reason?: string }) => [j.case_id, [j.status, j.reason ?? '']]));
    expect(status.crash[0]).toBe('error');
    expect(status.crash[1]).toContain('exited with code 7: agent blew up');
    expect(status.hang[0]).toBe('error');
    expect(status.hang[1]).toContain('timed out');
    expect(status.loud[0]).toBe('pass');
    expect(status.fine[0]).toBe('pass');
    const loud = doc.jobs.find((j: { case_id: string }) => j.case_id === 'loud');
    expect(loud.final_message.length).toBeLessThanOrEqual(16 * 1024 * 1024 + 200);
    expect(processesWith(marker)).toEqual([]);
  });

  it('Ctrl-C stops the running engines, writes reports for finished jobs and exits 130', async () => {
    const marker = `su-slow-${process.pid}`;
    const skill = writeSkill({
      'evals/agent.sh': `#!/usr/bin/env bash\ncase "$(cat "$1")" in *quick*) echo ok ;; *) (exec -a ${marker} sleep 300) & wait ;; esac\n`,
      'evals/eval.yaml': 'schema_version: v1alpha1\nengine:\n  name: a\n  custom:\n    transport: local\n    response_format: text\n    local: { command: ./evals/agent.sh, args: ["${input_file}"] }\ncases:\n  files: [evals/cases/*.yaml]\n  parallelism: 2\n',
      'evals/cases/a-quick.yaml': 'input: { prompt: "quick one" }\n',
      'evals/cases/b-slow.yaml': 'input: { prompt: slow }\n',
      'evals/cases/c-slow.yaml': 'input: { prompt: slow }\n',
      'evals/cases/d-slow.yaml': 'input: { prompt: slow }\n',
    });
    const out = join(skill, '..', 'out');
    let sent = false;
    const r = await runCli(['run', skill, '--output-dir', out], {
      onStderr: (text, child) => {
        if (!sent && text.includes('a-quick/with_skill/run-1')) {
          sent = true;
          setTimeout(() => child.kill('SIGINT'), 300);
        }
      },
    });
    expect(r.code, r.stderr).toBe(130);
    const doc = readResult(out);
    expect(doc.interrupted).toBe(true);
    expect(doc.jobs.find((j: { case_id: string }) => j.case_id === 'a-quick').status).toBe('pass');
    expect(doc.not_run).toBeGreaterThanOrEqual(1);
    const journal = readFileSync(join(out, 'iteration-1/journal.jsonl'), 'utf8');
    expect(journal).toContain('"id":"a-quick/with_skill/run-1"');
    expect(processesWith(marker)).toEqual([]);
  });
  it('a second Ctrl-C quits at once and still kills every engine process group', async () => {
    const marker = `su-twice-${process.pid}`;
    const skill = writeSkill({
      // The engine ignores SIGTERM, so only the SIGKILL of the forced exit can stop it.
      'evals/agent.sh': `#!/usr/bin/env bash\n(trap '' TERM; exec -a ${marker} sleep 300) & wait\n`,
      'evals/eval.yaml': 'schema_version: v1alpha1\nengine:\n  name: a\n  custom:\n    transport: local\n    response_format: text\n    local: { command: ./evals/agent.sh, args: [] }\ncases:\n  files: [evals/cases/*.yaml]\n  parallelism: 2\n',
      'evals/cases/a.yaml': 'input: { prompt: slow }\n',
      'evals/cases/b.yaml': 'input: { prompt: slow }\n',
    });
    let sent = false;
    const r = await runCli(['run', skill, '--output-dir', join(skill, '..', 'out')], {
      onStderr: (text, child) => {
        if (!sent && text.includes('job(s) of 2 case(s)')) {
          sent = true;
          setTimeout(() => {
            child.kill('SIGINT');
            child.kill('SIGINT');
          }, 700);
        }
      },
    });
    expect(r.code).toBe(130);
    await new Promise((res) => setTimeout(res, 200));
    expect(processesWith(marker)).toEqual([]);
  });
});

describe('skill-up run on real Claude Code (scripted model, offline)', () => {
  it('runs the brand-guidelines example: the skill is offered, activated and passes only in with_skill', async () => {
    const out = join(writeSkill({}), '..', 'out');
    const r = await runCli(['run', join(ROOT, 'examples/brand-guidelines'), '--output-dir', out]);
    expect(r.code, r.stderr).toBe(0);
    const doc = readResult(out);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(doc.engines[0]).toMatchObject({ name: 'claude_code', version: '2.1.332', resolved_version: '2.1.332' });
    for (const j of doc.jobs) {
      if (j.variant === 'with_skill') {
        expect(j.status, j.id).toBe('pass');
        expect(j.skills_offered).toContain('brand-guidelines');
        expect(j.skill_activations).toContainEqual({ skill: 'brand-guidelines', via: 'Skill tool' });
        expect(j.turns[0].session_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(j.tokens.output).toBeGreaterThan(0);
      } else {
        expect(j.status, j.id).toBe('fail');
        expect(j.skills_installed).toEqual([]);
        expect(j.skills_offered ?? []).not.toContain('brand-guidelines');
        expect(j.skill_activations).toEqual([]);
      }
    }
    // Every model exchange of a job is logged in that job's folder.
    const log = readFileSync(join(out, 'iteration-1/brand-palette/with_skill/run-1/model-requests.jsonl'), 'utf8');
    expect(log.trim().split('\n').length).toBeGreaterThanOrEqual(3);
    expect(r.stdout).toContain('claude_code uplift: +100 points');
  });
});
