/**
 * Every consumer of a large answer reads it whole from its file (built CLI): `post_condition`
 * and `turn_response_contains` (streamed), `capture` and `output_matches` (loaded through the
 * gate), `expect.must_contain`, a script judge (`EVAL_FINAL_MESSAGE_FILE`), and the reports
 * rebuilt from the journal keep the file reference.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from '../cli/helpers.js';

describe('judges of a 1 MB answer (stored once, in a file)', () => {
  it('post_condition, capture, turn rules, output_matches, must_contain and a script judge all see its end', async () => {
    const skill = writeSkill(
      {
        // 1 MiB of filler, then the prompt echoed back: the part the judges look for is at the end.
        'evals/agent.sh': '#!/usr/bin/env bash\nhead -c 1048576 /dev/zero | tr "\\0" "a"\nprintf "\\nREPLY: %s\\n" "$1"\n',
        'evals/check.sh': [
          '#!/usr/bin/env bash',
          'set -e',
          '[ -f "$EVAL_FINAL_MESSAGE_FILE" ] || { echo "no file: $EVAL_FINAL_MESSAGE_FILE"; exit 1; }',
          'end=$(head -c "$EVAL_FINAL_MESSAGE_BYTES" "$EVAL_FINAL_MESSAGE_FILE" | tail -c 21)',
          '[ "$end" = "REPLY: got order 4711" ] || { echo "end: [$end]"; exit 1; }',
          '[ ${#EVAL_FINAL_MESSAGE} -ge 100000 ] || { echo "short EVAL_FINAL_MESSAGE"; exit 1; }',
          'echo "saw the end of $EVAL_FINAL_MESSAGE_BYTES bytes"',
        ].join('\n'),
        'evals/eval.yaml': [
          'schema_version: v1alpha1',
          'environment: { type: none }',
          'engine:',
          '  name: echo-agent',
          '  custom:',
          '    transport: local',
          '    response_format: text',
          '    conversation_mode: stateful',
          '    local: { command: ./evals/agent.sh, args: ["${prompt}"] }',
          'cases:',
          '  files: [evals/cases/*.yaml]',
        ].join('\n'),
        'evals/cases/order.yaml': [
          'input:',
          '  turns:',
          '    - content: "ORDER-ID: 4711"',
          '      post_condition: { must_contain_all: ["REPLY: ORDER-ID"], on_fail: fail }',
          '      capture: [{ variable: order, pattern: "ORDER-ID: (?P<value>\\\\d+)" }]',
          '    - content: "got order {{order}}"',
          'expect:',
          '  must_contain: ["REPLY: got order 4711"]',
          'judges:',
          '  - id: rules',
          '    type: rule_based',
          '    success:',
          '      - turn_response_contains: { turn: 1, contains_all: ["REPLY: ORDER-ID: 4711"] }',
          '      - output_matches: { all: ["got order 4711$"] }',
          '  - id: script',
          '    type: script',
          '    script_path: evals/check.sh',
        ].join('\n'),
      },
      'judge-skill',
    );
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    const iteration = join(out, 'iteration-1');
    const doc = JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8'));
    const job = doc.jobs[0];
    expect(job.status, `${job.reason} ${JSON.stringify(job.assertions)} ${r.stderr.slice(-2000)}`).toBe('pass');
    expect(job.turns[1].prompt).toBe('got order 4711');
    expect(job.turns.map((t: { final_text_file?: string }) => t.final_text_file)).toEqual(['outputs/turn-1.stdout.txt', 'outputs/turn-2.stdout.txt']);
    expect(job.final_message_file).toBe('outputs/turn-2.stdout.txt');
    expect(job.assertions.find((a: { text: string }) => a.text.startsWith('[script]')).evidence).toContain(`saw the end of ${job.final_message_bytes} bytes`);
    // transcript.json, response.md and grading.json hold previews.
    const jobDir = join(iteration, job.output_dir);
    for (const f of ['transcript.json', 'outputs/response.md', 'grading.json']) expect(statSync(join(jobDir, f)).size).toBeLessThan(200 * 1024);

    // `skill-up report` rebuilds result.json from the journal with the references intact.
    rmSync(join(iteration, 'result.json'));
    const rep = await runCli(['report', iteration]);
    expect(rep.code, rep.stderr).toBe(0);
    const rebuilt = JSON.parse(readFileSync(join(iteration, 'result.json'), 'utf8')).jobs[0];
    expect(rebuilt.final_message_file).toBe('outputs/turn-2.stdout.txt');
    expect(rebuilt.final_message_bytes).toBe(job.final_message_bytes);
    expect(rebuilt.turns[0].final_text_file).toBe('outputs/turn-1.stdout.txt');
  });
});
