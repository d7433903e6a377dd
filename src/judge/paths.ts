/**
 * Workspace-confined file checks used by `expect` and `rule_based`. A user's path is
 * relative to the workspace; one that leaves it (`../x`, an absolute path elsewhere, or a
 * symbolic link, even in a folder of the path, whose target lies outside) is never read and
 * its check fails with evidence saying so. A file is read through its checked real path,
 * opened with O_NOFOLLOW (src/util/contain.ts), so a link swapped in meanwhile is not followed.
 * A file with more than one hard link is never read (`ln /outside/file x` in the workspace
 * would otherwise let a judge read a file from elsewhere); its check fails saying so.
 */
import { lstat, stat } from 'node:fs/promises';
import path from 'node:path';
import { ContainmentError, isInside, openInside, resolveInside } from '../util/contain.js';
import { bytes } from './evidence.js';

/** A path resolved inside the workspace (`abs` as named, `real` with links followed), or the reason it was refused. */
export type Resolved = { ok: true; abs: string; real: string } | { ok: false; reason: string };

/**
 * Resolves `rel` against `workspace` without following it out: the lexical path must stay
 * inside, and its real path (symbolic links followed as far as the path exists, a dangling
 * link to where it points) must too.
 */
export async function resolveInWorkspace(workspace: string, rel: string): Promise<Resolved> {
  if (rel.trim() === '') return { ok: false, reason: 'empty path' };
  if (rel.includes('\0')) return { ok: false, reason: 'path contains a NUL character' };
  const root = path.resolve(workspace);
  const abs = path.resolve(root, rel);
  if (!isInside(root, abs)) return { ok: false, reason: `path escapes the workspace: ${rel}` };
  try {
    return { ok: true, abs, real: await resolveInside(root, rel) };
  } catch (e) {
    if (e instanceof ContainmentError) return { ok: false, reason: `path escapes the workspace through a symbolic link: ${rel} -> ${e.target}` };
    // Unreadable on the way (EACCES, ELOOP): nothing outside is reached by not following it.
    return { ok: true, abs, real: abs };
  }
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
    const st = await stat(r.real);
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

/** Why a file with `links` hard links is not read. */
function hardLinkReason(rel: string, links: number): string {
  return `${rel} is a hard link (${links} links): its content may come from outside the workspace, so it is not read`;
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
    const fh = await openInside(workspace, rel, rel);
    try {
      // Checked on the opened file itself, so a link made after inspectPath is caught too.
      const links = (await fh.stat()).nlink;
      if (links > 1) return { ok: false, reason: hardLinkReason(rel, links) };
      const text = await fh.readFile('utf8');
      return { ok: true, text, size: info.size ?? Buffer.byteLength(text) };
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (e instanceof ContainmentError) return { ok: false, reason: `path escapes the workspace through a symbolic link: ${rel} -> ${e.target}` };
    return { ok: false, reason: `${rel} could not be read: ${(e as Error).message}` };
  }
}
