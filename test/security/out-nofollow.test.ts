/**
 * The output layer never writes through a symbolic link planted in the last path component:
 * an agent handed `${output_dir}` could otherwise point `outputs/response.md` at any file.
 */
import { existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendText, createRedactingWriteStream, writeJson, writeJsonSync, writeText, writeTextSync } from '../../src/util/out.js';

function planted(): { dir: string; victim: string; link: string } {
  const dir = mkdtempSync(join(tmpdir(), 'su-nofollow-'));
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'original');
  const link = join(dir, 'response.md');
  symlinkSync(victim, link);
  return { dir, victim, link };
}

describe('the output layer refuses symbolic links', () => {
  it('writeText, writeJson and appendText fail with ELOOP and leave the target untouched', async () => {
    for (const write of [
      (f: string) => writeText(f, 'overwritten'),
      (f: string) => writeJson(f, { a: 1 }),
      (f: string) => appendText(f, 'appended'),
    ]) {
      const { victim, link } = planted();
      await expect(write(link)).rejects.toMatchObject({ code: 'ELOOP' });
      expect(readFileSync(victim, 'utf8')).toBe('original');
    }
  });

  it('the synchronous writers fail the same way', () => {
    for (const write of [(f: string) => writeTextSync(f, 'x'), (f: string) => writeJsonSync(f, { a: 1 })]) {
      const { victim, link } = planted();
      expect(() => write(link)).toThrow(/ELOOP/);
      expect(readFileSync(victim, 'utf8')).toBe('original');
    }
  });

  it('a redacting write stream errors instead of writing through the link', async () => {
    const { victim, link } = planted();
    const s = createRedactingWriteStream(link);
    const err = await new Promise<NodeJS.ErrnoException>((res) => {
      s.on('error', res);
      s.end('overwritten');
    });
    expect(err.code).toBe('ELOOP');
    expect(readFileSync(victim, 'utf8')).toBe('original');
  });

  it('an atomic write replaces the link itself, not its target', async () => {
    const { victim, link } = planted();
    await writeText(link, 'new', { atomic: true });
    expect(readFileSync(victim, 'utf8')).toBe('original');
    expect(readFileSync(link, 'utf8')).toBe('new');
    expect(existsSync(victim)).toBe(true);
  });
});
