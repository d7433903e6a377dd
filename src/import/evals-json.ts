/**
 * Reading Anthropic skill-creator's `evals/evals.json`
 * (anthropics/skills `skills/skill-creator/references/schemas.md`, "evals.json"):
 *
 * ```json
 * {"skill_name": "pdf", "evals": [{"id": 1, "prompt": "…", "expected_output": "…",
 *   "files": ["evals/files/form.pdf"], "expectations": ["The output includes X"]}]}
 * ```
 *
 * Read leniently, as the prior-art notes (e) ask: the list of checks may be called
 * `expectations` (schemas.md, the grader, the aggregator) or `assertions` (skill-creator's
 * SKILL.md and the agentskills.io guide), and its items may be strings or objects with a
 * `text`; `id` may be an integer or a string, and defaults to the position (1-based).
 * Every problem is reported at its line and column in evals.json (JSON is parsed as YAML,
 * which keeps positions), all at once.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, DiagnosticBag } from '../config/diagnostics.js';
import { Field, parseYaml } from '../config/yaml-source.js';
import { nearest } from '../util/did-you-mean.js';
import { jsonSyntaxError } from '../config/json-error.js';

/** One eval of evals.json, checked. */
export interface ImportedEval {
  /** 0-based position in `evals`. */
  index: number;
  /** The eval's `id` as written (or the 1-based position when absent). */
  id: number | string;
  prompt: string;
  expectedOutput?: string;
  /** Input files, relative to the skill root, `/`-separated, normalised. */
  files: string[];
  /** `expectations` or `assertions`, as statement strings. */
  expectations: string[];
  /** Where the eval is written (for later diagnostics). */
  at: Field;
}

/** A checked evals.json. */
export interface EvalsFile {
  /** Absolute path of evals.json. */
  file: string;
  /** The skill root: the parent of the `evals/` folder holding evals.json, else its own folder. */
  skillDir: string;
  skillName?: string;
  evals: ImportedEval[];
  /** Warnings found while reading (unknown keys, both lists given). */
  bag: DiagnosticBag;
}

const KNOWN_TOP = new Set(['skill_name', 'evals']);
const KNOWN_EVAL = new Set(['id', 'name', 'prompt', 'expected_output', 'files', 'expectations', 'assertions']);

/** The skill root of an evals.json: the parent of its `evals/` folder, else its own folder. */
export function skillRootOfEvalsJson(file: string): string {
  const dir = path.dirname(file);
  return path.basename(dir) === 'evals' ? path.dirname(dir) : dir;
}

/**
 * Reads and checks `file`. Warnings stay in the returned `bag`.
 * @throws ConfigError with every error found (file:line:col, field path, what was expected).
 */
export function readEvalsJson(file: string): EvalsFile {
  const abs = path.resolve(file);
  const bag = new DiagnosticBag();
  let text: string;
  try {
    text = readFileSync(abs, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'not found' : code === 'EISDIR' ? 'is a folder (pass the evals.json file)' : `cannot read: ${code ?? (e as Error).message}`;
    throw new ConfigError([{ file: abs, line: 0, col: 0, path: '', message: `${why}; expected an Anthropic evals.json ({"skill_name", "evals": [...]})`, severity: 'error' }]);
  }
  return parseEvalsJson(abs, text, bag);
}

/** Checks the text of an evals.json (see {@link readEvalsJson}). @throws ConfigError */
export function parseEvalsJson(file: string, text: string, bag = new DiagnosticBag()): EvalsFile {
  try {
    JSON.parse(text);
  } catch (e) {
    const { line, col, message } = jsonSyntaxError(text, (e as Error).message);
    throw new ConfigError([{ file, line, col, path: '', message: `not valid JSON: ${message}; expected an Anthropic evals.json ({"skill_name": …, "evals": [...]})`, severity: 'error' }]);
  }
  const src = parseYaml(file, text, bag);
  const root = Field.root(src, bag);
  const skillDir = skillRootOfEvalsJson(file);
  const out: EvalsFile = { file, skillDir, evals: [], bag };
  if (!root.isMap()) {
    root.error(`an evals.json must be an object {"skill_name": "…", "evals": [...]}, but this file is ${Array.isArray(root.value) ? 'a list' : 'a single value'}`);
    bag.throwIfErrors();
  }
  for (const [key, f] of root.entries()) if (!KNOWN_TOP.has(key)) f.warn(`unknown key \`${key}\` in evals.json; ignored (known: skill_name, evals)`, 'key');
  const name = root.get('skill_name');
  if (!name.missing) {
    if (typeof name.value !== 'string') name.error('`skill_name` must be a string');
    else out.skillName = name.value;
  }
  const evals = root.get('evals');
  if (evals.missing) {
    root.error('missing `evals`: the list of evals ([{"id": 1, "prompt": "…", "expectations": [...]}])', 'key');
  } else if (!Array.isArray(evals.value)) {
    evals.error('`evals` must be a list of evals');
  } else if (evals.value.length === 0) {
    evals.error('`evals` is empty: there is nothing to import');
  }
  const seen = new Map<string, Field>();
  for (const [i, item] of evals.items().entries()) {
    const raw = item.get('id').value;
    const id = typeof raw === 'number' || typeof raw === 'string' ? raw : i + 1;
    const dup = seen.get(String(id));
    if (dup) {
      const { line } = dup.position();
      item.get('id').error(`duplicate eval id ${JSON.stringify(id)} (also at line ${line}); ids must be unique`);
    }
    seen.set(String(id), item.has('id') ? item.get('id') : item);
    const ev = readEval(item, i, skillDir);
    if (ev && !dup) out.evals.push(ev);
  }
  bag.throwIfErrors();
  return out;
}

const ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,100}$/;

function readEval(item: Field, index: number, skillDir: string): ImportedEval | undefined {
  if (!item.isMap()) {
    item.error('an eval must be an object with at least `prompt`');
    return undefined;
  }
  for (const [key, f] of item.entries()) {
    if (KNOWN_EVAL.has(key)) continue;
    // A typo of a field the eval lacks (`expectation`) would silently drop its grading: an error, not a warning.
    const near = nearest(key, [...KNOWN_EVAL]);
    if (near && !item.has(near)) f.error(`unknown key \`${key}\`; did you mean \`${near}\`?`, 'key');
    else f.warn(`unknown key \`${key}\`; ignored`, 'key');
  }
  let ok = true;
  let id: number | string = index + 1;
  const idF = item.get('id');
  if (!idF.missing) {
    if (typeof idF.value === 'number' && Number.isSafeInteger(idF.value) && idF.value >= 0) id = idF.value;
    else if (typeof idF.value === 'string' && ID_PATTERN.test(idF.value)) id = idF.value;
    else {
      idF.error('`id` must be a whole number ≥ 0 (or a name of letters, digits, `_`, `-` and `.`)');
      ok = false;
    }
  }
  const prompt = item.get('prompt');
  if (prompt.missing) {
    item.error('missing `prompt`: the task sent to the agent', 'key');
    ok = false;
  } else if (typeof prompt.value !== 'string' || prompt.value.trim() === '') {
    prompt.error('`prompt` must be a non-empty string');
    ok = false;
  }
  const expected = item.get('expected_output');
  if (!expected.missing && typeof expected.value !== 'string') {
    expected.error('`expected_output` must be a string (a description of success)');
    ok = false;
  }
  const files: string[] = [];
  const filesF = item.get('files');
  if (!filesF.missing && !Array.isArray(filesF.value)) {
    filesF.error('`files` must be a list of paths relative to the skill root');
    ok = false;
  }
  for (const f of filesF.items()) {
    const p = f.str();
    const problem = p === undefined || p === '' ? 'must be a non-empty path string' : filePathProblem(p, skillDir);
    if (problem) {
      f.error(`input file ${p === undefined ? '' : `\`${p}\` `}${problem}`);
      ok = false;
      continue;
    }
    files.push(path.posix.normalize(p!.replace(/\\/g, '/')).replace(/^\.\//, ''));
  }
  const expectations: string[] = [];
  for (const key of ['expectations', 'assertions'] as const) {
    const list = item.get(key);
    if (list.missing) continue;
    if (!Array.isArray(list.value)) {
      list.error(`\`${key}\` must be a list of statements (strings)`);
      ok = false;
      continue;
    }
    for (const a of list.items()) {
      const text = typeof a.value === 'string' ? a.value : a.isMap() ? (a.get('text').str() ?? a.get('description').str()) : undefined;
      if (text === undefined || text.trim() === '') {
        a.error('an expectation must be a non-empty string (or an object with a `text`)');
        ok = false;
        continue;
      }
      if (!expectations.includes(text.trim())) expectations.push(text.trim());
      // Kept once, but said: a repeated statement usually means one meant to differ.
      else a.warn(`this expectation repeats an earlier one of this eval; it becomes one criterion (a grader checking it twice would count it double)`);
    }
  }
  if (item.has('expectations') && item.has('assertions')) item.get('assertions').warn('both `expectations` and `assertions` are given; their statements are merged', 'key');
  if (!ok) return undefined;
  return {
    index,
    id,
    prompt: prompt.value as string,
    ...(typeof expected.value === 'string' && expected.value.trim() ? { expectedOutput: expected.value } : {}),
    files,
    expectations,
    at: item,
  };
}

function filePathProblem(p: string, skillDir: string): string | undefined {
  if (path.isAbsolute(p) || /^[A-Za-z]:[\\/]/.test(p)) return 'must be relative to the skill root, not absolute';
  const abs = path.resolve(skillDir, p);
  const rel = path.relative(skillDir, abs);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return `leaves the skill root ${skillDir}`;
  return undefined;
}
