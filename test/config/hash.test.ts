import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { lstat, readFile, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { suiteDigest, suiteFiles, suiteHash } from '../../src/config/hash.js';
import { suiteManifest } from '../../src/run/resume.js';

function skill(): { root: string; dir: string } {
  const root = mkdtempSync(join(tmpdir(), 'su-hash-'));
  const dir = join(root, 'my-skill');
  mkdirSync(join(dir, 'evals/cases'), { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), '---\nname: my-skill\ndescription: x\n---\n');
  writeFileSync(join(dir, 'evals/eval.yaml'), 'schema_version: v1alpha1\n');
  writeFileSync(join(dir, 'evals/cases/a.yaml'), 'input: { prompt: hi }\n');
  return { root, dir };
}

describe('suite hash', () => {
  it('changes with any file of the suite and leaves out an output folder inside the skill', async () => {
    const { dir } = skill();
    const a = await suiteHash(dir, [join(dir, 'out')]);
    mkdirSync(join(dir, 'out'));
    writeFileSync(join(dir, 'out/result.json'), '{}');
    expect(await suiteHash(dir, [join(dir, 'out')])).toBe(a);
    writeFileSync(join(dir, 'evals/cases/a.yaml'), 'input: { prompt: hello }\n');
    expect(await suiteHash(dir, [join(dir, 'out')])).not.toBe(a);
  });
  it('still covers the skill when the output folder holds it (--output-dir . at a repository root)', async () => {
    const { root, dir } = skill();
    const empty = 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
    const a = await suiteHash(dir, [root]);
    expect(a).not.toBe(empty);
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: my-skill\ndescription: changed\n---\n');
    expect(await suiteHash(dir, [root])).not.toBe(a);
    expect(Object.keys((await suiteManifest(dir, [root]))!)).toContain('SKILL.md');
  });
});

/** The hash and manifest as they were computed before one walk did both: each file read in turn, twice. */
async function sequentialReference(dir: string, exclude: string[]): Promise<{ hash: string; manifest: Record<string, string> }> {
  const h = createHash('sha256');
  const manifest: Record<string, string> = {};
  for (const { abs, rel } of await suiteFiles(dir, exclude, 20_000)) {
    const st = await lstat(abs);
    const m = createHash('sha256').update(st.mode & 0o111 ? 'x' : '-');
    h.update(`${rel}\0${st.mode & 0o111 ? 'x' : '-'}\0`);
    if (st.isSymbolicLink()) {
      const link = `link:${await readlink(abs)}`;
      h.update(link);
      m.update(link);
    } else {
      const data = await readFile(abs);
      h.update(data);
      m.update(data);
    }
    h.update('\0');
    manifest[rel] = m.digest('hex').slice(0, 16);
  }
  return { hash: `sha256:${h.digest('hex')}`, manifest };
}

describe('suite digest: one walk, files read several at a time', () => {
  it('gives exactly the hash and manifest of reading every file in turn (order, modes, links, a large file read alone)', async () => {
    const { dir } = skill();
    for (let i = 0; i < 57; i++) writeFileSync(join(dir, `evals/cases/c${String(i).padStart(2, '0')}.yaml`), `input: { prompt: "job ${i}" }\n`);
    writeFileSync(join(dir, 'evals/big.bin'), Buffer.alloc(5 * 1024 * 1024, 7)); // over the read-alone size
    writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(dir, 'run.sh'), 0o755);
    symlinkSync('SKILL.md', join(dir, 'link.md'));
    const exclude = [join(dir, 'out')];
    const ref = await sequentialReference(dir, exclude);
    const got = await suiteDigest(dir, exclude);
    expect(got.hash).toBe(ref.hash);
    expect(got.manifest).toEqual(ref.manifest);
    expect(await suiteHash(dir, exclude)).toBe(ref.hash);
    expect(await suiteManifest(dir, exclude)).toEqual(ref.manifest);
  });

  it('leaves the manifest out past 2,000 files, the hash still covering every file', async () => {
    const { dir } = skill();
    mkdirSync(join(dir, 'many'));
    for (let i = 0; i < 2001; i++) writeFileSync(join(dir, `many/f${i}.txt`), String(i));
    const got = await suiteDigest(dir);
    expect(got.manifest).toBeUndefined();
    expect(got.hash).toBe((await sequentialReference(dir, [])).hash);
  });
});
