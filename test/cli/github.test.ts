/**
 * GitHub Actions integration of `skill-up run`, through the built CLI with a small custom
 * agent: with GitHub's environment variables set (GITHUB_ACTIONS, GITHUB_STEP_SUMMARY,
 * GITHUB_OUTPUT, GITHUB_WORKSPACE) the run appends its summary, writes parseable outputs and
 * prints exactly one `::error` annotation per failed or errored case at the case's file and
 * line; `--github` forces the annotations elsewhere; without either nothing GitHub-ish appears.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill, type CliRun } from './helpers.js';

/**
 * The agent: `pass` writes ok.txt with the skill installed only; `fail` never does and answers
 * with a hostile message; `crash` prints a hostile stderr and exits 1 (an error, both arms).
 */
const AGENT = `#!/usr/bin/env node
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const prompt = input.messages.at(-1).content;
const skilled = existsSync(join(input.workspace, '.agents/skills/demo-skill/SKILL.md'));
if (prompt.includes('crash')) {
  process.stderr.write('boom: 50% done,\\n::warning::injected\\r\\nend');
  process.exit(1);
}
if (prompt.includes('pass') && skilled) writeFileSync(join(input.workspace, 'ok.txt'), 'ok');
process.stdout.write(JSON.stringify({ exit_code: 0, final_message: prompt.includes('fail') ? 'nope: 100% wrong,\\n::error::injected' : 'done' }));
`;

/** eval.yaml with one inline case (`inline-fail`) whose item starts on line INLINE_LINE. */
const EVAL = `schema_version: v1alpha1
engine:
  name: demo-agent
  custom:
    transport: local
    response_format: session_result
    timeout_seconds: 30
    local:
      command: node
      args: ["\${skill_root}/evals/agent.mjs", "\${input_file}"]
cases:
  files: [evals/cases/*.yaml]
  defaults:
    expect:
      files_exist: [ok.txt]
  parallelism: 4
  inline:
    - id: inline-ok
      input: { prompt: pass }
    - id: inline-fail
      input: { prompt: fail }
report: { formats: [json, html] }
`;
const INLINE_LINE = 20;

function suite(): string {
  return writeSkill({
    'evals/agent.mjs': AGENT,
    'evals/eval.yaml': EVAL,
    'evals/cases/good.yaml': 'input:\n  prompt: pass\n',
    'evals/cases/bad.yaml': '# a case that never passes\ninput:\n  prompt: fail\n',
    'evals/cases/boom.yaml': 'input:\n  prompt: crash\n',
    // `,` and `:` in the file name must be escaped in the annotation's `file` property.
    'evals/cases/odd,name:x.yaml': 'id: odd\ninput:\n  prompt: fail\n',
  });
}

/** GitHub's $GITHUB_OUTPUT format: `name=value` and `name<<DELIM` … `DELIM`. */
function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const [, name, delim] = heredoc;
      const value: string[] = [];
      for (i++; i < lines.length && lines[i] !== delim; i++) value.push(lines[i]!);
      if (i >= lines.length) throw new Error(`output ${name}: no closing delimiter ${delim}`);
      out[name!] = value.join('\n');
      continue;
    }
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`not an output line: ${JSON.stringify(line)}`);
    out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

/** Parses `::kind k=v,k=v::message` lines, unescaping as the runner does. */
function annotations(stdout: string) {
  const unescape = (s: string) => s.replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%3A/g, ':').replace(/%2C/g, ',').replace(/%25/g, '%');
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('::'))
    .map((l) => {
      const m = /^::(\w+)(?: ([^:]*))?::(.*)$/.exec(l);
      if (!m) throw new Error(`malformed workflow command: ${l}`);
      const props: Record<string, string> = {};
      for (const kv of (m[2] ?? '').split(',').filter(Boolean)) {
        const eq = kv.indexOf('=');
        props[kv.slice(0, eq)] = unescape(kv.slice(eq + 1));
      }
      return { kind: m[1]!, props, message: unescape(m[3]!), raw: l };
    });
}

/** The environment of a GitHub Actions step, with the summary and output files in `dir`. */
function githubEnv(dir: string, workspace?: string): Record<string, string> {
  return { GITHUB_ACTIONS: 'true', GITHUB_STEP_SUMMARY: join(dir, 'step-summary.md'), GITHUB_OUTPUT: join(dir, 'github-output.txt'), GITHUB_WORKSPACE: workspace ?? '' };
}

/** Nothing GitHub-ish may come from the environment the tests themselves run in. */
const NO_GITHUB = { GITHUB_ACTIONS: '', GITHUB_STEP_SUMMARY: '', GITHUB_OUTPUT: '', GITHUB_WORKSPACE: '' };

function expectNoCrash(r: CliRun): void {
  expect(r.stderr).not.toContain('internal error');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('warning: cannot append');
}

describe('skill-up run in GitHub Actions (built CLI)', () => {
  it('appends the summary, writes the outputs and one ::error per failed or errored case at its file and line', async () => {
    const skill = suite();
    const root = dirname(skill);
    const env = githubEnv(root, root);
    writeFileSync(env.GITHUB_STEP_SUMMARY!, '# an earlier step');
    writeFileSync(env.GITHUB_OUTPUT!, 'earlier=1\n');
    const r = await runCli(['run', skill, '--trials', '2', '--baseline', '--output-dir', join(root, 'out')], { env, cwd: '/' });
    expectNoCrash(r);
    // boom errors in both arms: above the default max error rate of 0.
    expect(r.code, r.stdout + r.stderr).toBe(3);

    const notes = annotations(r.stdout);
    const cases = notes.filter((a) => a.props.file !== undefined);
    // One per case (not per trial or arm), and none for the passing cases or baseline-only failures.
    expect(cases.map((a) => a.props.title).sort()).toEqual(['bad', 'boom', 'inline-fail', 'odd']);
    expect(cases.every((a) => a.kind === 'error')).toBe(true);
    const at = Object.fromEntries(cases.map((a) => [a.props.title!, a]));
    expect([at.bad!.props.file, at.bad!.props.line]).toEqual(['demo-skill/evals/cases/bad.yaml', '1']);
    expect([at.boom!.props.file, at.boom!.props.line]).toEqual(['demo-skill/evals/cases/boom.yaml', '1']);
    expect([at['inline-fail']!.props.file, at['inline-fail']!.props.line]).toEqual(['demo-skill/evals/eval.yaml', String(INLINE_LINE)]);
    expect(EVAL.split('\n')[INLINE_LINE - 1]).toContain('id: inline-fail');
    // `,` and `:` of the file name are escaped in the property, so the command stays well formed.
    expect(at.odd!.raw).toContain('file=demo-skill/evals/cases/odd%2Cname%3Ax.yaml,line=1,title=odd::');
    expect(at.odd!.props.file).toBe('demo-skill/evals/cases/odd,name:x.yaml');
    expect(at.bad!.message).toMatch(/^failed 2 of 2 with_skill trial\(s\) on demo-agent \(#1, #2\): .*ok\.txt/);
    // The agent's hostile stderr is in the message, its line breaks escaped: no injected command.
    expect(at.boom!.message).toContain('errored in 2 with_skill trial(s)');
    expect(at.boom!.message).toContain('errored in 2 without_skill trial(s)');
    expect(at.boom!.message).toContain('boom: 50% done,');
    expect(at.boom!.raw).toContain('boom: 50%25 done,');
    expect(r.stdout).not.toMatch(/^::warning::injected/m);
    // Failed gates are errors too (no file: a gate is about the whole run).
    const gates = notes.filter((a) => a.props.file === undefined);
    expect(gates.map((a) => [a.kind, a.props.title])).toEqual([
      ['error', 'skill-up gate max_error_rate failed'],
      ['error', 'skill-up gate all_trials_passed failed'],
    ]);

    const summary = readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8');
    expect(summary.startsWith('# an earlier step\n## ❌ skill-up: demo-skill too many errors')).toBe(true);
    const iteration = join(root, 'out', 'iteration-1');
    expect(summary.slice('# an earlier step\n'.length)).toBe(readFileSync(join(iteration, 'summary.md'), 'utf8'));

    const outputs = parseOutputs(readFileSync(env.GITHUB_OUTPUT!, 'utf8'));
    expect(outputs).toMatchObject({
      earlier: '1',
      gate: 'fail',
      'exit-code': '3',
      result: join(iteration, 'result.json'),
      report: join(iteration, 'report.html'),
      summary: join(iteration, 'summary.md'),
      'run-dir': iteration,
    });
    const doc = JSON.parse(readFileSync(outputs.result!, 'utf8'));
    const withSkill = doc.summary.variants.find((v: { variant: string }) => v.variant === 'with_skill');
    expect(Number(outputs['pass-rate'])).toBeCloseTo(withSkill.pass_rate, 4);
    expect(outputs.verdict).toBe(doc.summary.uplift[0].verdict);
    expect(Number(outputs.uplift)).toBeCloseTo(doc.summary.uplift[0].pass_rate_delta * 100, 2);
    expect(JSON.parse(outputs.engines!)).toEqual({ 'demo-agent': { verdict: outputs.verdict, pass_rate: Number(outputs['pass-rate']), uplift: Number(outputs.uplift) } });
    // The multi-line output: one line per gate.
    expect(outputs.gates!.split('\n')).toEqual(doc.gates.map((g: { state: string; name: string }) => expect.stringMatching(new RegExp(`^${g.state} ${g.name}: `))));
    expect(outputs.gates!.split('\n')).toHaveLength(2);
  });

  it('paths are relative to the current folder without GITHUB_WORKSPACE; an inconclusive gate is a ::warning', async () => {
    const skill = writeSkill({
      'evals/agent.mjs': AGENT,
      'evals/eval.yaml': EVAL.replace(/  inline:[\s\S]*?report:/, 'report:'),
      'evals/cases/good.yaml': 'input:\n  prompt: pass\n',
    });
    const root = dirname(skill);
    const env = githubEnv(root);
    const r = await runCli(['run', '--trials', '2', '--min-pass-rate', '0.5', '--output-dir', join(root, 'out')], { env, cwd: skill });
    expectNoCrash(r);
    expect(r.code, r.stdout).toBe(4);
    const notes = annotations(r.stdout);
    expect(notes).toHaveLength(1);
    expect(notes[0]!.kind).toBe('warning');
    expect(notes[0]!.props.title).toBe('skill-up gate min_pass_rate (demo-agent) inconclusive');
    const doc = JSON.parse(readFileSync(join(root, 'out', 'iteration-1', 'result.json'), 'utf8'));
    expect(notes[0]!.message).toBe(doc.gates.find((g: { name: string }) => g.name === 'min_pass_rate').reason);
    const outputs = parseOutputs(readFileSync(env.GITHUB_OUTPUT!, 'utf8'));
    expect(outputs).toMatchObject({ gate: 'inconclusive', 'exit-code': '4', 'pass-rate': '1', verdict: '', uplift: '', report: join(root, 'out', 'iteration-1', 'report.html') });
    expect(JSON.parse(outputs.engines!)).toEqual({ 'demo-agent': { verdict: null, pass_rate: 1, uplift: null } });

    // A failing case, run from the skill folder: its file is relative to the current folder.
    writeFileSync(join(skill, 'evals/cases/bad.yaml'), 'input:\n  prompt: fail\n');
    const r2 = await runCli(['run', '--trials', '1', '--output-dir', join(root, 'out')], { env, cwd: skill });
    const bad = annotations(r2.stdout).find((a) => a.props.title === 'bad');
    expect(bad?.props).toEqual({ file: 'evals/cases/bad.yaml', line: '1', title: 'bad' });
  });

  it('--github prints the annotations without GitHub; without either nothing GitHub-ish is printed or written', async () => {
    const skill = suite();
    const root = dirname(skill);
    const forced = await runCli(['run', skill, '--trials', '1', '--github', '--output-dir', join(root, 'out')], { env: NO_GITHUB, cwd: root });
    expectNoCrash(forced);
    expect(forced.code).toBe(3);
    const notes = annotations(forced.stdout);
    expect(notes.filter((a) => a.props.file).map((a) => [a.props.title, a.props.file])).toEqual(
      expect.arrayContaining([
        ['bad', 'demo-skill/evals/cases/bad.yaml'],
        ['boom', 'demo-skill/evals/cases/boom.yaml'],
        ['odd', 'demo-skill/evals/cases/odd,name:x.yaml'],
        ['inline-fail', 'demo-skill/evals/eval.yaml'],
      ]),
    );
    expect(notes.filter((a) => a.props.file)).toHaveLength(4);

    // A step summary file named but GITHUB_ACTIONS unset: untouched.
    const summary = join(root, 'untouched.md');
    const output = join(root, 'untouched.txt');
    writeFileSync(summary, 'before\n');
    writeFileSync(output, 'before\n');
    const plain = await runCli(['run', skill, '--trials', '1', '--output-dir', join(root, 'out')], { env: { ...NO_GITHUB, GITHUB_STEP_SUMMARY: summary, GITHUB_OUTPUT: output }, cwd: root });
    expectNoCrash(plain);
    expect(plain.code).toBe(3);
    expect(plain.stdout + plain.stderr).not.toMatch(/^::/m);
    expect(readFileSync(summary, 'utf8')).toBe('before\n');
    expect(readFileSync(output, 'utf8')).toBe('before\n');
  });

  it('a secret in the environment never reaches an annotation, the summary or the outputs', async () => {
    const secret = 'sk-test-0123456789abcdef';
    const skill = writeSkill({
      'evals/agent.mjs': AGENT.replace("'boom: 50% done,", `'boom ${secret} 50% done,`),
      'evals/eval.yaml': EVAL.replace(/  inline:[\s\S]*?report:/, 'report:'),
      'evals/cases/boom.yaml': 'input:\n  prompt: crash\n',
    });
    const root = dirname(skill);
    const env: Record<string, string> = { ...githubEnv(root, root), MY_API_KEY: secret };
    const r = await runCli(['run', skill, '--trials', '1', '--output-dir', join(root, 'out')], { env });
    expect(r.code).toBe(3);
    const boom = annotations(r.stdout).find((a) => a.props.title === 'boom');
    expect(boom?.message).toContain('boom [REDACTED] 50% done');
    expect(r.stdout).not.toContain(secret);
    expect(readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8')).not.toContain(secret);
    expect(readFileSync(env.GITHUB_OUTPUT!, 'utf8')).not.toContain(secret);
  });
});
