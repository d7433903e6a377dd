/**
 * Path rules of the format: files named relative to the skill root must exist and stay inside
 * it; paths inside the agent's workspace must be relative and must not climb out of it.
 */
import { lstatSync, readdirSync, readlinkSync, realpathSync, statSync, type Dirent } from 'node:fs';
import path from 'node:path';
import type { Field } from './yaml-source.js';
import { globError } from '../skill/files.js';

/**
 * Real paths of skill folders already resolved (folder → real path): a suite names hundreds of
 * files in one skill folder, and resolving the folder again for each was most of the cost of
 * the checks (the JS realpath walks every segment). Cleared by {@link forgetRealPaths} at the
 * start of every suite load, so a folder moved or relinked between two loads is seen.
 */
const realFolders = new Map<string, string>();

/** The real path of the skill folder `skillDir`, resolved once per load. @throws as `realpathSync`. */
function realSkillDir(skillDir: string): string {
  let real = realFolders.get(skillDir);
  if (real === undefined) {
    real = realpathSync.native(skillDir);
    realFolders.set(skillDir, real);
  }
  return real;
}

/** Forgets the skill folders' real paths resolved so far; called when a suite load starts. */
export function forgetRealPaths(): void {
  realFolders.clear();
}

/** What a skill-root-relative path must be. */
export type PathKind = 'file' | 'folder';

/**
 * Resolves `field` (a string relative to `skillDir`) to an absolute path and checks it:
 * it must not escape the skill folder (also through a symlink) and must exist as `kind`.
 * Reports problems at `field` and returns the absolute path (undefined when unusable).
 */
export function skillPath(field: Field, skillDir: string, kind: PathKind, what: string): string | undefined {
  const rel = field.str();
  if (rel === undefined || rel === '') return undefined;
  const abs = path.resolve(skillDir, rel);
  if (!inside(skillDir, abs)) {
    field.error(`${what} \`${rel}\` is outside the skill folder ${skillDir}; it must be a path inside it, relative to the skill root`);
    return undefined;
  }
  // stat, never open: opening a FIFO blocks until something writes to it.
  const found = fileKind(abs);
  if (found === 'missing' || found === 'dangling') {
    field.error(`${what} \`${rel}\` not found in the skill folder ${skillDir}${relativeToFileHint(rel, field.src.file, skillDir)}`);
    return undefined;
  }
  if (found !== kind) {
    field.error(`${what} \`${rel}\` ${fileKindProblem(found, kind)}`);
    return undefined;
  }
  try {
    const real = realpathSync.native(abs);
    if (!inside(realSkillDir(skillDir), real)) {
      field.error(`${what} \`${rel}\` is a symlink to ${real}, outside the skill folder ${skillDir}`);
      return undefined;
    }
  } catch {
    // realpath failed after stat succeeded: a race; the existence check above stands.
  }
  return abs;
}

/** What a path is, links followed: see {@link fileKind}. */
export type FileKind = 'file' | 'folder' | 'fifo' | 'socket' | 'device' | 'loop' | 'dangling' | 'missing' | 'unreadable';

/**
 * What `abs` is, symbolic links followed, found with `stat` only (opening a FIFO would block
 * until something writes to it): a regular file, a folder, a FIFO, a socket, a device, a
 * symbolic link loop, a dangling link, missing, or unreadable (permission denied, …).
 */
export function fileKind(abs: string): FileKind {
  let st;
  try {
    st = statSync(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return 'loop';
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return 'unreadable';
    try {
      return lstatSync(abs).isSymbolicLink() ? 'dangling' : 'missing';
    } catch {
      return 'missing';
    }
  }
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'folder';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  return 'device';
}

/**
 * The end of a message for a path that is `found` where a `wanted` was expected, e.g. "is a
 * FIFO (named pipe), not a regular file"; it follows the path in the message.
 */
export function fileKindProblem(found: FileKind, wanted: 'file' | 'folder' = 'file'): string {
  const not = wanted === 'file' ? 'not a regular file' : 'not a folder';
  switch (found) {
    case 'folder':
      return 'is a folder; expected a file';
    case 'file':
      return 'is a file; expected a folder';
    case 'fifo':
      return `is a FIFO (named pipe), ${not}`;
    case 'socket':
      return `is a socket, ${not}`;
    case 'device':
      return `is a device, ${not}`;
    case 'loop':
      return 'is a symbolic link loop (it never reaches a file); replace the link';
    case 'dangling':
      return 'is a symbolic link to a file that does not exist';
    case 'unreadable':
      return 'cannot be read (permission denied?)';
    default:
      return 'not found';
  }
}

/** True when `child` is `parent` or below it. */
export function inside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Why `p` is not a safe workspace-relative path (absolute, drive letter, `..` segment, empty),
 * or undefined when it is fine.
 */
export function workspacePathProblem(p: string): string | undefined {
  if (p.trim() === '') return 'an empty path';
  if (p.includes('\u0000')) return 'a path holding a NUL character (no file name can)';
  if (p.startsWith('/') || p.startsWith('\\') || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith('~')) return 'an absolute path';
  if (p.split(/[\\/]+/).includes('..')) return 'a path that climbs out with `..`';
  return undefined;
}

/** Reports `field` (a string) when it is not a safe workspace-relative path. */
export function checkWorkspacePath(field: Field, what: string, value = field.str(), at: 'key' | 'value' = 'value'): void {
  if (value === undefined) return;
  const problem = workspacePathProblem(value);
  if (problem) field.error(`${what} \`${value}\` is ${problem}; it must be relative to the workspace and stay inside it`, at);
}

/**
 * {@link checkWorkspacePath} for a glob matched against the agent's file names, plus the
 * syntax `run` refuses because it could backtrack exponentially (src/skill/files.ts globError),
 * so `validate` names it at its line instead of every job erring.
 */
export function checkArtifactGlob(field: Field): void {
  checkWorkspacePath(field, 'artifact glob');
  const value = field.str();
  const problem = value === undefined ? undefined : globError(value);
  if (problem) field.error(problem);
}

/**
 * A hint for the common mistake of writing a path relative to the YAML file's folder or to
 * `evals/` instead of the skill root: "; paths are relative to the skill root, not to evals/:
 * did you mean `evals/fixtures/x`?". Otherwise a reminder of the rule.
 */
export function relativeToFileHint(rel: string, yamlFile: string, skillDir: string): string {
  const bases = [...new Set([path.dirname(yamlFile), path.join(skillDir, 'evals')])].filter((b) => b !== skillDir);
  for (const base of bases) {
    const alt = path.resolve(base, rel);
    if (!inside(skillDir, alt)) continue;
    try {
      statSync(alt);
    } catch {
      continue;
    }
    const shown = path.relative(skillDir, alt).split(path.sep).join('/');
    return `; paths are relative to the skill root, not to ${path.relative(skillDir, base).split(path.sep).join('/')}/: did you mean \`${shown}\`?`;
  }
  return ' (paths are relative to the skill root)';
}

/**
 * Why `p` cannot name a file the workspace is prepared with (`context.files` keys), or
 * undefined: everything {@link workspacePathProblem} rejects, plus the workspace itself (`.`,
 * `./`) and a folder (a trailing `/`).
 */
export function workspaceFileProblem(p: string): string | undefined {
  const general = workspacePathProblem(p);
  if (general) return general;
  if (/[\\/]$/.test(p)) return 'a folder (it ends with `/`); name a file, e.g. `dir/file.txt`';
  if (normalWorkspacePath(p) === '') return 'the workspace folder itself; name a file inside it';
  return undefined;
}

/** `./a//b/` → `a/b`: the segments of a workspace-relative path without empty and `.` ones. */
export function normalWorkspacePath(p: string): string {
  return p
    .split(/[\\/]+/)
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

/**
 * Checks the keys of a `context.files` map: each must name a file inside the workspace
 * ({@link workspaceFileProblem}), no two may name the same file (`a` and `./a`), and none may be
 * a folder of another (`a` and `a/b`: `a` cannot be a file and a folder). Linear in the number
 * of keys and segments.
 */
export function checkWorkspaceFileNames(files: Field): void {
  const byPath = new Map<string, string>();
  const entries = files.entries();
  for (const [name, content] of entries) {
    const problem = workspaceFileProblem(name);
    if (problem) {
      content.error(`file name \`${printable(name)}\` is ${problem}; it must be relative to the workspace and stay inside it`, 'key');
      continue;
    }
    const norm = normalWorkspacePath(name);
    const same = byPath.get(norm);
    if (same !== undefined) {
      content.error(`file name \`${name}\` names the same file as \`${same}\` (line ${files.get(same).position('key').line}); write each file once`, 'key');
      continue;
    }
    byPath.set(norm, name);
  }
  for (const [norm, name] of byPath) {
    const segs = norm.split('/');
    for (let i = 1; i < segs.length; i++) {
      const folder = byPath.get(segs.slice(0, i).join('/'));
      if (folder === undefined) continue;
      files
        .get(folder)
        .error(`file name \`${folder}\` is also a folder of \`${name}\` (line ${files.get(name).position('key').line}); a path cannot be a file and a folder at once`, 'key');
      break;
    }
  }
}

/** `s` with control characters shown as `\u0000`-style escapes, for messages. */
function printable(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Calls `visit` with every entry below the folder `dir` that is not itself a folder (links are
 * listed, never followed), at most `maxDepth` folders deep; unreadable folders are skipped.
 * Nothing when `dir` is not a folder.
 */
function walkFolder(dir: string, visit: (ent: Dirent, abs: string) => void, maxDepth = Infinity): void {
  const walk = (abs: string, depth: number) => {
    if (depth > maxDepth) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(abs, { withFileTypes: true });
    } catch {
      return;
    }
    for (const ent of entries) {
      const child = path.join(abs, ent.name);
      if (ent.isDirectory()) walk(child, depth + 1);
      else visit(ent, child);
    }
  };
  try {
    if (!lstatSync(dir).isDirectory()) return;
  } catch {
    return;
  }
  walk(dir, 0);
}

/** Most symbolic links one folder check lists by name; the rest are counted. */
const MAX_LINKS_LISTED = 5;

/**
 * Reports `field` when the folder `dir` (inside the skill folder) holds symbolic links whose
 * targets lie outside the skill folder (or dangle there): copied into a workspace they would
 * hand the agent files from elsewhere on the machine. Links are not followed. Returns true
 * when there is none.
 */
export function checkFolderSymlinks(field: Field, dir: string, skillDir: string, what: string): boolean {
  let root: string;
  try {
    root = realSkillDir(skillDir);
  } catch {
    return true;
  }
  const bad: string[] = [];
  let count = 0;
  walkFolder(dir, (ent, child) => {
    if (!ent.isSymbolicLink()) return;
    let target: string;
    try {
      target = path.resolve(path.dirname(child), readlinkSync(child));
    } catch {
      return;
    }
    let real: string | undefined;
    try {
      real = realpathSync.native(child);
    } catch {
      // A dangling link: judged by where it points.
    }
    if (real !== undefined ? inside(root, real) : inside(skillDir, target) || inside(root, target)) return;
    real ??= target;
    count++;
    if (bad.length < MAX_LINKS_LISTED) bad.push(`\`${path.relative(dir, child).split(path.sep).join('/')}\` → ${real}`);
  });
  if (count === 0) return true;
  const more = count > bad.length ? ` and ${count - bad.length} more` : '';
  field.error(
    `${what} \`${field.str() ?? dir}\` holds ${count === 1 ? 'a symbolic link' : `${count} symbolic links`} to a place outside the skill folder ${skillDir}: ${bad.join(', ')}${more}; it would be copied into every workspace. Copy the files into the fixture instead, or make the links point inside the skill folder`,
  );
  return false;
}

/**
 * Reports `field` when the folder `dir` holds something that is neither a regular file, a
 * folder nor a symbolic link (a FIFO, a socket, a device): the workspace set-up refuses to copy
 * it (src/runtime/workspace.ts), so every job would error. Links are not followed. Returns
 * true when there is none.
 */
export function checkFolderSpecialFiles(field: Field, dir: string, what: string): boolean {
  const bad: string[] = [];
  let count = 0;
  walkFolder(dir, (ent, child) => {
    if (ent.isFile() || ent.isSymbolicLink()) return;
    count++;
    const kind = ent.isFIFO() ? 'a FIFO' : ent.isSocket() ? 'a socket' : 'a device';
    if (bad.length < MAX_LINKS_LISTED) bad.push(`\`${path.relative(dir, child).split(path.sep).join('/')}\` (${kind})`);
  }, 64);
  if (count === 0) return true;
  const more = count > bad.length ? ` and ${count - bad.length} more` : '';
  field.error(
    `${what} \`${field.str() ?? dir}\` holds ${bad.join(', ')}${more}, which ${count === 1 ? 'is' : 'are'} not a regular file, folder or symbolic link; it cannot be copied into a workspace: remove ${count === 1 ? 'it' : 'them'} from the fixture`,
  );
  return false;
}

/**
 * Why the absolute path `abs` is not inside the skill folder, or undefined when it is: it lies
 * outside (`..`, an absolute path), or it is (or passes through) a symbolic link to a place
 * outside. A path that does not exist is judged by its text alone.
 */
export function outsideSkillProblem(skillDir: string, abs: string): string | undefined {
  if (!inside(skillDir, abs)) return 'is outside the skill folder';
  try {
    const real = realpathSync.native(abs);
    if (!inside(realSkillDir(skillDir), real)) return `is a symbolic link to ${real}, outside the skill folder`;
  } catch {
    /* does not exist (reported elsewhere) */
  }
  return undefined;
}
