/**
 * src/util/out.ts writes a small body (≤ 64 KiB) with direct system calls and a larger one
 * through the thread pool (issue 13); both paths behave the same: parent folder made with
 * `mkdir`, an atomic write that fails leaves no temporary file and rejects, the file mode given
 * is used, secrets are redacted.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeJson, writeText } from '../../src/util/out.js';

const SMALL = 'x'.repeat(100);
const LARGE = 'y'.repeat(200 * 1024);

describe.each([
  { size: 'small (direct calls)', body: SMALL },
  { size: 'large (thread pool)', body: LARGE },
])('writeText, $size', ({ body }) => {
  it('makes the parent folder with `mkdir` and writes the text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-out-'));
    const file = join(dir, 'a/b/c.txt');
    await writeText(file, body, { mkdir: true });
    expect(readFileSync(file, 'utf8')).toBe(body);
  });

  it('an atomic write replaces the file whole and leaves no temporary file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-out-'));
    const file = join(dir, 'r.json');
    writeFileSync(file, 'old');
    await writeText(file, body, { atomic: true, mode: 0o600 });
    expect(readFileSync(file, 'utf8')).toBe(body);
    expect(readdirSync(dir)).toEqual(['r.json']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('an atomic write that cannot rename (a folder in the way) rejects and leaves no temporary file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-out-'));
    mkdirSync(join(dir, 'r.json'));
    writeFileSync(join(dir, 'r.json', 'inside'), 'keep');
    await expect(writeText(join(dir, 'r.json'), body, { atomic: true })).rejects.toThrow(/EISDIR|ENOTEMPTY|EEXIST/);
    expect(readdirSync(dir)).toEqual(['r.json']);
    expect(readFileSync(join(dir, 'r.json', 'inside'), 'utf8')).toBe('keep');
  });

  it('a missing folder without `mkdir` rejects with ENOENT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-out-'));
    await expect(writeText(join(dir, 'no/such.txt'), body)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('writeJson of a small value', () => {
  it('is compact with indent 0 and ends with a newline when asked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-out-'));
    const file = join(dir, 't.json');
    await writeJson(file, { a: [1, 2], b: 'c' }, { indent: 0, newline: true });
    expect(readFileSync(file, 'utf8')).toBe('{"a":[1,2],"b":"c"}\n');
  });
});
