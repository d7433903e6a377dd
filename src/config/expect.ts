/**
 * `expect` of a case and of `cases.defaults`, and the one place they are merged: list checks
 * appended and de-duplicated (defaults first), scalars (`exit_code`, `golden_file`) taken from
 * the case when it sets them.
 */
import type { ExpectSpec } from './types.js';
import { checkWorkspacePath, skillPath } from './paths.js';
import type { Field } from './yaml-source.js';

/** An empty expect block. */
export function emptyExpect(): ExpectSpec {
  return { mustContain: [], mustNotContain: [], filesExist: [], filesNotExist: [], fileContains: [], skillInvoked: [], skillNotInvoked: [] };
}

/** Reads an `expect` map (absent or not a map → empty), checking its paths. */
export function buildExpect(field: Field, skillDir: string): ExpectSpec {
  const out = emptyExpect();
  if (!field.isMap()) return out;
  out.mustContain = field.get('must_contain').strings();
  out.mustNotContain = field.get('must_not_contain').strings();
  for (const key of ['files_exist', 'files_not_exist'] as const) {
    for (const item of field.get(key).items()) checkWorkspacePath(item, 'path');
  }
  out.filesExist = field.get('files_exist').strings();
  out.filesNotExist = field.get('files_not_exist').strings();
  for (const item of field.get('file_contains').items()) {
    const p = item.get('path').str();
    const content = item.get('content').str();
    checkWorkspacePath(item.get('path'), 'path');
    if (p !== undefined && content !== undefined) out.fileContains.push({ path: p, content });
  }
  // One skill name or a list of them, as in the rule of the same name.
  for (const [key, prop] of [['skill_invoked', 'skillInvoked'], ['skill_not_invoked', 'skillNotInvoked']] as const) {
    const f = field.get(key);
    const one = f.str();
    out[prop] = one !== undefined ? [one] : f.strings();
  }
  const exit = field.get('exit_code').int();
  if (exit !== undefined) out.exitCode = exit;
  if (!field.get('golden_file').missing) {
    const golden = skillPath(field.get('golden_file'), skillDir, 'file', 'golden file');
    if (golden) out.goldenFile = golden;
  }
  return out;
}

/** `defaults` then `own`: lists concatenated without duplicates, scalars from `own` when set. */
export function mergeExpect(defaults: ExpectSpec, own: ExpectSpec): ExpectSpec {
  const merged: ExpectSpec = {
    mustContain: unique([...defaults.mustContain, ...own.mustContain]),
    mustNotContain: unique([...defaults.mustNotContain, ...own.mustNotContain]),
    filesExist: unique([...defaults.filesExist, ...own.filesExist]),
    filesNotExist: unique([...defaults.filesNotExist, ...own.filesNotExist]),
    fileContains: uniqueBy([...defaults.fileContains, ...own.fileContains], (f) => `${f.path}\u0000${f.content}`),
    skillInvoked: unique([...defaults.skillInvoked, ...own.skillInvoked]),
    skillNotInvoked: unique([...defaults.skillNotInvoked, ...own.skillNotInvoked]),
  };
  const exitCode = own.exitCode ?? defaults.exitCode;
  const goldenFile = own.goldenFile ?? defaults.goldenFile;
  if (exitCode !== undefined) merged.exitCode = exitCode;
  if (goldenFile !== undefined) merged.goldenFile = goldenFile;
  return merged;
}

export function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function uniqueBy<T>(items: T[], key: (t: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((t) => {
    const k = key(t);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
