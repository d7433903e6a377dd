import { chmod, cp, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { CaseContext } from '../../src/config/types.js';
import { createWorkspace, sanitiseId, WorkspaceError, type Workspace } from '../../src/runtime/workspace.js';

const FIXTURES = path.resolve(__dirname, 'fixtures');
const ISOLATED = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };

let tmp: string;
let n = 0;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'skill-up-rt-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

/** A fresh, empty root folder per test so leftovers can be counted. */
async function newRoot(): Promise<string> {
  const root = path.join(tmp, `root-${++n}`);
  await mkdir(root, { recursive: true });
  return root;
}

function ctx(partial: Partial<CaseContext> = {}): CaseContext {
  return { files: {}, ...partial };
}

async function make(root: string, context: CaseContext, extra: { setupSteps?: { run: string }[]; env?: Record<string, string>; signal?: AbortSignal } = {}): Promise<Workspace> {
  return createWorkspace({ root, jobId: 'case-1/with_skill/run-1', context, env: extra.env ?? {}, setupSteps: extra.setupSteps ?? [], signal: extra.signal });
}

async function git(dir: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd: dir, env: ISOLATED })).stdout.trim();
}

async function failure(p: Promise<unknown>): Promise<WorkspaceError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(WorkspaceError);
  return e as WorkspaceError;
}

const mode = async (p: string) => (await stat(p)).mode & 0o777;

describe('createWorkspace: folders', () => {
  test('a fresh named folder and a private home beside it; remove() deletes both and is idempotent', async () => {
    const root = await newRoot();
    const ws = await make(root, ctx());
    expect(path.basename(ws.dir)).toMatch(/^skill-up-case-1-with_skill-run-1-[A-Za-z0-9]{6}$/);
    expect(path.dirname(ws.dir)).toBe(root);
    expect(path.dirname(ws.homeDir)).toBe(root);
    expect(ws.homeDir).not.toBe(ws.dir);
    expect(await readdir(ws.dir)).toEqual([]);
    expect(await readdir(ws.homeDir)).toEqual([]);
    expect(await mode(ws.homeDir)).toBe(0o700);
    await ws.remove();
    expect(await readdir(root)).toEqual([]);
    await ws.remove();
  });

  test('two workspaces for the same job never collide', async () => {
    const root = await newRoot();
    const [a, b] = await Promise.all([make(root, ctx()), make(root, ctx())]);
    expect(a.dir).not.toBe(b.dir);
    await Promise.all([a.remove(), b.remove()]);
  });

  test('defaults to the system temp folder', async () => {
    const ws = await createWorkspace({ jobId: 'x', context: ctx(), env: {}, setupSteps: [] });
    expect(path.dirname(ws.dir)).toBe(await import('node:fs/promises').then((m) => m.realpath(os.tmpdir())));
    await ws.remove();
  });

  test('remove() copes with read-only folders left by the agent', async () => {
    const ws = await make(await newRoot(), ctx({ files: { 'cache/pkg/file.txt': 'x' } }));
    await chmod(path.join(ws.dir, 'cache/pkg'), 0o555);
    await chmod(path.join(ws.dir, 'cache'), 0o555);
    await ws.remove();
    await expect(stat(ws.dir)).rejects.toThrow(/ENOENT/);
  });

  test.each([
    ['case-1/with_skill/run-1', 'case-1-with_skill-run-1'],
    ['../../etc', 'etc'],
    ['a  b::c', 'a-b-c'],
    ['', 'job'],
    ['x'.repeat(100), 'x'.repeat(60)],
  ])('sanitiseId(%j) = %j', (id, want) => {
    expect(sanitiseId(id)).toBe(want);
  });
});

describe('createWorkspace: fixture and inline files', () => {
  test('copies repo_fixture keeping modes and symlinks', async () => {
    const fixture = path.join(tmp, 'fx-modes');
    await cp(path.join(FIXTURES, 'repo'), fixture, { recursive: true });
    await chmod(path.join(fixture, 'bin/run.sh'), 0o750);
    await chmod(path.join(fixture, 'README.md'), 0o600);
    await symlink('src/app.py', path.join(fixture, 'app-link'));
    const ws = await make(await newRoot(), ctx({ repoFixture: fixture }));
    expect(await mode(path.join(ws.dir, 'bin/run.sh'))).toBe(0o750);
    expect(await mode(path.join(ws.dir, 'README.md'))).toBe(0o600);
    expect(await readFile(path.join(ws.dir, 'src/app.py'), 'utf8')).toContain('return "hello"');
    expect(await readlink(path.join(ws.dir, 'app-link'))).toBe('src/app.py');
    expect((await execa(path.join(ws.dir, 'bin/run.sh'))).stdout).toBe('run');
    await ws.remove();
  });

  test('a missing fixture is a WorkspaceError and leaves nothing behind', async () => {
    const root = await newRoot();
    const e = await failure(make(root, ctx({ repoFixture: path.join(tmp, 'no-such-fixture') })));
    expect(e.stage).toBe('fixture');
    expect(e.message).toContain('no-such-fixture');
    expect(await readdir(root)).toEqual([]);
  });

  test('inline files are written after the fixture (creating folders, overriding fixture files)', async () => {
    const ws = await make(
      await newRoot(),
      ctx({ repoFixture: path.join(FIXTURES, 'repo'), files: { 'README.md': '# Replaced\n', 'docs/deep/note.txt': 'note' } }),
    );
    expect(await readFile(path.join(ws.dir, 'README.md'), 'utf8')).toBe('# Replaced\n');
    expect(await readFile(path.join(ws.dir, 'docs/deep/note.txt'), 'utf8')).toBe('note');
    await ws.remove();
  });

  test.each(['../escape.txt', 'a/../../escape.txt', '/etc/escape.txt', '.', ''])('inline path %j is refused', async (p) => {
    const root = await newRoot();
    const e = await failure(make(root, ctx({ files: { [p]: 'x' } })));
    expect(e.stage).toBe('files');
    expect(e.message).toMatch(/context.files/);
    expect(await readdir(root)).toEqual([]);
    await expect(stat(path.join(tmp, 'escape.txt'))).rejects.toThrow(/ENOENT/);
  });

  test('an inline path through a fixture symlink leading outside is refused', async () => {
    const fixture = path.join(tmp, 'fx-link');
    await mkdir(path.join(tmp, 'outside-dir'), { recursive: true });
    await mkdir(fixture, { recursive: true });
    await symlink(path.join(tmp, 'outside-dir'), path.join(fixture, 'out'));
    const e = await failure(make(await newRoot(), ctx({ repoFixture: fixture, files: { 'out/pwned.txt': 'x' } })));
    expect(e.message).toMatch(/symbolic link/);
    expect(await readdir(path.join(tmp, 'outside-dir'))).toEqual([]);
  });
});

describe('createWorkspace: git', () => {
  test('init commits the fixture and inline files on main, with a local identity and no global config', async () => {
    // A global config that must NOT leak in.
    const leaky = path.join(tmp, 'leaky.gitconfig');
    await writeFile(leaky, '[user]\n\tname = Leaky\n\temail = leaky@example.com\n[init]\n\tdefaultBranch = trunk\n');
    const saved = process.env.GIT_CONFIG_GLOBAL;
    process.env.GIT_CONFIG_GLOBAL = leaky;
    let ws: Workspace;
    try {
      ws = await make(
        await newRoot(),
        ctx({ repoFixture: path.join(FIXTURES, 'repo'), files: { 'extra.txt': 'x\n' }, git: { init: true, remotes: [] } }),
      );
    } finally {
      if (saved === undefined) delete process.env.GIT_CONFIG_GLOBAL;
      else process.env.GIT_CONFIG_GLOBAL = saved;
    }
    expect(await git(ws.dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(await git(ws.dir, 'rev-list', '--count', 'HEAD')).toBe('1');
    expect(await git(ws.dir, 'log', '-1', '--format=%an <%ae>')).toBe('skill-up <skill-up@localhost>');
    expect(await git(ws.dir, 'status', '--porcelain')).toBe('');
    expect((await git(ws.dir, 'ls-files')).split('\n').sort()).toEqual(['README.md', 'bin/run.sh', 'extra.txt', 'src/app.py']);
    expect(await git(ws.dir, 'ls-files', '-s', 'bin/run.sh')).toMatch(/^100755 /);
    // An agent's commit works with no global identity at all.
    await writeFile(path.join(ws.dir, 'new.txt'), 'n');
    await git(ws.dir, 'add', 'new.txt');
    await git(ws.dir, 'commit', '-qm', 'agent');
    expect(await git(ws.dir, 'rev-list', '--count', 'HEAD')).toBe('2');
    await ws.remove();
  });

  test('init with checkout starts on that branch', async () => {
    const ws = await make(await newRoot(), ctx({ files: { 'a.txt': 'a' }, git: { init: true, checkout: 'feature/x', remotes: [] } }));
    expect(await git(ws.dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('feature/x');
    expect(await git(ws.dir, 'rev-list', '--count', 'HEAD')).toBe('1');
    await ws.remove();
  });

  test('init of an empty workspace still makes an initial commit', async () => {
    const ws = await make(await newRoot(), ctx({ git: { init: true, remotes: [] } }));
    expect(await git(ws.dir, 'rev-list', '--count', 'HEAD')).toBe('1');
    await ws.remove();
  });

  test('checkout on a fixture repository: switches to an existing branch, creates a missing one', async () => {
    const fixture = path.join(tmp, 'fx-repo');
    await cp(path.join(FIXTURES, 'repo'), fixture, { recursive: true });
    await execa('git', ['init', '-q', '-b', 'main'], { cwd: fixture, env: ISOLATED });
    await execa('git', ['add', '-A'], { cwd: fixture, env: ISOLATED });
    await execa('git', ['-c', 'user.name=f', '-c', 'user.email=f@f', 'commit', '-qm', 'one'], { cwd: fixture, env: ISOLATED });
    await execa('git', ['branch', 'release'], { cwd: fixture, env: ISOLATED });

    const existing = await make(await newRoot(), ctx({ repoFixture: fixture, git: { init: false, checkout: 'release', remotes: [] } }));
    expect(await git(existing.dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('release');
    expect(await git(existing.dir, 'branch', '--list', 'release')).toContain('release');

    const created = await make(await newRoot(), ctx({ repoFixture: fixture, git: { init: false, checkout: 'dev', remotes: [] } }));
    expect(await git(created.dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('dev');
    expect(await git(created.dir, 'rev-parse', 'dev')).toBe(await git(created.dir, 'rev-parse', 'main'));
    await existing.remove();
    await created.remove();
  });

  test('apply_diff patches the committed fixture, leaving the change uncommitted', async () => {
    const ws = await make(
      await newRoot(),
      ctx({
        repoFixture: path.join(FIXTURES, 'repo'),
        git: { init: true, checkout: 'bugfix', applyDiff: path.join(FIXTURES, 'fix.patch'), remotes: [] },
      }),
    );
    expect(await readFile(path.join(ws.dir, 'src/app.py'), 'utf8')).toBe('def greet():\n    return "hello, patched"\n');
    expect(await readFile(path.join(ws.dir, 'NEW.md'), 'utf8')).toBe('new file\n');
    expect(await git(ws.dir, 'ls-files', '--others', '--exclude-standard')).toBe('NEW.md');
    expect(await git(ws.dir, 'diff', '--name-only')).toBe('src/app.py');
    expect(await git(ws.dir, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('bugfix');
    await ws.remove();
  });

  test('a patch that does not apply is a git WorkspaceError quoting git', async () => {
    const root = await newRoot();
    const e = await failure(
      make(root, ctx({ files: { 'src/app.py': 'other\n' }, git: { init: true, applyDiff: path.join(FIXTURES, 'fix.patch'), remotes: [] } })),
    );
    expect(e.stage).toBe('git');
    expect(e.message).toMatch(/git apply/);
    expect(e.message).toMatch(/patch does not apply|patch failed/);
    expect(await readdir(root)).toEqual([]);
  });

  test('a missing patch file is reported', async () => {
    const e = await failure(make(await newRoot(), ctx({ git: { init: true, applyDiff: path.join(tmp, 'none.patch'), remotes: [] } })));
    expect(e.message).toMatch(/patch file not found/);
  });

  test('remotes are added', async () => {
    const ws = await make(
      await newRoot(),
      ctx({ git: { init: true, remotes: [{ name: 'origin', url: 'https://example.com/a.git' }, { name: 'up', url: '/srv/up.git' }] } }),
    );
    expect(await git(ws.dir, 'remote', 'get-url', 'origin')).toBe('https://example.com/a.git');
    expect(await git(ws.dir, 'remote', 'get-url', 'up')).toBe('/srv/up.git');
    await ws.remove();
  });

  test('checkout without a repository fails clearly, even when the root is inside another repository', async () => {
    const root = await newRoot();
    await execa('git', ['init', '-q'], { cwd: root, env: ISOLATED }); // an outer repo git must not discover
    const e = await failure(make(root, ctx({ git: { init: false, checkout: 'x', remotes: [] } })));
    expect(e.stage).toBe('git');
    expect(e.message).toMatch(/needs a git repository/);
    expect((await readdir(root)).filter((f) => f !== '.git')).toEqual([]);
  });
});

describe('createWorkspace: setup steps', () => {
  test('steps run in order with bash in the workspace, with the suite env and the private HOME', async () => {
    const ws = await make(await newRoot(), ctx({ files: { 'in.txt': 'input' } }), {
      env: { GREETING: 'hi there' },
      setupSteps: [
        { run: 'echo "$GREETING" > out.txt; cat in.txt >> out.txt; echo >> out.txt' },
        { run: 'echo "home=$HOME" >> out.txt; echo "pwd=$(pwd)" >> out.txt\n[[ -n "$GIT_CONFIG_NOSYSTEM" ]] && echo isolated >> out.txt' },
      ],
    });
    expect(await readFile(path.join(ws.dir, 'out.txt'), 'utf8')).toBe(`hi there\ninput\nhome=${ws.homeDir}\npwd=${ws.dir}\nisolated\n`);
    await ws.remove();
  });

  test('a failing step throws with the step, its exit code and the last lines of stderr; later steps do not run', async () => {
    const root = await newRoot();
    const e = await failure(
      make(root, ctx(), {
        setupSteps: [
          { run: 'true' },
          { run: 'for i in $(seq 1 30); do echo "err line $i" >&2; done; exit 3' },
          { run: 'touch never' },
        ],
      }),
    );
    expect(e.stage).toBe('setup');
    expect(e.message).toMatch(/^setup step 2 \(`for i in/);
    expect(e.message).toContain('exited with code 3');
    expect(e.message).toContain('err line 30');
    expect(e.message).toContain('err line 11');
    expect(e.message).not.toContain('err line 10\n');
    expect(await readdir(root)).toEqual([]);
  });

  test('stdout is shown when a failing step wrote nothing to stderr', async () => {
    const e = await failure(make(await newRoot(), ctx(), { setupSteps: [{ run: 'echo only-stdout; exit 1' }] }));
    expect(e.message).toContain('only-stdout');
  });

  test('aborting the signal stops a running step', async () => {
    const root = await newRoot();
    const pidFile = path.join(tmp, `step-${n}.pid`);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    // The step outlasts the test's timeout: only a kill ends it in time.
    const e = await failure(make(root, ctx(), { setupSteps: [{ run: `echo $$ > '${pidFile}'; exec sleep 300` }], signal: ac.signal }));
    expect(e.stage).toBe('cancelled');
    const pid = Number(await readFile(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    expect(await readdir(root)).toEqual([]);
  });

  test('an already-aborted signal prepares nothing', async () => {
    const e = await failure(make(await newRoot(), ctx({ files: { a: 'a' } }), { signal: AbortSignal.abort() }));
    expect(e.stage).toBe('cancelled');
  });
});

test('lstat sanity: workspace paths are real paths', async () => {
  const ws = await make(await newRoot(), ctx());
  expect((await lstat(ws.dir)).isDirectory()).toBe(true);
  await ws.remove();
});
