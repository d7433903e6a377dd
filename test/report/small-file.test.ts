import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeSmallFileSync } from '../../src/report/small-file.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'su-small-'));

describe('writeSmallFileSync (per-run benchmark files)', () => {
  it('creates the file, and its folder only with mkdir', () => {
    const dir = tmp();
    expect(() => writeSmallFileSync(join(dir, 'a/b/grading.json'), '{}\n')).toThrow(/ENOENT/);
    expect(writeSmallFileSync(join(dir, 'a/b/grading.json'), '{}\n', { mkdir: true })).toBe(true);
    expect(readFileSync(join(dir, 'a/b/grading.json'), 'utf8')).toBe('{}\n');
  });

  it('with a folder hint, makes the folder first while folders are missing, and learns when they exist', () => {
    const dir = tmp();
    const hint = { missing: false };
    writeSmallFileSync(join(dir, 'c/v/run-1/grading.json'), '1', { mkdir: true, hint });
    expect(hint.missing).toBe(true);
    writeSmallFileSync(join(dir, 'c/v/run-2/grading.json'), '2', { mkdir: true, hint });
    writeSmallFileSync(join(dir, 'd/v/run-1/grading.json'), '3', { mkdir: true, hint });
    expect(hint.missing).toBe(true);
    writeSmallFileSync(join(dir, 'c/v/run-1/grading.json'), '4', { mkdir: true, hint });
    expect(hint.missing).toBe(false);
    expect(['c/v/run-1', 'c/v/run-2', 'd/v/run-1'].map((d) => readFileSync(join(dir, d, 'grading.json'), 'utf8'))).toEqual(['4', '2', '3']);
  });

  it('leaves a file that already holds the same bytes alone (same inode, not rewritten)', () => {
    const file = join(tmp(), 'grading.json');
    writeSmallFileSync(file, '{"a": 1}\n');
    const before = statSync(file);
    expect(writeSmallFileSync(file, '{"a": 1}\n')).toBe(false);
    const after = statSync(file);
    expect([after.ino, after.mtimeMs, after.size]).toEqual([before.ino, before.mtimeMs, before.size]);
  });

  it('overwrites other content in place, cut to the new length when it was longer', () => {
    const file = join(tmp(), 'grading.json');
    writeSmallFileSync(file, 'x'.repeat(100));
    const ino = statSync(file).ino;
    for (const text of ['short', 'a longer text than before: '.repeat(10), 'éé\n', '', 'same length!', 'SAME LENGTH!']) {
      writeSmallFileSync(file, text);
      expect(readFileSync(file, 'utf8')).toBe(text);
    }
    expect(statSync(file).ino).toBe(ino);
  });

  it('never writes through a planted symbolic link, and refuses a FIFO instead of waiting on it', () => {
    const dir = tmp();
    const target = join(dir, 'target.txt');
    writeFileSync(target, 'keep me');
    symlinkSync(target, join(dir, 'grading.json'));
    expect(() => writeSmallFileSync(join(dir, 'grading.json'), '{}\n')).toThrow(/ELOOP/);
    expect(readFileSync(target, 'utf8')).toBe('keep me');
    expect(lstatSync(join(dir, 'grading.json')).isSymbolicLink()).toBe(true);
    mkdirSync(join(dir, 'f'));
    execFileSync('mkfifo', [join(dir, 'f/grading.json')]);
    expect(() => writeSmallFileSync(join(dir, 'f/grading.json'), '{}\n')).toThrow(/not a regular file/);
  });
});
