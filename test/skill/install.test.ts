import { cp, lstat, mkdir, mkdtemp, readFile, readlink, readdir, rm, stat, symlink, writeFile, chmod } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { selectSkillFiles } from '../../src/skill/select.js';
import { applySkillInstall, installSkill, MAX_SNAPSHOT_BYTES, planSkillInstall, SkillInstallError } from '../../src/skill/install.js';

/** Real public skills, copied into the repository (test/fixtures/skills/SOURCE.md). */
const SHARED = path.resolve(__dirname, '../fixtures/skills');
const FIXTURES = path.resolve(__dirname, 'fixtures');
const realSkills = readdirSync(SHARED).filter((d) => statSync(path.join(SHARED, d)).isDirectory());

let tmp: string;
let skillDir: string;
let n = 0;
const fresh = () => path.join(tmp, `dest-${++n}`, '.claude', 'skills', 'good-skill');

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'skill-up-install-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A fresh copy of fixtures/good-skill with explicit modes, symlinks, .git and nested folders. */
beforeEach(async () => {
  skillDir = path.join(tmp, `src-${++n}`, 'good-skill');
  await cp(path.join(FIXTURES, 'good-skill'), skillDir, { recursive: true });
  await chmod(path.join(skillDir, 'scripts/hello.sh'), 0o755);
  await chmod(path.join(skillDir, 'references/notes.md'), 0o640);
  await symlink('hello.sh', path.join(skillDir, 'scripts/run'));
  await symlink('references', path.join(skillDir, 'refs'));
  await mkdir(path.join(skillDir, '.git'));
  await writeFile(path.join(skillDir, '.git/config'), '[core]\n');
  await mkdir(path.join(skillDir, 'assets/evals'), { recursive: true });
  await writeFile(path.join(skillDir, 'assets/evals/keep.txt'), 'nested evals folder is not the skill root evals\n');
});

async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isDirectory()) out.push(path.relative(dir, path.join(e.parentPath, e.name)));
  }
  return out.sort();
}

/** Each of `files` is the same in both trees: its mode, and its link target or its bytes. */
async function expectSameFiles(a: string, b: string, files: string[]): Promise<void> {
  for (const f of files) {
    const [fa, fb] = [path.join(a, f), path.join(b, f)];
    const [la, lb] = [await lstat(fa), await lstat(fb)];
    expect([f, la.mode]).toEqual([f, lb.mode]);
    if (la.isSymbolicLink()) expect(await readlink(fa)).toBe(await readlink(fb));
    else expect((await readFile(fa)).equals(await readFile(fb))).toBe(true);
  }
}

async function mode(p: string): Promise<number> {
  return (await stat(p)).mode & 0o777;
}

describe('selectSkillFiles', () => {
  test('empty include selects every file except evals/ and .git/, dotfiles included', async () => {
    expect(await selectSkillFiles(skillDir, [], [])).toEqual([
      '.hidden',
      'SKILL.md',
      'assets/evals/keep.txt',
      'references/notes.md',
      'refs',
      'scripts/hello.sh',
      'scripts/run',
    ]);
  });

  test('include globs select, exclude globs remove', async () => {
    expect(await selectSkillFiles(skillDir, ['SKILL.md', 'scripts/**'], ['**/run'])).toEqual(['SKILL.md', 'scripts/hello.sh']);
    expect(await selectSkillFiles(skillDir, ['**/*.md'], [])).toEqual(['SKILL.md', 'references/notes.md']);
  });

  test('a glob naming a folder selects everything under it', async () => {
    expect(await selectSkillFiles(skillDir, ['SKILL.md', 'scripts'], [])).toEqual(['SKILL.md', 'scripts/hello.sh', 'scripts/run']);
    expect(await selectSkillFiles(skillDir, [], ['scripts/', 'assets', '.hidden', 'refs'])).toEqual(['SKILL.md', 'references/notes.md']);
  });

  test('evals/ and .git/ are excluded even when included explicitly', async () => {
    expect(await selectSkillFiles(skillDir, ['evals/**', '.git/**', 'SKILL.md'], [])).toEqual(['SKILL.md']);
  });

  test('the skill folder itself may be a symbolic link', async () => {
    const link = path.join(tmp, `link-${++n}`);
    await symlink(skillDir, link);
    expect(await selectSkillFiles(link, ['SKILL.md'], [])).toEqual(['SKILL.md']);
    const { files } = await installSkill({ skillDir: link, include: [], exclude: [], destDir: fresh() });
    expect(files).toContain('scripts/run');
  });

  test('a missing folder throws', async () => {
    await expect(selectSkillFiles(path.join(tmp, 'nope'), [], [])).rejects.toThrow(/ENOENT/);
  });

  test.each(realSkills)('real skill %s: every file is selected', async (name) => {
    const dir = path.join(SHARED, name);
    const files = await selectSkillFiles(dir, [], []);
    expect(files).toEqual((await tree(dir)).filter((f) => !f.startsWith('evals/')));
    expect(files).toContain('SKILL.md');
  });
});

describe('installSkill', () => {
  test('copies the selection, keeps modes and symlinks, never copies evals/ or .git/', async () => {
    const dest = fresh();
    const { files } = await installSkill({ skillDir, include: [], exclude: [], destDir: dest });
    expect(files).toEqual(await selectSkillFiles(skillDir, [], []));
    expect(await tree(dest)).toEqual(files);
    expect(await mode(path.join(dest, 'scripts/hello.sh'))).toBe(0o755);
    expect(await mode(path.join(dest, 'references/notes.md'))).toBe(0o640);
    expect(await readFile(path.join(dest, 'SKILL.md'), 'utf8')).toBe(await readFile(path.join(skillDir, 'SKILL.md'), 'utf8'));
    expect((await lstat(path.join(dest, 'scripts/run'))).isSymbolicLink()).toBe(true);
    expect(await readlink(path.join(dest, 'scripts/run'))).toBe('hello.sh');
    expect(await readFile(path.join(dest, 'scripts/run'), 'utf8')).toContain('echo hello');
    expect(await readlink(path.join(dest, 'refs'))).toBe('references');
    await expect(stat(path.join(dest, 'evals'))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(dest, '.git'))).rejects.toThrow(/ENOENT/);
  });

  test('installed scripts still run', async () => {
    const dest = fresh();
    await installSkill({ skillDir, include: [], exclude: [], destDir: dest });
    const { execa } = await import('execa');
    expect((await execa(path.join(dest, 'scripts/hello.sh'))).stdout).toBe('hello');
  });

  test('respects include/exclude', async () => {
    const dest = fresh();
    const { files } = await installSkill({ skillDir, include: ['SKILL.md', 'scripts/**'], exclude: ['scripts/run'], destDir: dest });
    expect(files).toEqual(['SKILL.md', 'scripts/hello.sh']);
    expect(await tree(dest)).toEqual(files);
  });

  test('installing twice replaces files', async () => {
    const dest = fresh();
    await installSkill({ skillDir, include: [], exclude: [], destDir: dest });
    await writeFile(path.join(skillDir, 'SKILL.md'), (await readFile(path.join(skillDir, 'SKILL.md'), 'utf8')) + '\nmore\n');
    await installSkill({ skillDir, include: [], exclude: [], destDir: dest });
    expect(await readFile(path.join(dest, 'SKILL.md'), 'utf8')).toMatch(/more\n$/);
    expect(await readlink(path.join(dest, 'scripts/run'))).toBe('hello.sh');
  });

  test('an absolute symlink to a file inside the skill is recreated as a relative link', async () => {
    await symlink(path.join(skillDir, 'SKILL.md'), path.join(skillDir, 'references/skill-link'));
    const dest = fresh();
    await installSkill({ skillDir, include: [], exclude: [], destDir: dest });
    expect(await readlink(path.join(dest, 'references/skill-link'))).toBe('../SKILL.md');
  });

  test('a symlink leaving the skill folder is rejected, naming the link and its target, before copying', async () => {
    await writeFile(path.join(tmp, 'outside.txt'), 'secret\n');
    await symlink('../../outside.txt', path.join(skillDir, 'references/leak'));
    const dest = fresh();
    const err = await installSkill({ skillDir, include: [], exclude: [], destDir: dest }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SkillInstallError);
    expect((err as Error).message).toContain('`references/leak`');
    expect((err as Error).message).toContain('`../../outside.txt`');
    expect((err as Error).message).toMatch(/outside the skill folder/);
    await expect(stat(dest)).rejects.toThrow(/ENOENT/);
  });

  test('an absolute symlink outside is rejected; excluding it makes the install pass', async () => {
    await symlink('/etc/hostname', path.join(skillDir, 'host'));
    await expect(installSkill({ skillDir, include: [], exclude: [], destDir: fresh() })).rejects.toThrow(
      /symbolic link `host` .* points to `\/etc\/hostname`/,
    );
    const { files } = await installSkill({ skillDir, include: [], exclude: ['host'], destDir: fresh() });
    expect(files).not.toContain('host');
  });

  test('a symlink that resolves outside through another link is rejected', async () => {
    await mkdir(path.join(tmp, 'elsewhere'), { recursive: true });
    await writeFile(path.join(tmp, 'elsewhere/x.txt'), 'x');
    await symlink(path.join(tmp, 'elsewhere'), path.join(skillDir, 'assets/out')); // rejected itself
    await symlink('assets/out/x.txt', path.join(skillDir, 'chained'));
    const err = await installSkill({ skillDir, include: [], exclude: ['assets/out'], destDir: fresh() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SkillInstallError);
    expect((err as Error).message).toContain('`chained`');
  });

  test('a selection without SKILL.md is refused', async () => {
    await expect(installSkill({ skillDir, include: ['scripts/**'], exclude: [], destDir: fresh() })).rejects.toThrow(
      /does not include SKILL.md/,
    );
  });

  test('a destination inside the skill folder is refused', async () => {
    await expect(
      installSkill({ skillDir, include: [], exclude: [], destDir: path.join(skillDir, 'out') }),
    ).rejects.toBeInstanceOf(SkillInstallError);
  });

  test('a missing skill folder is a SkillInstallError', async () => {
    await expect(installSkill({ skillDir: path.join(tmp, 'missing'), include: [], exclude: [], destDir: fresh() })).rejects.toThrow(
      SkillInstallError,
    );
  });

  test.each(realSkills)('real skill %s installs with every mode kept', async (name) => {
    const src = path.join(SHARED, name);
    const dest = path.join(tmp, 'real', name);
    const { files } = await installSkill({ skillDir: src, include: [], exclude: [], destDir: dest });
    expect(await tree(dest)).toEqual(files);
    for (const f of files) {
      expect([f, await mode(path.join(dest, f))]).toEqual([f, await mode(path.join(src, f))]);
    }
  });

  test('skill-creator: scripts stay executable and an added evals/ never arrives', async () => {
    const src = path.join(tmp, 'sc-src', 'skill-creator');
    await cp(path.join(SHARED, 'skill-creator'), src, { recursive: true });
    await mkdir(path.join(src, 'evals/files'), { recursive: true });
    await writeFile(path.join(src, 'evals/evals.json'), '{"skill_name":"skill-creator","evals":[]}');
    await writeFile(path.join(src, 'evals/files/input.txt'), 'x');
    const dest = path.join(tmp, 'sc-dest', '.claude', 'skills', 'skill-creator');
    const { files } = await installSkill({ skillDir: src, include: [], exclude: [], destDir: dest });
    expect(files.some((f) => f.startsWith('evals/'))).toBe(false);
    await expect(stat(path.join(dest, 'evals'))).rejects.toThrow(/ENOENT/);
    const scripts = files.filter((f) => f.startsWith('scripts/') && f.endsWith('.py'));
    expect(scripts.length).toBeGreaterThan(3);
    for (const s of scripts) {
      expect(await mode(path.join(dest, s))).toBe(await mode(path.join(SHARED, 'skill-creator', s)));
    }
    expect(await mode(path.join(dest, 'scripts/run_eval.py')) & 0o111).not.toBe(0);
    expect(files).toContain('eval-viewer/generate_review.py'); // not `evals/`, so kept
  });
});

describe('a planned snapshot (read once per run, installed per job)', () => {
  test('equals a copy from the folder: same files, bytes, modes (umask-stripped bits too) and links', async () => {
    await chmod(path.join(skillDir, 'references/notes.md'), 0o666); // group/other write: the umask would strip it
    const plan = await planSkillInstall({ skillDir, include: [], exclude: [], snapshot: true });
    expect(plan.content).toBeDefined();
    const fromSnapshot = fresh();
    const copied = fresh();
    await applySkillInstall(plan, fromSnapshot);
    await applySkillInstall(await planSkillInstall({ skillDir, include: [], exclude: [] }), copied);
    const files = await tree(copied);
    expect(await tree(fromSnapshot)).toEqual(files);
    await expectSameFiles(fromSnapshot, copied, files);
    expect(await mode(path.join(fromSnapshot, 'references/notes.md'))).toBe(0o666);
  });

  test('a snapshot over the direct-install limits (40 files, 300 KB) is written through the thread pool with the same result: bytes, modes, links; again over an existing install', async () => {
    await mkdir(path.join(skillDir, 'many'));
    for (let i = 0; i < 40; i++) await writeFile(path.join(skillDir, 'many', `f${i}.txt`), `file ${i}\n`);
    await writeFile(path.join(skillDir, 'many', 'big.bin'), Buffer.alloc(300 * 1024, 7));
    const plan = await planSkillInstall({ skillDir, include: [], exclude: [], snapshot: true });
    expect(plan.content).toBeDefined();
    expect(plan.entries.length).toBeGreaterThan(32);
    const fromSnapshot = fresh();
    const copied = fresh();
    const applied = await applySkillInstall(plan, fromSnapshot);
    await applySkillInstall(await planSkillInstall({ skillDir, include: [], exclude: [] }), copied);
    const files = await tree(copied);
    expect(await tree(fromSnapshot)).toEqual(files);
    expect([...applied.states!.keys()].sort()).toEqual([...applied.files].sort());
    await expectSameFiles(fromSnapshot, copied, files);
    // A second install over the first (an earlier attempt's folder) replaces every file.
    await writeFile(path.join(fromSnapshot, 'many/f3.txt'), 'changed by an agent');
    const again = await applySkillInstall(plan, fromSnapshot);
    expect(again.fresh).toBe(false);
    expect(await readFile(path.join(fromSnapshot, 'many/f3.txt'), 'utf8')).toBe('file 3\n');
  });

  test('every job gets the source as planned, even after an earlier job changed its copy or the folder changed', async () => {
    const original = await readFile(path.join(skillDir, 'SKILL.md'));
    const plan = await planSkillInstall({ skillDir, include: [], exclude: [], snapshot: true });
    const first = fresh();
    await applySkillInstall(plan, first);
    // The first job's agent edits its installed copy; the skill folder is edited during the run too.
    await writeFile(path.join(first, 'SKILL.md'), 'hacked by the agent');
    await chmod(path.join(first, 'scripts/hello.sh'), 0o600);
    await writeFile(path.join(skillDir, 'SKILL.md'), 'edited mid-run');
    const second = fresh();
    await applySkillInstall(plan, second);
    expect((await readFile(path.join(second, 'SKILL.md'))).equals(original)).toBe(true);
    expect(await mode(path.join(second, 'scripts/hello.sh'))).toBe(0o755);
  });

  test('returns the new files\' states as lstat sees them (what the workspace snapshot takes), for a fresh install only', async () => {
    const plan = await planSkillInstall({ skillDir, include: [], exclude: [], snapshot: true });
    const dest = fresh();
    const within = path.dirname(path.dirname(path.dirname(dest)));
    await mkdir(within, { recursive: true });
    const applied = await applySkillInstall(plan, dest, { within });
    expect(applied.fresh).toBe(true);
    expect([...applied.states!.keys()].sort()).toEqual([...applied.files].sort());
    for (const [rel, st] of applied.states!) {
      const l = await lstat(path.join(dest, rel));
      expect({ rel, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode }).toEqual({ rel, size: l.size, mtimeMs: l.mtimeMs, mode: l.mode });
    }
    const again = await applySkillInstall(plan, dest, { within });
    expect(again.fresh).toBe(false);
    expect(again.states).toBeUndefined();
  });

  test('a skill over the snapshot limit is copied from its folder per job', async () => {
    await writeFile(path.join(skillDir, 'big.bin'), Buffer.alloc(MAX_SNAPSHOT_BYTES + 1));
    const plan = await planSkillInstall({ skillDir, include: [], exclude: [], snapshot: true });
    expect(plan.content).toBeUndefined();
    const dest = fresh();
    const { files } = await applySkillInstall(plan, dest);
    expect(files).toContain('big.bin');
    expect((await stat(path.join(dest, 'big.bin'))).size).toBe(MAX_SNAPSHOT_BYTES + 1);
  });
});
