/**
 * agent_judge review fixes, end to end through the built CLI with real engines:
 * - a judge `engine: codex` named from the suite is the run's codex (`--model-script` applied):
 *   real Claude Code agent, real Codex grader, both on the scripted model, no API key;
 * - grader engines are checked before any agent runs: a bad pin is exit 2 at its line, an
 *   engine that cannot run exit 3, and no job starts;
 * - custom (local) agent and grader: the grader's prompt is redacted like its context files,
 *   a grader reporting `exit_code: 1` is an error whatever it answered, `--keep-workspaces`
 *   lists the grader's copy in result.json `judge.workspaces`, and the git baseline diff leaves
 *   skill-up's own `.skill-up/` (the custom engine's session-input.json) out.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8'));
const validate = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, validateFormats: false }).compile(schema);

interface Job {
  id: string;
  case_id: string;
  status: string;
  reason?: string;
  assertions: { text: string; passed: boolean; evidence: string }[];
  judge?: { runs: number; workspaces?: string[] };
}
const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as { jobs: Job[]; totals: { judge?: { workspaces?: string[] } } };

describe('agent_judge: the grader engine as the run configures it', () => {
  it('a judge `engine: codex` named from the suite gets --model-script (real Claude Code agent, real Codex grader)', async () => {
    const skill = join(mkdtempSync(join(tmpdir(), 'su-aj-codex-')), 'internal-comms');
    cpSync(join(ROOT, 'examples/internal-comms'), skill, { recursive: true });
    const imported = await runCli(['import', skill]);
    expect(imported.code, imported.stderr).toBe(0);
    const evalFile = join(skill, 'evals/eval.yaml');
    writeFileSync(evalFile, readFileSync(evalFile, 'utf8').replace('engine:\n  name: claude_code', 'engine:\n  name: claude_code\nengines: [claude_code, codex]'));
    const caseFile = join(skill, 'evals/cases', readdirSync(join(skill, 'evals/cases'))[0]!);
    const text = readFileSync(caseFile, 'utf8');
    const changed = text.replace('judge:\n  type: agent_judge\n', 'engines: [claude_code]\njudge:\n  type: agent_judge\n  engine: codex\n');
    expect(changed).not.toBe(text);
    writeFileSync(caseFile, changed);
    const out = mkdtempSync(join(tmpdir(), 'su-aj-codex-out-'));
    // No API key anywhere: a grader that ignored --model-script would be an engine API error.
    const env: Record<string, string> = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', CODEX_API_KEY: '' };
    const r = await runCli(['run', skill, '--model-script', join(skill, 'evals/model.yaml'), '--trials', '1', '--output-dir', out], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const doc = read(join(out, 'iteration-1/result.json'));
    const withSkill = doc.jobs.find((j) => j.id.includes('with_skill'))!;
    expect(withSkill.status, withSkill.reason).toBe('pass');
    expect(doc.jobs.find((j) => j.id.includes('without_skill'))!.status).toBe('fail');
    const graderTranscript = JSON.parse(readFileSync(join(out, 'iteration-1', withSkill.id, 'judge-1/transcript.json'), 'utf8'));
    expect(graderTranscript.engine).toBe('codex');
    // Codex talked to the scripted model, with the judge condition set.
    expect(readFileSync(join(out, 'iteration-1', withSkill.id, 'judge-1/model-requests.jsonl'), 'utf8')).toContain('"judge":true');
    // regrade --model-script configures the named grader engine the same way.
    const again = await runCli(['regrade', join(out, 'iteration-1'), '--model-script', join(skill, 'evals/model.yaml')], { env });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    const regraded = read(join(out, 'iteration-2/result.json')).jobs.find((j) => j.id === withSkill.id)!;
    expect(regraded.status, regraded.reason).toBe('pass');
    expect(JSON.parse(readFileSync(join(out, 'iteration-2', withSkill.id, 'judge-1/transcript.json'), 'utf8')).engine).toBe('codex');
  }, 300_000);
});

const AGENT = `import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
writeFileSync(join(input.workspace, 'out.txt'), 'done\\n');
process.stdout.write(JSON.stringify({ exit_code: 0, final_message: 'the secret is ' + process.env.MYSECRET, tool_calls: [{ name: 'write_file', input: { path: 'out.txt' } }] }));
`;
// Records the prompt it received (raw, into its workspace copy), then answers a valid verdict;
// for case grader-fails it reports exit_code 1 with that same verdict.
const GRADER = `import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
writeFileSync(join(input.workspace, 'seen-prompt.txt'), input.messages.map((m) => m.content).join('\\n'));
const verdict = JSON.stringify({ results: [{ id: 'c1', passed: true, evidence: 'out.txt exists' }] });
process.stdout.write(JSON.stringify({ exit_code: input.case_id === 'grader-fails' ? 1 : 0, final_message: verdict }));
`;
const SECRET = 'sk-live-review-7f3a9c2e1b';

function customSuite(): string {
  return writeSkill({
    'evals/agent.mjs': AGENT,
    'evals/grader.mjs': GRADER,
    'evals/eval.yaml': `schema_version: v1alpha1
environment:
  type: none
  env: { MYSECRET: "\${MYSECRET}" }
engine:
  name: house-agent
  custom: { transport: local, response_format: session_result, timeout_seconds: 30, local: { command: node, args: ["\${skill_root}/evals/agent.mjs", "\${input_file}"] } }
judge:
  type: agent_judge
  criteria: [out.txt exists]
  engine:
    name: house-grader
    custom: { transport: local, response_format: session_result, timeout_seconds: 30, local: { command: node, args: ["\${skill_root}/evals/grader.mjs", "\${input_file}"] } }
cases:
  inline:
    - { id: secret, input: { prompt: write out.txt } }
    - { id: grader-fails, input: { prompt: write out.txt } }
`,
  });
}

describe('agent_judge: custom grader', () => {
  it('redacts the prompt, treats exit_code 1 as an error, lists kept grader workspaces, leaves .skill-up/ out of the diff', async () => {
    const skill = customSuite();
    const out = mkdtempSync(join(tmpdir(), 'su-aj-custom-out-'));
    const r = await runCli(['run', skill, '--output-dir', out, '--keep-workspaces', '--no-baseline', '--format', 'json,html'], { env: { MYSECRET: SECRET } });
    expect(r.stderr).not.toContain('internal error');
    const doc = read(join(out, 'iteration-1/result.json'));
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    const ok = doc.jobs.find((j) => j.case_id === 'secret')!;
    expect(ok.status, ok.reason).toBe('pass');
    // Kept grader copies are reported: result.json and the console.
    const copies = ok.judge!.workspaces!;
    expect(copies).toHaveLength(1);
    expect(existsSync(copies[0]!)).toBe(true);
    expect(doc.totals.judge?.workspaces).toBeUndefined();
    expect(r.stdout).toContain('kept 2 grader workspace(s)');
    // The prompt the grader engine got is redacted, as its context files are.
    const seen = readFileSync(join(copies[0]!, 'seen-prompt.txt'), 'utf8');
    expect(seen).toContain('the secret is [REDACTED]');
    expect(seen).not.toContain(SECRET);
    expect(readFileSync(join(copies[0]!, '.skill-up/judge/final_message.md'), 'utf8')).not.toContain(SECRET);
    // The diff shows the agent's file, never skill-up's own session-input.json.
    const diff = readFileSync(join(copies[0]!, '.skill-up/judge/workspace.diff'), 'utf8');
    expect(diff).toContain('b/out.txt');
    expect(diff).not.toContain('.skill-up/');
    // A grader that reported failure is an error, even with a valid verdict.
    const failed = doc.jobs.find((j) => j.case_id === 'grader-fails')!;
    expect(failed.status).toBe('error');
    expect(failed.reason).toContain('grader run 1 (house-grader): the engine reported failure (exit code 1)');
    // report.html names the custom grader engine's jobs by the engine's display name.
    const html = readFileSync(join(out, 'iteration-1/report.html'), 'utf8');
    expect(html).toMatch(/judges: house-agent with_skill/);
    expect(html).not.toMatch(/judges: custom /);
    expect(r.code).toBe(3);
  }, 120_000);
});

describe('agent_judge: grader engines are checked before any agent runs', () => {
  const suite = (engine: string) =>
    writeSkill({
      'evals/agent.mjs': AGENT,
      'evals/eval.yaml': `schema_version: v1alpha1
environment: { type: none }
engine:
  name: house-agent
  custom: { transport: local, response_format: session_result, timeout_seconds: 30, local: { command: node, args: ["\${skill_root}/evals/agent.mjs", "\${input_file}"] } }
cases:
  inline:
    - id: one
      input: { prompt: write out.txt }
      judge:
        type: agent_judge
        criteria: [out.txt exists]
        engine: ${engine}
`,
    });

  it('a pinned grader engine version npm does not have is a config error at its line (exit 2), before any job', async () => {
    const out = mkdtempSync(join(tmpdir(), 'su-aj-pin-out-'));
    const r = await runCli(['run', suite('{ name: claude_code, version: 0.0.1 }'), '--output-dir', out, '--no-baseline'], { env: { SKILL_UP_CLAUDE_CODE_BIN: '' } });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    expect(r.stderr).toMatch(/evals\/eval\.yaml:13:\d+: .*engine version `0\.0\.1` of claude_code .*does not exist on the npm registry/);
    expect(existsSync(join(out, 'iteration-1'))).toBe(false);
  }, 180_000);

  it('a grader engine that cannot run stops the run with exit 3 before the first job', async () => {
    const out = mkdtempSync(join(tmpdir(), 'su-aj-missing-out-'));
    const r = await runCli(['run', suite('{ name: gemini_cli }'), '--output-dir', out, '--no-baseline'], { env: { SKILL_UP_GEMINI_CLI_BIN: join(tmpdir(), 'no-such-gemini-binary') } });
    expect(r.code, r.stdout + r.stderr).toBe(3);
    expect(r.stderr).toMatch(/error: the grader's engine `gemini_cli` of case `one`'s agent_judge is not available/);
    expect(r.stderr).not.toContain('[1/1]');
    expect(existsSync(join(out, 'iteration-1'))).toBe(false);
  }, 60_000);
});
