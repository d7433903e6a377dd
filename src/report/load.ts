/**
 * Reading a saved result.json back (for `skill-up report`): JSON syntax, then the file's
 * identity (a skill-up result.json of a schema version this code reads), then the full JSON
 * Schema (`schemas/result.schema.json`, ajv, draft 2020-12: the validator `npm run build` wrote
 * as standalone code when it is fresh, else compiled at first use), then the shape of `summary`
 * (which the schema leaves open: the keys every report reads, see `SUMMARY_SHAPE`). A wrong file gets one message saying what the file looks
 * like and what was expected: a skill-creator benchmark.json or grading.json, an Anthropic
 * evals.json, an alibaba/skill-up result.json, a result.json of another schema version.
 */
import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInThisContext } from 'node:vm';
import type { ErrorObject, Name, Options, ValidateFunction } from 'ajv/dist/2020.js';
import { createAjv } from '../config/schema.js';
import { packageRoot } from '../util/package-root.js';
import { RESULT_SCHEMA_VERSION, type ResultDoc } from './result-json.js';

/** A file that is not a readable skill-up result.json. The message is for the user as is. */
export class ResultFileError extends Error {}

const require = createRequire(import.meta.url);

/**
 * The file `npm run build` writes the result schema's validator to, as ajv standalone code
 * (scripts/build-validators.mjs): beside this module, so dist/ has it and src/ (vitest) does
 * not. Not bundled (scripts/bundle.mjs): only a command that reads a result.json needs it, and
 * it is read at that first use, so start-up does not pay for it.
 */
export const GENERATED_RESULT_VALIDATOR = fileURLToPath(new URL('./result-validator.generated.cjs', import.meta.url));

/** Bump when the generated file's layout changes: an older file's fingerprint no longer matches. */
const GENERATOR_VERSION = 1;

/** The options of result.json's ajv: part of the fingerprint, so a change here refuses an older generated file. */
const AJV_OPTIONS = { allErrors: true, strict: true, allowUnionTypes: true } as const satisfies Options;

/**
 * The formats the result schema uses that ajv does not know by itself. The generated code does
 * not copy them: it reads them from the `formats` its loader passes in ({@link resultValidatorFromCode}),
 * so both paths run these very functions.
 */
const FORMATS: Record<string, (s: string) => boolean> = {
  // RFC 3339 date-time, as `new Date().toISOString()` writes it (and any offset form).
  'date-time': (s) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(s) && !Number.isNaN(Date.parse(s)),
};

/** The name the generated code finds {@link FORMATS} under (a parameter of its module wrapper). */
const FORMATS_NAME = 'resultFormats';

let validator: ValidateFunction | undefined;
let schemaText: string | undefined;

/** The text of schemas/result.schema.json, read once. */
function resultSchemaText(): string {
  schemaText ??= readFileSync(path.join(packageRoot(), 'schemas', 'result.schema.json'), 'utf8');
  return schemaText;
}

/** The result schema's validator: the generated one when it is there and fresh, else compiled (about 250 ms). */
function compile(): ValidateFunction {
  validator ??= loadGeneratedResultValidator() ?? compileResultValidator();
  return validator;
}

function ajvWith(options: Options): ReturnType<typeof createAjv> {
  const ajv = createAjv(options);
  for (const [name, check] of Object.entries(FORMATS)) ajv.addFormat(name, check);
  return ajv;
}

/** The result schema compiled at run time (the slow path: ajv's code generator). */
export function compileResultValidator(): ValidateFunction {
  return ajvWith(AJV_OPTIONS).compile(JSON.parse(resultSchemaText()) as object);
}

/**
 * What the generated validator must have been built from: a sha256 (hex) over the generator's
 * version, ajv's version, the options, the formats' names and the schema file's text.
 */
export function resultSchemaFingerprint(): string {
  const ajvVersion = (JSON.parse(readFileSync(require.resolve('ajv/package.json'), 'utf8')) as { version: string }).version;
  const inputs = { generator: GENERATOR_VERSION, ajv: ajvVersion, options: AJV_OPTIONS, formats: Object.keys(FORMATS) };
  return createHash('sha256').update(JSON.stringify(inputs)).update('\0').update(resultSchemaText()).digest('hex');
}

/**
 * The source of {@link GENERATED_RESULT_VALIDATOR}: ajv standalone code (CommonJS) exporting
 * `result` (the validator) and `fingerprint` ({@link resultSchemaFingerprint}). Written by
 * scripts/build-validators.mjs; deterministic for the same schema, ajv and options.
 */
export function resultValidatorCode(): string {
  const codegen = require('ajv/dist/2020.js') as { Name: typeof Name };
  const ajv = ajvWith({ ...AJV_OPTIONS, code: { source: true, formats: new codegen.Name(FORMATS_NAME) } });
  const schema = JSON.parse(resultSchemaText()) as { $id: string };
  ajv.addSchema(schema);
  const standalone = require('ajv/dist/standalone/index.js') as { default: (ajv: unknown, refs: Record<string, string>) => string };
  return `// Generated by scripts/build-validators.mjs from schemas/result.schema.json (ajv standalone code): do not edit.\n${standalone.default(ajv, { result: schema.$id })}\nexports.fingerprint = ${JSON.stringify(resultSchemaFingerprint())};\n`;
}

/**
 * The validator of a generated file (`file`, default {@link GENERATED_RESULT_VALIDATOR}), or
 * undefined when there is none, it cannot be read or run, or its fingerprint is not the
 * current one (a stale file is never used).
 */
export function loadGeneratedResultValidator(file: string = GENERATED_RESULT_VALIDATOR): ValidateFunction | undefined {
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  // Checked before the code runs: a stale file is not even compiled.
  if (/^exports\.fingerprint = "([0-9a-f]{64})";$/m.exec(code)?.[1] !== resultSchemaFingerprint()) return undefined;
  try {
    return resultValidatorFromCode(code, file);
  } catch {
    return undefined;
  }
}

/**
 * Runs standalone validator code (as {@link resultValidatorCode} writes it) as a CommonJS
 * module whose `require` resolves from this module (ajv's runtime helpers) and that sees
 * {@link FORMATS}. @throws Error when the code fails or exports no validator
 */
export function resultValidatorFromCode(code: string, filename = GENERATED_RESULT_VALIDATOR): ValidateFunction {
  const module = { exports: {} as Record<string, unknown> };
  const fn = runInThisContext(`(function (exports, require, module, ${FORMATS_NAME}) {${code}\n})`, { filename }) as (e: unknown, r: NodeJS.Require, m: unknown, f: unknown) => void;
  fn(module.exports, require, module, FORMATS);
  const v = module.exports.result;
  if (typeof v !== 'function') throw new Error('generated result validator: no `result` export');
  return v as ValidateFunction;
}

const EXPECTED = 'expected a skill-up result.json (written by `skill-up run` into its iteration folder)';

/**
 * Reads and checks `file`. A folder is accepted when it holds `result.json`.
 *
 * With `journal: true` (`skill-up report`), a run folder whose journal.jsonl is newer than
 * its result.json, or that has no result.json (the run was killed), is rebuilt from the
 * journal (src/run/resume.ts); `rebuilt` then says why, and `file` is where result.json goes.
 *
 * @throws ResultFileError with one clear message for a missing, unreadable or wrong file.
 */
export async function loadResultDoc(file: string, opts: { journal?: boolean } = {}): Promise<{ doc: ResultDoc; file: string; rebuilt?: string }> {
  let target = path.resolve(file);
  let st;
  try {
    st = await stat(target);
  } catch {
    throw new ResultFileError(`${file}: not found; ${EXPECTED}`);
  }
  if (opts.journal && !st.isDirectory() && path.basename(target) === 'journal.jsonl') return fromJournal(path.dirname(target), 'asked for');
  if (st.isDirectory()) {
    const inside = path.join(target, 'result.json');
    const result = await stat(inside).catch(() => undefined);
    const journal = await stat(path.join(target, 'journal.jsonl')).catch(() => undefined);
    if (opts.journal && journal && !result) return fromJournal(target, 'no result.json');
    if (opts.journal && journal && result && journal.mtimeMs > result.mtimeMs) {
      // A resume killed after result.json was written: the journal holds newer results. (A
      // copied folder can be newer too without holding anything new: then result.json stands.)
      const fresh = await fromJournal(target, 'newer than result.json');
      const saved = await readFile(inside, 'utf8').then((t) => parseResultDoc(t, file)).catch(() => undefined);
      const attempts = (d: ResultDoc) => JSON.stringify(d.jobs.map((j) => [j.id, j.started_at]).sort());
      if (!saved || attempts(saved) !== attempts(fresh.doc)) return fresh;
    }
    if (!result) {
      const hint = journal ? ' (it holds the journal.jsonl of a run that was killed: `skill-up report <folder>` rebuilds result.json from it)' : '';
      throw new ResultFileError(`${file}: is a folder without result.json${hint}; ${EXPECTED}`);
    }
    target = inside;
  }
  // The schema is compiled (when no generated validator is in force) before the file is read, so
  // the compiler's garbage (about 20 MB) is reused rather than added to the peak of a large
  // document's text and parsed value.
  compile();
  // No variable holds the text: it is garbage as soon as it is parsed, before the schema check.
  return { doc: checkResultData(parseJson(readText(target, file), file), file), file: target };
}

/** The text of `target`. @throws ResultFileError `<file>: cannot read: <code>` */
function readText(target: string, file: string): string {
  try {
    // Read whole and synchronously (fs/promises readFile holds the bytes and a second copy while
    // decoding: 45 MB more peak RSS for a 30 MB result.json). An ASCII file, as JSON.stringify
    // writes most runs, is decoded as Latin-1, the same characters: Node then keeps the text
    // outside V8's heap (it is garbage once parsed), and copying it is faster than UTF-8 decoding.
    const bytes = readFileSync(target);
    return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  } catch (e) {
    throw new ResultFileError(`${file}: cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** The result.json document of the run in `dir`, rebuilt from its journal and checked like a file. @throws ResultFileError */
async function fromJournal(dir: string, why: string): Promise<{ doc: ResultDoc; file: string; rebuilt: string }> {
  const journal = path.join(dir, 'journal.jsonl');
  let doc: ResultDoc;
  try {
    const { rebuildFromJournal } = await import('../run/resume.js');
    doc = await rebuildFromJournal(dir);
  } catch (e) {
    throw new ResultFileError(`${journal}: the run cannot be rebuilt from it: ${(e as Error).message}`);
  }
  // Checked as plain JSON data, one job at a time: no string ever holds the whole document.
  const { jobs, ...rest } = doc;
  const plain = { ...(JSON.parse(JSON.stringify(rest)) as object), jobs: jobs.map((j) => JSON.parse(JSON.stringify(j)) as unknown) };
  return { doc: checkResultData(plain, journal), file: path.join(dir, 'result.json'), rebuilt: why };
}

/** Parses and checks the text of a result.json; `name` is used in messages. @throws ResultFileError */
export function parseResultDoc(text: string, name: string): ResultDoc {
  return checkResultData(parseJson(text, name), name);
}

/** `JSON.parse(text)`; `name` is used in the message. @throws ResultFileError naming the line and column, and what the text looks like */
function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    const where = jsonErrorPosition(text, (e as Error).message);
    const looks = /^\s*</.test(text) ? ' (it looks like XML or HTML: report.xml and report.html are outputs, not inputs)' : /^\s*(#|\w+:)/.test(text) ? ' (it looks like YAML or Markdown)' : '';
    throw new ResultFileError(`${name}${where}: not valid JSON${looks}; ${EXPECTED}`);
  }
}

/**
 * Checks parsed JSON data as a result.json: its identity, the schema, the summary's shape.
 * Jobs may carry a final message's file reference (`final_message_file`, `final_message_bytes`,
 * `final_message_truncated`; the same `final_text_*` per turn): `final_message` is then a
 * preview and the whole message is in that file of the job folder.
 *
 * @throws ResultFileError
 */
export function checkResultData(data: unknown, name: string): ResultDoc {
  const identity = identify(data);
  if (identity) throw new ResultFileError(`${name}: ${identity}`);
  const validate = compile();
  if (!validate(data)) {
    const errs = (validate.errors ?? []).slice(0, 5).map(describe);
    const more = (validate.errors?.length ?? 0) > 5 ? ` (and ${validate.errors!.length - 5} more)` : '';
    throw new ResultFileError(`${name}: does not match schemas/result.schema.json: ${errs.join('; ')}${more}`);
  }
  const problem = summaryProblem((data as { summary: unknown }).summary);
  if (problem) throw new ResultFileError(`${name}: ${problem} (the stats block of result.json is incomplete or was edited)`);
  return data as ResultDoc;
}

type Check = (v: unknown) => boolean;
const isNum: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const isStr: Check = (v) => typeof v === 'string';
const isBool: Check = (v) => typeof v === 'boolean';
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nullable = (c: Check): Check => (v) => v === null || c(v);
const oneOf = (...xs: string[]): Check => (v) => typeof v === 'string' && xs.includes(v);
const isRange: Check = (v) => isObj(v) && isNum(v.low) && isNum(v.high);
const isArmErrors: Check = (v) => isObj(v) && isNum(v.errors) && isNum(v.trials);
const isList: Check = Array.isArray;
const VARIANT = oneOf('with_skill', 'without_skill');

/** What `summary` (the stats stage's RunStats, snake_case) must hold for the reports to read it; each key with what it must be. */
const SUMMARY_SHAPE: Record<'cases' | 'variants' | 'uplift', Record<string, [Check, string]>> = {
  cases: { engine: [isStr, 'a string'], case_id: [isStr, 'a string'], variant: [VARIANT, '"with_skill" or "without_skill"'], pass_rate: [nullable(isNum), 'a number or null'], wilson: [isRange, 'an interval {low, high}'] },
  variants: {
    engine: [isStr, 'a string'],
    variant: [VARIANT, '"with_skill" or "without_skill"'],
    pass_rate: [nullable(isNum), 'a number or null'],
    interval: [nullable(isRange), 'a case-clustered interval {low, high, …} or null'],
    cases: [isNum, 'a number'],
    graded_cases: [isNum, 'a number'],
    trials: [isNum, 'a number'],
    passed: [isNum, 'a number'],
    failed: [isNum, 'a number'],
    errors: [isNum, 'a number'],
    skipped: [isNum, 'a number'],
  },
  uplift: {
    engine: [isStr, 'a string'],
    compared_cases: [isNum, 'a number'],
    pass_rate_delta: [nullable(isNum), 'a number or null'],
    interval: [nullable(isRange), 'an interval {low, high} or null'],
    with_rate: [nullable(isNum), 'a number or null'],
    without_rate: [nullable(isNum), 'a number or null'],
    with_interval: [nullable(isRange), 'an interval {low, high, …} or null'],
    without_interval: [nullable(isRange), 'an interval {low, high, …} or null'],
    verdict: [oneOf('improves', 'regresses', 'inconclusive'), 'one of "improves", "regresses", "inconclusive"'],
    reason: [isStr, 'a string'],
    p: [isNum, 'a number'],
    p_adjusted: [isNum, 'a number'],
    p_method: [oneOf('exact', 'monte_carlo'), '"exact" or "monte_carlo"'],
    alpha: [isNum, 'a number'],
    wins: [isNum, 'a number'],
    ties: [isNum, 'a number'],
    losses: [isNum, 'a number'],
    sign_test_p: [isNum, 'a number'],
    dropped: [isList, 'a list'],
    errors: [(v) => isObj(v) && isArmErrors(v.with) && isArmErrors(v.without), '{with: {errors, trials}, without: {errors, trials}}'],
  },
};

/** The first way `summary` differs from what the reports read, as `summary.<path> must be …`; undefined when it is well formed (used by the HTML report too). */
export function summaryProblem(s: unknown): string | undefined {
  if (!isObj(s)) return 'summary must be an object';
  const o = s.options;
  if (!isObj(o) || !isNum(o.alpha) || !isBool(o.errors_as_failures) || !isNum(o.max_error_rate)) return 'summary.options must be {alpha, errors_as_failures, max_error_rate}';
  for (const [list, shape] of Object.entries(SUMMARY_SHAPE)) {
    const items = s[list];
    if (!Array.isArray(items)) return `summary.${list} must be a list`;
    for (const [i, item] of items.entries()) {
      if (!isObj(item)) return `summary.${list}.${i} must be an object`;
      for (const [key, [check, what]] of Object.entries(shape)) if (!check(item[key])) return `summary.${list}.${i}.${key} must be ${what}`;
    }
  }
  return undefined;
}

/** Names what `data` is when it is recognisably not a skill-up result.json of this version; undefined otherwise. */
function identify(data: unknown): string | undefined {
  if (Array.isArray(data)) {
    const first = data[0] as Record<string, unknown> | undefined;
    if (first && typeof first === 'object' && 'query' in first && 'should_trigger' in first) {
      return `is a skill-creator trigger eval set ([{query, should_trigger}]); ${EXPECTED}`;
    }
    return `is a JSON list; ${EXPECTED}`;
  }
  if (!data || typeof data !== 'object') return `is a single JSON value (${data === null ? 'null' : typeof data}); ${EXPECTED}`;
  const o = data as Record<string, unknown>;
  const has = (...keys: string[]) => keys.every((k) => k in o);
  if (has('metadata', 'runs', 'run_summary')) return `is a skill-creator benchmark.json (the summary of a run); ${EXPECTED}, found in the same iteration folder`;
  if (has('expectations', 'summary') && !has('jobs')) return `is a grading.json of one run; ${EXPECTED}, found in the iteration folder two levels above the run's`;
  if (has('skill_name', 'evals')) return 'is an Anthropic evals.json (eval definitions, not results); convert it with `skill-up import` and run it with `skill-up run`, or run it as is with `skill-up run --auto`';
  if (has('eval_id', 'prompt')) return `is a skill-creator eval_metadata.json of one eval; ${EXPECTED}`;
  if (has('reviews')) return `is a skill-creator viewer feedback.json; ${EXPECTED}`;
  if (has('case_results') || (has('skill_name') && has('engine_name'))) {
    return `is an alibaba/skill-up result.json (its report format, with \`case_results\`); this skill-up reads its own result.json (schema_version "${RESULT_SCHEMA_VERSION}", with \`jobs\`)`;
  }
  if (has('type') && o.type === 'run' && has('evalFile')) return `is the first line of a journal.jsonl; ${EXPECTED}`;
  const tool = o.tool as Record<string, unknown> | undefined;
  if (tool && tool.name === 'skill-up' && 'schema_version' in o && o.schema_version !== RESULT_SCHEMA_VERSION) {
    const older = Number(o.schema_version) < Number(RESULT_SCHEMA_VERSION);
    const what = `is a result.json of schema_version ${JSON.stringify(o.schema_version)} (written by skill-up ${String(tool.version ?? '?')}); this skill-up reads schema_version "${RESULT_SCHEMA_VERSION}" only`;
    return older
      ? `${what} (its statistics changed: case-clustered intervals, a three-state verdict, gates): run the suite again with \`skill-up run\` to get a result.json it can report on`
      : `${what}: read it with the skill-up version that wrote it, or a newer one`;
  }
  if (!('schema_version' in o) && !('jobs' in o)) {
    const keys = Object.keys(o).slice(0, 6).map((k) => `\`${k}\``).join(', ');
    return `is a JSON object with ${keys || 'no keys'}, not a skill-up result.json; ${EXPECTED}`;
  }
  return undefined;
}

function describe(e: ErrorObject): string {
  const at = e.instancePath ? e.instancePath.replace(/\//g, '.').replace(/^\./, '') : '(root)';
  if (e.keyword === 'required') return `${at === '(root)' ? '' : `${at}: `}missing \`${(e.params as { missingProperty: string }).missingProperty}\``;
  if (e.keyword === 'additionalProperties') return `${at}: unknown key \`${(e.params as { additionalProperty: string }).additionalProperty}\``;
  if (e.keyword === 'enum') return `${at}: must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
  if (e.keyword === 'const') return `${at}: must be ${JSON.stringify((e.params as { allowedValue: unknown }).allowedValue)}`;
  return `${at}: ${e.message ?? e.keyword}`;
}

/** ` (line L, column C)` from a JSON.parse message's position, when it has one. */
function jsonErrorPosition(text: string, message: string): string {
  const m = /position (\d+)/.exec(message);
  if (!m) return '';
  const offset = Number(m[1]);
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  return `:${line}:${col}`;
}
