/**
 * Error quality: each kind of mistake gives one message, at the exact line and column of the
 * offending key or value, naming the value and what was expected.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/config/diagnostics.js';
import { loadErrors, loadOk, MINIMAL_CASE, MINIMAL_EVAL, only, writeSkill } from './helpers.js';

describe('YAML syntax', () => {
  it('reports a syntax error with yaml’s line and column, and still checks the other files', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input:\n  prompt: "unterminated\n',
      'evals/cases/b.yaml': 'input:\n  prompt: ok\nexpect:\n  must_contian: [x]\n',
    });
    const errors = await loadErrors(dir);
    const syntax = only(errors, /YAML syntax error/);
    expect(syntax.file).toBe(path.join(dir, 'evals/cases/a.yaml'));
    expect([syntax.line, syntax.col]).toEqual([2, 11]);
    expect(syntax.message).toBe('YAML syntax error: Missing closing "quote: the string that starts here is never closed');
    // The other case file is still validated.
    expect(only(errors, /must_contian/).file).toBe(path.join(dir, 'evals/cases/b.yaml'));
  });

  it('reports a key written twice in one map', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': 'input:\n  prompt: a\n  prompt: b\n' });
    const d = only(await loadErrors(dir), /unique/);
    expect(d.line).toBe(3);
  });

  it('reports a syntax error in eval.yaml and still reads the case files it names', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files: [evals/cases/a.yaml]\nreport: formats: [json]\n',
      'evals/cases/a.yaml': 'input: {prompt: 42}\n',
    });
    const errors = await loadErrors(dir);
    const syntax = only(errors, /YAML syntax error/);
    expect(syntax.file).toMatch(/eval\.yaml$/);
    expect([syntax.line, syntax.col]).toEqual([4, 9]);
    expect(syntax.message).toBe('YAML syntax error: Nested mappings are not allowed in compact mappings');
    const d = only(errors, /expected a non-empty string, got a number `42`/);
    expect([d.line, d.col]).toEqual([1, 17]);
  });
});

describe('schema problems', () => {
  it('unknown key: names the nearest valid key at that place', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input:\n  prompt: hi\nexpect:\n  must_contian: [x]\n',
    });
    const d = only(await loadErrors(dir), /unknown key/);
    expect(d.message).toBe('unknown key `must_contian`; did you mean `must_contain`?');
    expect([d.line, d.col]).toEqual([4, 3]);
    expect(d.path).toBe('expect.must_contian');
    expect(formatDiagnostic(d, dir)).toBe('evals/cases/a.yaml:4:3: expect.must_contian: unknown key `must_contian`; did you mean `must_contain`?');
  });

  it('unknown key far from every valid key: lists the valid keys', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': 'input:\n  prompt: hi\n  xyzzy: 1\n' });
    const d = only(await loadErrors(dir), /unknown key/);
    expect(d.message).toBe('unknown key `xyzzy`; expected one of `prompt`, `turns`');
    expect(d.line).toBe(3);
  });

  it('unknown rule kind inside a judge gets a did-you-mean among rule kinds', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input: {prompt: hi}\njudge:\n  type: rule_based\n  success:\n    - tool_caled: {name: Bash}\n',
    });
    const d = only(await loadErrors(dir), /unknown key/);
    expect(d.message).toBe('unknown key `tool_caled`; did you mean `tool_called`?');
    expect([d.line, d.col]).toEqual([5, 7]);
  });

  it('wrong type: one message naming the value and the expected shape', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input:\n  prompt: hi\nexpect:\n  must_contain: "x"\n',
    });
    const errors = await loadErrors(dir);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toBe('expected a list of strings, got a string `"x"`');
    expect([errors[0]!.line, errors[0]!.col]).toEqual([4, 17]);
  });

  it('a number where a string is expected suggests quoting', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\nengine:\n  name: codex\n  version: 1.0\ncases: {files: [evals/cases/a.yaml]}\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const d = only(await loadErrors(dir), /version/);
    expect(d.message).toBe('expected an exact version string such as "2.1.0", got a number `1` (quote it: "1")');
    expect(d.line).toBe(4);
  });

  it('an unknown enum value gets a did-you-mean and the allowed values', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': 'input: {prompt: hi}\njudge:\n  type: rule_base\n' });
    const d = only(await loadErrors(dir), /rule_base/);
    expect(d.message).toBe('unknown value `rule_base`; did you mean `rule_based`? (expected one of `rule_based`, `script`, `agent_judge`)');
    expect([d.line, d.col]).toEqual([3, 9]);
  });

  it('a missing required key points at the map that lacks it', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input: {prompt: hi}\njudge:\n  type: script\n  timeout_seconds: 5\n',
    });
    const d = only(await loadErrors(dir), /missing required key/);
    expect(d.message).toBe('missing required key `script_path`');
    expect(d.path).toBe('judge');
    expect(d.line).toBe(2);
  });

  it('a range problem names the range', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files: [evals/cases/a.yaml]\n  parallelism: 300\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const d = only(await loadErrors(dir), /parallelism|256/);
    expect(d.message).toBe('expected a whole number from 1 to 256, got a number `300`');
    expect([d.line, d.col]).toEqual([4, 16]);
  });

  it('a rule with two kinds in one item is one message', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input: {prompt: hi}\njudge:\n  type: rule_based\n  success:\n    - exit_code: 0\n      output_contains: {all: [x]}\n',
    });
    const errors = await loadErrors(dir);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/exactly one rule kind.*got 2 keys \(`exit_code`, `output_contains`\)/);
    expect(errors[0]!.line).toBe(5);
  });

  it('a wrong schema_version', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': 'schema_version: v1\ncases: {files: [evals/cases/a.yaml]}\n', 'evals/cases/a.yaml': MINIMAL_CASE });
    const d = only(await loadErrors(dir), /v1alpha1/);
    expect(d.message).toBe('expected `v1alpha1`, got `v1`');
    expect(d.line).toBe(1);
  });
});

describe('case files', () => {
  it('a listed case file that does not exist', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files:\n    - evals/cases/a.yaml\n    - evals/cases/nope.yaml\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const d = only(await loadErrors(dir), /not found/);
    expect(d.message).toMatch(/^case file `evals\/cases\/nope\.yaml` not found in the skill folder /);
    expect([d.line, d.col, d.path]).toEqual([5, 7, 'cases.files[1]']);
  });

  it('a path written relative to evals/ gets a hint with the right path', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files: [cases/a.yaml]\n', 'evals/cases/a.yaml': MINIMAL_CASE });
    const d = only(await loadErrors(dir), /not found/);
    expect(d.message).toMatch(/not to evals\/: did you mean `evals\/cases\/a\.yaml`\?$/);
    expect(d.line).toBe(3);
  });

  it('a glob matching nothing', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files: [evals/cases/*.yaml, evals/other/*.yaml]\n', 'evals/cases/a.yaml': MINIMAL_CASE });
    const d = only(await loadErrors(dir), /matches no/);
    expect(d.message).toMatch(/^glob `evals\/other\/\*\.yaml` matches no \.yaml\/\.yml file/);
    expect([d.line, d.col]).toEqual([3, 31]);
  });

  it('the same file listed twice', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files:\n    - evals/cases/a.yaml\n    - ./evals/cases/a.yaml\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const d = only(await loadErrors(dir), /listed twice/);
    expect(d.message).toMatch(/also at line 4/);
    expect(d.line).toBe(5);
  });

  it('duplicate case ids are reported at both places', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'title: first\nid: same\ninput: {prompt: a}\n',
      'evals/cases/b.yaml': 'id: same\ninput: {prompt: b}\n',
    });
    const errors = (await loadErrors(dir)).filter((d) => /duplicate case id/.test(d.message));
    expect(errors.map((d) => [path.relative(dir, d.file), d.line, d.col])).toEqual([
      ['evals/cases/a.yaml', 2, 5],
      ['evals/cases/b.yaml', 1, 5],
    ]);
    expect(errors[0]!.message).toBe('duplicate case id `same`; also used at evals/cases/b.yaml:1:5. Case ids must be unique in a suite');
    expect(errors[1]!.message).toContain('also used at evals/cases/a.yaml:2:5');
  });

  it('case ids differing only in letter case clash: their job folders would be one on macOS and Windows', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'id: Same\ninput: {prompt: a}\n',
      'evals/cases/b.yaml': 'title: second\nid: same\ninput: {prompt: b}\n',
    });
    const errors = (await loadErrors(dir)).filter((d) => /duplicate case id/.test(d.message));
    expect(errors.map((d) => [path.relative(dir, d.file), d.line, d.col])).toEqual([
      ['evals/cases/a.yaml', 1, 5],
      ['evals/cases/b.yaml', 2, 5],
    ]);
    expect(errors[0]!.message).toBe(
      'duplicate case id `Same`; also used at evals/cases/b.yaml:2:5 (as `same`). Case ids must be unique in a suite, also ignoring letter case: their job folders would be the same folder on macOS and Windows',
    );
    expect(errors[1]!.message).toContain('also used at evals/cases/a.yaml:1:5 (as `Same`)');
  });

  it('an id taken from the file name clashes with an explicit id', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/hello.yaml': MINIMAL_CASE,
      'evals/cases/other.yaml': 'id: hello\ninput: {prompt: b}\n',
    });
    const errors = (await loadErrors(dir)).filter((d) => /duplicate case id/.test(d.message));
    expect(errors).toHaveLength(2);
    expect(errors[0]!.message).toContain('(taken from the file name)');
    expect(errors[0]!.line).toBe(1);
  });

  it('input.prompt and input.turns both set', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'id: a\ninput:\n  prompt: one\n  turns:\n    - content: two\n',
    });
    const d = only(await loadErrors(dir), /both set/);
    expect(d.message).toBe('`input.prompt` (line 3) and `input.turns` are both set; use `prompt` for a single message or `turns` for a conversation, not both');
    expect([d.line, d.col, d.path]).toEqual([4, 3, 'input.turns']);
  });

  it('input with neither prompt nor turns', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': 'id: a\ninput: {}\n' });
    const d = only(await loadErrors(dir), /needs `prompt`/);
    expect(d.line).toBe(2);
  });

  it('a respond turn (user simulator) is an error', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': 'input:\n  turns:\n    - content: hi\n    - respond: "ask for more"\n' });
    const d = only(await loadErrors(dir), /user simulator/);
    expect([d.line, d.path]).toEqual([4, 'input.turns[1].respond']);
  });
});

describe('regular expressions', () => {
  it('a regex in output_matches that does not compile', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input: {prompt: hi}\njudge:\n  type: rule_based\n  success:\n    - output_matches:\n        any: ["ok", "fo(o"]\n',
    });
    const d = only(await loadErrors(dir), /does not compile/);
    expect(d.message).toBe('regular expression `fo(o` does not compile: Unterminated group');
    expect([d.line, d.col, d.path]).toEqual([6, 21, 'judge.success[0].output_matches.any[1]']);
  });

  it('Go syntax that JavaScript lacks is accepted: (?i) and (?P<name>…)', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml':
        'input:\n  turns:\n    - content: hi\n      capture: [{variable: t, pattern: "(?i)token=(?P<value>\\\\w+)"}]\n    - content: "{{t}}"\njudge:\n  type: rule_based\n  success: [{output_matches: {all: ["(?i)hello"]}}]\n',
    });
    const { suite } = await loadOk(dir);
    expect(suite.cases[0]!.turns[0]!.capture[0]!.pattern).toBe('(?i)token=(?P<value>\\w+)');
  });

  it('a capture pattern without a usable group', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input:\n  turns:\n    - content: hi\n      capture:\n        - variable: t\n          pattern: "(a)(b)"\n',
    });
    const d = only(await loadErrors(dir), /capture pattern/);
    expect(d.message).toContain('it has 2 groups');
    expect([d.line, d.col]).toEqual([6, 20]);
  });
});

describe('paths', () => {
  it('a fixture path escaping the skill folder', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input: {prompt: hi}\ncontext:\n  repo_fixture: ../../etc/passwd\n',
    });
    const d = only(await loadErrors(dir), /outside the skill folder/);
    expect(d.message).toBe(`repo fixture \`../../etc/passwd\` is outside the skill folder ${dir}; it must be a path inside it, relative to the skill root`);
    expect([d.line, d.col, d.path]).toEqual([3, 17, 'context.repo_fixture']);
  });

  it('a script judge, golden file and patch must exist inside the skill folder', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml':
        'input: {prompt: hi}\ncontext:\n  git: {init: true, apply_diff: /etc/hostname}\nexpect:\n  golden_file: evals/golden.txt\njudge: {type: script, script_path: fixtures/check.sh}\n',
      'evals/fixtures/check.sh': 'exit 0\n',
    });
    const errors = await loadErrors(dir);
    expect(only(errors, /patch/).line).toBe(3);
    expect(only(errors, /golden file/).line).toBe(5);
    const script = only(errors, /judge script/);
    expect(script.line).toBe(6);
    expect(script.message).toMatch(/did you mean `evals\/fixtures\/check\.sh`\?$/);
  });

  it('workspace paths must be relative and stay in the workspace', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input: {prompt: hi}\ncontext:\n  files:\n    ok/a.txt: x\n    ../up.txt: x\n    /abs.txt: x\nexpect:\n  files_exist: [a/../../b]\n',
    });
    const errors = await loadErrors(dir);
    expect(errors.map((d) => [d.line, d.col])).toEqual([
      [5, 5],
      [6, 5],
      [8, 17],
    ]);
    expect(errors[1]!.message).toBe('file name `/abs.txt` is an absolute path; it must be relative to the workspace and stay inside it');
  });
});

describe('SKILL.md (lintSkill)', () => {
  it('SKILL.md missing: reported at the eval.yaml entry naming the skill', async () => {
    const dir = writeSkill({ 'SKILL.md': null, 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': MINIMAL_CASE });
    const d = only(await loadErrors(dir), /SKILL\.md not found/);
    expect(d.file).toBe(path.join(dir, 'evals/eval.yaml'));
    expect([d.line, d.path]).toEqual([1, 'skills']);
    expect(d.message).toContain(`the skill root ${dir}`);
  });

  it('SKILL.md missing in an explicit skills[] entry: at its path', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\nskills:\n  - path: .\n  - path: vendor/other\ncases: {files: [evals/cases/a.yaml]}\n',
      'vendor/other/README.md': 'x',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const d = only(await loadErrors(dir), /SKILL\.md not found/);
    expect([d.line, d.col, d.path]).toEqual([4, 11, 'skills[1].path']);
  });

  it('SKILL.md with broken frontmatter', async () => {
    const dir = writeSkill({
      'SKILL.md': '---\nname: demo-skill\ndescription: "unclosed\n---\n# body\n',
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const d = only(await loadErrors(dir), /frontmatter/);
    expect(d.file).toBe(path.join(dir, 'SKILL.md'));
    expect(d.line).toBe(3);
  });

  it('SKILL.md without frontmatter', async () => {
    const dir = writeSkill({ 'SKILL.md': '# Just a heading\n', 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': MINIMAL_CASE });
    const d = only(await loadErrors(dir), /frontmatter/);
    expect([d.file, d.line]).toEqual([path.join(dir, 'SKILL.md'), 1]);
  });

  it('a skills[] folder that does not exist', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': 'schema_version: v1alpha1\nskills: [{path: nowhere}]\ncases: {files: [evals/cases/a.yaml]}\n', 'evals/cases/a.yaml': MINIMAL_CASE });
    const d = only(await loadErrors(dir), /skill folder `nowhere` not found/);
    expect(d.line).toBe(2);
  });
});

describe('engines', () => {
  const suite = (engine: string) =>
    writeSkill({ 'evals/eval.yaml': `schema_version: v1alpha1\n${engine}cases: {files: [evals/cases/a.yaml]}\n`, 'evals/cases/a.yaml': MINIMAL_CASE });

  it('an unknown engine name gets a did-you-mean', async () => {
    const d = only(await loadErrors(suite('engine:\n  name: cladue_code\n')), /unknown engine/);
    expect(d.message).toBe('unknown engine `cladue_code`; did you mean `claude_code`? (any other name needs `engine.custom` describing how to run your agent)');
    expect([d.line, d.col]).toEqual([3, 9]);
  });

  it('an unknown name in the engines matrix', async () => {
    const d = only(await loadErrors(suite('engines: [codex, gemeni]\n')), /unknown engine/);
    expect(d.message).toContain('did you mean `gemini`?');
    expect([d.line, d.col]).toEqual([2, 18]);
  });

  it('custom on a built-in engine', async () => {
    const d = only(await loadErrors(suite('engine:\n  name: codex\n  custom: {transport: local, local: {command: x}}\n')), /built-in engine/);
    expect(d.line).toBe(4);
  });

  it('the scripted provider needs a script that exists', async () => {
    const errors = await loadErrors(suite('engine:\n  model: {provider: scripted}\n'));
    expect(only(errors, /needs `script`/).line).toBe(3);
    const errors2 = await loadErrors(suite('engine:\n  model: {provider: scripted, script: evals/model.yaml}\n'));
    expect(only(errors2, /scripted model file/).line).toBe(3);
  });

  it('docker: the settings are read, sizes parsed, alibaba\'s names mapped; opensandbox is not supported', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `schema_version: v1alpha1\nenvironment:\n  type: docker\n  image: node:20\n  network_policy: deny_all\n  workspace_mount: /workspace/\n  cpus: 1.5\n  memory: 1.5g\n  pids_limit: 64\n  user: "1000:1000"\n  mounts: [{source: data, target: /data}]\ncases: {files: [evals/cases/a.yaml]}\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
      'data/x.txt': 'x',
    });
    const { suite: s } = await loadOk(dir);
    expect(s.environment.type).toBe('docker');
    expect(s.environment.docker).toEqual({
      image: 'node:20',
      network: 'none',
      workdir: '/workspace',
      cpus: 1.5,
      memoryBytes: 1.5 * 1024 ** 3,
      pidsLimit: 64,
      user: '1000:1000',
      mounts: [{ source: path.join(dir, 'data'), target: '/data' }],
    });
    const plain = await loadOk(suite('environment:\n  type: docker\n  image: alpine\n  memory: 67108864\n'));
    expect(plain.suite.environment.docker).toEqual({ image: 'alpine', network: 'none', memoryBytes: 64 * 1024 ** 2, mounts: [] });
    const sandbox = await loadErrors(suite('environment:\n  type: opensandbox\n'));
    // One message (the schema's enum error gives way to it), and it offers only what runs.
    expect(sandbox.map((d) => `${d.line}:${d.col} ${d.path}: ${d.message}`)).toEqual([
      '3:9 environment.type: environment type `opensandbox` is not supported by skill-up; use `none` (a temp folder on this machine) or `docker`',
    ]);
    expect(only(await loadErrors(suite('environment:\n  type: dockr\n')), /dockr/).message).toMatch(/expected one of `none`, `local`, `docker`/);
  });

  it.each([
    ['no image', 'environment: {type: docker}\n', /`type: docker` needs `image`/],
    ['a memory that is no size', 'environment: {type: docker, image: x, memory: lots}\n', /memory|size/],
    ['too little memory', 'environment: {type: docker, image: x, memory: 1m}\n', /less than 6 MB/],
    ['a relative workdir', 'environment: {type: docker, image: x, workdir: work}\n', /absolute|\//],
    ['workdir /', 'environment: {type: docker, image: x, workdir: /}\n', /cannot be mounted over/],
    ['a network with spaces', 'environment: {type: docker, image: x, network: "my net"}\n', /network/],
    ['allow_declared', 'environment: {type: docker, image: x, network_policy: allow_declared}\n', /allow_declared.*not supported/],
    ['deny_all and host', 'environment: {type: docker, image: x, network_policy: deny_all, network: host}\n', /contradicts/],
    ['a mount outside the skill', 'environment: {type: docker, image: x, mounts: [{source: ../.., target: /up}]}\n', /outside the skill folder/],
    ['a missing mount', 'environment: {type: docker, image: x, mounts: [{source: nope, target: /n}]}\n', /not found in the skill folder/],
    ['a relative mount target', 'environment: {type: docker, image: x, mounts: [{source: evals, target: data}]}\n', /target/],
    ['zero cpus', 'environment: {type: docker, image: x, cpus: 0}\n', /cpus|greater|> 0|0/],
    ['a hundredth of a CPU less', 'environment: {type: docker, image: x, cpus: 0.001}\n', /less than 0\.01/],
    ['more than 1 TiB of memory', 'environment: {type: docker, image: x, memory: 99999999999g}\n', /more than 1 TiB/],
    ['an image path that climbs (a redirect of the daemon request)', 'environment: {type: docker, image: "../../127.0.0.1:8999/x"}\n', /image `\.\.\/\.\.\/127\.0\.0\.1:8999\/x` has a registry host/],
    ['an image with a shell line', 'environment: {type: docker, image: "x; rm -rf /"}\n', /image `x; rm -rf \/`/],
    ['an upper-case image name', 'environment: {type: docker, image: Node}\n', /name part `Node`/],
    ['a user name (only numeric users are given the workspace)', 'environment: {type: docker, image: x, user: nobody}\n', /numeric `uid`/],
  ])('docker: %s is refused', async (_name, env, re) => {
    only(await loadErrors(suite(env)), re);
  });

  it('docker-only keys with type none are warnings, not errors', async () => {
    const { warnings } = await loadOk(suite('environment:\n  image: x\n  network: host\n  memory: 1g\n'));
    expect(warnings.map((d) => d.message)).toEqual(
      expect.arrayContaining(['`image` is only used with `type: docker`; ignored', '`network` is only used with `type: docker`; ignored', '`memory` is only used with `type: docker`; ignored']),
    );
  });
});

describe('secrets in a custom engine', () => {
  const custom = (block: string, transport = 'local') =>
    writeSkill({
      'evals/eval.yaml': `schema_version: v1alpha1\nengine:\n  name: my-agent\n  custom:\n    transport: ${transport}\n    env: {MY_TOKEN: "\${MY_TOKEN}"}\n    kwargs: {api_token: x, profile: prod}\n${block}cases: {files: [evals/cases/a.yaml]}\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
      agent: '#!/bin/sh\n',
      'sk-agent': '#!/bin/sh\n',
    });

  it.each([
    ['local.command', '    local:\n      command: "./agent --key sk-ant-api03-AbCdEf123456"\n', 'local', 9, 'an Anthropic API key'],
    ['local.command', '    local:\n      command: "./agent sk-proj-abc123def456ghi"\n', 'local', 9, 'an API key (`sk-…`)'],
    ['local.args', '    local:\n      command: ./agent\n      args: ["--token", "ghp_abcdefghijklmnopqrstuvwxyz0123"]\n', 'local', 10, 'a GitHub token'],
    ['local.args', '    local:\n      command: ./agent\n      args: ["--token", "github_pat_11ABCDEFG0123456789_abc"]\n', 'local', 10, 'a GitHub token (`github_pat_…`)'],
    ['local.args', '    local:\n      command: ./agent\n      args: ["--auth", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig"]\n', 'local', 10, 'a JSON Web Token'],
    ['local.cwd', '    local:\n      command: ./agent\n      cwd: "/keys/AKIAABCDEFGHIJKLMNOP"\n', 'local', 10, 'an AWS access key id'],
    ['http.url', '    http:\n      url: "https://api.example.com/run?key=AIzaSyA-1234567890abcdefghij"\n', 'http', 9, 'a Google API key'],
    ['http.url', '    http:\n      url: "https://hooks.example.com/xoxb-1234567890-abcdef"\n', 'http', 9, 'a Slack token'],
  ])('a literal credential in %s: %s', async (_where, block, transport, line, kind) => {
    const d = only(await loadErrors(custom(block, transport)), /looks like/);
    expect(d.message.startsWith(`contains what looks like ${kind}`)).toBe(true);
    expect(d.message).toContain('never write secrets into eval.yaml: pass them via `engine.custom.env` (e.g. `MY_TOKEN: ${MY_TOKEN}`)');
    expect(d.line).toBe(line);
  });

  it('names that merely resemble keys are not secrets', async () => {
    const dir = custom('    local:\n      command: ./sk-agent\n      args: ["--task-list", "${max_tokens}", "${kwargs.profile}", "sk-my-agent-name"]\n');
    expect((await loadOk(dir)).suite.engine.custom?.local?.args).toHaveLength(4);
  });

  it('references to ${api_key} and credential-named ${kwargs.X} in args', async () => {
    const dir = custom('    local:\n      command: ./agent\n      args: ["${input_file}", "${api_key}", "${kwargs.profile}", "${kwargs.api_token}", "${max_tokens}"]\n');
    const errors = (await loadErrors(dir)).filter((d) => /references/.test(d.message));
    expect(errors.map((d) => [d.path, d.line, d.col])).toEqual([
      ['engine.custom.local.args[1]', 10, 31],
      ['engine.custom.local.args[3]', 10, 66],
    ]);
    expect(errors[0]!.message).toMatch(/^references `\$\{api_key\}`.*pass it via `engine.custom.env`/);
  });

  it('an env reference holding a secret on the command line', async () => {
    const dir = custom('    local:\n      command: "./agent --token ${GITHUB_TOKEN}"\n');
    expect(only(await loadErrors(dir), /references `\$\{GITHUB_TOKEN\}`/).line).toBe(9);
  });
});

describe('bad input never throws anything but ConfigError', () => {
  it.each([
    ['expect with an empty value', 'input: {prompt: hi}\nexpect:\n', /expected a map, got an empty value/, 2],
    ['a case file that is a list', '- input: {prompt: hi}\n', /is a list; write one case per file/, 1],
    ['an empty case file', '', /the file is empty/, 1],
    ['a comment-only case file', '# nothing\n', /the file is empty/, 1],
    ['a scalar case file', 'hello\n', /single value/, 1],
    ['input: null', 'input:\n', /expected a map with `prompt` or `turns`, got an empty value/, 1],
    ['turns with a null item', 'input:\n  turns:\n    -\n', /expected a turn/, 3],
    ['judge: null', 'input: {prompt: x}\njudge:\n', /expected a judge map/, 2],
    ['success: null', 'input: {prompt: x}\njudge:\n  type: rule_based\n  success:\n', /expected a list of rules/, 4],
    ['capture item a string', 'input:\n  turns:\n    - content: x\n      capture: [oops]\n', /expected a map with `variable`/, 4],
    ['context.files a list', 'input: {prompt: x}\ncontext: {files: [a]}\n', /expected a map of workspace-relative path/, 2],
  ])('%s', async (_name, caseYaml, re, line) => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': caseYaml });
    const d = only(await loadErrors(dir), re);
    expect(d.line).toBe(line);
  });

  it.each([
    ['cases: null', 'schema_version: v1alpha1\ncases:\n', /expected a map, got an empty value/],
    ['an empty eval.yaml', '', /the file is empty/],
    ['eval.yaml is a list', '- schema_version: v1alpha1\n', /is a list/],
    ['cases.files null', 'schema_version: v1alpha1\ncases:\n  files:\n', /expected a list of case file paths or globs, got an empty value/],
    ['no cases at all', 'schema_version: v1alpha1\n', /the suite has no cases/],
    ['engine null', 'schema_version: v1alpha1\nengine:\ncases: {inline: [{id: a, input: {prompt: x}}]}\n', /expected an engine name or an engine map/],
    ['engines with a null item', 'schema_version: v1alpha1\nengines: [~]\ncases: {inline: [{id: a, input: {prompt: x}}]}\n', /expected an engine name/],
    ['custom: null', 'schema_version: v1alpha1\nengine: {name: x, custom: }\ncases: {inline: [{id: a, input: {prompt: x}}]}\n', /expected a map/],
    ['inline case null', 'schema_version: v1alpha1\ncases: {inline: [~]}\n', /expected a map describing one case/],
    ['environment a string', 'schema_version: v1alpha1\nenvironment: docker\ncases: {inline: [{id: a, input: {prompt: x}}]}\n', /expected a map, got a string `"docker"`/],
  ])('%s', async (_name, evalYaml, re) => {
    const dir = writeSkill({ 'evals/eval.yaml': evalYaml, 'evals/cases/a.yaml': MINIMAL_CASE });
    only(await loadErrors(dir), re);
  });
});

describe('misplaced keys', () => {
  it('a key that belongs one level down names where it goes', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}timeout_seconds: 30\n`,
      'evals/cases/a.yaml': 'prompt: hi\nmust_contain: [x]\n',
    });
    const errors = await loadErrors(dir);
    expect(errors.map((d) => [path.basename(d.file), d.line, d.message])).toEqual([
      ['a.yaml', 1, 'missing required key `input` (a map with `prompt` or `turns`)'],
      ['a.yaml', 1, 'unknown key `prompt` here; did you mean `input.prompt`?'],
      ['a.yaml', 2, 'unknown key `must_contain` here; did you mean `expect.must_contain`?'],
      ['eval.yaml', 4, 'unknown key `timeout_seconds` here; did you mean `judge.timeout_seconds`, `user_simulator.timeout_seconds` or `engine.custom.timeout_seconds`?'],
    ]);
  });
});
