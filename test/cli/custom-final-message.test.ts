/**
 * A custom engine (local transport, `response_format: session_result`) whose SessionResult
 * carries a 20 MB `final_message`, through the built CLI: the message is streamed to its file
 * under backpressure without leaking an `error` listener per wait (no
 * MaxListenersExceededWarning on stderr), and the job is graded on the whole message.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from './helpers.js';

const MB = 1024 * 1024;

describe('custom engine: a 20 MB SessionResult final_message', () => {
  it('is written to its file with no listener leak warning, and graded whole', async () => {
    const skill = writeSkill({
      // 20 MB of "x" with a marker at the very end, so must_contain proves the whole message was read.
      'evals/agent.sh': `#!/usr/bin/env bash\nexec node -e 'process.stdout.write(JSON.stringify({ exit_code: 0, final_message: "x".repeat(${20 * MB}) + " END-MARKER" }))'\n`,
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'engine:',
        '  name: big-agent',
        '  custom:',
        '    transport: local',
        '    response_format: session_result',
        '    local: { command: ./evals/agent.sh, args: ["${input_file}"] }',
        'cases:',
        '  files: [evals/cases/*.yaml]',
        '  defaults: { timeout_seconds: 60 }',
      ].join('\n'),
      'evals/cases/big.yaml': 'input: { prompt: say a lot }\nexpect: { must_contain: [END-MARKER] }\n',
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(r.stderr).not.toContain('MaxListenersExceededWarning');
    expect(r.stderr).not.toMatch(/listeners added/);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    const job = doc.jobs.find((j: { case_id: string }) => j.case_id === 'big');
    expect(job.status).toBe('pass');
  }, 120_000);
});
