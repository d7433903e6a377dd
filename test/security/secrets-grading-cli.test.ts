/**
 * Redaction never changes a verdict (review finding 1), end to end through the built CLI:
 * engine output is captured raw, parsed and graded as the agent gave it, then redacted in place
 * when the job ends; a plain word passed in `environment.env` (`with_skill`, `final_message`)
 * is no secret, so ids, progress lines and result.json keys stay whole. Also: a secret in a
 * collected artifact's file name (finding 5).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, writeSkill, type CliRun } from '../cli/helpers.js';
import { filesUnder } from '../support/proc.js';

const GREETING = 'Hello, World';

/** Prints a SessionResult on stdout whose answer names $GREETING; a large one for case `big`; an artifact named after it. */
const GREETER = `#!/bin/sh
set -eu
ws="$3"
printf 'x' > "$ws/name-$GREETING.txt"
echo "stderr says $GREETING" >&2
if grep -q '"big"' "$1"; then
  node -e 'process.stdout.write(JSON.stringify({ exit_code: 0, final_message: "y".repeat(100000) + " I printed " + process.env.GREETING + " " + "z".repeat(1000) }))'
else
  printf '{"exit_code":0,"final_message":"I printed %s"}\\n' "$GREETING"
fi
`;

const EVAL1 = `schema_version: v1alpha1
environment:
  type: none
  env: { GREETING: "${GREETING}" }
engine:
  name: greeter
  custom:
    transport: local
    response_format: session_result
    timeout_seconds: 30
    local:
      command: ./evals/greeter.sh
      args: ["\${input_file}", "\${output_file}", "\${workspace}"]
cases:
  inline:
    - id: small
      input: { prompt: "say it" }
      collect_artifacts: ["name-*.txt"]
      expect: { must_contain: ["${GREETING}"] }
    - id: big
      input: { prompt: "big" }
      expect: { must_contain: ["${GREETING}"] }
report: { formats: [json] }
`;

describe('redaction after grading (built CLI)', () => {
  let out: string;
  let run: CliRun;
  beforeAll(async () => {
    const skill = writeSkill({ 'evals/eval.yaml': EVAL1, 'evals/greeter.sh': GREETER });
    out = join(skill, '..', 'out');
    run = await runCli(['run', skill, '--output-dir', out, '-vv']);
  }, 120_000);

  it('the judge sees the true answer: must_contain of a suite env value passes', () => {
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1', 'result.json'), 'utf8'));
    const jobs = doc.jobs as { case_id?: string; status: string; reason?: string }[];
    expect(jobs.map((j) => j.status), run.stderr).toEqual(['pass', 'pass']);
    expect(run.code, run.stderr).toBe(0);
  });

  it('and the value (a secret: not a plain word) is absent from every file and from the console', () => {
    const files = filesUnder(join(out, 'iteration-1'));
    expect(files.some((f) => f.endsWith('.stdout.txt'))).toBe(true);
    expect(files.some((f) => f.endsWith('turn-1.final.txt'))).toBe(true);
    for (const f of files) expect(readFileSync(f, 'latin1').includes(GREETING), f).toBe(false);
    for (const f of files) expect(f.includes(GREETING), f).toBe(false);
    expect(run.stdout + run.stderr).not.toContain(GREETING);
    expect(run.stderr).toContain('stderr says [REDACTED]');
  });

  it('the collected artifact is named with the secret redacted', () => {
    const files = filesUnder(join(out, 'iteration-1'));
    // Once as the collected artifact; the copy kept for regrading (outputs/changes/) is named the same way.
    expect(files.filter((f) => f.includes('/outputs/workspace/') && f.endsWith('name-[REDACTED].txt'))).toHaveLength(1);
    expect(files.filter((f) => f.includes('/outputs/changes/files/') && f.endsWith('name-[REDACTED].txt')).length).toBeGreaterThan(0);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1', 'result.json'), 'utf8'));
    const small = (doc.jobs as { artifacts: string[]; id: string }[]).find((j) => j.id.startsWith('small'))!;
    expect(small.artifacts).toEqual(['name-[REDACTED].txt']);
  });

  it('a large answer spilled to a file: redacted in place, its recorded byte length that of the file', () => {
    const iter = join(out, 'iteration-1');
    const doc = JSON.parse(readFileSync(join(iter, 'result.json'), 'utf8'));
    const big = (doc.jobs as { id: string; output_dir: string; final_message_file?: string; final_message_bytes?: number; turns: { final_text_bytes?: number }[] }[]).find((j) => j.id.startsWith('big'))!;
    expect(big.final_message_file).toBeDefined();
    const whole = readFileSync(join(iter, big.output_dir, big.final_message_file!));
    const want = `${'y'.repeat(100000)} I printed [REDACTED] ${'z'.repeat(1000)}`;
    expect(big.final_message_bytes).toBe(Buffer.byteLength(want));
    expect(big.turns[0]!.final_text_bytes).toBe(Buffer.byteLength(want));
    expect(whole.subarray(0, big.final_message_bytes).toString('utf8') === want).toBe(true);
    const transcript = JSON.parse(readFileSync(join(iter, big.output_dir, 'transcript.json'), 'utf8'));
    expect(JSON.stringify(transcript)).toContain(`"finalTextBytes":${Buffer.byteLength(want)}`);
  });
});

const EVAL2 = `schema_version: v1alpha1
environment:
  type: none
  env: { VARIANT_LABEL: with_skill, KEYNAME: final_message, PLACE: production }
engine:
  name: labeller
  custom:
    transport: local
    response_format: session_result
    timeout_seconds: 30
    local:
      command: ./evals/labeller.sh
cases:
  inline:
    - id: a
      input: { prompt: "label" }
      expect: { must_contain: ["with_skill in production"] }
report: { formats: [json] }
`;

const LABELLER = `#!/bin/sh
printf '{"exit_code":0,"%s":"%s in %s"}\\n' "$KEYNAME" "$VARIANT_LABEL" "$PLACE"
`;

describe('plain words passed in environment.env are no secrets (built CLI)', () => {
  let out: string;
  let run: CliRun;
  beforeAll(async () => {
    const skill = writeSkill({ 'evals/eval.yaml': EVAL2, 'evals/labeller.sh': LABELLER });
    out = join(skill, '..', 'out');
    run = await runCli(['run', skill, '--output-dir', out, '-v']);
  }, 120_000);

  it('the job runs and passes; ids, progress and result.json keys are whole', () => {
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain('[REDACTED]');
    expect(run.stdout + run.stderr).toContain('a/with_skill/run-1');
    const text = readFileSync(join(out, 'iteration-1', 'result.json'), 'utf8');
    expect(text).not.toContain('[REDACTED]');
    expect(text).toContain('"final_message": "with_skill in production"');
    const doc = JSON.parse(text);
    expect(doc.jobs[0].status).toBe('pass');
    expect(doc.jobs[0].final_message).toBe('with_skill in production');
  });

  it('skill-up report accepts the iteration', async () => {
    const r = await runCli(['report', join(out, 'iteration-1')]);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);
});
