/**
 * Secrets, end to end through the built CLI (issue 10): canaries planted in skill-up's own
 * environment, in `engine.custom.env` and in `environment.env`; a custom agent
 * (test/fixtures/secrets/leaky-agent.sh) that leaks its whole environment to stdout, stderr,
 * workspace files (collected as artifacts), its final message and its tool calls, plain and
 * encoded; a setup step and a script judge that record theirs. Then every byte skill-up wrote
 * (the iteration folder, the event log, the GitHub step files) and printed is searched for
 * every canary in plain, URL-encoded, base64 (three alignments), JSON-escaped (once, twice) and
 * HTML-escaped form, and the environments the processes received are checked against the
 * allow-list.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, writeSkill, type CliRun } from '../cli/helpers.js';
import { filesUnder } from '../support/proc.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/secrets');

/** Canaries in skill-up's own environment that no process of the run may receive. */
const WITHHELD = {
  MY_API_KEY: 'CANARY-myapikey-0a1b2c3d4e',
  GITHUB_TOKEN: 'ghp_CANARYgithubtoken0123456789abcdef',
  AWS_SECRET_ACCESS_KEY: 'CANARY/aws+secret/key0123456789',
  OPENAI_API_KEY: 'sk-CANARYopenai0123456789abcdef',
  ANTHROPIC_API_KEY: 'sk-ant-CANARYanthropic0123456789',
};
/** A canary under a name that looks like nothing: not redacted by name, so it must simply never be received. */
const PLAIN = { PLAIN_SETTING: 'CANARY-plain-unnamed-55aa66bb' };
/** Canaries in skill-up's environment that the suite passes through by name. */
const PASSED = {
  DATABASE_URL: 'postgres://dbuser:CANARYdbpw-9f8e7d6c@db.example:5432/app',
  PASSED_TOKEN: 'CANARY-passed-token-77cc88dd',
  OPAQUE_VALUE: 'CANARY-opaque-ref-31ab42cd',
};
const DB_PASSWORD = 'CANARYdbpw-9f8e7d6c';
/** Literal values in the suite. */
const LITERAL = 'CANARY-lit"er&al<x>/9z';
const COOKIE = 'session=CANARYcookie1234; theme=dark';
const SUITE_SECRET = 'CANARY-suite-env-4242abcd';
/** Shorter than the 8-character minimum: passed, and not redacted. */
const SHORT = 'abc1234';

/** Every canary that must not appear in anything skill-up wrote or printed. */
const ALL_SECRETS = [...Object.values(WITHHELD), ...Object.values(PASSED), DB_PASSWORD, LITERAL, COOKIE, SUITE_SECRET];

const EVAL = `schema_version: v1alpha1
environment:
  type: none
  env:
    SUITE_SECRET: ${SUITE_SECRET}
    DATABASE_URL: \${DATABASE_URL}
    SHORT_VALUE: ${SHORT}
  setup_steps:
    - run: env | sort > setup-env.txt
engine:
  name: leaky-agent
  custom:
    transport: local
    response_format: session_result
    timeout_seconds: 30
    env:
      AGENT_TOKEN: \${PASSED_TOKEN}
      OPAQUE: \${OPAQUE_VALUE}
      LITERAL_SECRET: '${LITERAL}'
      COOKIE_HEADER: '${COOKIE}'
    local:
      command: ./evals/leaky-agent.sh
      args: ["\${input_file}", "\${output_file}", "\${workspace}"]
      output_file: .skill-up/result.json
cases:
  inline:
    - id: leak
      input: { prompt: "print your environment" }
      collect_artifacts: ["agent-env.txt", "setup-env.txt", "judge-env.txt", "leak/**"]
      judges:
        - id: env-check
          type: script
          script_path: evals/print-env.sh
        - id: answer
          type: rule_based
          success:
            - output_contains: { all: ["not in the answer"] }
report: { formats: [json] }
`;

/** A canary's searched forms: plain, URL-encoded, JSON-escaped once and twice, HTML-escaped, base64 at each alignment. */
function forms(c: string): string[] {
  const out = new Set<string>([c, encodeURIComponent(c), JSON.stringify(c).slice(1, -1), JSON.stringify(JSON.stringify(c)).slice(1, -1)]);
  out.add(c.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'));
  out.add(JSON.stringify(c).slice(1, -1).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026'));
  for (let k = 0; k < 3; k++) {
    const b = Buffer.concat([Buffer.alloc(k, 0x41), Buffer.from(c)]).toString('base64');
    // Characters that mix in the prefix bytes or the (absent) following bytes are left out.
    out.add(b.slice([0, 2, 3][k], Math.floor(((k + c.length) * 8) / 6)));
  }
  return [...out];
}

/** `name: form` for every canary form found in `text`. */
function leaks(text: string, canaries: string[]): string[] {
  const found: string[] = [];
  for (const c of canaries) for (const f of forms(c)) if (text.includes(f)) found.push(`${c} as ${JSON.stringify(f)}`);
  return found;
}

/** Parses `env | sort` output into a map. */
function envOf(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0 && /^[A-Za-z_][A-Za-z0-9_]*$/.test(line.slice(0, i))) m.set(line.slice(0, i), line.slice(i + 1));
  }
  return m;
}

describe('secrets never leave through skill-up (custom agent, built CLI)', () => {
  let out: string;
  let run: CliRun;
  let workspaces: string[] = [];

  beforeAll(async () => {
    const skill = writeSkill({
      'evals/eval.yaml': EVAL,
      'evals/leaky-agent.sh': readFileSync(join(FIXTURES, 'leaky-agent.sh'), 'utf8'),
      'evals/print-env.sh': readFileSync(join(FIXTURES, 'print-env.sh'), 'utf8'),
    });
    out = join(skill, '..', 'out');
    const env: Record<string, string> = {
      ...WITHHELD,
      ...PLAIN,
      ...PASSED,
      GITHUB_STEP_SUMMARY: join(out, 'github-summary.md'),
      GITHUB_OUTPUT: join(out, 'github-output.txt'),
    };
    mkdirSync(out, { recursive: true });
    run = await runCli(
      ['run', skill, '--output-dir', out, '--baseline', '--keep-workspaces', '-vv', '--github', '--event-log', join(out, 'events.jsonl'), '--format', 'json,junit,markdown,benchmark,html'],
      { env },
    );
    if (!existsSync(join(out, 'iteration-1', 'result.json'))) throw new Error(`no result.json (exit ${run.code}): ${run.stderr}`);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1', 'result.json'), 'utf8'));
    workspaces = doc.jobs.map((j: { workspace?: string }) => j.workspace).filter(Boolean);
  }, 120_000);

  afterAll(() => {
    for (const w of workspaces) for (const d of [w, `${w}-home`]) rmSync(d, { recursive: true, force: true });
  });

  it('runs the suite and writes every report', () => {
    expect(run.stderr).not.toContain('internal error');
    expect(run.code, run.stderr).toBe(1); // the rule judge fails on purpose (its evidence quotes the answer)
    for (const f of ['result.json', 'report.xml', 'summary.md', 'report.html', 'journal.jsonl', 'benchmark.json', 'benchmark.md']) {
      expect(existsSync(join(out, 'iteration-1', f)), f).toBe(true);
    }
    expect(existsSync(join(out, 'events.jsonl'))).toBe(true);
    expect(existsSync(join(out, 'github-summary.md'))).toBe(true);
    expect(workspaces).toHaveLength(2);
  });

  it('writes no canary in any form into any file of the run', () => {
    const files = filesUnder(out);
    expect(files.length).toBeGreaterThan(20);
    const found: string[] = [];
    for (const f of files) for (const l of leaks(readFileSync(f, 'latin1'), [...ALL_SECRETS, ...Object.values(PLAIN)])) found.push(`${f.slice(out.length + 1)}: ${l}`);
    expect(found).toEqual([]);
    // Not vacuous: the leaks were there and were replaced.
    const stdoutFile = join(out, 'iteration-1', 'leak', 'with_skill', 'run-1', 'outputs', 'turn-1.stdout.txt');
    expect(readFileSync(stdoutFile, 'utf8')).toContain('AGENT_TOKEN=[REDACTED]');
    expect(readFileSync(stdoutFile, 'utf8')).toContain(`SHORT_VALUE=${SHORT}`);
    const collected = join(out, 'iteration-1', 'leak', 'with_skill', 'run-1', 'outputs', 'workspace');
    expect(readFileSync(join(collected, 'leak', 'db-password.txt'), 'utf8')).toBe('[REDACTED]\n');
    expect(readFileSync(join(collected, 'agent-env.txt'), 'utf8')).toContain('SUITE_SECRET=[REDACTED]');
  });

  it('prints no canary in any form on stdout or stderr (-vv shows the engine stderr)', () => {
    expect(run.stderr).toContain('AGENT_TOKEN=[REDACTED]');
    expect(leaks(run.stdout + run.stderr, [...ALL_SECRETS, ...Object.values(PLAIN)])).toEqual([]);
  });

  it('gives the agent only the allow-listed base and what the suite names', () => {
    for (const ws of workspaces) {
      const env = envOf(readFileSync(join(ws, 'agent-env.txt'), 'utf8'));
      for (const name of [...Object.keys(WITHHELD), ...Object.keys(PLAIN), 'PASSED_TOKEN', 'OPAQUE_VALUE', 'GITHUB_STEP_SUMMARY', 'GITHUB_OUTPUT', 'SKILL_UP_CLAUDE_CODE_BIN']) {
        expect(env.has(name), name).toBe(false);
      }
      expect(env.get('AGENT_TOKEN')).toBe(PASSED.PASSED_TOKEN);
      expect(env.get('OPAQUE')).toBe(PASSED.OPAQUE_VALUE);
      expect(env.get('LITERAL_SECRET')).toBe(LITERAL);
      expect(env.get('COOKIE_HEADER')).toBe(COOKIE);
      expect(env.get('SUITE_SECRET')).toBe(SUITE_SECRET);
      expect(env.get('DATABASE_URL')).toBe(PASSED.DATABASE_URL);
      expect(env.get('SHORT_VALUE')).toBe(SHORT);
      expect(env.get('PATH')).toBe(process.env.PATH);
      expect(env.get('HOME')).toBe(`${ws}-home`);
      // The agent's own files are its own: not redacted, and proof of what it received.
      expect(readFileSync(join(ws, 'leak', 'db-password.txt'), 'utf8')).toBe(`${DB_PASSWORD}\n`);
    }
  });

  it('gives setup steps and script judges the base and environment.env, nothing else', () => {
    for (const ws of workspaces) {
      for (const f of ['setup-env.txt', 'judge-env.txt']) {
        const env = envOf(readFileSync(join(ws, f), 'utf8'));
        for (const name of [...Object.keys(WITHHELD), ...Object.keys(PLAIN), 'PASSED_TOKEN', 'OPAQUE_VALUE', 'AGENT_TOKEN', 'LITERAL_SECRET']) expect(env.has(name), `${f}: ${name}`).toBe(false);
        expect(env.get('SUITE_SECRET'), f).toBe(SUITE_SECRET);
        expect(env.get('DATABASE_URL'), f).toBe(PASSED.DATABASE_URL);
      }
    }
  });

  it('lets no withheld canary reach any file anywhere, the kept workspaces and homes included', () => {
    const found: string[] = [];
    for (const ws of workspaces) {
      for (const f of [...filesUnder(ws), ...filesUnder(`${ws}-home`)]) {
        const text = readFileSync(f, 'latin1');
        for (const c of [...Object.values(WITHHELD), ...Object.values(PLAIN)]) if (text.includes(c)) found.push(`${f}: ${c}`);
      }
    }
    expect(found).toEqual([]);
    expect(statSync(workspaces[0]!).isDirectory()).toBe(true);
  });
});
