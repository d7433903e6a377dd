/**
 * The workspace's git baseline for `agent_judge`: the prepared workspace (fixture, inline files,
 * git set-up, setup steps and the installed skill) committed, before the agent's first turn,
 * into a PRIVATE git folder outside the workspace (`<homeDir>/.skill-up-baseline.git`,
 * `GIT_DIR` + `GIT_WORK_TREE`), so the grader gets `git diff` of the finished workspace against
 * it. The workspace's own `.git` (a case's `git.init`, a fixture repository) is never touched:
 * git skips every `.git` entry of a work tree, and the baseline has its own index and objects.
 * git runs as for the workspace set-up (src/runtime/workspace.ts `workspaceEnv`): the user's
 * global and system config ignored, no prompts, a fixed identity.
 */
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { GIT_IDENTITY, workspaceEnv } from './workspace.js';

/** The baseline's git folder name inside the job's private home. */
export const BASELINE_GIT_DIR = '.skill-up-baseline.git';

/** Where a workspace's baseline lives: `<homeDir>/.skill-up-baseline.git`. */
export function baselineGitDir(ws: { homeDir: string }): string {
  return path.join(ws.homeDir, BASELINE_GIT_DIR);
}

/** The environment of a baseline git command: the workspace's git isolation plus the private folder. */
function baselineEnv(ws: { dir: string; homeDir: string }, gitDir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...workspaceEnv(ws),
    GIT_DIR: gitDir,
    GIT_WORK_TREE: ws.dir,
    GIT_AUTHOR_NAME: GIT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: GIT_IDENTITY.email,
    GIT_COMMITTER_NAME: GIT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: GIT_IDENTITY.email,
    ...extra,
  };
}

/**
 * What the baseline and the diff leave out: the top-level `.skill-up/` folder, which holds
 * skill-up's own files in a workspace (a custom engine's `session-input.json`, a grader copy's
 * context folder), never the agent's work (src/runtime/changes.ts skips it too).
 */
const OWN_FILES = [':(top,exclude).skill-up'];

/** Options git gets on every baseline command: no hooks, no signing, no filters of the workspace's attributes' making. */
const GIT_OPTS = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgsign=false', '-c', 'core.autocrlf=false', '-c', 'core.excludesFile=/dev/null', '-c', 'core.quotePath=false'];

async function git(ws: { dir: string; homeDir: string }, gitDir: string, args: string[], extra: Record<string, string> = {}, signal?: AbortSignal): Promise<void> {
  // Loaded on first use: a dry run or `validate` never starts git (execa is 100+ modules).
  const { execa } = await import('execa');
  const r = await execa('git', [...GIT_OPTS, ...args], { cwd: ws.dir, env: baselineEnv(ws, gitDir, extra), extendEnv: false, reject: false, stdin: 'ignore', cancelSignal: signal });
  if (r.exitCode !== 0) throw new Error(`\`git ${args.join(' ')}\` (baseline) failed${r.exitCode !== undefined ? ` with exit code ${r.exitCode}` : ''}: ${(r.stderr || r.stdout || r.shortMessage || '').trim().split('\n').slice(-5).join('\n')}`);
}

/**
 * Commits every file of `ws.dir` (ignored ones too: `add --force`; `.git` entries and the
 * top-level `.skill-up/` are never added) into a new repository at `gitDir` (default {@link baselineGitDir}). Returns the git folder.
 * @throws Error naming the git command that failed (git missing, disk full); the caller decides
 *   what the grader then gets (the diff is marked unavailable).
 */
export async function commitBaseline(ws: { dir: string; homeDir: string }, gitDir = baselineGitDir(ws), signal?: AbortSignal): Promise<string> {
  await rm(gitDir, { recursive: true, force: true });
  await mkdir(path.dirname(gitDir), { recursive: true });
  await git(ws, gitDir, ['init', '-q'], {}, signal);
  await git(ws, gitDir, ['add', '--all', '--force', '--', '.', ...OWN_FILES], {}, signal);
  await git(ws, gitDir, ['commit', '-q', '--allow-empty', '--no-verify', '-m', 'skill-up: workspace before the agent ran'], {}, signal);
  return gitDir;
}

/** What {@link diffAgainstBaseline} produced. */
export interface BaselineDiff {
  /** The diff text, cut at the limits (a note ends a cut diff). */
  text: string;
  /** UTF-8 bytes of the diff git produced (counted to the end when cut), and its lines. */
  bytes: number;
  lines: number;
  truncated: boolean;
}

/**
 * `git diff` of the workspace as it is now against the baseline commit: added, modified and
 * deleted files (untracked ones included, through a temporary index that stages everything;
 * the baseline's own index stays as it was). Binary-safe: binary files are named
 * (`Binary files a/x and b/x differ`), never dumped; no external diff or text conversion runs.
 * Memory is bounded: at most `maxBytes` bytes and `maxLines` lines of the output are kept,
 * the rest is counted and the diff marked truncated.
 * @throws Error when git fails (no baseline, git missing).
 */
export async function diffAgainstBaseline(
  ws: { dir: string; homeDir: string },
  opts: { maxBytes: number; maxLines?: number; gitDir?: string; signal?: AbortSignal },
): Promise<BaselineDiff> {
  const gitDir = opts.gitDir ?? baselineGitDir(ws);
  const index = path.join(path.dirname(gitDir), `${path.basename(gitDir)}.diff-index`);
  await rm(index, { force: true });
  try {
    const extra = { GIT_INDEX_FILE: index };
    await git(ws, gitDir, ['read-tree', 'HEAD'], extra, opts.signal);
    await git(ws, gitDir, ['add', '--all', '--force', '--', '.', ...OWN_FILES], extra, opts.signal);
    const { execa } = await import('execa');
    const child = execa('git', [...GIT_OPTS, 'diff', '--cached', '--no-color', '--no-ext-diff', '--no-textconv', '--find-renames', 'HEAD', '--', '.', ...OWN_FILES], {
      cwd: ws.dir,
      env: baselineEnv(ws, gitDir, extra),
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      buffer: false,
      cancelSignal: opts.signal,
    });
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let bytes = 0;
    let lines = 0;
    let keptLines = 0;
    let truncated = false;
    const maxLines = opts.maxLines ?? Infinity;
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      for (const b of chunk) if (b === 10) lines++;
      if (truncated) continue;
      let take = chunk;
      // Cut at the line limit: keep up to and including the maxLines-th newline.
      let nl = 0;
      for (let i = 0; i < take.length; i++) {
        if (take[i] !== 10) continue;
        if (keptLines + ++nl >= maxLines) {
          take = take.subarray(0, i + 1);
          truncated = true;
          break;
        }
      }
      keptLines += nl;
      if (keptBytes + take.length > opts.maxBytes) {
        take = take.subarray(0, Math.max(0, opts.maxBytes - keptBytes));
        truncated = true;
      }
      kept.push(take);
      keptBytes += take.length;
    }
    const r = await child;
    if (r.exitCode !== 0) throw new Error(`\`git diff\` against the baseline failed${r.exitCode !== undefined ? ` with exit code ${r.exitCode}` : ''}`);
    if (!truncated && bytes > keptBytes) truncated = true;
    // A cut in the middle of a UTF-8 character is dropped by the decoder's replacement; the note says where it ends.
    let text = Buffer.concat(kept).toString('utf8');
    if (truncated) text += `${text.endsWith('\n') || text === '' ? '' : '\n'}[skill-up: diff cut here; the whole diff has ${lines} line(s), ${bytes} byte(s)]\n`;
    return { text, bytes, lines, truncated };
  } finally {
    await rm(index, { force: true }).catch(() => undefined);
  }
}
