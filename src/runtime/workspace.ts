/**
 * The local runtime: one fresh temporary workspace per job, prepared from a case's
 * `context` (fixture, inline files, git) and the suite's `setup_steps`.
 */
import { cp, lstat, mkdir, mkdtemp, readdir, realpath, rm, stat, chmod, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { CaseContext } from '../config/types.js';
import { isInside } from '../skill/files.js';

/** A prepared workspace. Both folders are absolute, real (symlink-free) paths. */
export interface Workspace {
  /** The job's working directory: the engine runs here. */
  dir: string;
  /** A private, initially empty folder (mode 0700) beside `dir`, used as the engine's HOME. */
  homeDir: string;
  /** Deletes `dir` and `homeDir`; succeeds when they are already gone. */
  remove(): Promise<void>;
}

export interface CreateWorkspaceOptions {
  /** Parent folder for the workspace; default `os.tmpdir()`. Created when missing. */
  root?: string;
  /** The job's id; sanitised into the folder name. */
  jobId: string;
  context: CaseContext;
  /** `environment.env` of the suite, given to setup steps (on top of the process environment). */
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
 * The environment for git and setup steps in a workspace: the process environment without
 * variables that redirect git, the `extra` variables, then git isolation
 * (`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`, no discovery above the
 * workspace, no terminal prompts) and `HOME=homeDir`.
 */
export function workspaceEnv(ws: { dir: string; homeDir: string }, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
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
 * 1. `context.repoFixture` copied in (file modes and symlinks kept);
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
    await mkdir(root, { recursive: true });
    dir = await realpath(await mkdtemp(path.join(root, `skill-up-${sanitiseId(opts.jobId)}-`)));
    homeDir = `${dir}-home`;
    await mkdir(homeDir, { mode: 0o700 });
  } catch (e) {
    throw new WorkspaceError(`cannot create a workspace under ${root}: ${(e as Error).message}`, 'create', { cause: e });
  }
  const ws: Workspace = { dir, homeDir, remove: () => removeAll([dir, homeDir]) };
  try {
    await prepare(ws, opts);
    return ws;
  } catch (e) {
    await ws.remove().catch(() => undefined);
    if (e instanceof WorkspaceError) throw e;
    throw new WorkspaceError(`cannot prepare the workspace: ${(e as Error).message}`, 'create', { cause: e });
  }
}

async function prepare(ws: Workspace, opts: CreateWorkspaceOptions): Promise<void> {
  const { context, signal } = opts;
  const checkCancel = () => {
    if (signal?.aborted) throw new WorkspaceError('workspace preparation was cancelled', 'cancelled');
  };

  checkCancel();
  if (context.repoFixture) await copyFixture(context.repoFixture, ws.dir);

  checkCancel();
  for (const [rel, content] of Object.entries(context.files ?? {})) await writeInlineFile(ws.dir, rel, content);

  checkCancel();
  if (context.git) await prepareGit(ws, context.git, signal);

  const env = workspaceEnv(ws, opts.env);
  for (const [i, step] of opts.setupSteps.entries()) {
    checkCancel();
    await runSetupStep(ws.dir, env, step.run, i, signal);
  }
}

async function copyFixture(fixture: string, dir: string): Promise<void> {
  const src = path.resolve(fixture);
  try {
    const st = await stat(src);
    if (!st.isDirectory()) throw new Error('not a folder');
  } catch (e) {
    throw new WorkspaceError(`repo_fixture ${src} is not a readable folder: ${(e as Error).message}`, 'fixture', { cause: e });
  }
  try {
    await cp(src, dir, { recursive: true, verbatimSymlinks: true, force: true });
  } catch (e) {
    throw new WorkspaceError(`cannot copy repo_fixture ${src} into the workspace: ${(e as Error).message}`, 'fixture', { cause: e });
  }
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

async function runSetupStep(cwd: string, env: Record<string, string>, run: string, index: number, signal?: AbortSignal): Promise<void> {
  const label = `setup step ${index + 1} (\`${oneLine(run)}\`)`;
  let r;
  try {
    r = await execa('bash', ['-c', run], { cwd, env, extendEnv: false, reject: false, stdin: 'ignore', cancelSignal: signal });
  } catch (e) {
    throw new WorkspaceError(`${label} could not start: ${(e as Error).message}`, 'setup', { cause: e });
  }
  if (r.isCanceled) throw new WorkspaceError(`${label} was cancelled`, 'cancelled');
  if (r.exitCode === 0) return;
  const how =
    r.exitCode !== undefined ? `exited with code ${r.exitCode}` : r.signal ? `was killed by ${r.signal}` : `failed: ${r.shortMessage}`;
  const out = tail(r.stderr, 20) || tail(r.stdout, 20);
  throw new WorkspaceError(`${label} ${how}${out ? `; last output:\n${out}` : ''}`, 'setup');
}

/** Turns a job id into a safe folder-name fragment (at most 60 characters). */
export function sanitiseId(jobId: string): string {
  const s = jobId
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 60)
    .replace(/[-.]+$/, '');
  return s || 'job';
}

/** Deletes folders recursively; read-only sub-folders are made writable first. Missing folders are fine. */
async function removeAll(dirs: string[]): Promise<void> {
  for (const dir of dirs) {
    try {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      await makeWritable(dir);
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }
}

async function makeWritable(dir: string): Promise<void> {
  const st = await lstat(dir).catch(() => undefined);
  if (!st?.isDirectory()) return;
  await chmod(dir, 0o700).catch(() => undefined);
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) if (e.isDirectory()) await makeWritable(path.join(dir, e.name));
}

function tail(text: string | undefined, lines: number): string {
  if (!text) return '';
  const all = text.replace(/\s+$/, '').split(/\r?\n/);
  return all.slice(-lines).join('\n');
}

function oneLine(cmd: string): string {
  const first = cmd.trim().split('\n')[0] ?? '';
  const short = first.length > 80 ? `${first.slice(0, 77)}...` : first;
  return cmd.trim().includes('\n') ? `${short} …` : short;
}
