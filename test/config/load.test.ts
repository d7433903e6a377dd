/**
 * A valid suite loads into the documented `Suite` shape: defaults applied, `cases.defaults`
 * merged, paths absolute, names canonical.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { loadSuite } from '../../src/config/load.js';
import { loadErrors, loadOk, MINIMAL_CASE, MINIMAL_EVAL, writeSkill } from './helpers.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const validDir = path.join(here, 'fixtures', 'valid', 'hello-skill');

describe('the valid fixture suite', () => {
  it('loads with every path absolute and the documented defaults', async () => {
    const { suite, warnings } = await loadOk(validDir);
    expect(warnings).toEqual([]);
    expect(suite.evalFile).toBe(path.join(validDir, 'evals', 'eval.yaml'));
    expect(suite.skillDir).toBe(validDir);
    expect(suite.schemaVersion).toBe('v1alpha1');
    expect(suite.environment).toEqual({ type: 'none', env: { PORT: '8080', DEBUG: 'true' }, setupSteps: [{ run: 'echo ready' }], workspaceMount: '/workspace' });
    expect(suite.skills).toEqual([{ source: 'local_path', path: validDir, include: [], exclude: [] }]);
    expect(suite.parallelism).toBe(4);
    expect(suite.retryPolicy).toEqual({ maxRetries: 1, retryOn: ['timeout', 'error'] });
    expect(suite.benchmark).toEqual({ enabled: false });
    expect(suite.report).toEqual({ formats: ['json', 'html'], artifacts: [] });
    expect(suite.trials).toBe(2);
  });

  it('canonicalises engine aliases, puts `engine` first and resolves the scripted model file', async () => {
    const { suite } = await loadOk(validDir);
    expect(suite.engine).toEqual({
      name: 'claude_code',
      displayName: 'claude-code',
      version: '2.1.0',
      model: { provider: 'scripted', name: 'claude-sonnet-4-6', script: path.join(validDir, 'evals/fixtures/model.yaml') },
      kwargs: {},
    });
    expect(suite.engines.map((e) => e.name)).toEqual(['claude_code', 'codex', 'gemini_cli']);
    expect(suite.engines[0]).toBe(suite.engine);
  });

  it('orders cases inline first, then files in glob order', async () => {
    const { suite } = await loadOk(validDir);
    expect(suite.cases.map((c) => [c.id, path.relative(validDir, c.file)])).toEqual([
      ['inline-one', 'evals/eval.yaml'],
      ['multi-turn', 'evals/cases/multi-turn.yaml'],
      ['hello-python', 'evals/cases/python.yaml'],
    ]);
  });

  it('merges cases.defaults into a case', async () => {
    const { suite } = await loadOk(validDir);
    const c = suite.cases.find((x) => x.id === 'hello-python')!;
    expect(c.tags).toEqual(['functional_test', 'python', 'smoke']);
    expect(c.timeoutSeconds).toBe(120); // constraints.timeout_seconds 0 = cases.defaults
    expect(c.maxTurns).toBe(8);
    expect(c.trials).toBe(5);
    expect(c.engines).toEqual(['claude_code', 'codex']);
    expect(c.expect).toEqual({
      mustContain: ['Hello', 'World'], // defaults first, de-duplicated
      mustNotContain: [],
      exitCode: 0,
      filesExist: ['hello.py'],
      filesNotExist: [],
      fileContains: [{ path: 'hello.py', content: 'print' }],
      goldenFile: path.join(validDir, 'evals/fixtures/golden/out.txt'),
      skillInvoked: [],
      skillNotInvoked: [],
    });
    expect(c.collectArtifacts).toEqual(['**/*.json', 'out/**']);
    expect(c.context).toEqual({
      repoFixture: path.join(validDir, 'evals/fixtures/repos/app'),
      files: { 'src/a.py': 'print(1)\n' },
      git: { init: true, checkout: 'main', applyDiff: path.join(validDir, 'evals/fixtures/diffs/x.patch'), remotes: [{ name: 'origin', url: 'https://example.com/x.git' }] },
    });
  });

  it('builds judges: case judges replace the eval judge, which the others inherit', async () => {
    const { suite } = await loadOk(validDir);
    const [inline, multi, python] = suite.cases;
    expect(inline!.judges).toEqual([{ type: 'rule_based', success: [{ outputContains: { any: ['Hello'] } }], failure: [] }]);
    expect(multi!.judges).toEqual([{ type: 'rule_based', success: [{ turnResponseContains: { turn: 2, containsAll: ['done'] } }], failure: [] }]);
    expect(python!.judges).toEqual([
      {
        id: 'rules',
        type: 'rule_based',
        success: [{ outputMatches: { all: ['(?i)hello,\\s+world'] } }, { toolCalled: { name: 'Write', args: { file_path: 'hello.py' } } }],
        failure: [{ outputContains: { any: ['Traceback'] } }],
      },
      { id: 'check', type: 'script', scriptPath: path.join(validDir, 'evals/fixtures/scripts/check.sh'), timeoutSeconds: 30 },
      { id: 'grader', type: 'agent_judge', criteria: [{ id: 'c1', text: 'The program prints Hello World' }], passThreshold: 0.7, timeoutSeconds: 0, repeats: 1, skills: [], context: expect.objectContaining({ profile: 'standard' }) },
    ]);
  });

  it('turns: a prompt becomes one turn; turns keep captures and post-conditions', async () => {
    const { suite } = await loadOk(validDir);
    expect(suite.cases[0]!.turns).toEqual([{ content: 'Say hi', capture: [] }]);
    expect(suite.cases[0]!.timeoutSeconds).toBe(-1);
    expect(suite.cases[1]!.turns).toEqual([
      {
        content: 'Create a token and print token=<value>',
        capture: [{ variable: 'token', pattern: 'token=(?P<value>\\w+)' }],
        postCondition: { mustContainAll: ['token='], mustContainAny: [], mustNotContain: [], onFail: 'skip_remaining' },
      },
      { content: 'Now use {{token}}', capture: [], timeoutSeconds: 60 },
    ]);
  });
});

describe('defaults and precedence', () => {
  const suiteWith = (evalExtra: string, caseYaml = MINIMAL_CASE, files: Record<string, string> = {}) =>
    writeSkill({ 'evals/eval.yaml': `schema_version: v1alpha1\n${evalExtra}`, 'evals/cases/a.yaml': caseYaml, ...files });

  it('an almost empty suite gets every default', async () => {
    const { suite } = await loadOk(writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': MINIMAL_CASE }));
    expect(suite.engine).toEqual({ name: 'claude_code', displayName: 'claude_code', model: {}, kwargs: {} });
    expect(suite.engines).toHaveLength(1);
    expect(suite.report.formats).toEqual(['json', 'junit', 'html']);
    expect(suite.parallelism).toBe(1);
    expect(suite.retryPolicy).toEqual({ maxRetries: 0, retryOn: ['timeout', 'error'] });
    expect(suite.trials).toBe(1);
    const c = suite.cases[0]!;
    expect(c.id).toBe('a');
    expect(c.timeoutSeconds).toBe(300);
    expect(c.maxTurns).toBe(10);
    expect(c.trials).toBe(1);
    expect(c.judges).toEqual([]);
    expect(c.engines).toBeUndefined();
    expect(c.expect).toEqual({ mustContain: [], mustNotContain: [], filesExist: [], filesNotExist: [], fileContains: [], skillInvoked: [], skillNotInvoked: [] });
  });

  it.each([
    ['top-level only', 'trials: 3\n', '', 3],
    ['cases.defaults beats top-level', 'trials: 3\ncases:\n  defaults: {trials: 4}\n', '', 4],
    ['the case beats both', 'trials: 3\ncases:\n  defaults: {trials: 4}\n', 'trials: 6\n', 6],
    ['nothing set', '', '', 1],
  ])('trials: %s', async (_name, evalExtra, caseExtra, trials) => {
    const evalYaml = evalExtra.includes('cases:') ? evalExtra.replace('cases:\n', 'cases:\n  files: [evals/cases/a.yaml]\n') : `${evalExtra}cases: {files: [evals/cases/a.yaml]}\n`;
    const { suite } = await loadOk(suiteWith(evalYaml, `${MINIMAL_CASE}${caseExtra}`));
    expect(suite.cases[0]!.trials).toBe(trials);
  });

  it.each([
    [undefined, undefined, 300],
    [undefined, 120, 120],
    [0, 120, 120],
    [0, 0, 300],
    [45, 120, 45],
    [-1, 120, -1],
    [undefined, -1, -1],
  ])('timeout: case %s, defaults %s → %s', async (own, defaults, want) => {
    const evalYaml = `cases:\n  files: [evals/cases/a.yaml]\n${defaults === undefined ? '' : `  defaults: {timeout_seconds: ${defaults}}\n`}`;
    const caseYaml = `${MINIMAL_CASE}${own === undefined ? '' : `constraints: {timeout_seconds: ${own}}\n`}`;
    const { suite } = await loadOk(suiteWith(evalYaml, caseYaml));
    expect(suite.cases[0]!.timeoutSeconds).toBe(want);
  });

  it('expect: defaults and case lists are appended without duplicates; case scalars win', async () => {
    const dir = writeSkill({
      'evals/eval.yaml':
        'schema_version: v1alpha1\ncases:\n  files: [evals/cases/*.yaml]\n  defaults:\n    max_turns: 4\n    collect_artifacts: [a, b]\n    expect:\n      must_contain: [x, y]\n      must_not_contain: [bad]\n      exit_code: 0\n      golden_file: evals/g1.txt\n      file_contains: [{path: p, content: c}]\n',
      'evals/g1.txt': 'one',
      'evals/g2.txt': 'two',
      'evals/cases/own.yaml': 'input: {prompt: hi}\ncollect_artifacts: [b, c]\nexpect:\n  must_contain: [y, z]\n  exit_code: 3\n  golden_file: evals/g2.txt\n  file_contains: [{path: p, content: c}, {path: q, content: d}]\n',
      'evals/cases/plain.yaml': 'input: {prompt: hi}\n',
    });
    const { suite } = await loadOk(dir);
    const [own, plain] = suite.cases;
    expect(own!.expect).toEqual({
      mustContain: ['x', 'y', 'z'],
      mustNotContain: ['bad'],
      exitCode: 3,
      filesExist: [],
      filesNotExist: [],
      fileContains: [
        { path: 'p', content: 'c' },
        { path: 'q', content: 'd' },
      ],
      goldenFile: path.join(dir, 'evals/g2.txt'),
      skillInvoked: [],
      skillNotInvoked: [],
    });
    expect(own!.collectArtifacts).toEqual(['a', 'b', 'c']);
    expect(own!.maxTurns).toBe(4);
    expect(plain!.expect.exitCode).toBe(0);
    expect(plain!.expect.goldenFile).toBe(path.join(dir, 'evals/g1.txt'));
    expect(plain!.expect.mustContain).toEqual(['x', 'y']);
  });

  it('`engines` alone sets `engine` to its first item; duplicates collapse', async () => {
    const { suite } = await loadOk(suiteWith('engines: [qwen, codex-cli, qwen_code, {name: opencode, version: "1.2.3"}]\ncases: {files: [evals/cases/a.yaml]}\n'));
    expect(suite.engine.name).toBe('qwen_code');
    expect(suite.engines.map((e) => [e.name, e.displayName, e.version])).toEqual([
      ['qwen_code', 'qwen', undefined],
      ['codex', 'codex-cli', undefined],
      ['opencode', 'opencode', '1.2.3'],
    ]);
  });

  it('a custom engine: name `custom`, the written name kept, a case may name it', async () => {
    const { suite } = await loadOk(
      suiteWith(
        'engine:\n  name: my-agent\n  custom:\n    transport: local\n    response_format: text\n    timeout_seconds: 60\n    env: {MY_TOKEN: "${MY_TOKEN}"}\n    kwargs: {profile: production, retries: 2}\n    local: {command: ./agent.sh, args: ["--input", "${input_file}"], output_file: out.json}\nengines: [my-agent, codex]\ncases: {files: [evals/cases/a.yaml]}\n',
        `${MINIMAL_CASE}engines: [my-agent]\n`,
        { 'agent.sh': '#!/bin/sh\n' },
      ),
    );
    expect(suite.engines.map((e) => e.name)).toEqual(['custom', 'codex']);
    expect(suite.engine).toEqual({
      name: 'custom',
      displayName: 'my-agent',
      model: {},
      kwargs: {},
      custom: {
        transport: 'local',
        responseFormat: 'text',
        conversationMode: 'batch',
        timeoutSeconds: 60,
        env: { MY_TOKEN: '${MY_TOKEN}' },
        kwargs: { profile: 'production', retries: '2' },
        local: { command: './agent.sh', args: ['--input', '${input_file}'], outputFile: 'out.json' },
      },
    });
    expect(suite.cases[0]!.engines).toEqual(['custom']);
  });

  it('explicit skills: absolute paths, include/exclude/target kept; real skills lint clean', async () => {
    // Real public skills, copied into the repository (test/fixtures/skills/SOURCE.md).
    const real = path.resolve(here, '../fixtures/skills');
    const { suite, warnings } = await loadOk(
      suiteWith(
        `skills:\n  - {path: ., include: [SKILL.md, "references/**"], exclude: ["*.tmp"], target: demo}\n  - {source: local_path, path: ${real}/brand-guidelines}\n  - {path: ${real}/webapp-testing}\ncases: {files: [evals/cases/a.yaml]}\n`,
      ),
    );
    expect(warnings).toEqual([]);
    expect(suite.skills).toEqual([
      { source: 'local_path', path: suite.skillDir, include: ['SKILL.md', 'references/**'], exclude: ['*.tmp'], target: 'demo' },
      { source: 'local_path', path: `${real}/brand-guidelines`, include: [], exclude: [] },
      { source: 'local_path', path: `${real}/webapp-testing`, include: [], exclude: [] },
    ]);
  });

  it('a {{variable}} no earlier turn captures is an error at its line', async () => {
    const diags = await loadErrors(
      suiteWith('cases: {files: [evals/cases/a.yaml]}\n', 'input:\n  turns:\n    - content: first\n    - content: "use {{missing}}"\n'),
    );
    expect(diags.filter((d) => d.severity === 'error').map((d) => [path.basename(d.file), d.line, d.message])).toEqual([
      ['a.yaml', 4, expect.stringMatching(/^`\{\{missing\}\}` is not captured by an earlier turn/)],
    ]);
  });

  it('tag and tags merge; alibaba fields skill-up ignores become warnings', async () => {
    const { suite, warnings } = await loadOk(
      suiteWith(
        'mcp: {servers: [{name: fs, mode: mocked, builtin: filesystem}]}\nuser_simulator: {model: x}\nenvironment: {network_policy: deny_all}\ncases: {files: [evals/cases/a.yaml]}\n',
        'tag: trigger_test\ntags: [smoke, trigger_test]\ninput:\n  turns:\n    - content: "hello"\n',
      ),
    );
    expect(suite.cases[0]!.tags).toEqual(['trigger_test', 'smoke']);
    expect(warnings.map((w) => [path.basename(w.file), w.line, w.message])).toEqual([
      ['eval.yaml', 4, '`environment.network_policy` is only used with `type: docker`; ignored'],
    ]);
  });

  it('YAML anchors and merge keys work', async () => {
    const { suite } = await loadOk(
      suiteWith('cases:\n  files: [evals/cases/a.yaml]\n  defaults: &d {timeout_seconds: 77}\n  inline:\n    - id: x\n      input: {prompt: hi}\n      constraints: {<<: *d}\n'),
    );
    expect(suite.cases.find((c) => c.id === 'x')!.timeoutSeconds).toBe(77);
  });
});

describe('validateAllCases: false', () => {
  it('leaves a broken case file out and lists it, instead of throwing', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/good.yaml': MINIMAL_CASE,
      'evals/cases/bad.yaml': 'id: broken\ninput: {prompt: hi, turns: [{content: x}]}\n',
    });
    await expect(loadSuite(dir, { cwd: dir })).rejects.toThrow(/both set/);
    const { suite, invalidCases, warnings } = await loadSuite(dir, { cwd: dir, validateAllCases: false });
    expect(suite.cases.map((c) => c.id)).toEqual(['good']);
    expect(invalidCases.map((c) => [c.id, path.basename(c.file), c.diagnostics.length])).toEqual([['broken', 'bad.yaml', 1]]);
    expect(warnings.some((w) => /left out/.test(w.message))).toBe(true);
  });

  it('still throws for problems in eval.yaml', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': `${MINIMAL_EVAL}trials: zero\n`, 'evals/cases/a.yaml': MINIMAL_CASE });
    await expect(loadSuite(dir, { cwd: dir, validateAllCases: false })).rejects.toThrow(/trials/);
  });
});

describe('alibaba/skill-up files load', () => {
  it('an eval.yaml written like alibaba’s defaults (empty sections) loads without warnings', async () => {
    const dir = writeSkill({
      'evals/eval.yaml':
        'schema_version: v1alpha1\nenvironment: {type: none, workspace_mount: /workspace, env: {}}\nmcp:\n  servers: []\nskills: []\nengine: {name: claude_code, model: {}}\nuser_simulator: {}\ncases:\n  files: [evals/cases/a.yaml]\n  defaults: {timeout_seconds: 300, max_turns: 10, expect: {}}\n  parallelism: 1\nreport: {formats: [json], artifacts: []}\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const { suite, warnings } = await loadOk(dir);
    expect(warnings).toEqual([]);
    expect(suite.skills).toEqual([{ source: 'local_path', path: dir, include: [], exclude: [] }]);
  });

  it('a custom engine using environment references and a nested skill target', async () => {
    // `${VAR?message}` must be set when the suite is checked (else every job would fail).
    vi.stubEnv('AGENT_API_KEY', 'k');
    vi.stubEnv('AGENT_RUNNER', 'runner.py');
    vi.stubEnv('AGENT_PYTHON', 'sh'); // the command must be on PATH
    const dir = writeSkill({
      'evals/eval.yaml': `schema_version: v1alpha1
skills:
  - {source: local_path, path: ., target: .agent-skills/demo}
engine:
  name: harness
  model: {provider: dashscope, name: qwen}
  custom:
    transport: local
    conversation_mode: stateful
    env:
      AGENT_API_KEY: \${AGENT_API_KEY?AGENT_API_KEY is required}
      AGENT_MODEL: \${model_name}
    local:
      command: \${AGENT_PYTHON:-python3}
      args: ["\${AGENT_RUNNER?set AGENT_RUNNER}", --input, "\${input_file}"]
      cwd: \${workspace}
cases: {files: [evals/cases/a.yaml]}
judge: {type: rule_based}
`,
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const { suite, warnings } = await loadOk(dir);
    expect(suite.skills[0]!.target).toBe('.agent-skills/demo');
    expect(suite.engine.custom?.conversationMode).toBe('stateful');
    expect(suite.engine.custom?.local?.cwd).toBe('${workspace}');
    expect(warnings.map((w) => w.message)).toEqual(['this `rule_based` judge has no `success` or `failure` rules, so it always passes']);
    vi.unstubAllEnvs();
  });

  it('an eval-level agent_judge may leave criteria to the cases, which inherit its model and threshold', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}judge: {type: agent_judge, model: anthropic/claude-sonnet-4-6, pass_threshold: 0.5}\n`,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge:\n  type: agent_judge\n  criteria: [greets the user]\n`,
      'evals/cases/b.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, model: openai/gpt-5, criteria: [x], pass_threshold: 1.0}\n`,
      'evals/cases/c.yaml': `${MINIMAL_CASE}judge: {type: script, script_path: evals/check.sh}\n`,
      'evals/check.sh': 'exit 0\n',
    });
    const { suite } = await loadOk(dir);
    expect(suite.cases.map((c) => c.judges[0])).toEqual([
      { type: 'agent_judge', model: 'anthropic/claude-sonnet-4-6', criteria: [{ id: 'c1', text: 'greets the user' }], passThreshold: 0.5, timeoutSeconds: 0, repeats: 1, skills: [], context: expect.objectContaining({ profile: 'standard' }) },
      { type: 'agent_judge', model: 'openai/gpt-5', criteria: [{ id: 'c1', text: 'x' }], passThreshold: 1, timeoutSeconds: 0, repeats: 1, skills: [], context: expect.objectContaining({ profile: 'standard' }) },
      { type: 'script', scriptPath: path.join(dir, 'evals/check.sh'), timeoutSeconds: 30 },
    ]);
  });

  it('but a case that inherits a criteria-less agent_judge is an error, at the eval judge', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}judge:\n  type: agent_judge\n  model: anthropic/claude-sonnet-4-6\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
      'evals/cases/b.yaml': `${MINIMAL_CASE}judge: {type: agent_judge}\n`,
    });
    const errors = await loadErrors(dir);
    expect(errors.map((d) => [path.relative(dir, d.file), d.line, d.message])).toEqual([
      ['evals/cases/b.yaml', 3, 'an `agent_judge` needs `criteria`: the statements the grader checks, e.g. `criteria: ["explains the bug"]`'],
      ['evals/eval.yaml', 5, 'this `agent_judge` has no `criteria`, and case `a` uses it as is; add `criteria` here or give that case a judge with criteria'],
    ]);
  });

  it('mcp servers on a case load from an alibaba config_ref file, without a warning', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}mcp:\n  servers:\n    - {name: project, mode: mocked, config_ref: evals/fixtures/mcp/x.yaml}\n`,
      'evals/fixtures/mcp/x.yaml': 'tool_responses:\n  list_issues:\n    default: "[]"\n',
    });
    const { suite, warnings } = await loadOk(dir);
    expect(warnings).toEqual([]);
    expect(suite.cases[0]!.mcpServers!.map((s) => [s.name, s.mode])).toEqual([['project', 'mocked']]);
  });
});

describe('expect skill checks', () => {
  it('accepts skill_invoked as a name or a list and merges defaults first', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadSuite } = await import('../../src/config/load.js');
    const dir = join(mkdtempSync(join(tmpdir(), 'su-exp-')), 'sk');
    mkdirSync(join(dir, 'evals/cases'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: sk\ndescription: test skill\n---\nbody\n');
    writeFileSync(join(dir, 'evals/eval.yaml'), 'schema_version: v1alpha1\nengine: { name: claude_code }\ncases:\n  files: [evals/cases/a.yaml]\n  defaults:\n    expect: { skill_invoked: sk }\n');
    writeFileSync(join(dir, 'evals/cases/a.yaml'), 'input: { prompt: hi }\nexpect:\n  skill_invoked: [other, sk]\n  skill_not_invoked: bad\n');
    const { suite } = await loadSuite(dir, { cwd: dir });
    expect(suite.cases[0]!.expect.skillInvoked).toEqual(['sk', 'other']);
    expect(suite.cases[0]!.expect.skillNotInvoked).toEqual(['bad']);
  });
});

describe('engines: [a, b] with bare names', () => {
  it('gives each listed engine the suite engine model and kwargs, but not its version pin', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadSuite } = await import('../../src/config/load.js');
    const dir = join(mkdtempSync(join(tmpdir(), 'su-eng-')), 'sk');
    mkdirSync(join(dir, 'evals/cases'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: sk\ndescription: test skill\n---\nbody\n');
    writeFileSync(join(dir, 'evals/m.yaml'), 'rules:\n  - reply: [{ say: hi }]\n');
    writeFileSync(join(dir, 'evals/eval.yaml'), 'schema_version: v1alpha1\nengine:\n  name: claude_code\n  version: 2.1.332\n  model: { provider: scripted, script: evals/m.yaml }\nengines: [claude_code, codex]\ncases:\n  files: [evals/cases/a.yaml]\n');
    writeFileSync(join(dir, 'evals/cases/a.yaml'), 'input: { prompt: hi }\n');
    const { suite } = await loadSuite(dir, { cwd: dir });
    expect(suite.engines.map((e) => [e.name, e.version, e.model.provider])).toEqual([
      ['claude_code', '2.1.332', 'scripted'],
      ['codex', undefined, 'scripted'],
    ]);
    expect(suite.engines[1]!.model.script).toBe(join(dir, 'evals/m.yaml'));
  });
});
