/**
 * The agent_judge's git baseline (src/runtime/baseline.ts): committed into a private git folder,
 * it leaves the workspace's own repository untouched, and the diff against it shows added,
 * modified, deleted (ignored files too) and binary files, bounded by bytes and lines.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { baselineGitDir, commitBaseline, diffAgainstBaseline } from '../../src/runtime/baseline.js';

const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string | Buffer>): { dir: string; homeDir: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'su-baseline-'));
  made.push(root);
  const dir = path.join(root, 'ws');
  const homeDir = path.join(root, 'home');
  mkdirSync(homeDir);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return { dir, homeDir };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, env: { PATH: process.env.PATH!, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } }).toString();

describe('workspace baseline', () => {
  it("diffs added, modified, deleted, ignored and binary files, leaving the workspace's own repository as it was", async () => {
    const ws = workspace({ 'a.txt': 'one\n', 'gone.txt': 'bye\n', '.gitignore': 'build/\n', 'img.bin': Buffer.from([0, 1, 2, 3]) });
    git(ws.dir, 'init', '-q', '-b', 'main');
    git(ws.dir, 'add', '-A');
    git(ws.dir, 'commit', '-q', '-m', 'user commit');
    const head = git(ws.dir, 'rev-parse', 'HEAD');
    const gitDir = await commitBaseline(ws);
    expect(gitDir).toBe(baselineGitDir(ws));
    writeFileSync(path.join(ws.dir, 'a.txt'), 'one\ntwo\n');
    writeFileSync(path.join(ws.dir, 'new.md'), '# New\n');
    unlinkSync(path.join(ws.dir, 'gone.txt'));
    mkdirSync(path.join(ws.dir, 'build'));
    writeFileSync(path.join(ws.dir, 'build/out.js'), 'x\n');
    writeFileSync(path.join(ws.dir, 'img.bin'), Buffer.from([0, 9, 9, 9]));
    const d = await diffAgainstBaseline(ws, { maxBytes: 65536 });
    expect(d.truncated).toBe(false);
    expect(d.text).toContain('+two');
    expect(d.text).toContain('diff --git a/new.md b/new.md');
    expect(d.text).toContain('deleted file mode');
    expect(d.text).toContain('b/build/out.js');
    expect(d.text).toMatch(/Binary files a\/img\.bin and b\/img\.bin differ/);
    expect(d.text).not.toContain('.git/');
    // The workspace's repository: same HEAD, and it sees the agent's changes as its own.
    expect(git(ws.dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(ws.dir, 'status', '--porcelain')).toContain('?? new.md');
    // A second diff gives the same answer: the baseline's index is never changed.
    expect((await diffAgainstBaseline(ws, { maxBytes: 65536 })).text).toBe(d.text);
  });

  it('cuts the diff at max lines and max bytes, counting the rest', async () => {
    const ws = workspace({ 'a.txt': '' });
    await commitBaseline(ws);
    writeFileSync(path.join(ws.dir, 'a.txt'), Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n'));
    const byLines = await diffAgainstBaseline(ws, { maxBytes: 1 << 20, maxLines: 10 });
    expect(byLines.truncated).toBe(true);
    expect(byLines.text.split('\n').filter((l) => !l.startsWith('[skill-up')).length).toBeLessThanOrEqual(11);
    expect(byLines.lines).toBeGreaterThan(5000);
    const byBytes = await diffAgainstBaseline(ws, { maxBytes: 2048 });
    expect(byBytes.truncated).toBe(true);
    expect(Buffer.byteLength(byBytes.text)).toBeLessThan(2048 + 200);
    expect(byBytes.text).toMatch(/\[skill-up: diff cut here; the whole diff has \d+ line\(s\), \d+ byte\(s\)\]/);
  });

  it("leaves skill-up's own top-level .skill-up/ out of the baseline and the diff (a nested one is the agent's)", async () => {
    const ws = workspace({ 'a.txt': 'x\n', '.skill-up/session-input.json': '{"before":1}' });
    await commitBaseline(ws);
    writeFileSync(path.join(ws.dir, '.skill-up/session-input.json'), '{"after":2}');
    writeFileSync(path.join(ws.dir, '.skill-up/new.json'), '{}');
    mkdirSync(path.join(ws.dir, 'sub/.skill-up'), { recursive: true });
    writeFileSync(path.join(ws.dir, 'sub/.skill-up/mine.txt'), 'agent\n');
    writeFileSync(path.join(ws.dir, 'a.txt'), 'y\n');
    const d = await diffAgainstBaseline(ws, { maxBytes: 65536 });
    expect(d.text).toContain('b/a.txt');
    expect(d.text).toContain('b/sub/.skill-up/mine.txt');
    expect(d.text).not.toMatch(/ b\/\.skill-up\//);
    expect(d.text).not.toContain('session-input.json');
  });

  it('without a baseline the diff fails with git named', async () => {
    const ws = workspace({ 'a.txt': 'x' });
    await expect(diffAgainstBaseline(ws, { maxBytes: 1024 })).rejects.toThrow(/git/);
  });
});
