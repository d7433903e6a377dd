import { copyFileSync, mkdtempSync, cpSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('bad input: one clear message per problem, exit code 2, never a stack trace', () => {
  it('validate reports all ten mistakes of the fixture suite with file:line:col', async () => {
    const r = await runCli(['validate', join(ROOT, 'test/config/fixtures/ten-mistakes')], { cwd: ROOT });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines.at(-1)).toBe('10 error(s)');
    expect(lines.slice(0, -1).every((l) => /^test\/config\/fixtures\/ten-mistakes\/evals\/[\w/.-]+\.yaml:\d+:\d+: /.test(l))).toBe(true);
    expect(r.stderr).toContain('evals/eval.yaml:14:7: cases.defaults.expect.must_contian: unknown key `must_contian`; did you mean `must_contain`?');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('run on a suite with a typo exits 2 before running anything', async () => {
    const skill = writeSkill({
      'evals/eval.yaml': 'schema_version: v1alpha1\nengine: { name: claude_code }\ncases:\n  file: [evals/cases/*.yaml]\n',
    });
    const r = await runCli(['run', skill]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/evals\/eval\.yaml:4:3: cases\.file: unknown key `file`; did you mean `files`\?/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a scripted-model file with an unknown action or malformed YAML gets file:line:col and exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-bad-model-'));
    cpSync(join(ROOT, 'examples/brand-guidelines'), join(dir, 'brand-guidelines'), { recursive: true });
    const model = join(dir, 'brand-guidelines/evals/fixtures/model.yaml');
    writeFileSync(model, 'rules:\n  - when: { prompt_contains: x }\n    reply:\n      - writ_file: { path: a, content: b }\n');
    let r = await runCli(['run', join(dir, 'brand-guidelines'), '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/model\.yaml:4:9: rules\[0\]\.reply\[0\]\.writ_file: unknown action "writ_file"; did you mean "write_file"\?/);
    writeFileSync(model, 'rules:\n  - when: { prompt_contains: x\n    reply: []\n');
    r = await runCli(['validate', join(dir, 'brand-guidelines')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/model\.yaml:\d+:\d+: YAML syntax error/);
    copyFileSync(join(ROOT, 'examples/brand-guidelines/evals/fixtures/model.yaml'), model);
    r = await runCli(['validate', join(dir, 'brand-guidelines')]);
    expect(r.code, r.stderr).toBe(0);
  });

  it('usage mistakes name the flag', async () => {
    let r = await runCli(['run', '--parallelism', '0', join(ROOT, 'examples/greeting-files')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--parallelism must be an integer from 1 to 256, got `0`');
    r = await runCli(['run', '--trails', '3']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown option `--trails`; did you mean `--trials`?');
    r = await runCli(['frobnicate']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command `frobnicate` (commands: run, validate, list-cases, report, compare, merge, regrade, calibrate, import');
    r = await runCli(['runn']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command `runn`; did you mean `run`?');
    r = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--case', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no case matches --case nope (cases: hello-file, welcome-note)');
  });

  it('an unusable --output-dir is a usage error (exit 2), never a stack trace or a hang', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-outdir-'));
    writeFileSync(join(dir, 'afile'), 'x');
    for (const [out, want] of [
      [join(dir, 'afile'), 'exists and is not a folder'],
      [join(dir, 'afile/sub'), 'ENOTDIR'],
      ['/proc/nope', 'cannot create /proc/nope'],
    ] as const) {
      const r = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--output-dir', out]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(want);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('a missing path says where it looked', async () => {
    const r = await runCli(['run', '/nonexistent/skill']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/nonexistent/skill');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
