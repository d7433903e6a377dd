/**
 * Loads a scripted-model rule file (YAML) and validates it against
 * `schemas/model-script.schema.json` (JSON Schema 2020-12, ajv), then checks what a schema
 * cannot express (engine names, regexes, `{{placeholders}}`, `reply` xor `error`).
 *
 * Every problem becomes a `Diagnostic` positioned at the offending YAML node
 * (`file:line:col: field.path: message`); unknown keys and actions get a did-you-mean.
 * All problems of a file are reported together in one `ConfigError`.
 *
 * File format (see the schema for every field):
 * ```yaml
 * rules:
 *   - when: { skill_listed: hello-world, skill_loaded: false }
 *     reply: [ { use_skill: hello-world } ]
 *   - when: { skill_loaded: hello-world }
 *     reply:
 *       - { write_file: { path: hello.py, content: "print('Hello, World!')\n" } }
 *       - { say: "Created hello.py" }
 *   - reply: [ { say: "I don't know how to do that." } ]
 * ```
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020Module, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { closest, distance } from 'fastest-levenshtein';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { ConfigError, DiagnosticBag } from '../config/diagnostics.js';
import { duplicateKeyMessage, duplicateKeys, structureProblem, YAML_PARSE_OPTIONS } from '../config/yaml-source.js';
import { compileRegex, regexError } from '../util/regex.js';
import { ENGINE_NAMES, type Action, type EngineName, type ModelScript, type Rule, type RuleConditions } from './types.js';

/** Names usable as `{{name}}` in any string of a rule. */
export const TEMPLATE_VARIABLES = ['cwd', 'turn', 'prompt'] as const;

const ACTION_KEYS = ['use_skill', 'write_file', 'run', 'read_file', 'say', 'tool'] as const;

/**
 * Reads and validates a rule script.
 * @param file path of the YAML file (made absolute for diagnostics).
 * @throws ConfigError listing every problem (unreadable file, YAML syntax, schema, semantics).
 */
export async function loadModelScript(file: string): Promise<ModelScript> {
  const abs = resolve(file);
  let text: string;
  try {
    text = await readFile(abs, 'utf8');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'ENOENT' ? 'file not found' : err.message;
    throw new ConfigError([{ file: abs, line: 0, col: 0, path: '', message: `cannot read model script: ${why}`, severity: 'error' }]);
  }
  return parseModelScript(text, abs);
}

/**
 * Validates script text already in memory. `file` only labels diagnostics.
 * @throws ConfigError as `loadModelScript`.
 */
export function parseModelScript(text: string, file: string): ModelScript {
  const bag = new DiagnosticBag();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, ...YAML_PARSE_OPTIONS });
  // Too deep a nesting, or a map as a key: the walks below would overflow or print a warning.
  const structure = structureProblem(doc);
  if (structure) {
    const pos = lineCounter.linePos(structure.offset);
    bag.error(file, pos.line, pos.col, '', `YAML error: ${structure.message}`);
    bag.throwIfErrors();
  }
  for (const err of doc.errors) {
    const pos = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
    bag.error(file, pos.line, pos.col, '', `YAML syntax error: ${firstLine(err.message)}`);
  }
  // The duplicate-key check of `yaml` is quadratic; config/yaml-source.ts has a linear one.
  for (const d of duplicateKeys(doc).found) {
    const pos = lineCounter.linePos(d.offset);
    bag.error(file, pos.line, pos.col, '', `YAML syntax error: ${duplicateKeyMessage(d, lineCounter)}`);
  }
  bag.throwIfErrors();

  const data: unknown = doc.toJS();
  const at = new Locator(doc, lineCounter, data);
  if (data === null || data === undefined) {
    bag.error(file, 1, 1, '', 'the script is empty: expected a mapping with `rules:` (a list of rules)');
    bag.throwIfErrors();
  }

  const validate = schemaValidator();
  if (!validate(data)) {
    for (const d of explainAjvErrors(validate.errors ?? [], at)) bag.error(file, d.line, d.col, d.path, d.message);
  }
  checkSemantics(data, at, file, bag);
  bag.throwIfErrors();

  const rules = toRules(data as RawScript, at);
  return { file, rules, warnings: unreachableWarnings(rules, file, at) };
}

// ───────────────────────────── schema ─────────────────────────────

let cachedValidator: ValidateFunction | undefined;

/** Absolute path of the shipped schema, found by walking up from this module (src/ or dist/src/). */
export function modelScriptSchemaPath(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'schemas', 'model-script.schema.json');
    try {
      readFileSync(candidate);
      return candidate;
    } catch {
      dir = dirname(dir);
    }
  }
  throw new Error('schemas/model-script.schema.json not found above ' + fileURLToPath(import.meta.url));
}

function schemaValidator(): ValidateFunction {
  if (!cachedValidator) {
    const schema = JSON.parse(readFileSync(modelScriptSchemaPath(), 'utf8')) as object;
    // ajv ships CommonJS: under NodeNext the class may sit on `.default`.
    const Ajv = (Ajv2020Module as unknown as { default?: typeof Ajv2020Module }).default ?? Ajv2020Module;
    const ajv = new (Ajv as unknown as new (opts: object) => import('ajv/dist/2020.js').default)({
      allErrors: true,
      verbose: true,
      strict: false,
    });
    cachedValidator = ajv.compile(schema);
  }
  return cachedValidator!;
}

// ───────────────────────────── positions ─────────────────────────────

type Seg = string | number;

/** Maps a path of keys/indices in the parsed data to a YAML source position. */
class Locator {
  constructor(
    private readonly doc: Document,
    private readonly lc: LineCounter,
    private readonly data: unknown,
  ) {}

  /** Splits an ajv instancePath (`/rules/1/reply/0`) into keys and array indices. */
  segments(instancePath: string): Seg[] {
    if (!instancePath) return [];
    const out: Seg[] = [];
    let cur: unknown = this.data;
    for (const raw of instancePath.slice(1).split('/')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      const seg: Seg = Array.isArray(cur) && /^\d+$/.test(key) ? Number(key) : key;
      out.push(seg);
      cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[String(seg)] : undefined;
    }
    return out;
  }

  /** Line/col of the value at `path`; with `key`, of that key inside the mapping at `path`. */
  pos(path: Seg[], key?: string): { line: number; col: number } {
    const node = path.length === 0 ? this.doc.contents : this.doc.getIn(path, true);
    let offset: number | undefined;
    if (key !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      if (pair && isScalar(pair.key)) offset = pair.key.range?.[0];
    }
    if (offset === undefined && node && typeof node === 'object' && 'range' in node) {
      offset = (node as { range?: [number, number, number] | null }).range?.[0];
    }
    if (offset === undefined && path.length > 0) return this.pos(path.slice(0, -1), String(path[path.length - 1]));
    if (offset === undefined) return { line: 1, col: 1 };
    return this.lc.linePos(offset);
  }
}

/** `rules[1].reply[0].write_file` */
export function fieldPath(path: Seg[]): string {
  let s = '';
  for (const seg of path) s += typeof seg === 'number' ? `[${seg}]` : s ? `.${seg}` : seg;
  return s;
}

// ───────────────────────────── ajv errors → diagnostics ─────────────────────────────

interface Located {
  line: number;
  col: number;
  path: string;
  message: string;
}

function explainAjvErrors(errors: ErrorObject[], at: Locator): Located[] {
  const out: Located[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    const path = at.segments(e.instancePath);
    const d = explainOne(e, path, at);
    if (!d) continue;
    const id = `${d.line}:${d.col}:${d.path}:${d.message}`;
    if (!seen.has(id)) {
      seen.add(id);
      out.push(d);
    }
  }
  return out;
}

function explainOne(e: ErrorObject, path: Seg[], at: Locator): Located | undefined {
  const here = (message: string, p: Seg[] = path, key?: string): Located => ({ ...at.pos(p, key), path: fieldPath(key ? [...p, key] : p), message });
  const isAction = e.schemaPath.startsWith('#/$defs/action/');
  switch (e.keyword) {
    case 'additionalProperties': {
      const prop = String((e.params as { additionalProperty: string }).additionalProperty);
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const what = isAction ? 'unknown action' : 'unknown key';
      return here(`${what} "${prop}"${suggest(prop, known)}`, path, prop);
    }
    case 'required': {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      return here(`missing required key "${missing}"`);
    }
    case 'minProperties':
      if (isAction) return here(`an action needs one key, one of: ${ACTION_KEYS.join(', ')}`);
      break;
    case 'maxProperties':
      if (isAction) {
        const keys = Object.keys((e.data as object) ?? {});
        return here(`an action has exactly one key, found ${keys.length}: ${keys.join(', ')} (write them as separate steps)`);
      }
      break;
    case 'type': {
      const t = (e.params as { type: string | string[] }).type;
      const types = (Array.isArray(t) ? t : String(t).split(',')).map(typeName);
      return here(`must be ${types.join(' or ')}, got ${describe(e.data)}`);
    }
    case 'minItems':
      return here('must not be empty');
    case 'minLength':
      return here('must not be an empty string');
    case 'minimum':
    case 'maximum':
      return here(`${e.message ?? 'out of range'}, got ${describe(e.data)}`);
  }
  return here(e.message ?? `invalid (${e.keyword})`);
}

function typeName(t: string): string {
  return { string: 'a string', array: 'a list', object: 'a mapping', integer: 'an integer', boolean: 'true or false', number: 'a number', null: 'null' }[t] ?? t;
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `"${v.length > 40 ? v.slice(0, 40) + '…' : v}"`;
  return String(v);
}

/** `; did you mean "x"?` when a candidate is close, else the list of valid names. */
export function suggest(word: string, candidates: readonly string[]): string {
  if (candidates.length === 0) return '';
  const best = closest(word, candidates);
  const limit = Math.max(2, Math.floor(word.length / 3));
  if (distance(word.toLowerCase(), best.toLowerCase()) <= limit) return `; did you mean "${best}"?`;
  return ` (expected one of: ${candidates.join(', ')})`;
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}

// ───────────────────────────── semantic checks ─────────────────────────────

interface RawScript {
  rules: RawRule[];
}
interface RawRule {
  name?: string;
  when?: Record<string, unknown>;
  reply?: Record<string, unknown>[];
  error?: { status: number; message?: string; type?: string };
  delay_ms?: number;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Checks the schema cannot express; tolerant of shapes the schema already rejected. */
function checkSemantics(data: unknown, at: Locator, file: string, bag: DiagnosticBag): void {
  if (!isObj(data) || !Array.isArray(data.rules)) return;
  data.rules.forEach((rule: unknown, i: number) => {
    if (!isObj(rule)) return;
    const rp: Seg[] = ['rules', i];
    const err = (p: Seg[], msg: string, key?: string) => {
      const pos = at.pos(p, key);
      bag.error(file, pos.line, pos.col, fieldPath(key ? [...p, key] : p), msg);
    };
    const hasReply = 'reply' in rule;
    const hasError = 'error' in rule;
    if (!hasReply && !hasError) err(rp, 'a rule needs `reply` (steps to answer with) or `error` (an HTTP error to answer with)');
    if (hasReply && hasError) err(rp, '`reply` and `error` are exclusive: keep one', 'error');

    const when = rule.when;
    if (isObj(when)) {
      const wp: Seg[] = [...rp, 'when'];
      const engines = typeof when.engine === 'string' ? [when.engine] : Array.isArray(when.engine) ? when.engine : [];
      engines.forEach((name: unknown, k: number) => {
        if (typeof name !== 'string' || (ENGINE_NAMES as readonly string[]).includes(name)) return;
        const p = Array.isArray(when.engine) ? [...wp, 'engine', k] : [...wp, 'engine'];
        err(p, `unknown engine "${name}"${suggest(name, ENGINE_NAMES)}`);
      });
      if (typeof when.prompt_matches === 'string') {
        const problem = regexError(when.prompt_matches);
        if (problem) err([...wp, 'prompt_matches'], `invalid regular expression: ${problem}`);
      }
    }

    const checkTemplates = (value: unknown, p: Seg[]): void => {
      if (typeof value === 'string') {
        // Linear: trimmed in code (`\s*([^}]*?)\s*` backtracks quadratically on long blanks), and
        // no `{` inside (a run of `{` would rescan), which is also how model/plan.ts fills them.
        for (const m of value.matchAll(/\{\{([^{}]*)\}\}/g)) {
          const name = m[1]!.trim();
          if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
            err(p, `unknown placeholder "{{${name}}}"${suggest(name, TEMPLATE_VARIABLES)}`);
          }
        }
      } else if (Array.isArray(value)) value.forEach((v, k) => checkTemplates(v, [...p, k]));
      else if (isObj(value)) for (const [k, v] of Object.entries(value)) checkTemplates(v, [...p, k]);
    };
    if (Array.isArray(rule.reply)) checkTemplates(rule.reply, [...rp, 'reply']);
    if (isObj(rule.error)) checkTemplates(rule.error.message, [...rp, 'error', 'message']);
  });
}

// ───────────────────────────── conversion ─────────────────────────────

function list<T>(v: T | T[] | undefined): T[] | undefined {
  return v === undefined ? undefined : Array.isArray(v) ? v : [v];
}

function toRules(raw: RawScript, at: Locator): Rule[] {
  return raw.rules.map((r, index) => {
    const w = r.when ?? {};
    const when: RuleConditions = {};
    if (w.prompt_contains !== undefined) when.promptContains = list(w.prompt_contains as string | string[]);
    if (w.prompt_matches !== undefined) when.promptMatches = compileRegex(w.prompt_matches as string);
    if (w.skill_listed !== undefined) when.skillListed = w.skill_listed as string;
    if (w.skill_loaded !== undefined) when.skillLoaded = w.skill_loaded as string | boolean;
    if (w.turn !== undefined) when.turn = list(w.turn as number | number[]);
    if (w.tool_result_contains !== undefined) when.toolResultContains = list(w.tool_result_contains as string | string[]);
    if (w.engine !== undefined) when.engine = list(w.engine as EngineName | EngineName[]);
    const rule: Rule = { index, line: at.pos(['rules', index]).line, when, delayMs: r.delay_ms ?? 0 };
    if (r.name !== undefined) rule.name = r.name;
    if (r.reply) rule.reply = r.reply.map(toAction);
    if (r.error) {
      rule.error = { status: r.error.status, message: r.error.message ?? `scripted error ${r.error.status}` };
      if (r.error.type) rule.error.type = r.error.type;
    }
    return rule;
  });
}

function toAction(a: Record<string, unknown>): Action {
  const [key, value] = Object.entries(a)[0]!;
  switch (key as (typeof ACTION_KEYS)[number]) {
    case 'use_skill':
      return { kind: 'use_skill', skill: value as string };
    case 'write_file': {
      const v = value as { path: string; content: string };
      return { kind: 'write_file', path: v.path, content: v.content };
    }
    case 'run':
      return { kind: 'run', command: value as string };
    case 'read_file':
      return { kind: 'read_file', path: value as string };
    case 'say':
      return { kind: 'say', text: value as string };
    case 'tool': {
      const v = value as { name: string; input?: Record<string, unknown> };
      return { kind: 'tool', name: v.name, input: v.input ?? {} };
    }
  }
  throw new Error(`unreachable: action ${key}`);
}

/** A rule after one without conditions can never match. */
function unreachableWarnings(rules: Rule[], file: string, at: Locator): ModelScript['warnings'] {
  const catchAll = rules.find((r) => Object.keys(r.when).length === 0);
  if (!catchAll) return [];
  return rules
    .filter((r) => r.index > catchAll.index)
    .map((r) => {
      const pos = at.pos(['rules', r.index]);
      return {
        file,
        line: pos.line,
        col: pos.col,
        path: fieldPath(['rules', r.index]),
        message: `unreachable: rules[${catchAll.index}] (line ${catchAll.line}) has no \`when\` and answers every request`,
        severity: 'warning' as const,
      };
    });
}
