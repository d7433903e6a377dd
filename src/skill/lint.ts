/**
 * SKILL.md parsing and linting against the agentskills.io specification and the extension
 * fields engines document: the frontmatter is read with src/config/yaml-source.ts and checked
 * against schemas/skill-frontmatter.schema.json through src/config/schema-errors.ts (the same
 * reader and translator as eval.yaml), plus the rules a schema cannot express (the name is the
 * folder's, the body's length).
 *
 * Spec violations are errors (they block a run); skill-creator's stricter rules and the
 * progressive-disclosure size budget are warnings. An engine's documented extension field
 * (Claude Code's `model`, `context`, …) is a note naming the engine, a wrong type in one a
 * warning; a field nobody documents is a warning that `--strict` makes an error. Real skills
 * use these fields and the engine loads them: moving them under `metadata` would break them.
 * Every diagnostic points at a line and column of SKILL.md itself (not of the frontmatter
 * substring).
 */
import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Node } from 'yaml';
import type * as YamlLib from 'yaml';
import { requireCjs } from '../util/cjs.js';

const { isMap, isScalar } = requireCjs('yaml') as typeof YamlLib;
import { DiagnosticBag, type Diagnostic } from '../config/diagnostics.js';
import { fileKind, fileKindProblem } from '../config/paths.js';
import { schemaAt } from '../config/schema.js';
import { expected, manyUnknownKeysMessage, MAX_UNKNOWN_KEYS_LISTED, reportSchemaErrors, type Phrasing, type SchemaProblem } from '../config/schema-errors.js';
import { Field, parseYaml } from '../config/yaml-source.js';
import { ContainmentError, realpathNearest, resolveInside } from '../util/contain.js';
import { nearest } from '../util/did-you-mean.js';

/** The frontmatter fields the agentskills.io specification allows, in spec order (https://agentskills.io/specification). */
export const SPEC_FIELDS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'] as const;

/** A frontmatter field one engine documents beyond the specification (or uses where the spec leaves it experimental). */
export interface ExtensionField {
  /** The engine that documents it, as users name it: `Claude Code`. */
  engine: string;
  /** What it does there, a few words for the note. */
  does: string;
  /** Where the engine documents it. */
  source: string;
}

const CLAUDE_CODE_SKILLS = 'https://code.claude.com/docs/en/skills#frontmatter-reference';

/**
 * Frontmatter fields accepted beyond the specification's, each with a note naming its engine.
 * Types are in schemas/skill-frontmatter.schema.json (a wrong one is a warning here).
 *
 * Where each engine documents its SKILL.md fields:
 *
 * | engine | fields beyond the spec | source |
 * |---|---|---|
 * | agentskills.io spec | — (`name`, `description`, `license`, `compatibility`, `metadata`, `allowed-tools` experimental) | https://agentskills.io/specification |
 * | Claude Code | `when_to_use`, `argument-hint`, `arguments`, `disable-model-invocation`, `user-invocable`, `model`, `effort`, `context`, `agent`, `hooks`, `paths`, `shell`; uses `allowed-tools` (string or list); `name` optional there | https://code.claude.com/docs/en/skills#frontmatter-reference |
 * | OpenCode | none: reads `name`, `description`, `license`, `compatibility`, `metadata`; "unknown frontmatter fields are ignored" | https://opencode.ai/docs/skills |
 * | Codex | none in SKILL.md (`name`, `description`); extras live in `agents/openai.yaml` | https://developers.openai.com/codex/skills |
 * | Gemini CLI | none (`name`, `description`) | https://geminicli.com/docs/cli/skills |
 * | Qwen Code | none (`name`, `description` checked) | https://github.com/QwenLM/qwen-code/blob/main/docs/users/features/skills.md |
 *
 * Other engines load a skill using Claude Code's fields and ignore them.
 */
export const EXTENSION_FIELDS: Readonly<Record<string, ExtensionField>> = {
  'allowed-tools': { engine: 'Claude Code', does: 'tools pre-approved while the skill is active', source: CLAUDE_CODE_SKILLS },
  when_to_use: { engine: 'Claude Code', does: 'more trigger context, appended to the description', source: CLAUDE_CODE_SKILLS },
  'argument-hint': { engine: 'Claude Code', does: 'the hint shown after `/skill-name`', source: CLAUDE_CODE_SKILLS },
  arguments: { engine: 'Claude Code', does: 'named arguments substituted as `$name` in the body', source: CLAUDE_CODE_SKILLS },
  'disable-model-invocation': { engine: 'Claude Code', does: '`true`: only `/skill-name` runs the skill, Claude never loads it by itself', source: CLAUDE_CODE_SKILLS },
  'user-invocable': { engine: 'Claude Code', does: '`false`: hidden from the `/` menu', source: CLAUDE_CODE_SKILLS },
  model: { engine: 'Claude Code', does: 'the model used while the skill is active', source: CLAUDE_CODE_SKILLS },
  effort: { engine: 'Claude Code', does: 'the effort level while the skill is active', source: CLAUDE_CODE_SKILLS },
  context: { engine: 'Claude Code', does: '`fork` runs the skill in a forked subagent', source: CLAUDE_CODE_SKILLS },
  agent: { engine: 'Claude Code', does: 'the subagent type used with `context: fork`', source: CLAUDE_CODE_SKILLS },
  hooks: { engine: 'Claude Code', does: "hooks scoped to the skill's lifetime", source: CLAUDE_CODE_SKILLS },
  paths: { engine: 'Claude Code', does: 'globs that limit when Claude loads the skill by itself', source: CLAUDE_CODE_SKILLS },
  shell: { engine: 'Claude Code', does: "the shell of the body's inline `!` commands", source: CLAUDE_CODE_SKILLS },
};

/** The extension field `key`, if it is one (an own key: `constructor` is not). */
function extensionOf(key: string): ExtensionField | undefined {
  return Object.prototype.hasOwnProperty.call(EXTENSION_FIELDS, key) ? EXTENSION_FIELDS[key] : undefined;
}

/** Every field lint knows: the spec's, then the engines' extensions (the did-you-mean candidates). */
const KNOWN_FIELDS: readonly string[] = [...new Set<string>([...SPEC_FIELDS, ...Object.keys(EXTENSION_FIELDS)])];

/** Limits from the specification and from skill-creator (body size). */
export const LIMITS = { name: 64, description: 1024, compatibility: 500, bodyLines: 500 } as const;

/** What {@link lintSkill} found. `name`/`description` are set when present as strings, even if invalid. */
export interface SkillLintResult {
  name?: string;
  description?: string;
  /** The Markdown after the closing `---` line. */
  body?: string;
  diagnostics: Diagnostic[];
}

/**
 * Reads `<skillDir>/SKILL.md` and checks it against the agentskills.io rules.
 *
 * Errors: SKILL.md missing or a symbolic link out of the skill folder (reported on the folder;
 * such a SKILL.md is never read), frontmatter missing or unclosed, YAML
 * syntax errors, frontmatter that is not a map, `name` missing / not 1–64 chars of
 * `[a-z0-9-]` / leading, trailing or doubled hyphen / different from the folder name,
 * `description` missing / empty / over 1024 chars, `license` not a string, `compatibility`
 * not 1–500 chars, `metadata` not a string→string map.
 * Warnings: unknown fields (with a did-you-mean; marked `strict`: `--strict` makes them errors,
 * see strictErrors in src/config/diagnostics.ts); a wrong type in an extension field of
 * {@link EXTENSION_FIELDS} (`allowed-tools` included: a string or a list); body over 500 lines;
 * `<` or `>` in the description (skill-creator rule).
 * Notes (`info`): one per extension field used, naming its engine.
 *
 * Never throws for bad input: every problem becomes a diagnostic (`file` is the absolute
 * SKILL.md path, or the folder when SKILL.md is missing; `line`/`col` 1-based).
 */
export async function lintSkill(skillDir: string): Promise<SkillLintResult> {
  const dir = path.resolve(skillDir);
  const file = path.join(dir, 'SKILL.md');
  const diagnostics: Diagnostic[] = [];

  // A SKILL.md that leads out of the skill folder (a symbolic link) is never read: its content
  // is some other file's, and messages would quote it.
  let real = file;
  try {
    real = await resolveInside(dir, 'SKILL.md', 'SKILL.md');
  } catch (e) {
    // Anything else (a link loop: ELOOP) is the file-kind check's to report, below.
    if (e instanceof ContainmentError) {
      const message = `SKILL.md is a symbolic link to ${e.target}, outside the skill folder ${await realpathNearest(dir)}; it is not read: copy the file into the skill folder`;
      diagnostics.push({ file: dir, line: 0, col: 0, path: '', message, severity: 'error' });
      return { diagnostics };
    }
  }

  let text: string;
  // stat, never open first: opening a FIFO (`mkfifo SKILL.md`) blocks until something writes to it.
  const kind = fileKind(file);
  if (kind === 'fifo' || kind === 'socket' || kind === 'device' || kind === 'loop') {
    const problem = fileKindProblem(kind);
    diagnostics.push({ file: dir, line: 0, col: 0, path: '', message: `SKILL.md ${problem}; a skill needs SKILL.md as a regular file`, severity: 'error' });
    return { diagnostics };
  }
  try {
    // The checked real path, opened without following a link swapped in since.
    const fh = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = await fh.readFile('utf8');
    } finally {
      await fh.close();
    }
  } catch (e) {
    diagnostics.push({ file: dir, line: 0, col: 0, path: '', message: await missingMessage(dir, e), severity: 'error' });
    return { diagnostics };
  }

  // Loading a suite and planning its run each ask for the same skill's lint (three times per run):
  // the same folder and text give the same answer, so it is worked out once per process.
  const key = `${dir}\0${text}`;
  let linted = LINTED.get(key);
  if (linted === undefined) {
    linted = lintText(dir, file, text);
    if (LINTED.size >= MAX_LINTED) LINTED.delete(LINTED.keys().next().value!);
    LINTED.set(key, linted);
  }
  return { ...linted, diagnostics: linted.diagnostics.map((d) => ({ ...d })) };
}

/** Lint results already worked out, by folder and SKILL.md text (oldest first); see {@link lintSkill}. */
const LINTED = new Map<string, SkillLintResult>();
/** How many {@link LINTED} keeps: a suite of many skills still reuses every one. */
const MAX_LINTED = 256;

/** {@link lintSkill}'s checks of SKILL.md's text `text`, read from `file` in the skill folder `dir`. */
function lintText(dir: string, file: string, text: string): SkillLintResult {
  const diagnostics: Diagnostic[] = [];
  const error = (line: number, col: number, field: string, message: string) =>
    diagnostics.push({ file, line, col, path: field, message, severity: 'error' });
  const warn = (line: number, col: number, field: string, message: string) =>
    diagnostics.push({ file, line, col, path: field, message, severity: 'warning' });
  const split = splitFrontmatter(text);
  if ('problem' in split) {
    error(split.line, 1, '', split.problem);
    return { diagnostics };
  }
  const { frontmatter, body, bodyStartLine } = split;

  // The frontmatter is parsed on its own; positions are shifted by the opening `---` line.
  const bag = new DiagnosticBag();
  const src = parseYaml(file, frontmatter, bag, { lineOffset: 1, label: ' in frontmatter' });
  if (!src.ok) return { body, diagnostics: [...diagnostics, ...bag.sorted()] };
  const root = Field.root(src, bag);
  const contents = src.doc.contents;
  if (!isMap(contents)) {
    const what = contents === null ? 'empty' : isScalar(contents) ? 'a single value' : 'a list';
    root.error(`frontmatter must be a YAML map of fields (name, description, …); it is ${what}`);
    return { body, diagnostics: [...diagnostics, ...bag.sorted()] };
  }
  // Keys that are not strings in the YAML (`1:`, `null:`) become strings in the data: said once here.
  const nonStringKeys = new Set<string>();
  for (const pair of contents.items) {
    if (isScalar(pair.key) && typeof pair.key.value === 'string') continue;
    nonStringKeys.add(String(isScalar(pair.key) ? pair.key.value : pair.key));
    root.get(String(isScalar(pair.key) ? pair.key.value : pair.key)).error('frontmatter keys must be plain strings', 'key');
  }
  const metadata = contents.get('metadata', true);
  if (isMap(metadata)) {
    for (const item of metadata.items) {
      if (isScalar(item.key) && typeof item.key.value === 'string') continue;
      const at = nodeStart(item.key);
      const line = at === undefined ? 2 : src.lineCounter.linePos(at).line + 1;
      const col = at === undefined ? 1 : src.lineCounter.linePos(at).col;
      bag.error(file, line, col, 'metadata', `\`metadata\` keys must be strings, not ${describeValue(isScalar(item.key) ? item.key.value : item.key)}`);
    }
  }

  // Fields nobody documents are warnings (errors only under --strict), so the schema, whose
  // `additionalProperties: false` is the strict form, checks the known fields only.
  const keys = root.entries().map(([k]) => k);
  const unknown = keys.filter((k) => !KNOWN_FIELDS.includes(k) && !nonStringKeys.has(k));
  const knownOnly = Object.fromEntries(keys.filter((k) => KNOWN_FIELDS.includes(k)).map((k) => [k, root.get(k).value]));
  const checked = new Field(src, bag, [], knownOnly);
  // The spec's rules as a JSON Schema (schemas/skill-frontmatter.schema.json), worded as
  // skill-up has always worded them; an extension field's type problem is set aside here.
  const badType = new Set<string>();
  reportSchemaErrors('skill-frontmatter', checked, (p) => {
    const top = p.segments[0];
    if (typeof top === 'string' && extensionOf(top)) {
      badType.add(top);
      return [];
    }
    return phraseFrontmatter(p, frontmatter, nonStringKeys);
  });
  const warnUnknown = (key: string, message: string) => {
    const f = root.get(key);
    const { line, col } = f.position('key');
    bag.warn(file, line, col, f.path, message, { strict: true });
  };
  if (unknown.length > MAX_UNKNOWN_KEYS_LISTED) warnUnknown(unknown[0]!, manyUnknownKeysMessage(unknown, KNOWN_FIELDS));
  else for (const k of unknown) warnUnknown(k, unknownFieldMessage(k));
  for (const k of keys) {
    const ext = extensionOf(k);
    if (!ext) continue;
    const value = root.get(k).value;
    if (badType.has(k)) {
      const f = root.get(k);
      const { line, col } = f.position('value');
      bag.warn(file, line, col, f.path, wrongTypeMessage(k, ext, value));
      continue;
    }
    const { line, col } = root.get(k).position('key');
    bag.note(file, line, col, k, extensionNote(k, ext, value));
  }

  const name = root.get('name').str();
  const description = root.get('description').str();
  // What the schema cannot say: the name is the folder's; angle brackets (a skill-creator rule).
  const folder = path.basename(dir);
  if (name !== undefined && name.trim() !== '' && name !== folder) {
    root.get('name').error(`\`name\` is \`${name}\` but the skill folder is \`${folder}\`; they must be equal`);
  }
  if (description !== undefined && /[<>]/.test(description)) {
    root.get('description').warn('`description` contains `<` or `>`; skill-creator rejects angle brackets (they can break the skill list agents read)');
  }

  // body size
  const bodyLines = countLines(body);
  if (bodyLines > LIMITS.bodyLines) {
    warn(bodyStartLine + LIMITS.bodyLines, 1, '', `SKILL.md body is ${bodyLines} lines; keep it under ${LIMITS.bodyLines} and move detail into referenced files (agentskills.io progressive disclosure)`);
  }

  const all = [...diagnostics, ...bag.sorted()].sort((a, b) => a.line - b.line || a.col - b.col);
  return { name, description, body, diagnostics: all };
}

/**
 * Words a frontmatter schema problem as lint always has: "`name` must be a string, not a
 * number", "`description` is 1025 characters; the limit is 1024", "unknown frontmatter field
 * `x`; …". `frontmatter` is the text, for the "quote it" hint.
 */
function phraseFrontmatter(p: SchemaProblem, frontmatter: string, nonStringKeys: ReadonlySet<string>): Phrasing | Phrasing[] | undefined {
  const { error: e, segments, field } = p;
  const value = field.value;
  const params = e.params as Record<string, unknown>;
  const kind = describeValue(value);
  const top = segments.length === 1 ? String(segments[0]) : undefined;
  const at = (message: string): Phrasing => ({ message, at: 'value' });
  if (segments.length === 0) {
    if (e.keyword === 'required') return { message: `required field \`${String(params.missingProperty)}\` is missing`, at: 'key', child: String(params.missingProperty) };
    if (e.keyword === 'additionalProperties') {
      // Unknown fields never reach the schema (lintSkill warns of them); a key that is not a
      // string is reported as such.
      const key = String(params.additionalProperty);
      return nonStringKeys.has(key) ? [] : { message: unknownFieldMessage(key), at: 'key', child: key };
    }
    return undefined;
  }
  const length = typeof value === 'string' ? charCount(value) : 0;
  switch (top) {
    case 'name':
      if (e.keyword === 'type') return at(value === null ? '`name` must not be empty' : `\`name\` must be a string, not ${kind}`);
      if (e.keyword === 'minLength') return at('`name` must not be empty');
      if (e.keyword === 'maxLength') return at(`\`name\` is ${length} characters; the limit is ${LIMITS.name}`);
      if (e.keyword === 'pattern') return nameCharacterProblems(value as string).map(at);
      return undefined;
    case 'description':
      if (e.keyword === 'type') return at(value === null ? DESCRIPTION_EMPTY : `\`description\` must be a string, not ${kind}`);
      if (e.keyword === 'pattern' || e.keyword === 'minLength') return at(DESCRIPTION_EMPTY);
      if (e.keyword === 'maxLength') return at(`\`description\` is ${length} characters; the limit is ${LIMITS.description}`);
      return undefined;
    case 'license':
      return at(`\`license\` must be a string (a licence name or a bundled licence file), not ${kind}`);
    case 'compatibility':
      if (e.keyword === 'type') return at(`\`compatibility\` must be a string, not ${kind}`);
      if (e.keyword === 'pattern' || e.keyword === 'minLength') return at('`compatibility` must not be empty (omit the field instead)');
      if (e.keyword === 'maxLength') return at(`\`compatibility\` is ${length} characters; the limit is ${LIMITS.compatibility}`);
      return undefined;
    case 'metadata':
      return at(`\`metadata\` must be a map of string keys to string values, not ${kind}`);
    default:
      break; // a nested field (`metadata.<key>`) or the root: below
  }
  if (segments[0] === 'metadata' && segments.length === 2) {
    const key = String(segments[1]);
    const node = field.src.doc.getIn(['metadata', key], true);
    const source = isScalar(node) && node.value !== null && node.range ? frontmatter.slice(node.range[0], node.range[1]).trim() : '';
    return at(`\`metadata.${key}\` must be a string, not ${kind}${source ? ` (quote it: "${source}")` : ''}`);
  }
  return undefined;
}

const DESCRIPTION_EMPTY = '`description` must not be empty: say what the skill does and when to use it';

/** The character and hyphen rules of the spec's `name`, as messages (empty when valid). */
function nameCharacterProblems(name: string): string[] {
  if (name.trim() === '') return name === '' ? [] : ['`name` must not be empty'];
  const problems: string[] = [];
  const bad = [...new Set(name.replace(/[a-z0-9-]/g, ''))];
  if (bad.length > 0) {
    const shown = bad.map((c) => (c === ' ' ? 'space' : `\`${c}\``)).join(', ');
    problems.push(`\`name\` may contain only lowercase letters a-z, digits and hyphens; found ${shown}`);
  }
  if (name.startsWith('-') || name.endsWith('-')) problems.push('`name` must not start or end with a hyphen');
  if (name.includes('--')) problems.push('`name` must not contain two hyphens in a row (`--`)');
  return problems;
}

function unknownFieldMessage(key: string): string {
  const allowed = SPEC_FIELDS.join(', ');
  const suggestion = nearest(key, KNOWN_FIELDS);
  const tail = suggestion ? `; did you mean \`${suggestion}\`?` : '; put custom keys under `metadata`';
  return `unknown frontmatter field \`${key}\`; the agentskills.io spec allows ${allowed} (and Claude Code documents ${Object.keys(EXTENSION_FIELDS).length - 1} more, e.g. \`model\`)${tail}`;
}

/** The note for an extension field: "`model` is a Claude Code field (…): other engines ignore it". */
function extensionNote(key: string, ext: ExtensionField, value: unknown): string {
  if (key === 'allowed-tools') {
    const list = Array.isArray(value) ? '; the list form is Claude Code\'s (the spec\'s is a space-separated string)' : '';
    return `\`allowed-tools\` is experimental in the agentskills.io spec and used by ${ext.engine} (${ext.does}): other engines may ignore it${list}`;
  }
  return `\`${key}\` is a ${ext.engine} field (${ext.does}): other engines ignore it`;
}

/** "`disable-model-invocation` should be `true` or `false`, not a string (a Claude Code field: …)": a warning, not an error. */
function wrongTypeMessage(key: string, ext: ExtensionField, value: unknown): string {
  const schema = schemaAt('skill-frontmatter', [key]) ?? {};
  const want = expected(schema);
  const unquote = schema.type === 'boolean' && (value === 'true' || value === 'false') ? ` (write ${value} without quotes)` : '';
  return `\`${key}\` should be ${want}, not ${describeValue(value)}${unquote} (a ${ext.engine} field: ${ext.does})`;
}

type Split =
  | { frontmatter: string; body: string; bodyStartLine: number }
  | { problem: string; line: number };

/** Splits SKILL.md into the frontmatter text (between the `---` lines) and the body. */
function splitFrontmatter(text: string): Split {
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const lines = src.split(/\r?\n/);
  if (lines[0]?.trimEnd() !== '---') {
    return { problem: 'SKILL.md must start with YAML frontmatter: a `---` line, the fields, and a closing `---` line', line: 1 };
  }
  const close = lines.findIndex((l, i) => i > 0 && l.trimEnd() === '---');
  if (close < 0) {
    return { problem: 'the frontmatter opened on line 1 is never closed: add a `---` line after the fields', line: 1 };
  }
  return {
    frontmatter: lines.slice(1, close).join('\n'),
    body: lines.slice(close + 1).join('\n'),
    bodyStartLine: close + 2,
  };
}

async function missingMessage(dir: string, err: unknown): Promise<string> {
  const code = (err as NodeJS.ErrnoException).code;
  try {
    const st = await stat(dir);
    if (!st.isDirectory()) return `${dir} is not a folder; a skill is a folder holding SKILL.md`;
  } catch {
    return `skill folder not found: ${dir}`;
  }
  if (code === 'ENOENT') {
    const other = (await readdir(dir).catch(() => [] as string[])).find((n) => n.toLowerCase() === 'skill.md');
    if (other) return `SKILL.md not found (found \`${other}\`; the file must be named exactly SKILL.md)`;
    return 'SKILL.md not found: a skill folder must hold a SKILL.md file';
  }
  return `cannot read SKILL.md: ${(err as Error).message}`;
}

function nodeStart(node: unknown): number | undefined {
  const range = (node as Node | null)?.range;
  return range ? range[0] : undefined;
}

/** How lint names a value's type: "a number", "a list", "a map", "empty". */
function describeValue(v: unknown): string {
  if (v === null || v === undefined) return 'empty';
  if (Array.isArray(v)) return 'a list';
  if (v instanceof Date) return 'a date';
  if (typeof v === 'object') return 'a map';
  return `a ${typeof v}`;
}

/** Length in Unicode code points (what the spec's reference validator counts). */
function charCount(s: string): number {
  return [...s].length;
}

function countLines(body: string): number {
  if (body === '') return 0;
  const lines = body.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.length;
}
