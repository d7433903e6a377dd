/**
 * Path rules of the format: files named relative to the skill root must exist and stay inside
 * it; paths inside the agent's workspace must be relative and must not climb out of it.
 */
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Field } from './yaml-source.js';

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
  let st;
  try {
    st = statSync(abs);
  } catch {
    field.error(`${what} \`${rel}\` not found in the skill folder ${skillDir}${relativeToFileHint(rel, field.src.file, skillDir)}`);
    return undefined;
  }
  if (kind === 'file' && !st.isFile()) {
    field.error(`${what} \`${rel}\` is a folder; expected a file`);
    return undefined;
  }
  if (kind === 'folder' && !st.isDirectory()) {
    field.error(`${what} \`${rel}\` is a file; expected a folder`);
    return undefined;
  }
  try {
    if (!inside(realpathSync(skillDir), realpathSync(abs))) {
      field.error(`${what} \`${rel}\` is a symlink to ${realpathSync(abs)}, outside the skill folder ${skillDir}`);
      return undefined;
    }
  } catch {
    // realpath failed after stat succeeded: a race; the existence check above stands.
  }
  return abs;
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
