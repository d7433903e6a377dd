import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkExpect, firstDifference } from '../../src/judge/index.js';
import { makeInput, tempDir, turn } from './helpers.js';

const cleanups: (() => void)[] = [];
afterEach(() => cleanups.splice(0).forEach((c) => c()));
function ws(files: Record<string, string> = {}) {
  const t = tempDir(files);
  cleanups.push(t.cleanup);
  return t.dir;
}

describe('expect: final message', () => {
  it('must_contain is a case-sensitive substring check with context evidence', async () => {
    const workspace = ws();
    const msg = 'I created the file. It prints hello, world.';
    const a = await checkExpect(makeInput({ workspace, finalMessage: msg, expect: { mustContain: ['hello', 'Hello'] }, judges: [] }));
    const [hello, Hello] = a.filter((x) => x.text.startsWith('must_contain'));
    expect(hello).toMatchObject({ text: 'must_contain: "hello"', passed: true });
    expect(hello!.evidence).toMatch(/^found at offset 30: ".*hello, world\."$/);
    expect(Hello!.passed).toBe(false);
    expect(Hello!.evidence).toBe(`not found in final message (${msg.length} chars): ${JSON.stringify(msg)}`);
  });
  it('must_not_contain fails when present and shows where', async () => {
    const workspace = ws();
    const a = await checkExpect(makeInput({ workspace, finalMessage: 'an ERROR happened', expect: { mustNotContain: ['ERROR', 'panic'] } }));
    const [err, panic] = a.filter((x) => x.text.startsWith('must_not_contain'));
    expect(err).toMatchObject({ passed: false, evidence: 'found at offset 3: "an ERROR happened"' });
    expect(panic).toMatchObject({ passed: true, evidence: 'not found in final message (17 chars)' });
  });
  it('clips a long message to 200 characters in evidence', async () => {
    const workspace = ws();
    const a = await checkExpect(makeInput({ workspace, finalMessage: 'x'.repeat(1000), expect: { mustContain: ['y'] } }));
    const ev = a.find((x) => x.text.startsWith('must_contain'))!.evidence;
    expect(ev.startsWith('not found in final message (1000 chars): "')).toBe(true);
    expect(ev.length).toBeLessThan(260);
  });
});

describe('expect: exit code', () => {
  it('checks a declared exit_code', async () => {
    const workspace = ws();
    const a = await checkExpect(makeInput({ workspace, exitCode: 2, expect: { exitCode: 0 } }));
    expect(a).toEqual([{ text: 'exit_code: 0', passed: false, evidence: 'actual exit code: 2' }]);
  });
  it('adds an implicit exit_code 0 check when neither exit_code nor judge is declared', async () => {
    const workspace = ws();
    const a = await checkExpect(makeInput({ workspace, exitCode: 1 }));
    expect(a).toHaveLength(1);
    expect(a[0]!.passed).toBe(false);
    expect(a[0]!.text).toMatch(/^exit_code: 0 \(implicit/);
  });
  it('omits the implicit check when a judge decides', async () => {
    const workspace = ws();
    const a = await checkExpect(makeInput({ workspace, exitCode: 1, judges: [{ type: 'rule_based', success: [], failure: [] }] }));
    expect(a).toEqual([]);
  });
});

describe('expect: files', () => {
  it('files_exist and files_not_exist report sizes and absence', async () => {
    const workspace = ws({ 'hello.py': "print('hi')\n", 'sub/dir/x.txt': '' });
    const a = await checkExpect(
      makeInput({ workspace, expect: { exitCode: 0, filesExist: ['hello.py', 'sub/dir', 'missing.py'], filesNotExist: ['gone.txt', 'hello.py'] } }),
    );
    const by = Object.fromEntries(a.map((x) => [x.text, x]));
    expect(by['files_exist: hello.py']).toMatchObject({ passed: true, evidence: 'hello.py: exists (12 bytes)' });
    expect(by['files_exist: sub/dir']).toMatchObject({ passed: true, evidence: 'sub/dir: exists (directory)' });
    expect(by['files_exist: missing.py']).toMatchObject({ passed: false, evidence: 'missing.py: does not exist' });
    expect(by['files_not_exist: gone.txt']).toMatchObject({ passed: true });
    expect(by['files_not_exist: hello.py']).toMatchObject({ passed: false, evidence: 'hello.py: exists (12 bytes)' });
  });
  it('refuses paths escaping the workspace, for both existence checks', async () => {
    const outside = ws({ 'secret.txt': 'x' });
    const workspace = ws();
    const rel = path.relative(workspace, path.join(outside, 'secret.txt'));
    const a = await checkExpect(makeInput({ workspace, expect: { exitCode: 0, filesExist: [rel, '/etc/passwd'], filesNotExist: ['../nope'] } }));
    for (const x of a.filter((y) => y.text.startsWith('files_'))) {
      expect(x.passed).toBe(false);
      expect(x.evidence).toMatch(/escapes the workspace/);
    }
  });
  it('refuses a symbolic link pointing outside the workspace', async () => {
    const outside = ws({ 'secret.txt': 'top secret' });
    const workspace = ws();
    symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    const a = await checkExpect(
      makeInput({ workspace, expect: { exitCode: 0, filesExist: ['link.txt'], fileContains: [{ path: 'link.txt', content: 'secret' }] } }),
    );
    expect(a.filter((x) => x.text !== 'exit_code: 0').every((x) => !x.passed && /symbolic link/.test(x.evidence))).toBe(true);
  });
  it('file_contains searches the file and explains misses', async () => {
    const workspace = ws({ 'hello.py': "print('Hello, World!')\n" });
    const a = await checkExpect(
      makeInput({
        workspace,
        expect: {
          exitCode: 0,
          fileContains: [
            { path: 'hello.py', content: 'Hello, World!' },
            { path: 'hello.py', content: 'Goodbye' },
            { path: 'nope.py', content: 'x' },
          ],
        },
      }),
    );
    const fc = a.filter((x) => x.text.startsWith('file_contains'));
    expect(fc[0]).toMatchObject({ text: 'file_contains: hello.py contains "Hello, World!"', passed: true });
    expect(fc[0]!.evidence).toMatch(/^found at offset 7 of hello\.py \(23 bytes\)/);
    expect(fc[1]!.passed).toBe(false);
    expect(fc[1]!.evidence).toMatch(/^not found in hello\.py \(23 bytes\): /);
    expect(fc[2]).toMatchObject({ passed: false, evidence: 'nope.py does not exist' });
  });
});

describe('expect: golden_file', () => {
  it('passes when equal up to trailing white space and CRLF', async () => {
    const skillDir = ws({ 'evals/golden.txt': 'line one\r\nline two\n\n\n' });
    const workspace = ws();
    const a = await checkExpect(
      makeInput({ workspace, skillDir, finalMessage: 'line one\nline two  ', expect: { exitCode: 0, goldenFile: path.join(skillDir, 'evals/golden.txt') } }),
    );
    expect(a[1]).toMatchObject({ text: 'golden_file: evals/golden.txt', passed: true });
  });
  it('shows the first differing line', async () => {
    const skillDir = ws({ 'g.txt': 'a\nb\nc\n' });
    const workspace = ws();
    const a = await checkExpect(makeInput({ workspace, skillDir, finalMessage: 'a\nB\nc', expect: { exitCode: 0, goldenFile: 'g.txt' } }));
    expect(a[1]!.passed).toBe(false);
    expect(a[1]!.evidence).toBe('first difference at line 2: expected "b", got "B" (expected 3 lines, got 3)');
  });
  it('fails with the reason when the golden file is missing', async () => {
    const workspace = ws();
    const a = await checkExpect(makeInput({ workspace, finalMessage: 'x', expect: { exitCode: 0, goldenFile: '/nonexistent/golden.txt' } }));
    expect(a[1]!.passed).toBe(false);
    expect(a[1]!.evidence).toMatch(/golden file could not be read: ENOENT/);
  });
  it('firstDifference handles a shorter message', () => {
    expect(firstDifference('a\nb', 'a')).toBe('first difference at line 2: expected "b", got <end of message> (expected 2 lines, got 1)');
    expect(firstDifference('same', 'same')).toBeUndefined();
  });
});

describe('expect: skill_invoked / skill_not_invoked', () => {
  it('checks skill activations across turns, with the listed skills as evidence', async () => {
    const workspace = ws();
    const turns = [
      turn(1, 'a', [], { skillsListed: ['brand-guidelines', 'pdf'] }),
      turn(2, 'b', [], { skillActivations: [{ skill: 'brand-guidelines', via: 'Skill tool' }] }),
    ];
    const a = await checkExpect(makeInput({ workspace, turns, expect: { skillInvoked: ['brand-guidelines', 'pdf'], skillNotInvoked: ['brand-guidelines'] } }));
    const skill = a.filter((x) => x.text.startsWith('skill_'));
    expect(skill.map((x) => [x.text, x.passed])).toEqual([
      ['skill_invoked: brand-guidelines', true],
      ['skill_invoked: pdf', false],
      ['skill_not_invoked: brand-guidelines', false],
    ]);
    expect(skill[0]!.evidence).toContain('activated in turn 2 via Skill tool');
    expect(skill[1]!.evidence).toContain('skills listed: ');
  });
});
