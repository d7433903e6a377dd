/**
 * SKILL.md parsing and linting against the agentskills.io specification.
 *
 * Spec violations are errors (they block a run); skill-creator's stricter rules and the
 * progressive-disclosure size budget are warnings. Every diagnostic points at a line and
 * column of SKILL.md itself (not of the frontmatter substring).
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { closest, distance } from 'fastest-levenshtein';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node, type Pair } from 'yaml';
import type { Diagnostic } from '../config/diagnostics.js';
import { duplicateKeyMessage, duplicateKeys, structureProblem, YAML_PARSE_OPTIONS } from '../config/yaml-source.js';
import { fileKind, fileKindProblem } from '../config/paths.js';

/** The frontmatter fields the agentskills.io specification allows, in spec order. */
export const SPEC_FIELDS = ['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools'] as const;

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
 * Errors: SKILL.md missing (reported on the folder), frontmatter missing or unclosed, YAML
 * syntax errors, frontmatter that is not a map, `name` missing / not 1–64 chars of
 * `[a-z0-9-]` / leading, trailing or doubled hyphen / different from the folder name,
 * `description` missing / empty / over 1024 chars, unknown fields (with a did-you-mean),
 * `license` not a string, `compatibility` not 1–500 chars, `metadata` not a string→string
 * map, `allowed-tools` not a string.
 * Warnings: body over 500 lines; `<` or `>` in the description (skill-creator rule).
 *
 * Never throws for bad input: every problem becomes a diagnostic (`file` is the absolute
 * SKILL.md path, or the folder when SKILL.md is missing; `line`/`col` 1-based).
 */
export async function lintSkill(skillDir: string): Promise<SkillLintResult> {
  const dir = path.resolve(skillDir);
  const file = path.join(dir, 'SKILL.md');
  const diagnostics: Diagnostic[] = [];
  const error = (line: number, col: number, field: string, message: string) =>
    diagnostics.push({ file, line, col, path: field, message, severity: 'error' });
  const warn = (line: number, col: number, field: string, message: string) =>
    diagnostics.push({ file, line, col, path: field, message, severity: 'warning' });

  let text: string;
  // stat, never open first: opening a FIFO (`mkfifo SKILL.md`) blocks until something writes to it.
  const kind = fileKind(file);
  if (kind === 'fifo' || kind === 'socket' || kind === 'device' || kind === 'loop') {
    const problem = fileKindProblem(kind);
    diagnostics.push({ file: dir, line: 0, col: 0, path: '', message: `SKILL.md ${problem}; a skill needs SKILL.md as a regular file`, severity: 'error' });
    return { diagnostics };
  }
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    diagnostics.push({ file: dir, line: 0, col: 0, path: '', message: await missingMessage(dir, e), severity: 'error' });
    return { diagnostics };
  }

  const split = splitFrontmatter(text);
  if ('problem' in split) {
    error(split.line, 1, '', split.problem);
    return { diagnostics };
  }
  const { frontmatter, body, bodyStartLine } = split;

  // Parse the frontmatter on its own; positions are shifted by the opening `---` line.
  const lineCounter = new LineCounter();
  const doc = parseDocument(frontmatter, { lineCounter, ...YAML_PARSE_OPTIONS });
  const at = (offset: number | undefined): [number, number] => {
    if (offset === undefined) return [1, 1];
    const pos = lineCounter.linePos(offset);
    return [pos.line + 1, pos.col];
  };
  // Too deep a nesting, or a map as a key: the walks below would overflow or print a warning.
  const structure = structureProblem(doc);
  if (structure) {
    error(...at(structure.offset), '', `YAML error in frontmatter: ${structure.message}`);
    return { body, diagnostics };
  }
  // The duplicate-key check of `yaml` is quadratic; config/yaml-source.ts has a linear one.
  const dups = duplicateKeys(doc).found;
  if (doc.errors.length > 0 || dups.length > 0) {
    for (const err of doc.errors) error(...at(err.pos[0]), '', `YAML syntax error in frontmatter: ${firstLine(err.message)}`);
    for (const d of dups) error(...at(d.offset), '', `YAML syntax error in frontmatter: ${duplicateKeyMessage(d, lineCounter, 1)}`);
    return { body, diagnostics };
  }
  for (const w of doc.warnings) warn(...at(w.pos[0]), '', `YAML: ${firstLine(w.message)}`);

  const contents = doc.contents;
  if (!isMap(contents)) {
    const what = contents === null ? 'empty' : isScalar(contents) ? 'a single value' : 'a list';
    error(...at(contents?.range?.[0]), '', `frontmatter must be a YAML map of fields (name, description, …); it is ${what}`);
    return { body, diagnostics };
  }

  // Index the top-level pairs, remembering where each key and value sits.
  const fields = new Map<string, Pair<unknown, unknown>>();
  for (const pair of contents.items) {
    const key = isScalar(pair.key) ? pair.key.value : undefined;
    if (typeof key !== 'string') {
      error(...at(nodeStart(pair.key)), '', 'frontmatter keys must be plain strings');
      continue;
    }
    fields.set(key, pair);
    if (!(SPEC_FIELDS as readonly string[]).includes(key)) {
      error(...at(nodeStart(pair.key)), key, unknownFieldMessage(key));
    }
  }
  const valueAt = (pair: Pair<unknown, unknown>) => at(nodeStart(pair.value) ?? nodeStart(pair.key));
  const scalarString = (pair: Pair<unknown, unknown>): string | undefined =>
    isScalar(pair.value) && typeof pair.value.value === 'string' ? pair.value.value : undefined;
  const typeName = (pair: Pair<unknown, unknown>): string => describeValue(pair.value);

  // name
  let name: string | undefined;
  const namePair = fields.get('name');
  if (!namePair) {
    error(1, 1, 'name', 'required field `name` is missing');
  } else {
    const pos = valueAt(namePair);
    name = scalarString(namePair);
    if (name === undefined) {
      const kind = typeName(namePair);
      error(...pos, 'name', kind === 'empty' ? '`name` must not be empty' : `\`name\` must be a string, not ${kind}`);
    } else {
      for (const problem of nameProblems(name, path.basename(dir))) error(...pos, 'name', problem);
    }
  }

  // description
  let description: string | undefined;
  const descPair = fields.get('description');
  if (!descPair) {
    error(1, 1, 'description', 'required field `description` is missing');
  } else {
    const pos = valueAt(descPair);
    description = scalarString(descPair);
    if (description === undefined) {
      const kind = typeName(descPair);
      error(...pos, 'description', kind === 'empty' ? '`description` must not be empty: say what the skill does and when to use it' : `\`description\` must be a string, not ${kind}`);
    } else if (description.trim() === '') {
      error(...pos, 'description', '`description` must not be empty: say what the skill does and when to use it');
    } else {
      const len = charCount(description);
      if (len > LIMITS.description) {
        error(...pos, 'description', `\`description\` is ${len} characters; the limit is ${LIMITS.description}`);
      }
      if (/[<>]/.test(description)) {
        warn(...pos, 'description', '`description` contains `<` or `>`; skill-creator rejects angle brackets (they can break the skill list agents read)');
      }
    }
  }

  // license
  const licensePair = fields.get('license');
  if (licensePair && scalarString(licensePair) === undefined) {
    error(...valueAt(licensePair), 'license', `\`license\` must be a string (a licence name or a bundled licence file), not ${typeName(licensePair)}`);
  }

  // compatibility
  const compatPair = fields.get('compatibility');
  if (compatPair) {
    const value = scalarString(compatPair);
    const pos = valueAt(compatPair);
    if (value === undefined) {
      error(...pos, 'compatibility', `\`compatibility\` must be a string, not ${typeName(compatPair)}`);
    } else if (value.trim() === '') {
      error(...pos, 'compatibility', '`compatibility` must not be empty (omit the field instead)');
    } else if (charCount(value) > LIMITS.compatibility) {
      error(...pos, 'compatibility', `\`compatibility\` is ${charCount(value)} characters; the limit is ${LIMITS.compatibility}`);
    }
  }

  // metadata
  const metaPair = fields.get('metadata');
  if (metaPair) {
    const meta = metaPair.value;
    if (!isMap(meta)) {
      error(...valueAt(metaPair), 'metadata', `\`metadata\` must be a map of string keys to string values, not ${typeName(metaPair)}`);
    } else {
      for (const item of meta.items) {
        const key = isScalar(item.key) ? item.key.value : undefined;
        if (typeof key !== 'string') {
          error(...at(nodeStart(item.key)), 'metadata', `\`metadata\` keys must be strings, not ${describeValue(item.key)}`);
          continue;
        }
        if (!(isScalar(item.value) && typeof item.value.value === 'string')) {
          const kind = describeValue(item.value);
          const src = isScalar(item.value) && item.value.value !== null && item.value.range
            ? frontmatter.slice(item.value.range[0], item.value.range[1]).trim()
            : '';
          const hint = src ? ` (quote it: "${src}")` : '';
          error(...at(nodeStart(item.value) ?? nodeStart(item.key)), `metadata.${key}`, `\`metadata.${key}\` must be a string, not ${kind}${hint}`);
        }
      }
    }
  }

  // allowed-tools
  const toolsPair = fields.get('allowed-tools');
  if (toolsPair && scalarString(toolsPair) === undefined) {
    error(...valueAt(toolsPair), 'allowed-tools', `\`allowed-tools\` must be a space-separated string such as "Bash(git:*) Read", not ${typeName(toolsPair)}`);
  }

  // body size
  const bodyLines = countLines(body);
  if (bodyLines > LIMITS.bodyLines) {
    warn(bodyStartLine + LIMITS.bodyLines, 1, '', `SKILL.md body is ${bodyLines} lines; keep it under ${LIMITS.bodyLines} and move detail into referenced files (agentskills.io progressive disclosure)`);
  }

  diagnostics.sort((a, b) => a.line - b.line || a.col - b.col);
  return { name, description, body, diagnostics };
}

/** The `name` rules of the spec, as messages (empty when valid). */
function nameProblems(name: string, folder: string): string[] {
  const problems: string[] = [];
  const len = charCount(name);
  if (len === 0 || name.trim() === '') return ['`name` must not be empty'];
  if (len > LIMITS.name) problems.push(`\`name\` is ${len} characters; the limit is ${LIMITS.name}`);
  const bad = [...new Set(name.replace(/[a-z0-9-]/g, ''))];
  if (bad.length > 0) {
    const shown = bad.map((c) => (c === ' ' ? 'space' : `\`${c}\``)).join(', ');
    problems.push(`\`name\` may contain only lowercase letters a-z, digits and hyphens; found ${shown}`);
  }
  if (name.startsWith('-') || name.endsWith('-')) problems.push('`name` must not start or end with a hyphen');
  if (name.includes('--')) problems.push('`name` must not contain two hyphens in a row (`--`)');
  if (name !== folder) problems.push(`\`name\` is \`${name}\` but the skill folder is \`${folder}\`; they must be equal`);
  return problems;
}

function unknownFieldMessage(key: string): string {
  const allowed = SPEC_FIELDS.join(', ');
  const normalised = key.trim().toLowerCase().replace(/[_ ]/g, '-');
  let suggestion: string | undefined = (SPEC_FIELDS as readonly string[]).find((f) => f === normalised);
  if (!suggestion) {
    const best = closest(normalised, [...SPEC_FIELDS]);
    if (distance(normalised, best) <= Math.max(2, Math.floor(best.length / 3))) suggestion = best;
  }
  const tail = suggestion ? `; did you mean \`${suggestion}\`?` : '; put custom keys under `metadata`';
  return `unknown frontmatter field \`${key}\`; the agentskills.io spec allows ${allowed}${tail}`;
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

function describeValue(node: unknown): string {
  if (node === null || node === undefined) return 'empty';
  if (isMap(node)) return 'a map';
  if (isScalar(node)) {
    const v = node.value;
    if (v === null) return 'empty';
    return `a ${typeof v === 'object' ? 'date' : typeof v}`;
  }
  return isSeq(node) ? 'a list' : 'an alias';
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

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}
