import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Diagnostic } from '../../src/config/diagnostics.js';
import { lintSkill } from '../../src/skill/lint.js';

/** Real public skills, copied into the repository (test/fixtures/skills/SOURCE.md). */
const SHARED = path.resolve(__dirname, '../fixtures/skills');
const FIXTURES = path.resolve(__dirname, 'fixtures');
const realSkills = readdirSync(SHARED).filter((d) => statSync(path.join(SHARED, d)).isDirectory());

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'skill-up-lint-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** Writes `<tmp>/<folder>/SKILL.md` and returns the folder. */
async function skill(folder: string, content: string): Promise<string> {
  const dir = path.join(tmp, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'SKILL.md'), content);
  return dir;
}

function fm(fields: string, body = '\n# Body\n'): string {
  return `---\n${fields}\n---\n${body}`;
}

const errors = (r: { diagnostics: Diagnostic[] }): Diagnostic[] => r.diagnostics.filter((d) => d.severity === 'error');

describe('lintSkill on real skills', () => {
  test('there are real skills to test', () => {
    expect(realSkills.length).toBeGreaterThanOrEqual(8);
  });
  test.each(realSkills)('%s lints with zero errors', async (name) => {
    const r = await lintSkill(path.join(SHARED, name));
    expect(errors(r)).toEqual([]);
    expect(r.name).toBe(name);
    expect(r.description!.length).toBeGreaterThan(0);
    expect(r.body!.length).toBeGreaterThan(0);
  });
});

describe('lintSkill on fixtures', () => {
  test('a valid skill using every spec field has no problem, only the note on the experimental allowed-tools', async () => {
    const r = await lintSkill(path.join(FIXTURES, 'good-skill'));
    expect(r.diagnostics.map((d) => `${d.line}:${d.col} ${d.severity} ${d.path}`)).toEqual(['9:1 info allowed-tools']);
    expect(r.diagnostics[0]!.message).toMatch(/^`allowed-tools` is experimental in the agentskills\.io spec and used by Claude Code/);
    expect(r.name).toBe('good-skill');
    expect(r.description).toMatch(/^A tiny skill/);
    expect(r.body).toContain('# Good skill');
    expect(r.body).not.toContain('allowed-tools');
  });

  test('missing SKILL.md is an error on the folder', async () => {
    const dir = path.join(FIXTURES, 'missing-skill-md');
    const r = await lintSkill(dir);
    expect(r.diagnostics).toEqual([
      { file: dir, line: 0, col: 0, path: '', message: expect.stringContaining('SKILL.md not found'), severity: 'error' },
    ]);
    expect(r.name).toBeUndefined();
  });

  test('a missing folder is reported as such', async () => {
    const r = await lintSkill(path.join(tmp, 'does-not-exist'));
    expect(errors(r)[0]!.message).toMatch(/skill folder not found/);
  });

  test('a lowercase skill.md gets a hint', async () => {
    const dir = path.join(tmp, 'lowercase');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'skill.md'), fm('name: lowercase\ndescription: x'));
    const r = await lintSkill(dir);
    expect(errors(r)[0]!.message).toMatch(/found `skill.md`/);
  });

  test('no frontmatter', async () => {
    const r = await lintSkill(path.join(FIXTURES, 'no-frontmatter'));
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({
      file: path.join(FIXTURES, 'no-frontmatter', 'SKILL.md'),
      line: 1,
      col: 1,
      severity: 'error',
    });
    expect(r.diagnostics[0]!.message).toMatch(/must start with YAML frontmatter/);
  });

  test('frontmatter not closed', async () => {
    const r = await lintSkill(path.join(FIXTURES, 'unclosed'));
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]!.message).toMatch(/never closed/);
  });

  test('a YAML syntax error points at the line of SKILL.md', async () => {
    const r = await lintSkill(path.join(FIXTURES, 'yaml-error'));
    const errs = errors(r);
    expect(errs.length).toBeGreaterThanOrEqual(1);
    expect(errs[0]!.file).toBe(path.join(FIXTURES, 'yaml-error', 'SKILL.md'));
    expect(errs[0]!.line).toBe(5); // `  author: "unterminated` is line 5 of SKILL.md
    expect(errs[0]!.message).toMatch(/YAML syntax error/);
    expect(errs[0]!.message).not.toContain('\n');
  });

  test('a YAML error on the first field line is line 2', async () => {
    const dir = await skill('yaml-error-2', fm('name: yaml-error-2: oops\ndescription: x'));
    const r = await lintSkill(dir);
    expect(errors(r)[0]!.line).toBe(2);
  });

  test('duplicate keys are a YAML error on the duplicate', async () => {
    const dir = await skill('dup', fm('name: dup\ndescription: x\nname: dup'));
    const r = await lintSkill(dir);
    expect(errors(r)).toHaveLength(1);
    expect(errors(r)[0]!.line).toBe(4);
  });

  test('frontmatter that is a list is not a map', async () => {
    const r = await lintSkill(path.join(FIXTURES, 'not-a-map'));
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ line: 2, col: 1, severity: 'error' });
    expect(r.diagnostics[0]!.message).toMatch(/must be a YAML map.*a list/);
  });

  test('empty frontmatter is not a map', async () => {
    const dir = await skill('empty-fm', '---\n---\n# Body\n');
    const r = await lintSkill(dir);
    expect(errors(r)[0]!.message).toMatch(/must be a YAML map.*empty/);
  });

  test('bad-fields: every problem at its line and column', async () => {
    const r = await lintSkill(path.join(FIXTURES, 'bad-fields'));
    const got = r.diagnostics.map((d) => `${d.line}:${d.col} ${d.severity} ${d.path}`);
    expect(got).toEqual([
      '2:7 error name', // bad characters
      '2:7 error name', // trailing hyphen
      '2:7 error name', // `--`
      '2:7 error name', // folder mismatch
      '3:14 warning description', // `<`
      '4:1 warning allowed_tools', // unknown: a warning (an error under --strict)
      '5:1 warning version',
      '6:16 error compatibility',
      '9:12 error metadata.version',
      '10:1 info allowed-tools', // a list: Claude Code's form
    ]);
    expect(r.diagnostics.filter((d) => d.strict).map((d) => d.path)).toEqual(['allowed_tools', 'version']);
    const msg = (p: string) => r.diagnostics.filter((d) => d.path === p).map((d) => d.message);
    expect(msg('name').join('\n')).toMatch(/found `B`, `_`, `F`/);
    expect(msg('name').join('\n')).toMatch(/skill folder is `bad-fields`/);
    expect(msg('allowed_tools')[0]).toBe(
      'unknown frontmatter field `allowed_tools`; the agentskills.io spec allows name, description, license, compatibility, metadata, allowed-tools (and Claude Code documents 12 more, e.g. `model`); did you mean `allowed-tools`?',
    );
    expect(msg('version')[0]).toMatch(/put custom keys under `metadata`/);
    expect(msg('metadata.version')[0]).toMatch(/must be a string, not a number \(quote it: "1.0"\)/);
    expect(msg('allowed-tools')[0]).toMatch(/used by Claude Code.*the list form is Claude Code's \(the spec's is a space-separated string\)/);
  });
});

describe('lintSkill works a folder and text out once per process', () => {
  test('a second call gives an equal answer that the caller may change without touching the next one', async () => {
    const dir = await skill('memo-skill', fm('name: memo-skill\ndescription: d\nunknown-field: 1'));
    const first = await lintSkill(dir);
    expect(first.diagnostics.map((d) => d.message).join('\n')).toMatch(/unknown-field/);
    first.diagnostics[0]!.message = 'changed';
    first.diagnostics.push({ ...first.diagnostics[0]!, message: 'added' });
    const second = await lintSkill(dir);
    expect(second.diagnostics.map((d) => d.message)).not.toContain('changed');
    expect(second.diagnostics.map((d) => d.message)).not.toContain('added');
    expect(second).toEqual(await lintSkill(dir));
  });

  test('a SKILL.md edited since is linted anew', async () => {
    const dir = await skill('memo-edited', fm('name: memo-edited\ndescription: d'));
    expect(errors(await lintSkill(dir))).toEqual([]);
    await writeFile(path.join(dir, 'SKILL.md'), fm('name: other-name\ndescription: d'));
    expect(errors(await lintSkill(dir)).map((d) => d.message).join('\n')).toMatch(/other-name/);
  });
});

describe('lintSkill rules', () => {
  test.each([
    ['name missing', 'description: x', /required field `name` is missing/],
    ['description missing', 'name: rules', /required field `description` is missing/],
    ['description empty', 'name: rules\ndescription: "   "', /must not be empty/],
    ['description a number', 'name: rules\ndescription: 42', /must be a string, not a number/],
    ['description too long', `name: rules\ndescription: ${'a'.repeat(1025)}`, /1025 characters; the limit is 1024/],
    ['name a number', 'name: 7\ndescription: x', /`name` must be a string/],
    ['name empty', 'name: ""\ndescription: x', /must not be empty/],
    ['name with no value', 'name:\ndescription: x', /`name` must not be empty/],
    ['description with no value', 'name: rules\ndescription:', /`description` must not be empty/],
    ['compatibility too long', `name: rules\ndescription: x\ncompatibility: ${'c'.repeat(501)}`, /501 characters; the limit is 500/],
    ['compatibility a list', 'name: rules\ndescription: x\ncompatibility: [node]', /`compatibility` must be a string/],
    ['metadata a string', 'name: rules\ndescription: x\nmetadata: hi', /`metadata` must be a map/],
    ['metadata nested', 'name: rules\ndescription: x\nmetadata:\n  a:\n    b: c', /`metadata.a` must be a string, not a map/],
    ['metadata boolean', 'name: rules\ndescription: x\nmetadata:\n  beta: true', /quote it: "true"/],
    ['license a map', 'name: rules\ndescription: x\nlicense:\n  a: b', /`license` must be a string/],
  ])('%s', async (_label, fields, message) => {
    const r = await lintSkill(await skill('rules', fm(fields)));
    const errs = errors(r);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.message).toMatch(message);
    expect(errs[0]!.line).toBeGreaterThanOrEqual(1);
  });

  test('a description of exactly 1024 characters and a 64-character name are fine', async () => {
    const name = 'a'.repeat(64);
    const r = await lintSkill(await skill(name, fm(`name: ${name}\ndescription: ${'d'.repeat(1024)}`)));
    expect(r.diagnostics).toEqual([]);
  });

  test.each([
    ['a'.repeat(65), /65 characters; the limit is 64/],
    ['-lead', /must not start or end with a hyphen/],
    ['trail-', /must not start or end with a hyphen/],
    ['dou--ble', /two hyphens/],
    ['Upper', /found `U`/],
    ['café', /found `é`/],
    ['has_underscore', /found `_`/],
  ])('name %s is invalid', async (name, message) => {
    const r = await lintSkill(await skill(name, fm(`name: "${name}"\ndescription: x`)));
    const errs = errors(r);
    expect(errs).toHaveLength(1);
    expect(errs[0]!.path).toBe('name');
    expect(errs[0]!.message).toMatch(message);
    expect([errs[0]!.line, errs[0]!.col]).toEqual([2, 7]);
  });

  test('name must equal the folder name', async () => {
    const r = await lintSkill(await skill('the-folder', fm('name: other-name\ndescription: x')));
    expect(errors(r).map((d) => d.message)).toEqual([
      '`name` is `other-name` but the skill folder is `the-folder`; they must be equal',
    ]);
  });

  test('a trailing slash on the folder still compares the basename', async () => {
    const dir = await skill('slashed', fm('name: slashed\ndescription: x'));
    expect((await lintSkill(dir + '/')).diagnostics).toEqual([]);
  });

  test('angle brackets in the description are a warning, not an error', async () => {
    const r = await lintSkill(await skill('angles', fm('name: angles\ndescription: Use for <b>bold</b> work')));
    expect(errors(r)).toEqual([]);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]).toMatchObject({ severity: 'warning', path: 'description', line: 3, col: 14 });
  });

  test('a body over 500 lines is a warning', async () => {
    const body = '\n' + Array.from({ length: 510 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
    const r = await lintSkill(await skill('long-body', fm('name: long-body\ndescription: x', body)));
    expect(errors(r)).toEqual([]);
    expect(r.diagnostics).toHaveLength(1);
    expect(r.diagnostics[0]!.severity).toBe('warning');
    expect(r.diagnostics[0]!.message).toMatch(/511 lines/);
    expect(r.diagnostics[0]!.line).toBe(505); // body starts on line 5; its 501st line
  });

  test('a body of exactly 500 lines is fine', async () => {
    const body = Array.from({ length: 500 }, () => 'x').join('\n') + '\n';
    const r = await lintSkill(await skill('ok-body', fm('name: ok-body\ndescription: x', body)));
    expect(r.diagnostics).toEqual([]);
  });

  test('CRLF line endings and a BOM are accepted', async () => {
    const text = '\uFEFF---\r\nname: crlf\r\ndescription: Windows file\r\n---\r\n\r\n# Body\r\n';
    const r = await lintSkill(await skill('crlf', text));
    expect(r.diagnostics).toEqual([]);
    expect(r.description).toBe('Windows file');
  });

  test('block-scalar descriptions are read in full', async () => {
    const r = await lintSkill(await skill('block', fm('name: block\ndescription: >\n  Folded text\n  over lines.')));
    expect(r.diagnostics).toEqual([]);
    expect(r.description).toBe('Folded text over lines.\n');
  });
});

describe('lintSkill on SKILL.md that is not a regular file', () => {
  test('a FIFO is reported without opening it (opening would block forever)', async () => {
    const dir = path.join(tmp, 'fifo-skill');
    await mkdir(dir, { recursive: true });
    execFileSync('mkfifo', [path.join(dir, 'SKILL.md')]);
    const r = await lintSkill(dir);
    expect(errors(r).map((d) => [d.file, d.line, d.message])).toEqual([[dir, 0, 'SKILL.md is a FIFO (named pipe), not a regular file; a skill needs SKILL.md as a regular file']]);
  });

  test('a symbolic link loop is reported as one', async () => {
    const dir = path.join(tmp, 'loop-skill');
    await mkdir(dir, { recursive: true });
    await symlink('SKILL.md', path.join(dir, 'SKILL.md'));
    const r = await lintSkill(dir);
    expect(errors(r)[0]!.message).toMatch(/^SKILL\.md is a symbolic link loop/);
  });
});

describe('lintSkill on frontmatter skill-up cannot read', () => {
  test('3000 levels of nested maps: one error at the file, no stack overflow', async () => {
    let fields = 'name: deep\ndescription: x\nmetadata:\n';
    for (let i = 1; i <= 3000; i++) fields += `${'  '.repeat(i)}k${i}:\n`;
    const r = await lintSkill(await skill('deep', fm(fields)));
    const e = errors(r);
    expect(e).toHaveLength(1);
    expect(e[0]!.line).toBeGreaterThan(1);
    expect(e[0]!.message).toMatch(/^YAML error in frontmatter: maps and lists nested deeper than skill-up reads \((\d+\+ levels|more than 256 levels); at most 256\)/);
  });

  test('a list as a key is an error, not a process warning', async () => {
    const r = await lintSkill(await skill('complex-key', fm('name: complex-key\ndescription: x\n? [a, b]\n: 1')));
    expect(errors(r).map((d) => [d.line, d.col, d.message])).toEqual([[4, 3, 'YAML error in frontmatter: a map key is a list (`? […]`); keys must be strings']]);
  });
});

describe('lintSkill on YAML 1.1 tags in the frontmatter', () => {
  test.for([
    ['description: !!binary', 'name: tag-desc\ndescription: !!binary QSBza2lsbC4=', 3, 14, 'YAML tag `!!binary` is not supported in frontmatter; write a plain string'],
    ['metadata: !!binary', 'name: tag-meta\ndescription: x\nmetadata: !!binary aGVsbG8=', 4, 11, 'YAML tag `!!binary` is not supported in frontmatter; write a plain string'],
    ['metadata: !!set', 'name: tag-set\ndescription: x\nmetadata: !!set {a, b}', 4, 11, 'YAML tag `!!set` is not supported in frontmatter; write a plain list'],
  ] as const)('%s: one error at the tag, nothing about its value', async ([, fields, line, col, message]) => {
    const folder = /name: (\S+)/.exec(fields)![1]!;
    const r = await lintSkill(await skill(folder, fm(fields)));
    expect(errors(r).map((d) => [d.line, d.col, d.message])).toEqual([[line, col, message]]);
  });
});

describe('lintSkill on a SKILL.md that leads out of the skill folder', () => {
  test('is reported as the link it is and never read (nothing of its content shows)', async () => {
    const outside = path.join(tmp, 'outside-SKILL.md');
    await writeFile(outside, fm('name: hunter2-outside-content\ndescription: hunter2 text'));
    const dir = path.join(tmp, 'linked-out');
    await mkdir(dir, { recursive: true });
    await symlink(outside, path.join(dir, 'SKILL.md'));
    const r = await lintSkill(dir);
    expect(r.diagnostics.map((d) => [d.file, d.line, d.severity, d.message])).toEqual([
      [dir, 0, 'error', `SKILL.md is a symbolic link to ${outside}, outside the skill folder ${dir}; it is not read: copy the file into the skill folder`],
    ]);
    expect(r.name).toBeUndefined();
    expect(r.body).toBeUndefined();
    expect(JSON.stringify(r)).not.toContain('hunter2');
  });

  test('through a linked folder, or a dangling link outside, too; a link inside the skill is read', async () => {
    const elsewhere = path.join(tmp, 'elsewhere');
    await mkdir(elsewhere, { recursive: true });
    await writeFile(path.join(elsewhere, 'SKILL.md'), fm('name: hunter2\ndescription: hunter2'));
    const viaFolder = path.join(tmp, 'via-folder');
    await mkdir(viaFolder, { recursive: true });
    await symlink(elsewhere, path.join(viaFolder, 'docs'));
    await symlink('docs/SKILL.md', path.join(viaFolder, 'SKILL.md'));
    expect(errors(await lintSkill(viaFolder)).map((d) => d.message)).toEqual([
      `SKILL.md is a symbolic link to ${path.join(elsewhere, 'SKILL.md')}, outside the skill folder ${viaFolder}; it is not read: copy the file into the skill folder`,
    ]);
    const dangling = path.join(tmp, 'dangling-out');
    await mkdir(dangling, { recursive: true });
    await symlink('../nowhere/SKILL.md', path.join(dangling, 'SKILL.md'));
    expect(errors(await lintSkill(dangling)).map((d) => d.message)).toEqual([
      `SKILL.md is a symbolic link to ${path.join(tmp, 'nowhere', 'SKILL.md')}, outside the skill folder ${dangling}; it is not read: copy the file into the skill folder`,
    ]);
    const inside = path.join(tmp, 'linked-in');
    await mkdir(path.join(inside, 'src'), { recursive: true });
    await writeFile(path.join(inside, 'src', 'SKILL.md'), fm('name: linked-in\ndescription: Read through a link inside the skill.'));
    await symlink('src/SKILL.md', path.join(inside, 'SKILL.md'));
    const r = await lintSkill(inside);
    expect(errors(r)).toEqual([]);
    expect(r.name).toBe('linked-in');
  });
});
