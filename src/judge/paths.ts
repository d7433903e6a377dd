/**
 * Workspace-confined file checks used by `expect` and `rule_based`. A user's path is
 * relative to the workspace; one that leaves it (`../x`, an absolute path elsewhere, or a
 * symbolic link whose target lies outside) is never read and its check fails with evidence
 * saying so.
 */
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { bytes } from './evidence.js';

/** A path resolved inside the workspace, or the reason it was refused. */
export type Resolved = { ok: true; abs: string } | { ok: false; reason: string };

function inside(root: string, abs: string): boolean {
  const rel = path.relative(root, abs);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Resolves `rel` against `workspace` without following it out: the lexical path must stay
 * inside, and when it exists its real path (symbolic links followed) must too.
 */
export async function resolveInWorkspace(workspace: string, rel: string): Promise<Resolved> {
  if (rel.trim() === '') return { ok: false, reason: 'empty path' };
  if (rel.includes('\0')) return { ok: false, reason: 'path contains a NUL character' };
  const root = path.resolve(workspace);
  const abs = path.resolve(root, rel);
  if (!inside(root, abs)) return { ok: false, reason: `path escapes the workspace: ${rel}` };
  let realAbs: string;
  try {
    realAbs = await realpath(abs);
  } catch {
    // Missing (or a dangling link): nothing outside can be reached through it.
    return { ok: true, abs };
  }
  let realRoot = root;
  try {
    realRoot = await realpath(root);
  } catch {
    /* workspace gone: compare lexically */
  }
  if (!inside(realRoot, realAbs)) {
    return { ok: false, reason: `path escapes the workspace through a symbolic link: ${rel} -> ${realAbs}` };
  }
  return { ok: true, abs };
}

/** What is at a workspace path: `exists` plus a readable description for evidence. */
export interface PathInfo {
  /** False also when the path was refused (see `refused`). */
  exists: boolean;
  /** The path escaped the workspace; `description` says how. */
  refused: boolean;
  kind?: 'file' | 'directory' | 'other';
  size?: number;
  abs?: string;
  /** e.g. `exists (12 bytes)`, `exists (directory)`, `does not exist`, `path escapes the workspace: ../x`. */
  description: string;
}

/** Looks at `rel` inside `workspace` (a dangling symbolic link counts as missing). */
export async function inspectPath(workspace: string, rel: string): Promise<PathInfo> {
  const r = await resolveInWorkspace(workspace, rel);
  if (!r.ok) return { exists: false, refused: true, description: r.reason };
  try {
    const st = await stat(r.abs);
    const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : 'other';
    const description =
      kind === 'file' ? `exists (${bytes(st.size)})` : kind === 'directory' ? 'exists (directory)' : 'exists (not a regular file)';
    return { exists: true, refused: false, kind, size: st.size, abs: r.abs, description };
  } catch {
    let dangling = false;
    try {
      dangling = (await lstat(r.abs)).isSymbolicLink();
    } catch {
      /* truly missing */
    }
    return {
      exists: false,
      refused: false,
      abs: r.abs,
      description: dangling ? 'does not exist (dangling symbolic link)' : 'does not exist',
    };
  }
}

/** Largest file content read for `file_contains` (bytes). */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/** Reads a workspace file as UTF-8, or says why it could not. */
export async function readWorkspaceFile(
  workspace: string,
  rel: string,
): Promise<{ ok: true; text: string; size: number } | { ok: false; reason: string }> {
  const info = await inspectPath(workspace, rel);
  if (info.refused) return { ok: false, reason: info.description };
  if (!info.exists || !info.abs) return { ok: false, reason: `${rel} does not exist` };
  if (info.kind !== 'file') return { ok: false, reason: `${rel} is not a regular file` };
  if ((info.size ?? 0) > MAX_READ_BYTES) return { ok: false, reason: `${rel} is too large to search (${bytes(info.size ?? 0)})` };
  try {
    const text = await readFile(info.abs, 'utf8');
    return { ok: true, text, size: info.size ?? Buffer.byteLength(text) };
  } catch (e) {
    return { ok: false, reason: `${rel} could not be read: ${(e as Error).message}` };
  }
}
