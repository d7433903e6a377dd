import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JudgeSpec } from '../../src/config/types.js';
import { AGENT_JUDGE_UNAVAILABLE, gradeJob } from '../../src/judge/index.js';
import { makeInput, tempDir, turn } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));
function ws(files: Record<string, string> = {}) {
  const t = tempDir(files);
  cleanups.push(t.cleanup);
  return t.dir;
}

const msg = 'Created hello.py';
const turns = [turn(1, msg, [{ name: 'Write', input: { file_path: '/w/hello.py' } }])];
const ruleJudge = (): JudgeSpec => ({
  type: 'rule_based',
  success: [{ toolCalled: { name: 'Write', args: { file_path: 'hello.py' } } }],
  failure: [],
});


/** An agent_judge spec with the defaults config gives (src/config/judges.ts). */
function agentJudge(texts: string[]): JudgeSpec {
  return {
    type: 'agent_judge',
    criteria: texts.map((text, i) => ({ id: `c${i + 1}`, text })),
    passThreshold: 0.7,
    timeoutSeconds: 0,
    repeats: 1,
    skills: [],
    context: { profile: 'standard', finalMessage: true, transcript: true, workspaceDiff: true, generatedFiles: true, skillSource: true, limits: { maxBytes: 65536 }, attachments: [] },
  };
}

describe('gradeJob', () => {
  it('passes when the expect gate and every judge pass, expect assertions first', async () => {
    const workspace = ws({ 'hello.py': 'print(1)\n' });
    const g = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, expect: { mustContain: ['hello.py'], filesExist: ['hello.py'] }, judges: [ruleJudge()] }));
    expect(g.status).toBe('pass');
    expect(g.reason).toBeUndefined();
    expect(g.assertions.map((a) => a.text)).toEqual([
      'must_contain: "hello.py"',
      'files_exist: hello.py',
      'tool_called: Write {"file_path":"hello.py"}',
    ]);
  });
  it('skips judges when the expect gate fails', async () => {
    const workspace = ws();
    let called = false;
    const g = await gradeJob(
      makeInput({ workspace, finalMessage: msg, turns, expect: { mustContain: ['nope'] }, judges: [agentJudge(['x'])] }),
      { agentJudge: async () => ((called = true), { status: 'pass', assertions: [] }) },
    );
    expect(g).toMatchObject({ status: 'fail', reason: 'expect gate failed' });
    expect(g.assertions).toHaveLength(1);
    expect(called).toBe(false);
  });
  it('fails when a judge fails', async () => {
    const workspace = ws();
    const g = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, judges: [{ type: 'rule_based', success: [], failure: [{ toolCalled: { name: 'write' } }] }] }));
    expect(g.status).toBe('fail');
    expect(g.assertions[0]!.text).toBe('failure: tool_called: write');
    expect(g.reason).toMatch(/^judge rule_based failed: failure rule matched/);
  });
  it('requires every judge to pass and labels assertions by judge id', async () => {
    const skillDir = ws();
    writeFileSync(path.join(skillDir, 'ok.sh'), 'echo fine\n');
    chmodSync(path.join(skillDir, 'ok.sh'), 0o644);
    const workspace = ws();
    const g = await gradeJob(
      makeInput({
        workspace,
        skillDir,
        finalMessage: msg,
        turns,
        judges: [
          { id: 'rules', ...ruleJudge() },
          { id: 'script', type: 'script', scriptPath: path.join(skillDir, 'ok.sh'), timeoutSeconds: 5 },
          { id: 'strict', type: 'rule_based', success: [{ outputContains: { all: ['Goodbye'] } }], failure: [] },
        ],
      }),
    );
    expect(g.status).toBe('fail');
    expect(g.assertions.map((a) => [a.text.split(' ')[0], a.passed])).toEqual([
      ['[rules]', true],
      ['[script]', true],
      ['[strict]', false],
    ]);
    expect(g.reason).toMatch(/^judge strict failed/);
  });
  it('grades agent_judge as an honest error when no grader runner is given', async () => {
    const workspace = ws();
    const g = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, judges: [agentJudge(['is good'])] }));
    expect(g).toEqual({ status: 'error', assertions: [], reason: AGENT_JUDGE_UNAVAILABLE });
    expect(AGENT_JUDGE_UNAVAILABLE).toBe('agent_judge needs a grader runner (src/run/grader.ts), and none was given to this grading');
  });
  it('an error in one judge makes the grading an error even if another fails', async () => {
    const workspace = ws();
    const g = await gradeJob(
      makeInput({
        workspace,
        finalMessage: msg,
        turns,
        judges: [
          { type: 'rule_based', success: [{ exitCode: 9 }], failure: [] },
          agentJudge(['x']),
        ],
      }),
    );
    expect(g.status).toBe('error');
    expect(g.assertions.some((a) => !a.passed)).toBe(true);
  });
  it('uses an injected agent judge runner, and turns a crash into an error', async () => {
    const workspace = ws();
    const judges: JudgeSpec[] = [agentJudge(['x'])];
    const ok = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, judges }), {
      agentJudge: async (spec) => ({ status: 'pass', assertions: [{ text: spec.criteria[0]!.text, passed: true, evidence: 'double' }] }),
    });
    expect(ok).toEqual({ status: 'pass', assertions: [{ text: 'x', passed: true, evidence: 'double' }] });
    const crash = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, judges }), {
      agentJudge: async () => {
        throw new Error('boom');
      },
    });
    expect(crash).toMatchObject({ status: 'error', reason: 'judge agent_judge crashed: boom' });
  });
  it('with neither expect.exit_code nor judge, a non-zero exit fails', async () => {
    const workspace = ws();
    const g = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, exitCode: 1 }));
    expect(g.status).toBe('fail');
    const ok = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, exitCode: 0 }));
    expect(ok.status).toBe('pass');
  });
  it('does not run judges once cancelled', async () => {
    const workspace = ws();
    const ac = new AbortController();
    ac.abort();
    const g = await gradeJob(makeInput({ workspace, finalMessage: msg, turns, judges: [ruleJudge()], signal: ac.signal }));
    expect(g).toMatchObject({ status: 'error', reason: 'cancelled' });
  });
});
