/**
 * Bad input found from outside (issue 10's list of malformed inputs), check by check: each
 * is reported once, at its file, line and field, with the right value in the message; and
 * large inputs are read whole with bounded error lists (their speed: `npm run bench`, inputs).
 */
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { describe, expect, it, vi } from 'vitest';
import { DiagnosticBag, formatDiagnostic, MAX_DIAGNOSTICS_PER_FILE } from '../../src/config/diagnostics.js';
import { EXACT_VERSION, missingVersionError, versionProblem } from '../../src/config/engines.js';
import { MAX_TIMEOUT_SECONDS, RESERVED_CASE_IDS, reservedCaseIdProblem } from '../../src/config/limits.js';
import { normalWorkspacePath, workspaceFileProblem } from '../../src/config/paths.js';
import { fillTurnTemplate, turnVariables } from '../../src/config/turn-template.js';
import { duplicateKeys, firstInvalidUtf8, parseYaml, readYamlSource, YAML_PARSE_OPTIONS } from '../../src/config/yaml-source.js';
import { installDir } from '../../src/engine/cache.js';
import { parseModelScript } from '../../src/model/script.js';
import { runFlagWarnings } from '../../src/cli/validate.js';
import { lintSkill } from '../../src/skill/lint.js';
import { loadErrors, loadOk, MINIMAL_CASE, MINIMAL_EVAL, only, show, writeSkill } from './helpers.js';

const AGENT = '#!/bin/sh\necho done\n';

/** A suite with a custom engine whose `local` block is `local` (YAML, indented 4). */
function customSuite(local: string, extra: Record<string, string> = {}, custom = ''): string {
  return writeSkill({
    'evals/eval.yaml': `schema_version: v1alpha1\nengine:\n  name: my-agent\n  custom:\n    transport: local\n    response_format: text\n${custom}    local:\n${local}cases: {files: [evals/cases/a.yaml]}\n`,
    'evals/cases/a.yaml': MINIMAL_CASE,
    'evals/agent.sh': AGENT,
    ...extra,
  });
}

describe('YAML skill-up cannot read: too deep, or a collection as a key', () => {
  const deep = (n: number) => `rules:\n  - when: {turn: 1}\n    reply: [{say: hi}]\nx:\n${Array.from({ length: n }, (_, i) => `${'  '.repeat(i + 1)}k${i}:`).join('\n')}\n`;

  it('3000 levels of nested maps are one error at the file, not a stack overflow', () => {
    const bag = new DiagnosticBag();
    const src = parseYaml('/s/evals/eval.yaml', deep(3000), bag);
    expect(src.ok).toBe(false);
    expect(bag.items).toHaveLength(1);
    expect(bag.items[0]!.message).toMatch(/^YAML error: maps and lists nested deeper than skill-up reads \((\d+\+ levels|more than 256 levels); at most 256\); flatten the structure$/);
    expect(bag.items[0]!.line).toBeGreaterThan(1);
  });

  it('300 levels (parsed, past the limit) name the depth', () => {
    const bag = new DiagnosticBag();
    parseYaml('/s/evals/eval.yaml', deep(300), bag);
    expect(bag.items.map((d) => d.message)).toEqual(['YAML error: maps and lists nested deeper than skill-up reads (257+ levels; at most 256); flatten the structure']);
  });

  it('a list as a key is an error, and yaml prints no process warning', () => {
    const warn = vi.spyOn(process, 'emitWarning');
    try {
      const bag = new DiagnosticBag();
      const src = parseYaml('/s/evals/eval.yaml', 'schema_version: v1alpha1\n? [a, b]\n: 1\n', bag);
      expect(src.ok).toBe(false);
      expect(bag.items.map((d) => [d.line, d.col, d.message])).toEqual([[2, 3, 'YAML error: a map key is a list (`? […]`); keys must be strings']]);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('the scripted model file gets the same checks', () => {
    expect(() => parseModelScript(deep(3000), 'model.yaml')).toThrow(/nested deeper than skill-up reads/);
    expect(() => parseModelScript('rules: []\n? {a: 1}\n: 1\n', 'model.yaml')).toThrow(/a map key is a map/);
  });
});

describe('YAML: linear duplicate-key check', () => {
  it('parses with the yaml package’s own (quadratic) check off', () => {
    expect(YAML_PARSE_OPTIONS.uniqueKeys).toBe(false);
  });

  it('reports a repeated key at the repeat, naming the key and the first line', () => {
    const bag = new DiagnosticBag();
    parseYaml('/x/a.yaml', 'input:\n  prompt: a\n  prompt: b\n', bag);
    expect(show(bag.sorted(), '/x')).toEqual(['a.yaml:3:3: YAML syntax error: Map keys must be unique: `prompt` appears twice in the same map (first at line 2)']);
  });

  it('compares keys as the object keys they become (1 and "1"), in flow maps too; merge keys may repeat', () => {
    const doc = parseDocument('a: &x {p: 1}\nb: &y {q: 2}\nc:\n  <<: *x\n  <<: *y\n  1: a\n  "1": b\nd: {k: 1, k: 2}\n', { ...YAML_PARSE_OPTIONS, merge: true });
    expect(duplicateKeys(doc).found.map((d) => d.key)).toEqual(['1', 'k']);
  });

  // Its speed (linear in the keys) is measured by `npm run bench` (inputs), not asserted here.
  it('finds the one repeat at the end of a 64k-key map', () => {
    const lines = ['big:'];
    for (let i = 0; i < 64_000; i++) lines.push(`  k${i}: ${i}`);
    lines.push('  k5: again');
    const bag = new DiagnosticBag();
    const src = parseYaml('/x/big.yaml', lines.join('\n'), bag);
    expect(src.ok).toBe(false);
    expect(bag.items.map((d) => [d.line, d.message])).toEqual([[64_002, 'YAML syntax error: Map keys must be unique: `k5` appears twice in the same map (first at line 7)']]);
  });

  it('lists 20 repeats and counts the rest', () => {
    const lines = ['m:'];
    for (let i = 0; i < 50; i++) lines.push('  same: 1');
    const bag = new DiagnosticBag();
    parseYaml('/x/m.yaml', lines.join('\n'), bag);
    expect(bag.items).toHaveLength(21);
    expect(bag.items[20]!.message).toBe('YAML syntax error: … and 29 more keys written twice in the same map (not listed)');
  });

  it('the scripted model file and SKILL.md frontmatter get the same check', async () => {
    expect(() => parseModelScript('rules:\n  - when: {turn: 1}\n    when: {turn: 2}\n    reply: [{say: hi}]\n', 'model.yaml')).toThrow(
      /model\.yaml:3:5: YAML syntax error: Map keys must be unique: `when` appears twice in the same map \(first at line 2\)/,
    );
    const dir = writeSkill({ 'SKILL.md': '---\nname: demo-skill\nname: again\ndescription: x\n---\n# x\n' });
    const { diagnostics } = await lintSkill(dir);
    expect(diagnostics.map((d) => [d.line, d.message])).toEqual([[3, 'YAML syntax error in frontmatter: Map keys must be unique: `name` appears twice in the same map (first at line 2)']]);
  });
});

describe('YAML: UTF-8 only', () => {
  it.each([
    ['valid text', Buffer.from('héllo ✓ 𝄞', 'utf8'), undefined],
    ['a Latin-1 é', Buffer.from([0x61, 0xe9, 0x62]), 1],
    ['an overlong NUL (C0 80)', Buffer.from([0x61, 0xc0, 0x80]), 1],
    ['a surrogate (ED A0 80)', Buffer.from([0x61, 0x62, 0xed, 0xa0, 0x80]), 2],
    ['above U+10FFFF (F4 90 80 80)', Buffer.from([0xf4, 0x90, 0x80, 0x80]), 0],
    ['a character cut at the end', Buffer.from([0x61, 0xe2, 0x9c]), 1],
    ['a stray continuation byte', Buffer.from([0x80]), 0],
  ])('%s → first invalid byte %s', (_what, buf, offset) => {
    expect(firstInvalidUtf8(buf)).toBe(offset);
  });

  it('a Latin-1 case file is an error at the byte’s line and column, naming the byte and its offset', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'su-latin1-'));
    const file = path.join(dir, 'a.yaml');
    writeFileSync(file, Buffer.from('input:\n  prompt: "Caf\xe9 au lait"\n', 'latin1'));
    const bag = new DiagnosticBag();
    expect(readYamlSource(file, bag).ok).toBe(false);
    expect(show(bag.sorted(), dir)).toEqual([
      'a.yaml:2:15: the file is not valid UTF-8: byte 0xE9 at byte offset 21 (line 2, column 15) is not part of a UTF-8 character; YAML files must be UTF-8 (it looks like Latin-1 or another legacy encoding: convert it, e.g. `iconv -f latin1 -t utf-8`)',
    ]);
  });

  it('the column counts characters: a valid é before the bad byte is one column', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'su-latin1-'));
    const file = path.join(dir, 'a.yaml');
    writeFileSync(file, Buffer.concat([Buffer.from('x: é'), Buffer.from([0xff]), Buffer.from('\n')]));
    const bag = new DiagnosticBag();
    readYamlSource(file, bag);
    expect([bag.items[0]!.line, bag.items[0]!.col]).toEqual([1, 5]);
  });
});

describe('bounded error lists', () => {
  it('a map with more than 10 unknown keys gets one message listing 10 and counting the rest', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => `extra_${i}: 1\n`).join('');
    const d = only(await loadErrors(writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}${keys}` })), /unknown keys/);
    expect(d.line).toBe(3);
    expect(d.path).toBe('extra_0');
    expect(d.message).toMatch(/^12 unknown keys in this map: `extra_0`, `extra_1`, .*`extra_9` … and 2 more; expected only `id`, /);
  });

  it('ten unknown keys are still reported one by one, with their did-you-means', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `extra_${i}: 1\n`).join('');
    const errors = await loadErrors(writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}${keys}` }));
    expect(errors.filter((d) => /^unknown key `extra_\d`/.test(d.message))).toHaveLength(10);
  });

  it('a bag keeps 100 diagnostics per file and counts the rest in one line, listed last', () => {
    const bag = new DiagnosticBag();
    for (let i = 150; i > 0; i--) bag.error('/x/a.yaml', i, 1, '', `problem ${i}`);
    const sorted = bag.sorted();
    expect(sorted).toHaveLength(MAX_DIAGNOSTICS_PER_FILE + 1);
    expect(formatDiagnostic(sorted[sorted.length - 1]!, '/x')).toBe('a.yaml: … and 50 more errors in this file, not listed (the first 100 are shown)');
    expect(bag.accepts('/x/a.yaml')).toBe(false);
    expect(bag.accepts('/x/b.yaml')).toBe(true);
  });

  // Its load time is measured by `npm run bench` (inputs); the timeout only stops a hang.
  it('a 20 MB valid case file (100,000 workspace files) loads whole', { timeout: 120_000 }, async () => {
    const lines = ['input:', '  prompt: Summarise the files', 'context:', '  files:'];
    for (let i = 0; i < 100_000; i++) lines.push(`    src/module_${String(i).padStart(6, '0')}/file.txt: "${'generated content '.repeat(9)}${i}"`);
    const text = lines.join('\n') + '\n';
    expect(text.length).toBeGreaterThan(20_000_000);
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': text });
    const { suite } = await loadOk(dir);
    expect(Object.keys(suite.cases[0]!.context.files)).toHaveLength(100_000);
  });
});

describe('timeouts: at most 24 hours', () => {
  const over = MAX_TIMEOUT_SECONDS + 1;
  it.each([
    ['cases.defaults.timeout_seconds', `schema_version: v1alpha1\ncases:\n  files: [evals/cases/a.yaml]\n  defaults: {timeout_seconds: ${over}}\n`, MINIMAL_CASE, 'evals/eval.yaml:4:31', ', or -1 for no deadline'],
    ['constraints.timeout_seconds', MINIMAL_EVAL, `${MINIMAL_CASE}constraints: {timeout_seconds: ${over}}\n`, 'evals/cases/a.yaml:3:32', ', or -1 for no deadline'],
    ['input.turns[0].timeout_seconds', MINIMAL_EVAL, `input:\n  turns:\n    - {content: hi, timeout_seconds: ${over}}\n`, 'evals/cases/a.yaml:3:38', ''],
    ['judge.timeout_seconds', MINIMAL_EVAL, `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], timeout_seconds: ${over}}\n`, 'evals/cases/a.yaml:3:60', ''],
  ])('%s above the limit', async (field, evalYaml, caseYaml, at, tail) => {
    const dir = writeSkill({ 'evals/eval.yaml': evalYaml, 'evals/cases/a.yaml': caseYaml });
    const errors = await loadErrors(dir);
    expect(show(errors, dir)).toEqual([`${at}: ${field}: a timeout of ${over} seconds (1.0 days) is above the limit of 86400 seconds (24 hours); use at most 86400${tail}`]);
  });

  it('exactly 86400 seconds, and -1 for no deadline, are fine', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\ncases:\n  files: [evals/cases/*.yaml]\n  defaults: {timeout_seconds: -1}\n',
      'evals/cases/a.yaml': `${MINIMAL_CASE}constraints: {timeout_seconds: 86400}\n`,
      'evals/cases/b.yaml': MINIMAL_CASE,
    });
    expect((await loadOk(dir)).suite.cases.map((c) => c.timeoutSeconds)).toEqual([86400, -1]);
  });

  it('the custom engine’s timeout_seconds', async () => {
    const errors = await loadErrors(customSuite('      command: ./evals/agent.sh\n', {}, '    timeout_seconds: 2147484\n'));
    expect(only(errors, /above the limit/).path).toBe('engine.custom.timeout_seconds');
  });

  it('a huge eval-level agent_judge timeout is reported once, where it is written', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}judge: {type: agent_judge, criteria: [x], timeout_seconds: 5000000}\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
      'evals/cases/b.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [y]}\n`,
    });
    expect(only(await loadErrors(dir), /above the limit/).file).toMatch(/eval\.yaml$/);
  });
});

describe('case ids that collide with the run folder', () => {
  it.each(RESERVED_CASE_IDS.map((id) => [id]))('`%s` is an error at the id', async (id) => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `id: ${id}\n${MINIMAL_CASE}` });
    const d = only(await loadErrors(dir), /run folder/);
    expect([d.line, d.col, d.path]).toEqual([1, 5, 'id']);
    expect(d.message.startsWith(`case id \`${id}\` is the name of a file skill-up writes into the run folder (\`${id}\`)`)).toBe(true);
  });

  it('compared without case, and a report’s temporary sibling counts', () => {
    expect(reservedCaseIdProblem('Result.JSON')).toMatch(/`result\.json`/);
    expect(reservedCaseIdProblem('summary.md.tmp-42')).toMatch(/`summary\.md`/);
    expect(reservedCaseIdProblem('result')).toBeUndefined();
    expect(reservedCaseIdProblem('report.json')).toBeUndefined();
  });

  it('an id taken from the file name says to rename the file', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/journal.jsonl.yaml': MINIMAL_CASE });
    expect(only(await loadErrors(dir), /run folder/).message).toMatch(/the id is taken from the file name: rename the file or set `id`$/);
  });

  it('ids that are no safe folder name are refused by the id pattern', async () => {
    for (const id of ['"."', '".."', 'a/b', '"-rf"', '"a\\0b"']) {
      const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `id: ${id}\n${MINIMAL_CASE}` });
      expect(only(await loadErrors(dir), /case id made of letters/).path).toBe('id');
    }
  });
});

describe('{{variables}} and the literal-brace escape', () => {
  it('fills captured values, keeps and lists the missing ones, turns \\{{ into {{', () => {
    expect(fillTurnTemplate('Save {{token}} and {{ other }}', { token: 't1' })).toEqual({ text: 'Save t1 and {{ other }}', missing: ['other'] });
    expect(fillTurnTemplate('Jinja: \\{{ name }} and {{name}}', { name: 'N' })).toEqual({ text: 'Jinja: {{ name }} and N', missing: [] });
    expect(fillTurnTemplate('not variables: {{ a.b }}, {{1x}}, {{', {})).toEqual({ text: 'not variables: {{ a.b }}, {{1x}}, {{', missing: [] });
    expect(fillTurnTemplate('{{constructor}}', {})).toEqual({ text: '{{constructor}}', missing: ['constructor'] });
    expect(turnVariables('\\{{ a }} {{ b }}').map((r) => [r.name, r.text, r.index])).toEqual([['b', '{{ b }}', 9]]);
  });

  it('a single prompt with {{ name }} is an error at the prompt, suggesting the escape', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': 'input:\n  prompt: Write a Jinja template that prints {{ name }}\n' });
    expect(show(await loadErrors(dir), dir)).toEqual([
      'evals/cases/a.yaml:2:11: input.prompt: `{{name}}` is not captured by an earlier turn: `input.prompt` is a single message, so nothing can fill it in; if the braces are meant literally (a Jinja or Handlebars template), write `\\{{ name }}`, which is sent as `{{ name }}`',
    ]);
  });

  it('escaped braces are valid, in a prompt and in turns (plain, single-quoted, block and doubled in double quotes)', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': 'input:\n  prompt: Write a Jinja template that prints \\{{ name }}\n',
      'evals/cases/b.yaml': "input:\n  turns:\n    - content: 'Use \\{{title}}'\n    - content: \"and \\\\{{ body }}\"\n    - content: |\n        block \\{{x}}\n",
    });
    const { suite } = await loadOk(dir);
    expect(suite.cases[0]!.turns[0]!.content).toBe('Write a Jinja template that prints \\{{ name }}');
    expect(suite.cases[1]!.turns.map((t) => fillTurnTemplate(t.content, {}).text)).toEqual(['Use {{title}}', 'and {{ body }}', 'block {{x}}\n']);
  });

  it('a turn using a variable no earlier turn captures names the escape too', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': 'input:\n  turns:\n    - content: hi\n    - content: "use {{title}}"\n' });
    expect(only(await loadErrors(dir), /not captured/).message).toBe(
      '`{{title}}` is not captured by an earlier turn (`capture: [{variable: title, pattern: …}]`), so it cannot be filled in; if the braces are meant literally (a Jinja or Handlebars template), write `\\{{title}}`, which is sent as `{{title}}`',
    );
  });
});

describe('context.files names', () => {
  it.each([
    ['"a\\0b"', 'a\u0000b', 'a path holding a NUL character (no file name can)'],
    ['"."', '.', 'the workspace folder itself; name a file inside it'],
    ['"./"', './', 'a folder (it ends with `/`); name a file, e.g. `dir/file.txt`'],
    ['dir/', 'dir/', 'a folder (it ends with `/`); name a file, e.g. `dir/file.txt`'],
    ['/etc/x', '/etc/x', 'an absolute path'],
    ['../x', '../x', 'a path that climbs out with `..`'],
    ['a/../../x', 'a/../../x', 'a path that climbs out with `..`'],
  ])('%s is an error at the key', async (yamlKey, key, problem) => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}context:\n  files:\n    ${yamlKey}: x\n` });
    const d = only(await loadErrors(dir), /file name/);
    expect([d.line, d.col]).toEqual([5, 5]);
    expect(d.message).toBe(`file name \`${key.replace('\u0000', '\\u0000')}\` is ${problem}; it must be relative to the workspace and stay inside it`);
  });

  it('a file and a folder of the same name, and two names of one file, are errors', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}context:\n  files:\n    a: x\n    a/b/c: y\n    ./d: x\n    d: y\n` });
    expect(show(await loadErrors(dir), dir)).toEqual([
      'evals/cases/a.yaml:5:5: context.files.a: file name `a` is also a folder of `a/b/c` (line 6); a path cannot be a file and a folder at once',
      'evals/cases/a.yaml:8:5: context.files.d: file name `d` names the same file as `./d` (line 7); write each file once',
    ]);
  });

  it('normalises names and accepts ordinary ones', () => {
    expect(normalWorkspacePath('./a//b/./c')).toBe('a/b/c');
    for (const ok of ['a.txt', 'src/a.py', '.env', 'a..b', './x']) expect(workspaceFileProblem(ok), ok).toBeUndefined();
  });
});

describe('repo_fixture: no symbolic link out of the skill folder', () => {
  const fixture = () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}context: {repo_fixture: evals/repo}\n`, 'evals/repo/a.txt': 'a', 'notes.md': 'n' });
    return { dir, repo: path.join(dir, 'evals/repo') };
  };

  it('links inside the skill folder (also dangling ones) are fine', async () => {
    const { dir, repo } = fixture();
    symlinkSync('a.txt', path.join(repo, 'b.txt'));
    symlinkSync('../../notes.md', path.join(repo, 'notes.md'));
    symlinkSync('missing.txt', path.join(repo, 'dangling.txt'));
    expect((await loadOk(dir)).suite.cases[0]!.context.repoFixture).toBe(repo);
  });

  it('links to files and folders outside (and dangling outside) are one error listing them', async () => {
    const { dir, repo } = fixture();
    mkdirSync(path.join(repo, 'sub'));
    symlinkSync('/etc/passwd', path.join(repo, 'sub/passwd'));
    symlinkSync(tmpdir(), path.join(repo, 'tmp'));
    symlinkSync('/nonexistent/x', path.join(repo, 'gone'));
    const d = only(await loadErrors(dir), /symbolic link/);
    expect([d.line, d.path]).toEqual([3, 'context.repo_fixture']);
    expect(d.message).toMatch(/^repo fixture `evals\/repo` holds 3 symbolic links to a place outside the skill folder /);
    expect(d.message).toContain('`sub/passwd` → /etc/passwd');
    expect(d.message).toContain('`gone` → /nonexistent/x');
  });
});

describe('cases.files stay inside the skill folder', () => {
  it('a path climbing out, an absolute path and a link out are errors, though the files exist', async () => {
    const dir = writeSkill({ 'evals/cases/a.yaml': MINIMAL_CASE });
    const outside = path.join(path.dirname(dir), 'outside.yaml');
    writeFileSync(outside, MINIMAL_CASE);
    symlinkSync(outside, path.join(dir, 'evals/cases/link.yaml'));
    writeFileSync(path.join(dir, 'evals/eval.yaml'), `schema_version: v1alpha1\ncases:\n  files:\n    - ../outside.yaml\n    - ${outside}\n    - evals/cases/link.yaml\n    - evals/cases/a.yaml\n`);
    expect(show(await loadErrors(dir), dir)).toEqual([
      `evals/eval.yaml:4:7: cases.files[0]: case file \`../outside.yaml\` is outside the skill folder ${dir}; case files must be inside it, named relative to the skill root`,
      `evals/eval.yaml:5:7: cases.files[1]: case file \`${outside}\` is outside the skill folder ${dir}; case files must be inside it, named relative to the skill root`,
      `evals/eval.yaml:6:7: cases.files[2]: case file \`evals/cases/link.yaml\` is a symbolic link to ${outside}, outside the skill folder ${dir}; case files must be inside it, named relative to the skill root`,
    ]);
  });

  it('a glob starting outside, or matching a link out, is an error', async () => {
    const dir = writeSkill({ 'evals/cases/a.yaml': MINIMAL_CASE });
    const outside = path.join(path.dirname(dir), 'o.yaml');
    writeFileSync(outside, MINIMAL_CASE);
    symlinkSync(outside, path.join(dir, 'evals/cases/link.yaml'));
    writeFileSync(path.join(dir, 'evals/eval.yaml'), 'schema_version: v1alpha1\ncases:\n  files: ["../*.yaml", "evals/cases/*.yaml"]\n');
    const errors = await loadErrors(dir);
    expect(errors.map((d) => d.path)).toEqual(['cases.files[0]', 'cases.files[1]']);
    expect(errors[0]!.message).toMatch(/^glob `\.\.\/\*\.yaml` starts in .*, which is outside the skill folder/);
    expect(errors[1]!.message).toMatch(/^glob `evals\/cases\/\*\.yaml` matches case files that lead outside the skill folder .*: `evals\/cases\/link\.yaml` is a symbolic link to /);
  });
});

describe('custom engine: the command must start', () => {
  it.each([
    ['a missing file', '      command: ./evals/nope.sh\n', {}, /^command `\.\/evals\/nope\.sh` \(.*evals\/nope\.sh; a relative command is resolved against the skill root\) does not exist$/],
    ['a folder', '      command: ./evals\n', {}, /is a folder, not a program$/],
    ['a file without the executable bit', '      command: ./evals/plain.sh\n', { 'evals/plain.sh': 'echo hi\n' }, /is not executable \(mode 0644\); make it executable \(`chmod \+x \.\/evals\/plain\.sh`\) or run it through its interpreter/],
    ['an executable without #! (ENOEXEC)', '      command: ./evals/noshebang\n', { 'evals/noshebang': 'echo hi\n' }, /starts with neither `#!` .* \(ENOEXEC\); add an interpreter line such as `#!\/usr\/bin\/env bash`/],
    ['an empty executable', '      command: ./evals/empty\n', { 'evals/empty': '' }, /is empty, so it cannot be executed \(ENOEXEC\)/],
    ['a bare name not on PATH', '      command: no-such-binary-xyz\n', {}, /^command `no-such-binary-xyz` is not on PATH \(a name without `\/` is looked up there\); install it, or give its path/],
    ['a command line in `command`', '      command: python3 agent.py\n', {}, /put its arguments in `args`/],
    ['a bare name of a file in the skill folder', '      command: run-agent\n', { 'run-agent': AGENT }, /to run the file in the skill folder, write `\.\/run-agent`$/],
  ])('%s is an error at the command', async (_what, local, extra, message) => {
    const dir = customSuite(local, extra);
    for (const f of ['evals/noshebang', 'evals/empty']) if (f in extra) chmodSync(path.join(dir, f), 0o755);
    const d = only(await loadErrors(dir), /command `/);
    expect([d.line, d.path]).toEqual([8, 'engine.custom.local.command']);
    expect(d.message).toMatch(message);
  });

  it.each([
    ['a script with #!', '      command: ./evals/agent.sh\n'],
    ['a native binary by absolute path', `      command: ${JSON.stringify(process.execPath)}\n`],
    ['a name on PATH', '      command: sh\n'],
    ['a templated command that expands to one', '      command: "${SU_NO_SUCH_VAR:-./evals/agent.sh}"\n'],
    ['a command under ${skill_root}', '      command: "${skill_root}/evals/agent.sh"\n'],
  ])('%s is fine', async (_what, local) => {
    const { warnings } = await loadOk(customSuite(local));
    expect(warnings).toEqual([]);
  });

  it('a templated command is checked as it expands, and named in the message', async () => {
    const d = only(await loadErrors(customSuite('      command: "${SU_NO_SUCH_VAR:-./evals/gone.sh}"\n')), /command `/);
    expect(d.message).toMatch(/^command `\.\/evals\/gone\.sh` \(from `\$\{SU_NO_SUCH_VAR:-\.\/evals\/gone\.sh\}`; .*\) does not exist$/);
    const bare = only(await loadErrors(customSuite('      command: "${kwargs.bin}"\n', {}, '    kwargs: {bin: no-such-binary-xyz}\n')), /command `/);
    expect(bare.message).toMatch(/^command `no-such-binary-xyz` \(from `\$\{kwargs\.bin\}`\) is not on PATH/);
  });

  it('a templated command that expands to nothing is an error', async () => {
    expect(only(await loadErrors(customSuite('      command: "${SU_NO_SUCH_BIN}"\n')), /command `/).message).toBe(
      'command `${SU_NO_SUCH_BIN}` expands to nothing here (its variables are unset); set them, or give a default such as `${AGENT_BIN:-./evals/agent.sh}`',
    );
  });

  it('a command needing a per-job value is checked when the job starts, and validate says so', async () => {
    const { warnings } = await loadOk(customSuite('      command: "${workspace}/bin/agent"\n'));
    expect(warnings.map((w) => [w.path, w.message])).toEqual([
      ['engine.custom.local.command', 'command `${workspace}/bin/agent` depends on a value known only when a job starts, so it is checked then, not now'],
    ]);
  });

  it('a bare name is not checked when engine.custom.env sets PATH', async () => {
    await loadOk(customSuite('      command: my-agent-bin\n', {}, '    env: {PATH: "/opt/agent/bin"}\n'));
  });
});

describe('custom engine: templates, URL and workspace paths', () => {
  it('${VAR?message} in args needs VAR set, unless engine.custom.env sets it', async () => {
    vi.stubEnv('SU_SET_VAR', 'x');
    try {
      const errors = await loadErrors(
        customSuite('      command: ./evals/agent.sh\n      args: ["${UNSET_VAR_XYZ?must be set}", "${SU_SET_VAR?x}", "${FROM_ENV?y}", "${EMPTY_XYZ:?empty}"]\n', {}, '    env: {FROM_ENV: "1"}\n'),
      );
      expect(errors.map((d) => [d.path, d.message])).toEqual([
        ['engine.custom.local.args[0]', '`${UNSET_VAR_XYZ?must be set}` requires the environment variable `UNSET_VAR_XYZ`, which is not set: must be set. Set it before `skill-up run` (and `validate`), or give a default: `${UNSET_VAR_XYZ:-value}`'],
        ['engine.custom.local.args[3]', '`${EMPTY_XYZ:?empty}` requires the environment variable `EMPTY_XYZ`, which is not set: empty. Set it before `skill-up run` (and `validate`), or give a default: `${EMPTY_XYZ:-value}`'],
      ]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('engine.custom.env values are expanded against skill-up’s environment only', async () => {
    const errors = await loadErrors(customSuite('      command: ./evals/agent.sh\n', {}, '    env: {A: "1", B: "${A?needs A}"}\n'));
    expect(only(errors, /requires the environment variable `A`/).path).toBe('engine.custom.env.B');
  });

  it('${kwargs.KEY} needs KEY in engine.custom.kwargs', async () => {
    const errors = await loadErrors(customSuite('      command: ./evals/agent.sh\n      args: ["${kwargs.profile}", "${kwargs.nope}"]\n', {}, '    kwargs: {profile: p}\n'));
    expect(only(errors, /kwargs/).message).toBe('`${kwargs.nope}` names no key of `engine.custom.kwargs` (keys: `profile`)');
  });

  it.each([
    ['not a url', '`not a url` is not a URL; expected an absolute http or https URL such as `http://127.0.0.1:8080/session`'],
    ['localhost:8080/run', '`localhost:8080/run` is a `localhost:` URL; skill-up POSTs to http or https URLs only (e.g. `http://127.0.0.1:8080/session`)'],
    ['ftp://example.com/x', '`ftp://example.com/x` is a `ftp:` URL; skill-up POSTs to http or https URLs only (e.g. `http://127.0.0.1:8080/session`)'],
  ])('http.url %s is an error', async (url, message) => {
    const dir = writeSkill({
      'evals/eval.yaml': `schema_version: v1alpha1\nengine:\n  name: a\n  custom:\n    transport: http\n    http: {url: ${JSON.stringify(url)}}\ncases: {files: [evals/cases/a.yaml]}\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const d = only(await loadErrors(dir), /URL/);
    expect([d.line, d.path, d.message]).toEqual([6, 'engine.custom.http.url', message]);
  });

  it('http URLs with templates are checked for what is literal', async () => {
    for (const url of ['http://127.0.0.1:${PORT:-8080}/run', '${AGENT_URL:-http://x}/v1', 'https://${HOST:-h}/x']) {
      await loadOk(writeSkill({ 'evals/eval.yaml': `schema_version: v1alpha1\nengine:\n  name: a\n  custom:\n    transport: http\n    http: {url: "${url}"}\ncases: {files: [evals/cases/a.yaml]}\n`, 'evals/cases/a.yaml': MINIMAL_CASE }));
    }
  });

  it.each([
    ['input_file: ../../x.json', 'engine.custom.local.input_file', '`input_file` `../../x.json` is a path that climbs out with `..`'],
    ['output_file: /etc/passwd', 'engine.custom.local.output_file', '`output_file` `/etc/passwd` is an absolute path'],
    ['output_file: "${workspace}/../out.json"', 'engine.custom.local.output_file', '`output_file` `${workspace}/../out.json` is a path that climbs out with `..`'],
    ['cwd: ../../..', 'engine.custom.local.cwd', 'working folder `cwd` `../../..` is a path that climbs out with `..`'],
    ['cwd: "${HOME}/../x"', 'engine.custom.local.cwd', 'working folder `cwd` `${HOME}/../x` is a path that climbs out with `..`'],
  ])('%s is an error', async (line, field, start) => {
    const d = only(await loadErrors(customSuite(`      command: ./evals/agent.sh\n      ${line}\n`)), /stay inside it/);
    expect(d.path).toBe(field);
    expect(d.message).toBe(`${start}; it must be relative to the agent's workspace and stay inside it (skill-up reads and writes it there)`);
  });

  it('workspace-relative, ${workspace}-based and other templated paths are fine', async () => {
    await loadOk(customSuite('      command: ./evals/agent.sh\n      cwd: "${workspace}"\n      input_file: in/session.json\n      output_file: "${workspace}/out/result.json"\n'));
    await loadOk(customSuite('      command: ./evals/agent.sh\n      cwd: "${workspace}/${kwargs.sub}"\n      output_file: "${kwargs.sub}/${case_id}.json"\n', {}, '    kwargs: {sub: out}\n'));
    await loadOk(customSuite('      command: ./evals/agent.sh\n      cwd: "${skills_dir}"\n      input_file: "${SU_TEST_UNSET_DIR:-in}/session.json"\n'));
  });

  // What `run` refuses once the template is expanded (engines/custom/adapter.ts resolveInside), known at validate time.
  it.each([
    ['cwd: "${workspace}/${kwargs.up}"', 'engine.custom.local.cwd', 'working folder `cwd` `${workspace}/${kwargs.up}` expands to `${workspace}/..`, that is `/`, which is outside the agent\'s workspace'],
    ['input_file: "${kwargs.up}/${kwargs.up}/tmp/pwn.json"', 'engine.custom.local.input_file', '`input_file` `${kwargs.up}/${kwargs.up}/tmp/pwn.json` expands to `../../tmp/pwn.json`, that is `/tmp/pwn.json`, which is outside the agent\'s workspace'],
    ['output_file: "${kwargs.abs}"', 'engine.custom.local.output_file', '`output_file` `${kwargs.abs}` expands to `/tmp/pwn.json`, which is outside the agent\'s workspace'],
    ['output_file: "${SU_TEST_OUTP}"', 'engine.custom.local.output_file', '`output_file` `${SU_TEST_OUTP}` expands to `../../../tmp/pwn.json`, that is `/tmp/pwn.json`, which is outside the agent\'s workspace'],
    ['cwd: "${skill_root}"', 'engine.custom.local.cwd', 'working folder `cwd` `${skill_root}` is built from `${skill_root}`, the skill folder, which is never inside the agent\'s workspace'],
    ['input_file: "${output_dir}/x.json"', 'engine.custom.local.input_file', '`input_file` `${output_dir}/x.json` is built from `${output_dir}`, the job\'s output folder, which is never inside the agent\'s workspace'],
    ['cwd: "${home}/work"', 'engine.custom.local.cwd', 'working folder `cwd` `${home}/work` is built from `${home}`, the job\'s home folder, which is never inside the agent\'s workspace'],
  ])('templated %s leaves the workspace: an error', async (line, field, start) => {
    vi.stubEnv('SU_TEST_OUTP', '../../../tmp/pwn.json');
    try {
      const d = only(await loadErrors(customSuite(`      command: ./evals/agent.sh\n      ${line}\n`, {}, '    kwargs: {up: "..", abs: /tmp/pwn.json}\n')), /stay inside it/);
      expect(d.path).toBe(field);
      expect(d.message).toBe(`${start}; it must be relative to the agent's workspace and stay inside it (skill-up reads and writes it there)`);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('engine.version: an exact version', () => {
  it.each(['2.1.3', '2.1.332', '0.0.0-no-such-version', '1.0.0-beta.2', '0.5.0+build.7', '1.2.3-rc.1+sha.5114f85'])('%s is exact', (v) => {
    expect(EXACT_VERSION.test(v)).toBe(true);
    expect(versionProblem(v)).toBeUndefined();
  });

  it.each([
    ['latest', 'a dist-tag, which moves'],
    ['next', 'a dist-tag, which moves'],
    ['^2.0.0', 'a version range'],
    ['~1.2.3', 'a version range'],
    ['>=1.0.0', 'a version range'],
    ['2', 'a version range'],
    ['2.1', 'a version range'],
    ['2.x', 'a version range'],
    ['*', 'a version range'],
    ['1.0.0 - 2.0.0', 'a version range'],
    ['file:../some-folder', 'a path or URL, not an npm version'],
    ['../../../../evil', 'a path or URL, not an npm version'],
    ['https://example.com/x.tgz', 'a path or URL, not an npm version'],
    ['v2.1.3', 'written with a leading `v` (write `2.1.3`)'],
    ['01.2.3', 'not a version'],
  ])('%s is %s', (v, what) => {
    expect(versionProblem(v)).toBe(`engine version \`${v}\` is ${what}; \`version\` must be an exact version such as 2.1.3 (skill-up installs exactly that version of the engine into its cache)`);
  });

  it('is reported at engine.version and at an engines[] item', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\nengine: {name: claude_code, version: latest}\nengines:\n  - {name: codex, version: "^0.1.0"}\ncases: {files: [evals/cases/a.yaml]}\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    expect((await loadErrors(dir)).map((d) => [d.line, d.path])).toEqual([
      [2, 'engine.version'],
      [4, 'engines[0].version'],
    ]);
  });

  it('a version npm does not have becomes a config error at its line (run, before any job)', () => {
    const dir = writeSkill({ 'evals/eval.yaml': 'schema_version: v1alpha1\nengines:\n  - claude_code\n  - {name: codex, version: 9.9.9}\ncases: {files: [evals/cases/a.yaml]}\n', 'evals/cases/a.yaml': MINIMAL_CASE });
    const evalFile = path.join(dir, 'evals/eval.yaml');
    const engine = { name: 'codex', displayName: 'codex', version: '9.9.9', model: {}, kwargs: {} };
    const err = missingVersionError(evalFile, engine, 'could not install @openai/codex@9.9.9: npm exited with code 1\nnpm error code ETARGET');
    expect(show(err!.diagnostics, dir)).toEqual([
      'evals/eval.yaml:4:28: engines[1].version: engine version `9.9.9` of codex (@openai/codex) does not exist on the npm registry (npm: no matching version); pin a published version (`npm view @openai/codex versions` lists them)',
    ]);
    expect(missingVersionError(evalFile, engine, 'could not install @openai/codex@9.9.9: npm exited with code 1\nnpm error code ECONNREFUSED')).toBeUndefined();
  });

  it('the engine cache refuses a version whose folder would leave it', () => {
    expect(installDir('/c', '@openai/codex', '0.171.0')).toBe('/c/engines/openai+codex@0.171.0');
    for (const v of ['../../../../evil', 'a/b', '', '..']) expect(() => installDir('/c', '@openai/codex', v), v).toThrow(/outside \/c\/engines/);
  });
});

describe('judge scripts', () => {
  it('an executable script without #! is an error; without the executable bit it runs by its extension', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: script, script_path: evals/check}\n`,
      'evals/cases/b.yaml': `${MINIMAL_CASE}judge: {type: script, script_path: evals/check.py}\n`,
      'evals/check': 'exit 0\n',
      'evals/check.py': 'print("ok")\n',
    });
    chmodSync(path.join(dir, 'evals/check'), 0o755);
    const d = only(await loadErrors(dir), /judge script/);
    expect([d.file.endsWith('a.yaml'), d.line, d.path]).toEqual([true, 3, 'judge.script_path']);
    expect(d.message).toMatch(/^judge script `evals\/check` is executable but starts with neither `#!`.*\(ENOEXEC\); add an interpreter line/);
  });
});

describe('validate checks what run checks before its first job', () => {
  it('a skill whose files link outside it is an error at skills[].path', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\nskills:\n  - path: .\ncases: {files: [evals/cases/a.yaml]}\n',
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    symlinkSync('/etc/passwd', path.join(dir, 'passwd'));
    const d = only(await loadErrors(dir), /symbolic link/);
    expect([d.line, d.path]).toEqual([3, 'skills[0].path']);
    expect(d.message).toMatch(/^symbolic link `passwd` in skill .* points to `\/etc\/passwd`, outside the skill folder/);
  });
});


describe('validate warns about gates a plain `run` would refuse', () => {
  it('min_uplift without the without_skill arm, and a no_regression baseline that does not exist', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}gates:\n  min_uplift: 10\n  no_regression: {baseline: ../old/result.json}\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    const { suite } = await loadOk(dir);
    expect(show(runFlagWarnings(suite), dir)).toEqual([
      'evals/eval.yaml:5:3: warning: gates.min_uplift: needs the without_skill arm: `skill-up run` stops here unless it is given `--baseline`; set `benchmark.enabled: true` to always run it',
      `evals/eval.yaml:6:19: warning: gates.no_regression.baseline: ${path.resolve(dir, '../old/result.json')} does not exist: \`skill-up run\` stops here unless \`--no-regression\` names another run (or the file exists by then)`,
    ]);
    suite.benchmark.enabled = true;
    expect(runFlagWarnings(suite)).toHaveLength(1);
  });
});

describe('environment.env', () => {
  it('${VAR?message} needs VAR set where the suite is checked', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}environment:\n  env:\n    REGION: "\${SU_UNSET_REGION?set the region}"\n    MODE: "\${SU_UNSET_MODE:-fast}"\n`,
      'evals/cases/a.yaml': MINIMAL_CASE,
    });
    expect(show(await loadErrors(dir), dir)).toEqual([
      'evals/eval.yaml:6:13: environment.env.REGION: `${SU_UNSET_REGION?set the region}` requires the environment variable `SU_UNSET_REGION`, which is not set: set the region. Set it before `skill-up run` (and `validate`), or give a default: `${SU_UNSET_REGION:-value}`',
    ]);
  });
});

describe('YAML 1.1 tags in a case (they validated, then wrote no file or gave 100 errors)', () => {
  it.for([
    ['context.files: !!omap', '!!omap [ a.txt: hello ]', 'YAML tag `!!omap` is not supported here; write a plain map'],
    ['context.files: !!set', '!!set { a.txt, b.txt }', 'YAML tag `!!set` is not supported here; write a plain list'],
    ['context.files: !!binary', '!!binary aGVsbG8=', 'YAML tag `!!binary` is not supported here; write a plain string'],
  ] as const)('%s: one error at the tag, in the case file', async ([, value, message]) => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `input:\n  prompt: hi\ncontext:\n  files: ${value}\n` });
    expect(show(await loadErrors(dir), dir)).toEqual([`evals/cases/a.yaml:4:10: ${message}`]);
  });

  it('the model script is read the same way', () => {
    expect(() => parseModelScript('rules:\n  - reply: !!binary aGVsbG8=\n', 'model.yaml')).toThrow('model.yaml:2:12: YAML tag `!!binary` is not supported here; write a plain string');
  });
});
