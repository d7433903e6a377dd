/**
 * Secrets with the REAL Claude Code binary (`$SKILL_UP_CLAUDE_CODE_BIN`, installed by the global
 * set-up) against the scripted model, through the built CLI: OpenAI, GitHub, AWS and Anthropic
 * canaries sit in skill-up's environment; the scripted model has Claude run `env` (its output is
 * sent back to the model as a tool result, so it lands in model-requests.jsonl) and write it to a
 * collected file. Claude must not receive any of them, and nothing skill-up writes or prints may
 * hold a canary or the suite's own `environment.env` secret.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, writeSkill, type CliRun } from '../cli/helpers.js';
import { filesUnder } from '../support/proc.js';

const WITHHELD: Record<string, string> = {
  OPENAI_API_KEY: 'sk-CANARYopenaiclaude0123456789abc',
  GITHUB_TOKEN: 'ghp_CANARYghclaude0123456789abcdef01',
  AWS_ACCESS_KEY_ID: 'AKIACANARYCLAUDE01234',
  AWS_SECRET_ACCESS_KEY: 'CANARY/awsclaude+secret0123456789',
  ANTHROPIC_API_KEY: 'sk-ant-CANARYanthropicclaude012345',
  ANTHROPIC_AUTH_TOKEN: 'CANARY-anthropic-auth-token-0099',
};
const SUITE_SECRET = 'CANARY-claude-suite-secret-7788';

const MODEL = `rules:
  - when: { prompt_contains: environment }
    reply:
      - run: "env | sort > env.txt; env | sort"
      - say: "I looked at my environment."
`;

const EVAL = `schema_version: v1alpha1
environment:
  type: none
  env:
    SUITE_SECRET: ${SUITE_SECRET}
engine:
  name: claude_code
  model:
    provider: scripted
    script: evals/model.yaml
cases:
  inline:
    - id: env
      input: { prompt: "show me your environment" }
      constraints: { max_turns: 4, timeout_seconds: 120 }
      collect_artifacts: ["env.txt"]
      judge:
        type: rule_based
        success:
          - output_contains: { all: ["looked at my environment"] }
report: { formats: [json, junit, html, markdown] }
`;

/** Plain, URL-encoded, JSON-escaped and base64 (three alignments) forms. */
function forms(c: string): string[] {
  const out = new Set([c, encodeURIComponent(c), JSON.stringify(c).slice(1, -1), JSON.stringify(JSON.stringify(c)).slice(1, -1)]);
  for (let k = 0; k < 3; k++) out.add(Buffer.concat([Buffer.alloc(k, 0x41), Buffer.from(c)]).toString('base64').slice([0, 2, 3][k], Math.floor(((k + c.length) * 8) / 6)));
  return [...out];
}

describe('secrets with real Claude Code (scripted model, built CLI)', () => {
  let out: string;
  let run: CliRun;
  let workspace: string | undefined;

  beforeAll(async () => {
    const skill = writeSkill({ 'evals/eval.yaml': EVAL, 'evals/model.yaml': MODEL });
    out = join(skill, '..', 'out');
    run = await runCli(['run', skill, '--output-dir', out, '--keep-workspaces', '-vv'], { env: { ...WITHHELD } });
    const file = join(out, 'iteration-1', 'result.json');
    if (!existsSync(file)) throw new Error(`no result.json (exit ${run.code}): ${run.stderr}`);
    workspace = JSON.parse(readFileSync(file, 'utf8')).jobs[0]?.workspace;
  }, 180_000);

  afterAll(() => {
    if (workspace) for (const d of [workspace, `${workspace}-home`]) rmSync(d, { recursive: true, force: true });
  });

  it('runs: Claude ran `env` and the model saw its output', () => {
    expect(run.code, run.stderr).toBe(0);
    const log = readFileSync(join(out, 'iteration-1', 'env', 'with_skill', 'run-1', 'model-requests.jsonl'), 'utf8');
    // The tool result (env's output) reached the model, redacted.
    expect(log).toContain('SUITE_SECRET=[REDACTED]');
  });

  it('never gives Claude a withheld variable (its env output names none of them)', () => {
    const envTxt = readFileSync(join(workspace!, 'env.txt'), 'utf8');
    expect(envTxt).toContain(`SUITE_SECRET=${SUITE_SECRET}`);
    for (const name of Object.keys(WITHHELD)) {
      // ANTHROPIC_API_KEY is set, to the scripted job key, never to the user's.
      if (name === 'ANTHROPIC_API_KEY') expect(envTxt).toMatch(/^ANTHROPIC_API_KEY=skill-up-job:/m);
      else expect(envTxt, name).not.toMatch(new RegExp(`^${name}=`, 'm'));
    }
    const log = readFileSync(join(out, 'iteration-1', 'env', 'with_skill', 'run-1', 'model-requests.jsonl'), 'utf8');
    for (const name of ['OPENAI_API_KEY', 'GITHUB_TOKEN', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'ANTHROPIC_AUTH_TOKEN']) expect(log, name).not.toContain(`${name}=`);
  });

  it('writes and prints no canary in any form', () => {
    const canaries = [...Object.values(WITHHELD), SUITE_SECRET];
    const found: string[] = [];
    for (const f of filesUnder(out)) {
      const text = readFileSync(f, 'latin1');
      for (const c of canaries) for (const form of forms(c)) if (text.includes(form)) found.push(`${f.slice(out.length)}: ${c} as ${form}`);
    }
    for (const c of canaries) for (const form of forms(c)) if ((run.stdout + run.stderr).includes(form)) found.push(`console: ${c} as ${form}`);
    expect(found).toEqual([]);
  });
});
