/**
 * The local runtime: one fresh temporary workspace per job, prepared from a case's
 * `context` (fixture, inline files, git) and the suite's `setup_steps`.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, readlink, realpath, rm, stat, chmod, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { CaseContext } from '../config/types.js';
import { isInside, realpathNearest } from '../util/contain.js';
import { killGroup, trackGroup, untrackGroup } from '../engine/proc.js';
import { minimalEnv } from '../engine/env.js';
import { removeTrees } from './removal.js';

/** A prepared workspace. Both folders are absolute, real (symlink-free) paths. */
export interface Workspace {
  /** The job's working directory: the engine runs here. */
  dir: string;
  /** A private, initially empty folder (mode 0700) beside `dir`, used as the engine's HOME. */
  homeDir: string;
  /** Deletes `dir` and `homeDir` (after {@link Workspace.stopBackground}); succeeds when they are already gone. */
  remove(): Promise<void>;
  /**
   * Kills what setup steps left running in the background (a service started with `&`):
   * their process groups, which until then are killed with skill-up however it ends
   * (engine/reaper.ts). Called at the end of the job, whether the workspace is kept or not.
   */
  stopBackground(): void;
}

export interface CreateWorkspaceOptions {
  /** Parent folder for the workspace; default `os.tmpdir()`. Created when missing. */
  root?: string;
  /** The job's id; sanitised into the folder name. */
  jobId: string;
  context: CaseContext;
  /**
   * The skill folder. A fixture's symbolic link to a place outside the fixture but inside
   * this folder is copied as the file or folder it points to; one leading outside it is
   * refused. Without it, links must stay inside the fixture.
   */
  skillDir?: string;
  /** `environment.env` of the suite (expanded), given to setup steps on top of the common base of the process environment. */
  env: Record<string, string>;
  /** `environment.setup_steps`, each run with `bash -c` in the workspace, in order. */
  setupSteps: { run: string }[];
  /** Aborting stops the running step and fails with a `cancelled` WorkspaceError. */
  signal?: AbortSignal;
}

/** The stage of workspace preparation that failed. */
export type WorkspaceStage = 'create' | 'fixture' | 'files' | 'git' | 'setup' | 'cancelled';

/** Preparing a workspace failed; the caller reports the job as `error` with this message. */
export class WorkspaceError extends Error {
  constructor(
    message: string,
    readonly stage: WorkspaceStage,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WorkspaceError';
  }
}

/** Identity written into every workspace repository, so commits work without a global git config. */
export const GIT_IDENTITY = { name: 'skill-up', email: 'skill-up@localhost' } as const;

/** Variables that would point git at another repository; never inherited. */
const GIT_REPO_VARS = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
];

/**
 * The environment for git and setup steps in a workspace: the common base of skill-up's
 * environment (src/engine/env.ts `minimalEnv`: PATH, locale, proxies, …; never its credentials)
 * without variables that redirect git, the `extra` variables, then git isolation
 * (`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`, no discovery above the
 * workspace, no terminal prompts) and `HOME=homeDir`.
 */
export function workspaceEnv(ws: { dir: string; homeDir: string }, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  // The common base only (src/engine/env.ts), never skill-up's whole environment; the suite's
  // environment.env comes in `extra`.
  for (const [k, v] of Object.entries(minimalEnv(process.env))) {
    if (v !== undefined && !GIT_REPO_VARS.includes(k) && !k.startsWith('GIT_CONFIG_KEY_') && !k.startsWith('GIT_CONFIG_VALUE_')) env[k] = v;
  }
  Object.assign(env, extra);
  env.HOME = ws.homeDir;
  env.GIT_CONFIG_GLOBAL = '/dev/null';
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_CEILING_DIRECTORIES = path.dirname(ws.dir);
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

/**
 * Creates a fresh workspace for one job and prepares it, in this order:
 * 1. `context.repoFixture` copied in (file modes kept; symbolic links as {@link copyFixture} says);
 * 2. `context.files` written (parent folders created; a path that is absolute or escapes
 *    the workspace is refused);
 * 3. `context.git`: `init` (`git init -b <checkout or main>`, a local user.name/user.email,
 *    then everything so far committed as the initial commit), `checkout` (the branch is
 *    created when missing), `applyDiff` (`git apply`; the changes stay uncommitted),
 *    `remotes` (`git remote add`, or `set-url` when the name exists);
 * 4. `setupSteps`, each `bash -c <run>` in the workspace with {@link workspaceEnv}
 *    (`HOME` is the workspace's private home).
 *
 * The folder is `<root>/skill-up-<sanitised jobId>-<random>`; `homeDir` is the same name
 * with `-home`. git always runs with the user's global and system config ignored.
 *
 * @throws WorkspaceError on any failure (its `stage` says which step; setup failures name
 *   the step, its exit code and the last lines of its output). The folders are removed
 *   before the error is thrown.
 */
export async function createWorkspace(opts: CreateWorkspaceOptions): Promise<Workspace> {
  const root = path.resolve(opts.root ?? os.tmpdir());
  let dir: string;
  let homeDir: string;
  try {
    // The root's real path is resolved once per run; a new folder made in it is real too, so
    // each job costs two calls: mkdtemp and the home's mkdir. Direct system calls: through the
    // thread pool each would cost a thread hand-off on both sides (issue 13).
    const prefix = `skill-up-${sanitiseId(opts.jobId)}-`;
    const real = await realRoot(root);
    try {
      dir = mkdtempSync(path.join(real, prefix));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      // The root went away during the run: made again.
      realRoots.delete(root);
      dir = mkdtempSync(path.join(await realRoot(root), prefix));
    }
    homeDir = `${dir}-home`;
    mkdirSync(homeDir, { mode: 0o700 });
  } catch (e) {
    throw new WorkspaceError(`cannot create a workspace under ${root}: ${(e as Error).message}`, 'create', { cause: e });
  }
  const background = new Set<number>();
  const stopBackground = () => {
    for (const g of background) {
      killGroup(g, 'SIGKILL');
      untrackGroup(g);
    }
    background.clear();
  };
  const ws: Workspace = {
    dir,
    homeDir,
    stopBackground,
    remove: () => {
      stopBackground();
      return removeAll([dir, homeDir]);
    },
  };
  try {
    await prepare(ws, opts, background);
    return ws;
  } catch (e) {
    await ws.remove().catch(() => undefined);
    if (e instanceof WorkspaceError) throw e;
    throw new WorkspaceError(`cannot prepare the workspace: ${(e as Error).message}`, 'create', { cause: e });
  }
}

async function prepare(ws: Workspace, opts: CreateWorkspaceOptions, background: Set<number>): Promise<void> {
  const { context, signal } = opts;
  const checkCancel = () => {
    if (signal?.aborted) throw new WorkspaceError('workspace preparation was cancelled', 'cancelled');
  };

  checkCancel();
  if (context.repoFixture) await copyFixture(context.repoFixture, ws.dir, opts.skillDir);

  checkCancel();
  for (const [rel, content] of Object.entries(context.files ?? {})) await writeInlineFile(ws.dir, rel, content);

  checkCancel();
  if (context.git) await prepareGit(ws, context.git, signal);

  if (opts.setupSteps.length === 0) return;
  const env = workspaceEnv(ws, opts.env);
  for (const [i, step] of opts.setupSteps.entries()) {
    checkCancel();
    await runSetupStep(ws.dir, env, step.run, i, background, signal);
  }
}

/**
 * Copies the fixture folder into `dir`: folders, regular files (modes kept) and symbolic
 * links, which are never allowed to lead the agent out of its workspace:
 * - a link to a place inside the fixture stays a link, made relative, so the copy points
 *   into the workspace's copy (an absolute link would point back at the skill's own files);
 * - a link to a place outside the fixture but inside the skill folder is copied as what it
 *   points to (a file, or a folder copied by these same rules);
 * - a link leading outside the skill folder (or dangling outside the fixture) is refused:
 *   `repo_fixture <fixture> holds a symbolic link <rel> to <target>, outside the skill folder`.
 * Sockets, FIFOs and devices are refused too (reading a FIFO would block).
 *
 * @throws WorkspaceError (stage `fixture`).
 */
async function copyFixture(fixture: string, dir: string, skillDir?: string): Promise<void> {
  const src = path.resolve(fixture);
  let root: string;
  try {
    const st = await stat(src);
    if (!st.isDirectory()) throw new Error('not a folder');
    root = await realpath(src);
  } catch (e) {
    throw new WorkspaceError(`repo_fixture ${src} is not a readable folder: ${(e as Error).message}`, 'fixture', { cause: e });
  }
  const skill = skillDir ? await realpath(skillDir).catch(() => undefined) : undefined;
  const boundary = skill && isInside(skill, root) ? skill : root;
  const c: FixtureCopy = { fixture: src, root, dest: dir, boundary, boundaryName: boundary === root ? 'the fixture' : 'the skill folder', open: [root] };
  try {
    await copyTree(root, dir, '', c);
  } catch (e) {
    if (e instanceof WorkspaceError) throw e;
    throw new WorkspaceError(`cannot copy repo_fixture ${src} into the workspace: ${(e as Error).message}`, 'fixture', { cause: e });
  }
}

/** What {@link copyTree} needs: the fixture's real root, the workspace, how far links may lead. */
interface FixtureCopy {
  /** The fixture as configured (for messages). */
  fixture: string;
  /** Its real path. */
  root: string;
  /** The workspace folder receiving the copy. */
  dest: string;
  /** Links may be copied (dereferenced) from inside this folder: the skill folder, or the fixture. */
  boundary: string;
  boundaryName: string;
  /** Real paths of the folders being copied now (a link back to one of them is a cycle). */
  open: string[];
}

async function copyTree(from: string, to: string, rel: string, c: FixtureCopy): Promise<void> {
  const entries = await readdir(from, { withFileTypes: true });
  for (const e of entries) {
    const s = path.join(from, e.name);
    const d = path.join(to, e.name);
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) await copyFolder(s, d, r, c);
    else if (e.isFile()) await copyFile(s, d);
    else if (e.isSymbolicLink()) await copyLink(s, d, r, c);
    else throw new WorkspaceError(`repo_fixture ${c.fixture} holds ${r}, which is not a regular file, folder or symbolic link`, 'fixture');
  }
}

async function copyFolder(from: string, to: string, rel: string, c: FixtureCopy): Promise<void> {
  await mkdir(to);
  await copyTree(from, to, rel, c);
  // Its mode last: a read-only folder of the fixture must still receive its contents.
  await chmod(to, (await stat(from)).mode & 0o7777);
}

async function copyLink(link: string, to: string, rel: string, c: FixtureCopy): Promise<void> {
  const refuse = (target: string, why: string) =>
    new WorkspaceError(`repo_fixture ${c.fixture} holds a symbolic link ${rel} to ${target}, ${why}`, 'fixture');
  let target: string;
  try {
    target = await realpathNearest(link);
  } catch (e) {
    throw refuse(await readlink(link).catch(() => '?'), `which cannot be followed: ${(e as Error).message}`);
  }
  if (isInside(c.root, target)) {
    // Into the copy, wherever it lies in the fixture (and dangling there: it stays dangling inside).
    const mapped = path.join(c.dest, path.relative(c.root, target));
    await symlink(path.relative(path.dirname(to), mapped) || '.', to);
    return;
  }
  if (!isInside(c.boundary, target)) throw refuse(target, `outside ${c.boundaryName} ${c.boundary}`);
  const st = await stat(target).catch(() => undefined);
  if (!st) throw refuse(target, 'outside the fixture, which does not exist');
  if (st.isFile()) await copyFile(target, to);
  else if (st.isDirectory()) {
    if (c.open.some((o) => isInside(target, o))) throw refuse(target, 'a folder that holds the link itself (a cycle)');
    await copyFolder(target, to, rel, { ...c, open: [...c.open, target] });
  } else throw refuse(target, 'which is not a regular file or folder');
}

async function writeInlineFile(dir: string, rel: string, content: string): Promise<void> {
  const fail = (why: string, cause?: unknown) =>
    new WorkspaceError(`context.files \`${rel}\`: ${why}`, 'files', cause === undefined ? undefined : { cause });
  if (rel.trim() === '' || path.isAbsolute(rel) || /^[A-Za-z]:[\\/]/.test(rel)) {
    throw fail('the path must be relative to the workspace');
  }
  const target = path.resolve(dir, rel);
  if (!isInside(dir, target) || target === dir) throw fail('the path escapes the workspace');
  try {
    await mkdir(path.dirname(target), { recursive: true });
  } catch (e) {
    throw fail(`cannot create its folder: ${(e as Error).message}`, e);
  }
  // A symlinked parent folder (from the fixture) must not lead outside the workspace.
  const realParent = await realpath(path.dirname(target));
  if (!isInside(dir, realParent)) throw fail('the path leads outside the workspace through a symbolic link');
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isSymbolicLink()) await rm(target, { force: true });
  if (existing?.isDirectory()) throw fail('a folder already exists at this path');
  try {
    await writeFile(target, content);
  } catch (e) {
    throw fail(`cannot write: ${(e as Error).message}`, e);
  }
}

async function prepareGit(ws: Workspace, git: NonNullable<CaseContext['git']>, signal?: AbortSignal): Promise<void> {
  const env = workspaceEnv(ws);
  const run = (args: string[]) => runGit(ws.dir, env, args, signal);
  const ok = async (args: string[]) => (await gitResult(ws.dir, env, args, signal)).exitCode === 0;

  if (git.init) {
    await run(['init', '-q', '-b', git.checkout ?? 'main']);
  }
  const isRepo = await ok(['rev-parse', '--git-dir']);
  if (isRepo) {
    if (!(await ok(['config', '--local', '--get', 'user.email']))) await run(['config', 'user.email', GIT_IDENTITY.email]);
    if (!(await ok(['config', '--local', '--get', 'user.name']))) await run(['config', 'user.name', GIT_IDENTITY.name]);
    await run(['config', 'commit.gpgsign', 'false']);
  }
  if (git.init) {
    const hasHead = await ok(['rev-parse', '--verify', '--quiet', 'HEAD']);
    const dirty = (await gitResult(ws.dir, env, ['status', '--porcelain'], signal)).stdout.trim() !== '';
    if (!hasHead || dirty) {
      await run(['add', '-A']);
      await run(['commit', '-q', '--allow-empty', '--no-verify', '-m', hasHead ? 'skill-up: fixture changes' : 'skill-up: initial fixture']);
    }
  }

  const needRepo = (what: string) => {
    if (!isRepo) {
      throw new WorkspaceError(
        `context.git.${what} needs a git repository: set git.init: true or use a repo_fixture that contains .git`,
        'git',
      );
    }
  };

  if (git.checkout) {
    needRepo('checkout');
    const current = (await gitResult(ws.dir, env, ['symbolic-ref', '--quiet', '--short', 'HEAD'], signal)).stdout.trim();
    if (current !== git.checkout) {
      const exists = await ok(['rev-parse', '--verify', '--quiet', `refs/heads/${git.checkout}`]);
      await run(exists ? ['checkout', '-q', git.checkout] : ['checkout', '-q', '-b', git.checkout]);
    }
  }

  if (git.applyDiff) {
    const patch = path.resolve(git.applyDiff);
    const st = await stat(patch).catch(() => undefined);
    if (!st?.isFile()) throw new WorkspaceError(`context.git.apply_diff: patch file not found: ${patch}`, 'git');
    await run(['apply', '--whitespace=nowarn', patch]);
  }

  for (const remote of git.remotes ?? []) {
    needRepo('remotes');
    const exists = await ok(['remote', 'get-url', remote.name]);
    await run(exists ? ['remote', 'set-url', remote.name, remote.url] : ['remote', 'add', remote.name, remote.url]);
  }
}

async function gitResult(cwd: string, env: Record<string, string>, args: string[], signal?: AbortSignal) {
  try {
    // Loaded on first use: a dry run or `validate` never starts git (execa is 100+ modules).
    const { execa } = await import('execa');
    const r = await execa('git', args, { cwd, env, extendEnv: false, reject: false, stdin: 'ignore', cancelSignal: signal });
    if (r.isCanceled) throw new WorkspaceError('workspace preparation was cancelled', 'cancelled');
    if (r.exitCode === undefined) throw new Error(r.message);
    return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    if (e instanceof WorkspaceError) throw e;
    throw new WorkspaceError(`cannot run git (is it installed and on PATH?): ${(e as Error).message}`, 'git', { cause: e });
  }
}

async function runGit(cwd: string, env: Record<string, string>, args: string[], signal?: AbortSignal): Promise<void> {
  const r = await gitResult(cwd, env, args, signal);
  if (r.exitCode !== 0) {
    const out = tail(r.stderr || r.stdout, 10);
    throw new WorkspaceError(`\`git ${args.join(' ')}\` failed with exit code ${r.exitCode}${out ? `:\n${out}` : ''}`, 'git');
  }
}

/**
 * Runs one setup step in a process group of its own, tracked (engine/proc.ts trackGroup) so
 * it dies with skill-up however skill-up ends. Cancelling kills the whole group. When the
 * step exits, what it left in the background keeps running for the agent, still tracked in
 * `background`, until the job ends (Workspace.stopBackground).
 */
async function runSetupStep(cwd: string, env: Record<string, string>, run: string, index: number, background: Set<number>, signal?: AbortSignal): Promise<void> {
  const label = `setup step ${index + 1} (\`${oneLine(run)}\`)`;
  let r;
  let pid: number | undefined;
  const onAbort = () => killGroup(pid, 'SIGKILL');
  try {
    const { execa } = await import('execa');
    const child = execa('bash', ['-c', run], { cwd, env, extendEnv: false, reject: false, stdin: 'ignore', cancelSignal: signal, detached: true });
    pid = child.pid;
    if (pid) {
      trackGroup(pid);
      background.add(pid);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    r = await child;
  } catch (e) {
    throw new WorkspaceError(`${label} could not start: ${(e as Error).message}`, 'setup', { cause: e });
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (pid && !groupAlive(pid)) {
      // Nothing left in the background: forget the group now (its number may be reused).
      untrackGroup(pid);
      background.delete(pid);
    }
  }
  if (r.isCanceled) throw new WorkspaceError(`${label} was cancelled`, 'cancelled');
  if (r.exitCode === 0) return;
  const how =
    r.exitCode !== undefined ? `exited with code ${r.exitCode}` : r.signal ? `was killed by ${r.signal}` : `failed: ${r.shortMessage}`;
  const out = tail(r.stderr, 20) || tail(r.stdout, 20);
  throw new WorkspaceError(`${label} ${how}${out ? `; last output:\n${out}` : ''}`, 'setup');
}

/** True while process group `pgid` has a member. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Turns a job id into a safe folder-name fragment (at most 60 characters). */
export function sanitiseId(jobId: string): string {
  const s = jobId
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-');
  // Trimmed by hand: `[-.]+$` is quadratic on a long run of dots.
  return trimEdges(trimEdges(s, '-.').slice(0, 60), '-.') || 'job';
}

/** `s` without leading and trailing characters from `chars`. */
function trimEdges(s: string, chars: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && chars.includes(s[a]!)) a++;
  while (b > a && chars.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

/** Real paths of workspace roots, each resolved (and created when missing) once per process. */
const realRoots = new Map<string, Promise<string>>();

/** The real path of `root`, created when missing; resolved once (a failure is not kept). */
function realRoot(root: string): Promise<string> {
  let p = realRoots.get(root);
  if (!p) {
    p = mkdir(root, { recursive: true }).then(() => realpath(root));
    p.catch(() => realRoots.delete(root));
    realRoots.set(root, p);
  }
  return p;
}

/** Deletes folders recursively (src/runtime/removal.ts removeTrees: read-only folders made writable). Missing folders are fine. */
async function removeAll(dirs: string[]): Promise<void> {
  await removeTrees(dirs);
}

function tail(text: string | undefined, lines: number): string {
  if (!text) return '';
  const all = text.trimEnd().split(/\r?\n/);
  return all.slice(-lines).join('\n');
}

function oneLine(cmd: string): string {
  const first = cmd.trim().split('\n')[0] ?? '';
  const short = first.length > 80 ? `${first.slice(0, 77)}...` : first;
  return cmd.trim().includes('\n') ? `${short} …` : short;
}
