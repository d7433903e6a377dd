/**
 * Loads a scripted-model rule file (YAML) and validates it against
 * `schemas/model-script.schema.json` (JSON Schema 2020-12, ajv), then checks what a schema
 * cannot express (engine names, regexes, `{{placeholders}}`, `reply` xor `error`, `mcp_tool`
 * names).
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
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError, DiagnosticBag } from '../config/diagnostics.js';
import { MODEL_SCRIPT_SCHEMA_ID, schemaPath } from '../config/schema.js';
import { reportSchemaErrors, type Phrasing, type SchemaProblem } from '../config/schema-errors.js';
import { Field, formatPath, parseYaml, type Segment } from '../config/yaml-source.js';
import { nearest } from '../util/did-you-mean.js';
import { compileRegex, regexError } from '../util/regex.js';
import { canonicalRuleEngine, engineSpellings, type Action, type ModelScript, type Rule, type RuleConditions } from './types.js';
import { placeholderNames, TEMPLATE_VARIABLES } from './plan.js';
import { parseMcpToolCallName } from '../engine/mcp.js';

export { TEMPLATE_VARIABLES };

const ACTION_KEYS = ['use_skill', 'write_file', 'run', 'read_file', 'say', 'tool', 'mcp_tool'] as const;

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
  // The reader, schema check and error translation of eval.yaml (src/config/), worded as
  // model-script diagnostics always were.
  const src = parseYaml(file, text, bag);
  bag.throwIfErrors();
  const root = Field.root(src, bag);
  const data = src.data;
  if (data === null || data === undefined) {
    bag.error(file, 1, 1, '', 'the script is empty: expected a mapping with `rules:` (a list of rules)');
    bag.throwIfErrors();
  }
  reportSchemaErrors('model-script', root, phraseScriptProblem);
  checkSemantics(root);
  bag.throwIfErrors();

  const rules = toRules(data as RawScript, root);
  return { file, rules, warnings: unreachableWarnings(rules, root) };
}

/** Absolute path of the shipped schema (`schemas/model-script.schema.json`). */
export function modelScriptSchemaPath(): string {
  return schemaPath('model-script.schema.json');
}

/** `rules[1].reply[0].write_file` */
export function fieldPath(path: Segment[]): string {
  return formatPath(path);
}

/** Model-script wording of a schema problem: `unknown action "x"; did you mean "y"?`, `must be a list, got 3`. */
function phraseScriptProblem(p: SchemaProblem): Phrasing | undefined {
  const e = p.error;
  // The action mapping itself (`#/$defs/action/additionalProperties`), not a key inside one (`mcp_tool.args`).
  const actionKeyword = /^(?:[^#]*)#\/\$defs\/action\/([^/]+)$/.exec(e.schemaPath);
  const isAction = actionKeyword !== null && (e.schemaPath.startsWith(`${MODEL_SCRIPT_SCHEMA_ID}#`) || e.schemaPath.startsWith('#'));
  const here = (message: string): Phrasing => ({ message, at: 'value' });
  switch (e.keyword) {
    case 'additionalProperties': {
      const prop = String((e.params as { additionalProperty: string }).additionalProperty);
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      const what = isAction ? 'unknown action' : 'unknown key';
      return { message: `${what} "${prop}"${suggest(prop, known)}`, at: 'key', child: prop };
    }
    case 'required':
      return here(`missing required key "${String((e.params as { missingProperty: string }).missingProperty)}"`);
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
    case 'pattern': {
      const expected = (e.parentSchema as { 'x-expected'?: unknown } | undefined)?.['x-expected'];
      if (typeof expected === 'string') return here(`must be ${expected}, got ${describe(e.data)}`);
      break;
    }
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

/** `; did you mean "x"?` when a candidate is close (src/util/did-you-mean.ts), else the list of valid names. */
export function suggest(word: string, candidates: readonly string[]): string {
  if (candidates.length === 0) return '';
  // `write` → `write_file`: a name cut short at a word boundary is a typo too, whatever the edit distance.
  const best = nearest(word, candidates, { maxDistance: Math.max(2, Math.floor(word.length / 3)) }) ?? (word.length >= 3 ? candidates.find((c) => c.startsWith(`${word}_`)) : undefined);
  if (best !== undefined) return `; did you mean "${best}"?`;
  return ` (expected one of: ${candidates.join(', ')})`;
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
function checkSemantics(root: Field): void {
  const data = root.value;
  if (!isObj(data) || !Array.isArray(data.rules)) return;
  data.rules.forEach((rule: unknown, i: number) => {
    if (!isObj(rule)) return;
    const rp: Segment[] = ['rules', i];
    const err = (p: Segment[], msg: string, key?: string) => {
      let f = root;
      for (const seg of p) f = f.get(seg);
      if (key !== undefined) f.get(key).error(msg, 'key');
      else f.error(msg);
    };
    const hasReply = 'reply' in rule;
    const hasError = 'error' in rule;
    if (!hasReply && !hasError) err(rp, 'a rule needs `reply` (steps to answer with) or `error` (an HTTP error to answer with)');
    if (hasReply && hasError) err(rp, '`reply` and `error` are exclusive: keep one', 'error');

    const when = rule.when;
    if (isObj(when)) {
      const wp: Segment[] = [...rp, 'when'];
      const engines = typeof when.engine === 'string' ? [when.engine] : Array.isArray(when.engine) ? when.engine : [];
      engines.forEach((name: unknown, k: number) => {
        if (typeof name !== 'string' || canonicalRuleEngine(name) !== undefined) return;
        const p = Array.isArray(when.engine) ? [...wp, 'engine', k] : [...wp, 'engine'];
        err(p, `unknown engine "${name}"${suggest(name, engineSpellings())}`);
      });
      if (typeof when.prompt_matches === 'string') {
        const problem = regexError(when.prompt_matches);
        if (problem) err([...wp, 'prompt_matches'], `invalid regular expression: ${problem}`);
      }
    }

    const checkTemplates = (value: unknown, p: Segment[]): void => {
      if (typeof value === 'string') {
        // The grammar model/plan.ts fills them by.
        for (const name of placeholderNames(value)) {
          if (!(TEMPLATE_VARIABLES as readonly string[]).includes(name)) {
            err(p, `unknown placeholder "{{${name}}}"${suggest(name, TEMPLATE_VARIABLES)}`);
          }
        }
      } else if (Array.isArray(value)) value.forEach((v, k) => checkTemplates(v, [...p, k]));
      else if (isObj(value)) for (const [k, v] of Object.entries(value)) checkTemplates(v, [...p, k]);
    };
    if (Array.isArray(rule.reply)) {
      checkTemplates(rule.reply, [...rp, 'reply']);
      rule.reply.forEach((a: unknown, k: number) => {
        if (isObj(a) && isObj(a.mcp_tool)) checkMcpTool(a.mcp_tool, [...rp, 'reply', k, 'mcp_tool'], err);
      });
    }
    if (isObj(rule.error)) checkTemplates(rule.error.message, [...rp, 'error', 'message']);
  });
}

/**
 * What the schema cannot say about an `mcp_tool`: a server name holds no `__` (the canonical
 * `mcp__<server>__<tool>` could not be split back), and `tool` is the server's own tool name,
 * not an engine's name for it (`mcp__tickets__get_ticket` where `get_ticket` is meant).
 */
function checkMcpTool(v: Record<string, unknown>, p: Segment[], err: (p: Segment[], msg: string) => void): void {
  const server = typeof v.server === 'string' ? v.server : undefined;
  const tool = typeof v.tool === 'string' ? v.tool : undefined;
  if (server?.includes('__')) err([...p, 'server'], `an MCP server name has no \`__\` (tools are named \`mcp__<server>__<tool>\`), got "${server}"`);
  // Only the canonical form is refused: a server's own tool may well start with its name (`slack_post_message`).
  const canonical = tool === undefined ? undefined : parseMcpToolCallName(tool);
  if (canonical) {
    err([...p, 'tool'], `\`tool\` is the tool's own name on the server: write \`server: ${canonical.server}, tool: ${canonical.tool}\`, not the engine's name "${tool}"`);
  }
}

// ───────────────────────────── conversion ─────────────────────────────

function list<T>(v: T | T[] | undefined): T[] | undefined {
  return v === undefined ? undefined : Array.isArray(v) ? v : [v];
}

function toRules(raw: RawScript, root: Field): Rule[] {
  return raw.rules.map((r, index) => {
    const w = r.when ?? {};
    const when: RuleConditions = {};
    if (w.prompt_contains !== undefined) when.promptContains = list(w.prompt_contains as string | string[]);
    if (w.prompt_matches !== undefined) when.promptMatches = compileRegex(w.prompt_matches as string);
    if (w.skill_listed !== undefined) when.skillListed = w.skill_listed as string;
    if (w.skill_loaded !== undefined) when.skillLoaded = w.skill_loaded as string | boolean;
    if (w.turn !== undefined) when.turn = list(w.turn as number | number[]);
    if (w.tool_result_contains !== undefined) when.toolResultContains = list(w.tool_result_contains as string | string[]);
    if (w.tool_listed !== undefined) when.toolListed = list(w.tool_listed as string | string[]);
    // An alias (`claude-code`) names its engine: requests carry the canonical name.
    if (w.engine !== undefined) when.engine = list(w.engine as string | string[])!.map((n) => canonicalRuleEngine(n) ?? n);
    if (w.judge !== undefined) when.judge = w.judge as boolean;
    if (w.simulator !== undefined) when.simulator = w.simulator as boolean;
    const rule: Rule = { index, line: root.get('rules').get(index).position().line, when, delayMs: r.delay_ms ?? 0 };
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
    case 'mcp_tool': {
      const v = value as { server: string; tool: string; input?: Record<string, unknown> };
      return { kind: 'mcp_tool', server: v.server, tool: v.tool, input: v.input ?? {} };
    }
  }
  throw new Error(`unreachable: action ${key}`);
}

/** A rule after one without conditions can never match. */
function unreachableWarnings(rules: Rule[], root: Field): ModelScript['warnings'] {
  const file = root.src.file;
  const catchAll = rules.find((r) => Object.keys(r.when).length === 0);
  if (!catchAll) return [];
  return rules
    .filter((r) => r.index > catchAll.index)
    .map((r) => {
      const pos = root.get('rules').get(r.index).position();
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
