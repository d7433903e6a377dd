import { mkdtemp, mkdir, readFile, rm, symlink, writeFile, link, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { diffSnapshots, readSavedChanges, restoreChanges, saveChanges, snapshotWorkspace } from '../../src/runtime/changes.js';
import { applySkillInstall, planSkillInstall } from '../../src/skill/install.js';

const dirs: string[] = [];
async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'su-changes-'));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** A small skill folder: SKILL.md, an executable script in a sub-folder, a link. */
async function skill(): Promise<string> {
  const d = path.join(await tmp(), 'skill');
  await mkdir(path.join(d, 'scripts'), { recursive: true });
  await writeFile(path.join(d, 'SKILL.md'), '---\nname: s\ndescription: d\n---\n');
  await writeFile(path.join(d, 'scripts/run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  await symlink('scripts/run.sh', path.join(d, 'run'));
  return d;
}

describe('workspace changes', () => {
  it('finds added, modified and deleted files, ignoring .git and skill-up\'s own .skill-up/', async () => {
    const ws = await tmp();
    await writeFile(path.join(ws, 'keep.txt'), 'same');
    await writeFile(path.join(ws, 'edit.txt'), 'old');
    await writeFile(path.join(ws, 'gone.txt'), 'bye');
    await mkdir(path.join(ws, '.git'));
    await writeFile(path.join(ws, '.git', 'HEAD'), 'ref');
    const before = await snapshotWorkspace(ws);
    await writeFile(path.join(ws, 'edit.txt'), 'old'); // same size: caught by the time stamp
    await utimes(path.join(ws, 'edit.txt'), new Date(), new Date(Date.now() + 5000));
    await rm(path.join(ws, 'gone.txt'));
    await mkdir(path.join(ws, 'src'));
    await writeFile(path.join(ws, 'src', 'new.py'), 'print(1)\n');
    await writeFile(path.join(ws, '.git', 'HEAD'), 'other ref');
    await mkdir(path.join(ws, '.skill-up'));
    await writeFile(path.join(ws, '.skill-up', 'session-input.json'), '{}');
    const changes = diffSnapshots(before, await snapshotWorkspace(ws));
    expect(changes).toEqual({ added: ['src/new.py'], modified: ['edit.txt'], deleted: ['gone.txt'], truncated: false });
  });

  it('a snapshot given the installed skill\'s states equals one that walks it, and still sees what the agent changed there', async () => {
    const ws = await tmp();
    await writeFile(path.join(ws, 'readme.md'), 'x');
    const plan = await planSkillInstall({ skillDir: await skill(), include: [], exclude: [], snapshot: true });
    const applied = await applySkillInstall(plan, path.join(ws, '.claude/skills/s'), { within: ws });
    const known = await snapshotWorkspace(ws, undefined, new Map([['.claude/skills/s', applied.states!]]));
    const walked = await snapshotWorkspace(ws);
    expect(known).toEqual(walked);
    await writeFile(path.join(ws, '.claude/skills/s/SKILL.md'), 'the agent rewrote its skill');
    await writeFile(path.join(ws, '.claude/skills/s/extra.md'), 'and added a file');
    expect(diffSnapshots(known, await snapshotWorkspace(ws))).toEqual({ added: ['.claude/skills/s/extra.md'], modified: ['.claude/skills/s/SKILL.md'], deleted: [], truncated: false });
  });

  it('writes changes.json compactly, holding the same record it returns', async () => {
    const ws = await tmp();
    const before = await snapshotWorkspace(ws);
    await writeFile(path.join(ws, 'a.txt'), 'hello');
    const out = await tmp();
    const saved = await saveChanges(ws, diffSnapshots(before, await snapshotWorkspace(ws)), path.join(out, 'changes'), out);
    const text = await readFile(path.join(out, 'changes', 'changes.json'), 'utf8');
    expect(text).not.toContain('\n');
    expect(JSON.parse(text)).toEqual(saved);
    expect(await readSavedChanges(path.join(out, 'changes'))).toEqual(saved);
  });

  it('marks a snapshot over the file limit truncated', async () => {
    const ws = await tmp();
    for (let i = 0; i < 5; i++) await writeFile(path.join(ws, `f${i}`), 'x');
    const snap = await snapshotWorkspace(ws, 3);
    expect(snap.files.size).toBe(3);
    expect(snap.truncated).toBe(true);
  });

  it('saves the changes and restores them onto a fresh copy, never through links or hard links', async () => {
    const ws = await tmp();
    const job = await tmp();
    await writeFile(path.join(ws, 'base.txt'), 'base');
    await writeFile(path.join(ws, 'old.txt'), 'old');
    const before = await snapshotWorkspace(ws);
    await mkdir(path.join(ws, 'out'));
    await writeFile(path.join(ws, 'out', 'report.md'), '# done\n');
    await rm(path.join(ws, 'old.txt'));
    await symlink('report.md', path.join(ws, 'out', 'alias.md'));
    await symlink('/etc/passwd', path.join(ws, 'escape'));
    const secret = path.join(await tmp(), 'outside.txt');
    await writeFile(secret, 'outside content');
    await link(secret, path.join(ws, 'hard.txt'));
    const changes = diffSnapshots(before, await snapshotWorkspace(ws));
    const saved = await saveChanges(ws, changes, path.join(job, 'outputs', 'changes'), job);
    expect(saved.saved).toEqual(['out/report.md']);
    expect(saved.notSaved.map((n) => n.path)).toEqual(['hard.txt']);
    expect(saved.links).toEqual(expect.arrayContaining([{ path: 'out/alias.md', target: 'report.md' }, { path: 'escape', target: '/etc/passwd' }]));

    const fresh = await tmp();
    await writeFile(path.join(fresh, 'base.txt'), 'base');
    await writeFile(path.join(fresh, 'old.txt'), 'old');
    const reread = await readSavedChanges(path.join(job, 'outputs', 'changes'));
    expect(reread).toBeDefined();
    const missing = await restoreChanges(path.join(job, 'outputs', 'changes'), reread!, fresh);
    expect(await readFile(path.join(fresh, 'out', 'report.md'), 'utf8')).toBe('# done\n');
    expect(await readFile(path.join(fresh, 'out', 'alias.md'), 'utf8')).toBe('# done\n');
    await expect(readFile(path.join(fresh, 'old.txt'))).rejects.toThrow();
    expect(missing.map((m) => m.path).sort()).toEqual(['escape', 'hard.txt']);
  });

  it('refuses a hand-edited record that points outside the workspace', async () => {
    const save = await tmp();
    const fresh = await tmp();
    const victim = path.join(await tmp(), 'victim.txt');
    await writeFile(victim, 'keep me');
    const missing = await restoreChanges(save, { added: [], modified: [], deleted: [path.relative(fresh, victim)], truncated: false, saved: ['../x'], links: [], notSaved: [] }, fresh);
    expect(await readFile(victim, 'utf8')).toBe('keep me');
    expect(missing).toEqual([{ path: '../x', reason: 'path outside the workspace' }]);
  });
});
