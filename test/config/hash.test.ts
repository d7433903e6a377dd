import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { suiteHash } from '../../src/config/hash.js';
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
