/**
 * The defects of issue 15 ("a skill author's first hour"), each tried again through the built
 * CLI (`dist/src/cli/skill-up.cjs`):
 *
 * 1. `environment.env` reaches the engine: a custom agent and real Claude Code (its Bash tool,
 *    driven by the scripted model's `run:` step) both see `$MY_VAR`;
 * 2. `skills[].target`: a path with a `/` is the workspace-relative install folder, a bare name
 *    the folder under the engine's skill folder (schemas/eval.schema.json `skills.items.target`);
 * 3. a crashing agent's reason carries stderr's error line and the stderr file's path from the iteration folder;
 * 4. an errored job writes no grading.json (ungraded.json instead), so skill-creator's
 *    aggregator, reading every `run-<k>/grading.json`, gets skill-up's own pass rates;
 * 5. `validate` checks a custom agent's command: missing, a folder, not executable (exit 2 at
 *    file:line:col), a bare name not on PATH (exit 2), not looked up on this PATH with docker;
 * 7. `import` says which engine it wrote, that it needs credentials, and how to run offline.
 * (6, the HTML case column with five engines, is test/report/html-wide.browser.test.ts.)
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from './helpers.js';

type Json = Record<string, any>;
const readJson = (p: string): Json => JSON.parse(readFileSync(p, 'utf8')) as Json;

const ENV_AGENT = `console.log(JSON.stringify({ exit_code: 0, final_message: 'MY_VAR=' + (process.env.MY_VAR ?? '<unset>') }));\n`;

/** eval.yaml of a custom node agent at evals/agent.mjs; `extra` is appended (YAML at the top level). */
function customEval(extra = '', env = ''): string {
  return `schema_version: v1alpha1
environment:
  type: none
${env}engine:
  name: test-agent
  custom:
    transport: local
    response_format: session_result
    timeout_seconds: 30
    local:
      command: node
      args: ["\${skill_root}/evals/agent.mjs", "\${input_file}"]
cases:
  files: [evals/cases/*.yaml]
${extra}`;
}

describe('issue 15, defect 1: environment.env reaches the engine', () => {
  it('a custom agent sees $MY_VAR', async () => {
    const skill = writeSkill({
      'evals/agent.mjs': ENV_AGENT,
      'evals/eval.yaml': customEval('', '  env:\n    MY_VAR: hello-from-env\n  setup_steps:\n    - run: echo "setup saw $MY_VAR" > setup.txt\n'),
      'evals/cases/c1.yaml': 'input: { prompt: hi }\njudge:\n  type: rule_based\n  success:\n    - output_contains: { all: ["MY_VAR=hello-from-env"] }\nexpect:\n  file_contains:\n    - { path: setup.txt, content: "setup saw hello-from-env" }\n',
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(readJson(join(out, 'iteration-1', 'result.json')).jobs[0].final_message).toBe('MY_VAR=hello-from-env');
  });

  it("real Claude Code's Bash tool sees $MY_VAR (scripted model, run: step)", async () => {
    const skill = writeSkill({
      'evals/model.yaml': 'rules:\n  - when: { tool_result_contains: "MYVAR=" }\n    reply: [ { say: done } ]\n  - reply:\n      - run: \'echo "MYVAR=$MY_VAR" > env.txt; echo MYVAR=$MY_VAR\'\n',
      'evals/eval.yaml': `schema_version: v1alpha1
environment:
  type: none
  env:
    MY_VAR: hello-from-env
engine:
  name: claude_code
  model: { provider: scripted, script: evals/model.yaml }
cases:
  inline:
    - id: env
      input: { prompt: "hi" }
      constraints: { max_turns: 4, timeout_seconds: 120 }
      expect:
        file_contains:
          - { path: env.txt, content: "MYVAR=hello-from-env" }
`,
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(readJson(join(out, 'iteration-1', 'result.json')).jobs[0].status).toBe('pass');
  }, 120_000);
});

describe('issue 15, defect 2: skills[].target', () => {
  it('a path with a `/` is the workspace-relative folder; a bare name is the folder under the engine’s skill folder', async () => {
    const files = (target: string, exist: string, notExist: string) => ({
      'evals/agent.mjs': ENV_AGENT,
      'evals/eval.yaml': customEval(`skills:\n  - path: .\n    target: ${target}\n`),
      'evals/cases/c1.yaml': `input: { prompt: hi }\nexpect:\n  files_exist: [${exist}]\n  files_not_exist: [${notExist}]\n`,
    });
    for (const [target, exist, notExist] of [
      ['vendor/skills/brand', 'vendor/skills/brand/SKILL.md', '.agents/skills/vendor'],
      ['brand', '.agents/skills/brand/SKILL.md', '.agents/skills/demo-skill'],
    ] as const) {
      const skill = writeSkill(files(target, exist, notExist));
      const out = join(skill, '..', 'out');
      const r = await runCli(['run', skill, '--output-dir', out]);
      expect(r.code, `${target}: ${r.stderr}`).toBe(0);
      const job = readJson(join(out, 'iteration-1', 'result.json')).jobs[0];
      expect(job.status, `${target}: ${job.reason}`).toBe('pass');
    }
  });

  it('validate refuses a target that names no folder', async () => {
    const skill = writeSkill({ 'evals/agent.mjs': ENV_AGENT, 'evals/eval.yaml': customEval('skills:\n  - path: .\n    target: ./\n'), 'evals/cases/c1.yaml': 'input: { prompt: hi }\n' });
    const r = await runCli(['validate', skill]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/eval\.yaml:\d+:\d+: skills\[0\]\.target: skill target `\.\/` names no folder/);
  });
});

describe('issue 15, defect 3: a crashing agent’s reason', () => {
  it('carries the error line, not the stack’s last frames, and names the stderr file', async () => {
    const skill = writeSkill({
      'evals/agent.mjs': "import fs from 'node:fs';\nconst input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));\ninput.config.retries.count += 1;\n",
      'evals/eval.yaml': customEval(),
      'evals/cases/c1.yaml': 'input: { prompt: hi }\n',
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(r.code).toBe(3);
    const job = readJson(join(out, 'iteration-1', 'result.json')).jobs[0];
    expect(job.status).toBe('error');
    // The file is named from the job folder (so the reason stays valid when the run moves, and
    // is the same for every trial that failed alike), saying so.
    expect(job.reason).toBe("engine error in turn 1: exited with code 1: TypeError: Cannot read properties of undefined (reading 'retries') (stderr: outputs/turn-1.stderr.txt in the job folder)");
    const named = /\(stderr: (\S+) in the job folder\)$/.exec(job.reason as string)![1]!;
    // The job folder is the job id under the iteration folder; the progress line shows that id.
    expect(readFileSync(join(out, 'iteration-1', job.id as string, named), 'utf8')).toContain('at ModuleJob.run');
    expect(r.stderr).toContain(`ERROR c1/with_skill/run-1 (`);
    expect(r.stderr).toContain(`(stderr: ${named} in the job folder)`);
    expect(r.stdout + r.stderr).toContain("TypeError: Cannot read properties of undefined (reading 'retries')");
  });
});

describe('issue 15, defect 4: errored jobs and skill-creator’s aggregator', () => {
  it('an errored run has ungraded.json, no grading.json; the aggregator’s pass rates equal skill-up’s', async () => {
    // Passes every case, but crashes on eval-2's first with_skill trial.
    const agent = `import fs from 'node:fs';
const input = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
if (input.case_id === 'eval-2' && input.variant === 'with_skill' && input.trial === 1) throw new Error('simulated crash');
console.log(JSON.stringify({ exit_code: 0, final_message: 'done' }));
`;
    const skill = writeSkill({
      'evals/agent.mjs': agent,
      'evals/eval.yaml': customEval('trials: 2\n'),
      'evals/cases/eval-1.yaml': 'input: { prompt: one }\njudge:\n  type: rule_based\n  success:\n    - output_contains: { all: [done] }\n',
      'evals/cases/eval-2.yaml': 'input: { prompt: two }\njudge:\n  type: rule_based\n  success:\n    - output_contains: { all: [done] }\n',
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out, '--baseline']);
    expect(r.code).toBe(3); // max_error_rate
    const iter = join(out, 'iteration-1');
    const errored = join(iter, 'eval-2', 'with_skill', 'run-1');
    expect(existsSync(join(errored, 'grading.json'))).toBe(false);
    const ungraded = readJson(join(errored, 'ungraded.json'));
    expect(ungraded.status).toBe('error');
    expect(ungraded.reason).toContain('Error: simulated crash');

    // aggregate_benchmark.py load_run_results: every eval-*/<config>/run-*/grading.json, summary.pass_rate (0.0 when missing).
    const theirs: Record<string, number[]> = {};
    for (const e of readdirSync(iter).filter((n) => n.startsWith('eval-'))) {
      for (const config of ['with_skill', 'without_skill']) {
        const cdir = join(iter, e, config);
        if (!existsSync(cdir)) continue;
        for (const run of readdirSync(cdir).filter((n) => n.startsWith('run-'))) {
          const g = join(cdir, run, 'grading.json');
          if (existsSync(g)) (theirs[config] ??= []).push(readJson(g).summary?.pass_rate ?? 0);
        }
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(theirs.with_skill).toHaveLength(3); // 4 runs, the errored one left out
    expect(theirs.without_skill).toHaveLength(4);
    const bench = readJson(join(iter, 'benchmark.json'));
    expect(bench.run_summary.with_skill.pass_rate.mean).toBe(mean(theirs.with_skill!));
    expect(bench.run_summary.without_skill.pass_rate.mean).toBe(mean(theirs.without_skill!));
    // …and skill-up's own job pass rate: 3 of 3 graded with_skill jobs passed (100 %, not 75 %).
    expect(bench.statistics.configurations.with_skill.job_pass_rate).toBe(1);
    expect(mean(theirs.with_skill!)).toBe(1);
    // benchmark.json still lists the errored run, marked.
    const run = bench.runs.find((x: Json) => x.eval_name === 'eval-2' && x.configuration === 'with_skill' && x.run_number === 1);
    expect(run.status).toBe('error');
    expect(run.result.errors).toBeGreaterThanOrEqual(1);
  });
});

describe('issue 15, defect 5: validate checks a custom agent’s command', () => {
  const evalWith = (command: string, type = 'none') =>
    `schema_version: v1alpha1\nenvironment:\n  type: ${type}\n${type === 'docker' ? '  image: node:20\n' : ''}engine:\n  name: a\n  custom:\n    transport: local\n    local:\n      command: ${command}\ncases:\n  files: [evals/cases/*.yaml]\n`;
  const CASE = { 'evals/cases/c1.yaml': 'input: { prompt: hi }\n' };

  it('a path: missing, a folder, not executable — exit 2 at file:line:col with the field and the fix', async () => {
    const skill = writeSkill({ ...CASE, 'evals/eval.yaml': evalWith('./agent.sh') });
    // writeSkill makes .sh files executable: write it without the bit.
    writeFileSync(join(skill, 'agent.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(join(skill, 'agent.sh'), 0o644);
    let r = await runCli(['validate', skill]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/evals\/eval\.yaml:9:\d+: engine\.custom\.local\.command: command `\.\/agent\.sh` .*is not executable \(mode 0644\); make it executable \(`chmod \+x \.\/agent\.sh`\)/);

    rmSync(join(skill, 'agent.sh'));
    r = await runCli(['validate', skill]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/evals\/eval\.yaml:9:\d+: engine\.custom\.local\.command: command `\.\/agent\.sh` .*does not exist/);

    mkdirSync(join(skill, 'agent.sh'));
    r = await runCli(['validate', skill]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/engine\.custom\.local\.command: command `\.\/agent\.sh` .*is a folder, not a program/);

    chmodSync(join(skill, 'agent.sh'), 0o755);
    rmSync(join(skill, 'agent.sh'), { recursive: true });
    writeFileSync(join(skill, 'agent.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    r = await runCli(['validate', skill]);
    expect(r.stderr).not.toMatch(/local\.command/);
  });

  it('a bare name: looked up on PATH (exit 2 when missing), but not with docker, where the image has its own PATH', async () => {
    const skill = writeSkill({ ...CASE, 'evals/eval.yaml': evalWith('no-such-agent-i15') });
    let r = await runCli(['validate', skill]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/evals\/eval\.yaml:9:\d+: engine\.custom\.local\.command: command `no-such-agent-i15` is not on PATH/);
    writeFileSync(join(skill, 'evals', 'eval.yaml'), evalWith('no-such-agent-i15', 'docker'));
    r = await runCli(['validate', skill]);
    expect(r.stderr).not.toMatch(/is not on PATH/);
  });
});

describe('issue 15, defect 7: import says the engine needs credentials', () => {
  it('names the engine, the credential variables, and how to run offline or switch', async () => {
    const skill = writeSkill({
      'evals/evals.json': JSON.stringify({ skill_name: 'demo-skill', evals: [{ id: 1, prompt: 'Say hello', expected_output: 'hello', expectations: ['says hello'] }] }),
    });
    const r = await runCli(['import', skill], { cwd: join(skill, '..') });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('engine: claude_code with its default model, a real one: `skill-up run` needs one of $ANTHROPIC_API_KEY, $ANTHROPIC_AUTH_TOKEN, $CLAUDE_CODE_OAUTH_TOKEN set in the environment');
    expect(r.stdout).toContain('offline, no credentials: skill-up run demo-skill --model-script <rules.yaml>');
    expect(r.stdout).toContain('another engine: --engine <name>');
  });
});
