/**
 * SKILL.md fields beyond the agentskills.io spec (issue 15, item 2): an engine's documented
 * extension field is a note naming the engine, a wrong type in one a warning, a field nobody
 * documents a warning that `--strict` makes an error (exit 2) in `validate` and `run`.
 * The CLI cases run the built CLI (dist/: `npm run build` first).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { strictErrors, type Diagnostic } from '../../src/config/diagnostics.js';
import { EXTENSION_FIELDS, lintSkill } from '../../src/skill/lint.js';
import { runCli } from '../cli/helpers.js';

const FIXTURE = path.resolve(__dirname, 'fixtures/claude-code-skill');
/** The nine Claude Code fields the issue names, each used by the fixture. */
const NINE = ['model', 'context', 'agent', 'paths', 'when_to_use', 'disable-model-invocation', 'user-invocable', 'argument-hint', 'allowed-tools'];

const tmp = mkdtempSync(path.join(os.tmpdir(), 'skill-up-cc-fields-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Writes `<tmp>/<folder>/SKILL.md` with `fields` as frontmatter; returns the folder. */
async function skill(folder: string, fields: string): Promise<string> {
  const dir = path.join(tmp, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), `---\nname: ${folder}\ndescription: A skill of skill-up's tests.\n${fields}\n---\n\n# Body\n`);
  return dir;
}

const of = (r: { diagnostics: Diagnostic[] }, severity: Diagnostic['severity']) => r.diagnostics.filter((d) => d.severity === severity);

/** A copy of the fixture skill (with its eval.yaml) whose SKILL.md has `edit` applied. */
function fixtureCopy(name: string, edit: (text: string) => string): string {
  const dir = path.join(tmp, name, 'claude-code-skill');
  cpSync(FIXTURE, dir, { recursive: true });
  const file = path.join(dir, 'SKILL.md');
  writeFileSync(file, edit(readFileSync(file, 'utf8')));
  return dir;
}

describe('lintSkill: extension fields', () => {
  test('a skill with the nine Claude Code fields: no error or warning, one note per field naming Claude Code', async () => {
    const r = await lintSkill(FIXTURE);
    expect(of(r, 'error')).toEqual([]);
    expect(of(r, 'warning')).toEqual([]);
    const notes = of(r, 'info');
    expect(notes.map((d) => d.path).sort()).toEqual([...NINE].sort());
    for (const n of notes) {
      expect(n.message).toContain('Claude Code');
      expect(n.message.startsWith(`\`${n.path}\` `)).toBe(true);
      expect(n.line).toBeGreaterThan(1);
      expect(n.col).toBe(1);
      expect(n.strict).toBeUndefined();
    }
    expect(notes.find((n) => n.path === 'model')!.message).toBe('`model` is a Claude Code field (the model used while the skill is active): other engines ignore it');
  });

  test("Claude Code's other documented fields are notes too; every extension field has a source", async () => {
    const r = await lintSkill(await skill('more-fields', 'arguments: [issue, branch]\neffort: high\nshell: bash\nhooks:\n  PreToolUse: []'));
    expect(r.diagnostics.map((d) => `${d.severity} ${d.path}`)).toEqual(['info arguments', 'info effort', 'info shell', 'info hooks']);
    for (const f of Object.values(EXTENSION_FIELDS)) expect(f.source).toMatch(/^https:\/\/code\.claude\.com\/docs\//);
  });

  test.each([
    ['disable-model-invocation a string', 'disable-model-invocation: "yes"', 'disable-model-invocation', /should be `true` or `false`, not a string \(a Claude Code field/],
    ['user-invocable quoted', 'user-invocable: "false"', 'user-invocable', /not a string \(write false without quotes\)/],
    ['allowed-tools a number', 'allowed-tools: 3', 'allowed-tools', /should be a space-separated string such as "Bash\(git:\*\) Read" \(or a list of tool names\), not a number/],
    ['allowed-tools a list with a map', 'allowed-tools: [Read, { Bash: git }]', 'allowed-tools', /not a list/],
    ['paths a map', 'paths: { a: b }', 'paths', /should be a string or a list of glob patterns, not a map/],
    ['model a number', 'model: 4', 'model', /`model` should be a string, not a number/],
    ['hooks a string', 'hooks: none', 'hooks', /`hooks` should be a map, not a string/],
  ])('a wrong type is a warning, never an error: %s', async (_label, fields, field, message) => {
    const r = await lintSkill(await skill('wrong-type', fields));
    expect(of(r, 'error')).toEqual([]);
    expect(of(r, 'info')).toEqual([]);
    const w = of(r, 'warning');
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ path: field, line: 4 });
    expect(w[0]!.message).toMatch(message);
    expect(w[0]!.strict).toBeUndefined();
  });

  test.each([
    ['colour', 'colour: blue', /^unknown frontmatter field `colour`; .*put custom keys under `metadata`$/],
    ['a near-miss of a spec field', 'descripton: y', /did you mean `description`\?$/],
    ['a case slip', 'License: MIT', /did you mean `license`\?$/],
    ["a near-miss of Claude Code's", 'user-invokable: false', /did you mean `user-invocable`\?$/],
    ['underscores for hyphens', 'disable_model_invocation: true', /did you mean `disable-model-invocation`\?$/],
    ['a prototype key', 'constructor: x', /unknown frontmatter field `constructor`/],
  ])('an unknown field is a warning marked strict: %s', async (_label, fields, message) => {
    const r = await lintSkill(await skill('unknown-field', fields));
    expect(of(r, 'error')).toEqual([]);
    expect(of(r, 'info')).toEqual([]);
    const w = of(r, 'warning');
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ line: 4, col: 1, strict: true });
    expect(w[0]!.message).toMatch(message);
    // --strict makes it an error, and nothing else.
    const promoted = strictErrors(r.diagnostics);
    expect(promoted.map((d) => d.severity)).toEqual(['error']);
    expect(promoted[0]!.message).toMatch(/\(an error under --strict\)$/);
  });

  test('many unknown fields are one warning listing a few', async () => {
    const fields = Array.from({ length: 12 }, (_, i) => `custom${i}: v`).join('\n');
    const r = await lintSkill(await skill('many-unknown', fields));
    expect(of(r, 'error')).toEqual([]);
    const w = of(r, 'warning');
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ path: 'custom0', strict: true });
    expect(w[0]!.message).toMatch(/^12 unknown keys/);
  });

  test('spec rules still hold beside extension fields; strictErrors leaves other warnings alone', async () => {
    const r = await lintSkill(await skill('spec-rules', 'license: [MIT]\nmodel: opus\nversion: 2'));
    expect(r.diagnostics.map((d) => `${d.severity} ${d.path}`)).toEqual(['error license', 'info model', 'warning version']);
    const promoted = strictErrors(r.diagnostics);
    expect(promoted.map((d) => `${d.severity} ${d.path}`)).toEqual(['error license', 'info model', 'error version']);
    const unmarked = r.diagnostics.filter((d) => !d.strict);
    expect(strictErrors(unmarked)).toBe(unmarked);
  });
});

describe('skill-up validate / run on extension and unknown fields', () => {
  test('validate: the nine Claude Code fields exit 0 with one note each, naming Claude Code', async () => {
    const r = await runCli(['validate', FIXTURE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/✓ .*eval\.yaml is valid/);
    const notes = r.stderr.split('\n').filter((l) => / note: /.test(l));
    expect(notes).toHaveLength(9);
    for (const f of NINE) expect(notes.filter((l) => l.includes(` note: ${f}: \`${f}\` `) && l.includes('Claude Code'))).toHaveLength(1);
    expect(r.stderr).not.toMatch(/warning:|error/);
    // --strict has nothing to object to.
    expect((await runCli(['validate', '--strict', FIXTURE])).code).toBe(0);
  });

  test('validate: an unknown field `colour` is a warning (exit 0), an error with --strict (exit 2)', async () => {
    const dir = fixtureCopy('colour', (t) => t.replace('model: sonnet\n', 'model: sonnet\ncolour: blue\n'));
    let r = await runCli(['validate', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/SKILL\.md:10:1: warning: colour: unknown frontmatter field `colour`/);
    r = await runCli(['validate', '--strict', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/SKILL\.md:10:1: colour: unknown frontmatter field `colour`.*\(an error under --strict\)/);
    expect(r.stderr).toMatch(/^1 error\(s\)$/m);
    expect(r.stdout).toBe('');
  });

  test('validate: a wrong type in a known field is a warning, with or without --strict', async () => {
    const dir = fixtureCopy('wrong-type', (t) => t.replace('disable-model-invocation: true', 'disable-model-invocation: "yes"'));
    for (const args of [['validate', dir], ['validate', '--strict', dir]]) {
      const r = await runCli(args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/SKILL\.md:6:27: warning: disable-model-invocation: `disable-model-invocation` should be `true` or `false`, not a string/);
      expect(r.stderr.split('\n').filter((l) => / note: /.test(l))).toHaveLength(8);
    }
  });

  test('validate --strict lists an unknown field among the errors when there are others', async () => {
    const dir = fixtureCopy('with-errors', (t) => t.replace('model: sonnet\n', 'model: sonnet\ncolour: blue\nlicense: [MIT]\n'));
    const r = await runCli(['validate', '--strict', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/colour: unknown frontmatter field .*\(an error under --strict\)/);
    expect(r.stderr).toMatch(/license: `license` must be a string/);
    expect(r.stderr).toMatch(/^2 error\(s\)$/m);
  });

  test('run lints too: an unknown field is a warning, and --strict stops the run before its first job (exit 2)', async () => {
    const dir = fixtureCopy('run-strict', (t) => t.replace('model: sonnet\n', 'model: sonnet\ncolour: blue\n'));
    let r = await runCli(['run', '--dry-run', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/warning: colour: unknown frontmatter field `colour`/);
    expect(r.stderr).not.toMatch(/ note: /);
    r = await runCli(['run', '--dry-run', '--strict', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/colour: unknown frontmatter field `colour`.*\(an error under --strict\)/);
  });
});
