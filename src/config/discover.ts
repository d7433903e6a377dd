/**
 * Finding the suite on disk: which eval.yaml a command means, where the skill root is, and
 * which files `cases.files` names (paths and globs).
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type Picomatch from 'picomatch';
import { requireCjs } from '../util/cjs.js';

const picomatch = requireCjs('picomatch') as typeof Picomatch;
import { MAX_GLOB_LENGTH } from '../skill/files.js';
import { ConfigError } from './diagnostics.js';

const EVAL_NAMES = ['eval.yaml', 'eval.yml'];

/**
 * The absolute path of the eval file a command means.
 *
 * `target` may be:
 * - an eval file (`eval.yaml`, `eval.yml` or any other YAML file) → that file;
 * - a SKILL.md file → the `evals/eval.yaml` next to it;
 * - a skill folder holding `evals/eval.yaml` (or `.yml`) → that file;
 * - a folder holding `eval.yaml` (or `.yml`) → that file;
 * - undefined → walk up from `cwd` to the first folder holding both SKILL.md and
 *   `evals/eval.yaml` (or `.yml`).
 * Relative targets are resolved against `cwd`.
 *
 * @throws ConfigError (one diagnostic, no line) when nothing is found, naming the places looked at.
 */
export function resolveEvalFile(target: string | undefined, cwd: string): string {
  if (target === undefined || target === '') return discoverUpwards(path.resolve(cwd));
  const abs = path.resolve(cwd, target);
  let st;
  try {
    st = statSync(abs);
  } catch {
    fail(abs, `not found: ${target} (expected an eval.yaml file or a skill folder holding evals/eval.yaml)`);
  }
  if (st.isFile()) {
    if (path.basename(abs) === 'SKILL.md') {
      const found = evalFileIn(path.join(path.dirname(abs), 'evals'));
      if (found) return found;
      fail(abs, `no evals/eval.yaml next to ${target}; create one (see \`skill-up init\`) or pass the eval file itself`);
    }
    return abs;
  }
  if (!st.isDirectory()) fail(abs, `${target} is neither a file nor a folder`);
  const found = evalFileIn(path.join(abs, 'evals')) ?? evalFileIn(abs);
  if (found) return found;
  const hint = existsSync(path.join(abs, 'evals', 'evals.json'))
    ? '; found evals/evals.json (Anthropic format): convert it with `skill-up import evals/evals.json`'
    : '';
  fail(abs, `no eval file in ${target}: looked for ${['evals/eval.yaml', 'evals/eval.yml', ...EVAL_NAMES].join(', ')}${hint}`);
}

function discoverUpwards(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(path.join(dir, 'SKILL.md'))) {
      const found = evalFileIn(path.join(dir, 'evals'));
      if (found) return found;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  fail(
    start,
    `no skill with evals found: looked for a folder holding SKILL.md and evals/eval.yaml in ${start} and every folder above it; ` +
      'pass the eval file or skill folder explicitly (e.g. `skill-up run path/to/skill`)',
  );
}

function evalFileIn(dir: string): string | undefined {
  for (const name of EVAL_NAMES) {
    const file = path.join(dir, name);
    if (isFile(file)) return file;
  }
  return undefined;
}

function fail(file: string, message: string): never {
  throw new ConfigError([{ file, line: 0, col: 0, path: '', message, severity: 'error' }]);
}

/** The skill root of an eval file: the parent of the `evals/` folder holding it, else its own folder. */
export function skillRootOf(evalFile: string): string {
  const dir = path.dirname(evalFile);
  return path.basename(dir) === 'evals' ? path.dirname(dir) : dir;
}

export function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

export function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** True when `pattern` has glob syntax (`*`, `?`, `[…]`, `{…}`, `!(…)`). */
export function isGlob(pattern: string): boolean {
  return picomatch.scan(pattern).isGlob;
}

const SKIP_DIRS = new Set(['.git', 'node_modules']);

/**
 * The files (absolute, sorted) under `root` matching `pattern`, a picomatch glob relative to
 * `root` (`..` allowed in its static prefix). Dot-files, `.git` and `node_modules` are skipped.
 */
export function expandGlob(root: string, pattern: string): string[] {
  const norm = pattern.replace(/\\/g, '/').replace(/^\.\//, '');
  const scan = picomatch.scan(norm);
  const base = path.resolve(root, scan.base || '.');
  // No extglob (exponential regexes); the case files are the suite's own, so groups stay allowed.
  const match = picomatch(scan.glob || '**', { dot: false, noextglob: true, maxLength: MAX_GLOB_LENGTH });
  const out: string[] = [];
  const walk = (dir: string, rel: string, depth: number) => {
    if (depth > 20) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const ent of entries) {
      const childRel = rel ? `${rel}/${ent.name}` : ent.name;
      const abs = path.join(dir, ent.name);
      if (ent.isDirectory()) {
        if (!SKIP_DIRS.has(ent.name)) walk(abs, childRel, depth + 1);
      } else if ((ent.isFile() || (ent.isSymbolicLink() && isFile(abs))) && match(childRel)) {
        out.push(abs);
      }
    }
  };
  walk(base, '', 0);
  return out.sort();
}
