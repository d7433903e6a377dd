/**
 * Trigger eval sets: the JSON file Anthropic skill-creator's description optimiser reads
 * (skills/skill-creator/scripts/run_eval.py `run_eval(eval_set)`, run_loop.py; SKILL.md
 * "Step 1: Generate trigger eval queries"), a JSON array of
 *
 * ```json
 * [{"query": "the user prompt", "should_trigger": true},
 *  {"query": "another prompt", "should_trigger": false}]
 * ```
 *
 * read here item by item (every problem at its line and column: JSON is parsed as YAML, which
 * keeps positions), and turned into trigger cases (CaseSpec.shouldTrigger) for eval.yaml
 * `triggers: {file}` and `skill-up import`.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { CaseSpec } from './types.js';
import { DEFAULT_MAX_TURNS, DEFAULT_TIMEOUT_SECONDS, type CaseDefaults } from './case.js';
import { type DiagnosticBag } from './diagnostics.js';
import { emptyExpect } from './expect.js';
import { skillPath } from './paths.js';
import { Field, firstInvalidUtf8, parseYaml } from './yaml-source.js';
import { jsonSyntaxError } from './json-error.js';

/** One checked item of a trigger eval set. */
export interface TriggerItem {
  query: string;
  shouldTrigger: boolean;
  /** The case id: the item's own `id`, else {@link triggerCaseId} of the query. */
  id: string;
  /** Where the item is written. */
  at: Field;
}

/** The keys an item may have; skill-creator writes the first two. */
const KNOWN_KEYS = new Set(['query', 'should_trigger', 'id']);

const ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** The shape named in messages. */
const SHAPE = '[{"query": "…", "should_trigger": true}, …]';

/**
 * The stable case id of a trigger query: `trigger-`, up to six words of the query (lower case,
 * letters and digits, at most 40 characters), and the first 8 hex digits of the query's SHA-256,
 * so the id does not change when items are added, removed or reordered (what `compare` and
 * `--no-regression` pair cases by) and two different queries never share one.
 */
export function triggerCaseId(query: string): string {
  const words = query
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .slice(0, 6)
    .join('-')
    .slice(0, 40)
    .replace(/-+$/, '');
  const hash = createHash('sha256').update(query, 'utf8').digest('hex').slice(0, 8);
  return `trigger-${words ? `${words}-` : ''}${hash}`;
}

/**
 * Checks the text of a trigger eval set, reporting every problem into `bag` at its line:
 * not JSON, not an array, an empty array, an item that is not an object, a missing or empty
 * `query`, a `should_trigger` that is not `true`/`false`, a bad `id`, the same query (or id)
 * twice. Unknown keys are warnings (ignored).
 * @returns the items that are well formed (a bad item is left out, its problem reported).
 */
export function parseTriggerItems(file: string, raw: string, bag: DiagnosticBag): TriggerItem[] {
  // A UTF-8 byte-order mark (Windows editors write one) is not part of the JSON: dropped, as the
  // YAML readers and the import's own sniffing do. Line numbers are unchanged.
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  try {
    JSON.parse(text);
  } catch (e) {
    const { line, col, message } = jsonSyntaxError(text, (e as Error).message);
    bag.error(file, line, col, '', `not valid JSON: ${message}; expected a trigger eval set ${SHAPE}`);
    return [];
  }
  const src = parseYaml(file, text, bag);
  const root = Field.root(src, bag);
  if (!Array.isArray(root.value)) {
    const got = root.isMap() ? 'an object' : `a single value (${root.value === null ? 'null' : typeof root.value})`;
    const hint = root.isMap() && root.has('evals') ? '; this looks like an evals.json: import it with `skill-up import` or run it with `run --auto`' : '';
    root.error(`a trigger eval set must be a JSON array ${SHAPE}, but this file is ${got}${hint}`);
    return [];
  }
  if (root.value.length === 0) {
    root.error(`the trigger eval set is empty: add items ${SHAPE}`);
    return [];
  }
  const out: TriggerItem[] = [];
  const byId = new Map<string, Field>();
  for (const item of root.items()) {
    if (!item.isMap()) {
      item.error(`an item must be an object {"query": "…", "should_trigger": true|false}, got ${Array.isArray(item.value) ? 'a list' : JSON.stringify(item.value)}`);
      continue;
    }
    for (const [key, f] of item.entries()) {
      if (!KNOWN_KEYS.has(key)) f.warn(`unknown key \`${key}\` in a trigger item; ignored (an item has \`query\`, \`should_trigger\` and optionally \`id\`)`, 'key');
    }
    const q = item.get('query');
    const st = item.get('should_trigger');
    let ok = true;
    if (!item.has('query')) {
      item.error('missing `query`: the user prompt to send (a string)', 'value');
      ok = false;
    } else if (typeof q.value !== 'string') {
      q.error(`\`query\` must be a string (the user prompt), got ${JSON.stringify(q.value)}`);
      ok = false;
    } else if (q.value.trim() === '') {
      q.error('`query` is empty: write the user prompt to send');
      ok = false;
    }
    if (!item.has('should_trigger')) {
      item.error('missing `should_trigger`: true when the skill should be activated by this query, false when it should not', 'value');
      ok = false;
    } else if (typeof st.value !== 'boolean') {
      st.error(`\`should_trigger\` must be true or false, got ${JSON.stringify(st.value)}`);
      ok = false;
    }
    let id: string | undefined;
    if (item.has('id')) {
      const raw = item.get('id').value;
      if (typeof raw !== 'string' || !ID_PATTERN.test(raw)) {
        item.get('id').error(`\`id\` must be a case id (letters, digits, \`_\`, \`-\` and \`.\`, starting with a letter, digit or \`_\`), got ${JSON.stringify(raw)}`);
        ok = false;
      } else id = raw;
    }
    if (!ok) continue;
    const query = q.value as string;
    id ??= triggerCaseId(query);
    const same = byId.get(id.toLowerCase());
    if (same) {
      const what = item.has('id') ? `id \`${id}\`` : 'query';
      (item.has('id') ? item.get('id') : q).error(`the same ${what} is at line ${same.position().line} too; each query is one case, listed once`);
      continue;
    }
    byId.set(id.toLowerCase(), item);
    out.push({ query, shouldTrigger: st.value as boolean, id, at: item });
  }
  return out;
}

/**
 * Reads a trigger eval set from disk (UTF-8, a leading byte-order mark allowed), see {@link parseTriggerItems}. A file that
 * cannot be read is one problem at line 0.
 */
export function readTriggerItems(file: string, bag: DiagnosticBag): TriggerItem[] {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    bag.error(file, 0, 0, '', `${code === 'ENOENT' ? 'not found' : `cannot read: ${code ?? (e as Error).message}`}; expected a trigger eval set ${SHAPE}`);
    return [];
  }
  const bad = firstInvalidUtf8(buf);
  if (bad !== undefined) {
    const line = buf.subarray(0, bad).toString('utf8').split('\n').length;
    bag.error(file, line, 0, '', `not UTF-8: an invalid byte at offset ${bad}; save the file as UTF-8`);
    return [];
  }
  return parseTriggerItems(file, buf.toString('utf8'), bag);
}

/** `{{` is literal in a query (a user prompt is sent as written): escaped for the turn template. */
function literalQuery(query: string): string {
  return query.replace(/\{\{/g, '\\{{');
}

/** A trigger case from one item, with the suite's timeout, turns, artifacts and `trials`. */
export function triggerCase(item: TriggerItem, d: CaseDefaults, opts: { trials?: number; tags?: string[] } = {}): CaseSpec {
  const firstLine = item.query.split('\n')[0]!.trim();
  return {
    id: item.id,
    file: item.at.src.file,
    line: item.at.position('value').line,
    title: firstLine.length > 80 ? `${firstLine.slice(0, 79)}…` : firstLine,
    tags: [...new Set(['trigger', ...(opts.tags ?? [])])],
    turns: [{ content: literalQuery(item.query), capture: [] }],
    context: { files: {} },
    timeoutSeconds: d.timeoutSeconds !== 0 ? d.timeoutSeconds : DEFAULT_TIMEOUT_SECONDS,
    maxTurns: d.maxTurns > 0 ? d.maxTurns : DEFAULT_MAX_TURNS,
    trials: opts.trials ?? d.trials,
    expect: emptyExpect(),
    judges: [],
    collectArtifacts: d.collectArtifacts,
    shouldTrigger: item.shouldTrigger,
  };
}

/**
 * eval.yaml `triggers: {file, trials?, tags?}` → one trigger case per item of the file, each
 * with the Field it was written at (for duplicate-id messages). Problems go into the fields'
 * bag (the trigger file's own into the same bag, at its lines).
 */
export function buildTriggerCases(triggers: Field, d: CaseDefaults): { spec: CaseSpec; at: Field }[] {
  if (!triggers.isMap()) return [];
  const file = skillPath(triggers.get('file'), d.skillDir, 'file', 'trigger file');
  if (!file) return [];
  if (path.extname(file).toLowerCase() !== '.json') triggers.get('file').warn('a trigger file is read as JSON (skill-creator\'s trigger eval set); its name does not end in .json');
  const trials = triggers.get('trials').int();
  const tags = triggers.get('tags').strings();
  return readTriggerItems(file, triggers.bag).map((item) => ({ spec: triggerCase(item, d, { ...(trials !== undefined ? { trials } : {}), tags }), at: item.at }));
}
