import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { interpreterFor, runScriptJudge } from '../../src/judge/index.js';
import { makeInput, tempDir } from './helpers.js';
import { alive } from '../support/proc.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));

function setup(scripts: Record<string, { body: string; exec?: boolean }>, finalMessage = 'the answer') {
  const skill = tempDir();
  const work = tempDir({ 'marker.txt': 'in workspace' });
  cleanups.push(skill.cleanup, work.cleanup);
  for (const [name, s] of Object.entries(scripts)) {
    const p = path.join(skill.dir, name);
    writeFileSync(p, s.body);
    chmodSync(p, s.exec ? 0o755 : 0o644);
  }
  return { skillDir: skill.dir, input: makeInput({ workspace: work.dir, skillDir: skill.dir, finalMessage, exitCode: 0 }) };
}

describe('script judge', () => {
  it('passes on exit 0 with stdout as evidence and the EVAL_* environment', async () => {
    const { input, skillDir } = setup({
      'check.sh': {
        exec: true,
        body: '#!/bin/bash\necho "$EVAL_CASE_ID|$EVAL_EXIT_CODE|$EVAL_FINAL_MESSAGE|$(cat marker.txt)|$EVAL_SKILL_DIR|$EVAL_WORKSPACE|$EVAL_TRANSCRIPT_PATH"\n',
      },
    });
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'check.sh'), timeoutSeconds: 10 }, input);
    expect(o.status).toBe('pass');
    expect(o.assertions).toEqual([
      {
        text: 'script: check.sh',
        passed: true,
        evidence: `case-1|0|the answer|in workspace|${skillDir}|${input.workspace}|${input.transcriptPath}`,
      },
    ]);
  });
  it('fails on a non-zero exit and appends stderr', async () => {
    const { input, skillDir } = setup({ 'check.sh': { body: 'echo "  missing greeting  "\necho oops >&2\nexit 4\n' } });
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'check.sh'), timeoutSeconds: 10 }, input);
    expect(o.status).toBe('fail');
    expect(o.assertions[0]).toEqual({ text: 'script: check.sh', passed: false, evidence: 'missing greeting [stderr: oops] [exit code 4]' });
  });
  it('runs non-executable scripts with the interpreter of their extension', async () => {
    const { input, skillDir } = setup({
      'check.py': { body: 'import os, sys\nprint("py", os.environ["EVAL_FINAL_MESSAGE"])\nsys.exit(0)\n' },
      'check.mjs': { body: 'console.log("node", process.env.EVAL_CASE_ID); process.exit(1);\n' },
      'check': { body: 'echo "bash $BASH_VERSION" | cut -c1-4\n' },
    });
    const py = await runScriptJudge({ scriptPath: path.join(skillDir, 'check.py'), timeoutSeconds: 10 }, input);
    expect(py.assertions[0]).toMatchObject({ passed: true, evidence: 'py the answer' });
    const js = await runScriptJudge({ scriptPath: path.join(skillDir, 'check.mjs'), timeoutSeconds: 10 }, input);
    expect(js.assertions[0]).toMatchObject({ passed: false, evidence: 'node case-1 [exit code 1]' });
    const sh = await runScriptJudge({ scriptPath: path.join(skillDir, 'check'), timeoutSeconds: 10 }, input);
    expect(sh.assertions[0]).toMatchObject({ passed: true, evidence: 'bash' });
    expect(interpreterFor('x.PY')).toEqual(['python3']);
    expect(interpreterFor('x.cjs')).toEqual(['node']);
  });
  it('falls back to the interpreter for an executable script without a shebang', async () => {
    const { input, skillDir } = setup({ 'noshebang.sh': { exec: true, body: 'echo fine\n' } });
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'noshebang.sh'), timeoutSeconds: 10 }, input);
    expect(o.assertions[0]).toMatchObject({ passed: true, evidence: 'fine' });
  });
  it('resolves a relative script path against the skill root', async () => {
    const { input } = setup({ 'rel.sh': { body: 'echo rel\n' } });
    const o = await runScriptJudge({ scriptPath: 'rel.sh', timeoutSeconds: 10 }, input);
    expect(o.assertions[0]).toMatchObject({ text: 'script: rel.sh', passed: true });
  });
  it('is an error (no verdict), not a fail, with the reason when the script cannot start', async () => {
    const { input, skillDir } = setup({});
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'missing.sh'), timeoutSeconds: 10 }, input);
    expect(o.status).toBe('error');
    expect(o.reason).toMatch(/^script judge .*missing\.sh: script could not start: .*does not exist$/);
    expect(o.assertions[0]!.evidence).toMatch(/^script could not start: .*missing\.sh does not exist$/);
  });
  it('keeps at most 4 KB of stdout', async () => {
    const { input, skillDir } = setup({ 'big.sh': { body: 'head -c 10000 /dev/zero | tr "\\0" a\n' } });
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'big.sh'), timeoutSeconds: 10 }, input);
    expect(o.assertions[0]!.evidence.length).toBe(4096);
  });
  it('times out, killing the whole process tree', async () => {
    const { input, skillDir } = setup({
      'slow.sh': { body: '(sleep 60; echo late) &\necho $! > "$EVAL_WORKSPACE/child.pid"\necho started\nsleep 60\n' },
    });
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'slow.sh'), timeoutSeconds: 1 }, input);
    // A judge that ran out of time gave no verdict: an error, never a fail counted against the skill.
    expect(o.status).toBe('error');
    expect(o.reason).toBe('script judge slow.sh: script timed out after 1s');
    expect(o.assertions[0]!.evidence).toMatch(/^script timed out after 1s/);
    const pidFile = path.join(input.workspace, 'child.pid');
    expect(existsSync(pidFile)).toBe(true);
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
  });
  it('does not wait for background children left by a finished script', async () => {
    const { input, skillDir } = setup({ 'bg.sh': { body: 'sleep 30 &\necho done\n' } });
    // Waiting for the `sleep 30` would end in the 20 s timeout: a fail, not this pass.
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'bg.sh'), timeoutSeconds: 20 }, input);
    expect(o.assertions[0]).toMatchObject({ passed: true, evidence: 'done' });
  });
  it('is an error when the script is killed by a signal (e.g. the OOM killer), its output kept as evidence', async () => {
    const { input, skillDir } = setup({ 'killed.sh': { body: 'echo before\nkill -KILL $$\n' } });
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'killed.sh'), timeoutSeconds: 10 }, input);
    expect(o.status).toBe('error');
    expect(o.reason).toBe('script judge killed.sh: script killed by SIGKILL');
    expect(o.assertions[0]).toMatchObject({ passed: false, evidence: 'script killed by SIGKILL: before' });
  });
  it('a non-zero exit code is the script\'s verdict: a fail', async () => {
    const { input, skillDir } = setup({ 'no.sh': { body: 'echo missing heading\nexit 1\n' } });
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'no.sh'), timeoutSeconds: 10 }, input);
    expect(o.status).toBe('fail');
    expect(o.reason).toBe('script exited with code 1');
  });
  it('is an error (not a fail) when cancelled', async () => {
    const { input, skillDir } = setup({ 'slow.sh': { body: 'sleep 30\n' } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const o = await runScriptJudge({ scriptPath: path.join(skillDir, 'slow.sh'), timeoutSeconds: 20 }, { ...input, signal: ac.signal });
    expect(o.status).toBe('error');
    expect(o.reason).toBe('script judge cancelled');
  });
});
