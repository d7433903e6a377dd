/**
 * GitHub Actions integration of `skill-up run`, so the action (action.yml) stays thin and any
 * CI that speaks GitHub's workflow commands gets the same: on `GITHUB_ACTIONS=true` or with
 * `--github`,
 *
 * - summary.md is appended to `$GITHUB_STEP_SUMMARY`;
 * - the step outputs (`gate`, `verdict`, `pass-rate`, `uplift`, `result`, `report`, …, see
 *   {@link githubOutputs}) are appended to `$GITHUB_OUTPUT`, multi-line values in the heredoc
 *   form with a random delimiter;
 * - every case with a failed with_skill trial or an errored trial (either arm) gets one
 *   `::error file=…,line=…,title=<case id>::<reason>` annotation on stdout, every failed gate an
 *   `::error`, every inconclusive gate a `::warning`.
 *
 * The builders are pure (result.json document + case locations in, text out); only
 * {@link publishToGithub} touches the outside world. Everything written is scanned for secrets
 * first, as every report is (src/report/redact.ts). Escaping follows GitHub's workflow-command
 * rules (actions/toolkit `command.ts`): `%`, `\r`, `\n` in the message; also `:` and `,` in
 * properties.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { appendText } from '../util/out.js';
import { isAbsolute, join, relative, sep } from 'node:path';
import { buildSummaryMarkdown } from './markdown.js';
import { redact, secretValues } from './redact.js';
import type { JobJson, ResultDoc } from './result-json.js';
import { oneLine as cutOneLine } from '../util/cut.js';

/** Where a case is written: its file (absolute) and 1-based line. */
export interface CaseLocation {
  id: string;
  file: string;
  line?: number;
}

/** What the builders need besides the result document. */
export interface GithubContext {
  /** The suite's cases (CaseSpec has these fields), for annotation file and line. */
  cases: readonly CaseLocation[];
  /** Folder annotation paths are made relative to: `$GITHUB_WORKSPACE`, else the current folder. */
  root: string;
  /** The iteration folder the reports were written to. */
  dir: string;
  /** Absolute paths of the report files written (WriteResult.written). */
  written: readonly string[];
}

/** `--github`, or GitHub's own marker `GITHUB_ACTIONS=true`. */
export function githubEnabled(flag: boolean | undefined, env: Record<string, string | undefined> = process.env): boolean {
  return Boolean(flag) || env.GITHUB_ACTIONS === 'true';
}

/** A workflow command's message: `%`, CR and LF escaped. */
export function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A workflow command's property value: as {@link escapeData}, plus `:` and `,`. */
export function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** `::kind prop=value,…::message`, every part escaped; undefined properties are left out. */
export function workflowCommand(kind: 'error' | 'warning' | 'notice', props: Record<string, string | number | undefined>, message: string): string {
  const p = Object.entries(props)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => `${k}=${escapeProperty(String(v))}`)
    .join(',');
  return `::${kind}${p ? ` ${p}` : ''}::${escapeData(message)}`;
}

/** Characters kept of one reason or piece of evidence in an annotation. */
const REASON_CHARS = 400;

/** One line, at most `max` characters. */
function oneLine(s: string, max = REASON_CHARS): string {
  return cutOneLine(s, max);
}

/** The file property of an annotation: relative to `root` with `/` when inside it, else absolute. */
export function annotationPath(file: string, root: string): string {
  const rel = relative(root, file);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return file;
  return rel.split(sep).join('/');
}

function engineNames(doc: ResultDoc): (engine: string) => string {
  const names = new Map<string, string>();
  for (const e of doc.engines) if (!names.has(e.name)) names.set(e.name, e.display_name);
  return (e) => names.get(e) ?? e;
}

interface CaseProblems {
  caseId: string;
  /** engine → with_skill failures and graded trials. */
  failed: Map<string, { jobs: JobJson[]; graded: number }>;
  /** engine + variant + reason → errored trials. */
  errors: Map<string, { engine: string; variant: string; reason: string; trials: number[] }>;
}

/** Cases with a failed with_skill trial or an errored trial, in the order of their first job. */
function problemCases(doc: ResultDoc): CaseProblems[] {
  const byCase = new Map<string, CaseProblems>();
  const get = (id: string) => {
    let p = byCase.get(id);
    if (!p) byCase.set(id, (p = { caseId: id, failed: new Map(), errors: new Map() }));
    return p;
  };
  const graded = new Map<string, number>();
  for (const j of doc.jobs) {
    if (j.variant === 'with_skill' && (j.status === 'pass' || j.status === 'fail')) {
      const k = JSON.stringify([j.case_id, j.engine]);
      graded.set(k, (graded.get(k) ?? 0) + 1);
    }
    if (j.variant === 'with_skill' && j.status === 'fail') {
      const f = get(j.case_id).failed;
      const e = f.get(j.engine) ?? { jobs: [], graded: 0 };
      e.jobs.push(j);
      f.set(j.engine, e);
    } else if (j.status === 'error') {
      const reason = j.reason ?? 'no reason recorded';
      const errors = get(j.case_id).errors;
      const k = JSON.stringify([j.engine, j.variant, reason]);
      const e = errors.get(k) ?? { engine: j.engine, variant: j.variant, reason, trials: [] };
      e.trials.push(j.trial);
      errors.set(k, e);
    }
  }
  for (const p of byCase.values()) for (const [engine, f] of p.failed) f.graded = graded.get(JSON.stringify([p.caseId, engine])) ?? f.jobs.length;
  return [...byCase.values()];
}

const trialList = (ts: number[]) => ts.map((t) => `#${t}`).join(', ');

/** The annotation message of one case: one line per engine that failed and per error reason. */
function caseMessage(p: CaseProblems, name: (e: string) => string): string {
  const lines: string[] = [];
  for (const [engine, f] of p.failed) {
    const first = f.jobs[0]!;
    const assertion = first.assertions.find((a) => !a.passed);
    const why = assertion ? `${oneLine(assertion.text, 200)}: ${oneLine(assertion.evidence)}` : oneLine(first.reason ?? 'failed without a failed assertion');
    lines.push(`failed ${f.jobs.length} of ${f.graded} with_skill trial(s) on ${name(engine)} (${trialList(f.jobs.map((j) => j.trial))}): ${why}`);
  }
  for (const e of p.errors.values()) {
    lines.push(`errored in ${e.trials.length} ${e.variant} trial(s) on ${name(e.engine)} (${trialList(e.trials)}): ${oneLine(e.reason)}`);
  }
  return lines.join('\n');
}

/**
 * The annotation lines of a run: failed gates (`::error`), inconclusive gates (`::warning`),
 * then one `::error` per case with a failed with_skill trial or an errored trial, at the case's
 * file and line (the case file, or eval.yaml's inline item). Pure.
 */
export function githubAnnotations(doc: ResultDoc, ctx: Pick<GithubContext, 'cases' | 'root'>, fileExists: (file: string) => boolean = existsSync): string[] {
  const name = engineNames(doc);
  const out: string[] = [];
  for (const g of doc.gates ?? []) {
    if (g.state === 'pass') continue;
    const title = `skill-up gate ${g.name}${g.engine ? ` (${name(g.engine)})` : ''} ${g.state === 'fail' ? 'failed' : 'inconclusive'}`;
    out.push(workflowCommand(g.state === 'fail' ? 'error' : 'warning', { title }, g.reason));
  }
  const where = new Map<string, CaseLocation>();
  for (const c of ctx.cases) if (!where.has(c.id)) where.set(c.id, c);
  for (const p of problemCases(doc)) {
    const at = where.get(p.caseId);
    // A case converted in memory (`run --auto`) has no file on disk to point at.
    const file = at && fileExists(at.file) ? annotationPath(at.file, ctx.root) : undefined;
    out.push(workflowCommand('error', { file, line: file ? (at!.line ?? 1) : undefined, title: p.caseId }, caseMessage(p, name)));
  }
  return out;
}

/** `pass`, `fail` or `inconclusive`: fail if any gate failed, else inconclusive if any is, else pass. */
export function gateState(doc: Pick<ResultDoc, 'gates' | 'exit_code'>): 'pass' | 'fail' | 'inconclusive' {
  const gates = doc.gates ?? [];
  if (gates.length === 0) return doc.exit_code === 0 ? 'pass' : doc.exit_code === 4 ? 'inconclusive' : 'fail';
  if (gates.some((g) => g.state === 'fail')) return 'fail';
  if (gates.some((g) => g.state === 'inconclusive')) return 'inconclusive';
  return 'pass';
}

const round = (x: number, digits: number) => String(Number(x.toFixed(digits)));

/** Per engine: the verdict, the with_skill pass rate (a fraction) and the uplift (points); '' where not measured. */
function engineFigures(doc: ResultDoc, engine: string): { verdict: string; passRate: string; uplift: string } {
  const v = doc.summary.variants.find((x) => x.engine === engine && x.variant === 'with_skill');
  const u = doc.summary.uplift.find((x) => x.engine === engine);
  return {
    verdict: u?.verdict ?? '',
    passRate: v && v.pass_rate !== null ? round(v.pass_rate, 4) : '',
    uplift: u && u.pass_rate_delta !== null ? round(u.pass_rate_delta * 100, 2) : '',
  };
}

/**
 * The step outputs of a run, in the order they are written:
 *
 * | output      | value |
 * |-------------|-------|
 * | `gate`      | `pass`, `fail` or `inconclusive` ({@link gateState}; before `--on-inconclusive`) |
 * | `exit-code` | skill-up's exit code |
 * | `verdict`   | the first engine's `improves`, `regresses` or `inconclusive`; '' without the baseline |
 * | `pass-rate` | the first engine's with_skill pass rate, a fraction (0.8333); '' when nothing was graded |
 * | `uplift`    | the first engine's uplift in points (33.33 = +33 points); '' without the baseline |
 * | `engines`   | every engine's figures as JSON, keyed by the engine's name in eval.yaml: `{"<engine>": {"verdict", "pass_rate", "uplift"}}` (null where not measured) |
 * | `gates`     | one line per gate: `<state> <name>[ (<engine>)]: <reason>` (multi-line) |
 * | `result`, `summary`, `report` | absolute paths of result.json, summary.md, report.html ('' when not written) |
 * | `run-dir`   | the iteration folder |
 */
export function githubOutputs(doc: ResultDoc, ctx: Pick<GithubContext, 'dir' | 'written'>): [string, string][] {
  const engines = doc.engines.map((e) => e.name).filter((e, i, all) => all.indexOf(e) === i);
  const first = engineFigures(doc, engines[0] ?? '');
  const num = (s: string) => (s === '' ? null : Number(s));
  const name = engineNames(doc);
  const perEngine = Object.fromEntries(
    engines.map((e) => {
      const f = engineFigures(doc, e);
      return [name(e), { verdict: f.verdict || null, pass_rate: num(f.passRate), uplift: num(f.uplift) }];
    }),
  );
  const file = (base: string) => {
    const p = join(ctx.dir, base);
    return ctx.written.includes(p) ? p : '';
  };
  return [
    ['gate', gateState(doc)],
    ['exit-code', String(doc.exit_code)],
    ['verdict', first.verdict],
    ['pass-rate', first.passRate],
    ['uplift', first.uplift],
    ['engines', JSON.stringify(perEngine)],
    ['gates', (doc.gates ?? []).map((g) => `${g.state} ${g.name}${g.engine ? ` (${name(g.engine)})` : ''}: ${oneLine(g.reason, 1000)}`).join('\n')],
    ['result', file('result.json')],
    ['summary', file('summary.md')],
    ['report', file('report.html')],
    ['run-dir', ctx.dir],
  ];
}

/**
 * `$GITHUB_OUTPUT` text: `name=value` lines, and `name<<DELIMITER` … `DELIMITER` for a value
 * with a line break. @throws Error if a name or value contains the delimiter (never, with a random one).
 */
export function formatOutputs(outputs: readonly [string, string][], delimiter = `ghadelimiter_${randomUUID()}`): string {
  let out = '';
  for (const [name, value] of outputs) {
    if (!/[\r\n]/.test(value)) {
      out += `${name}=${value}\n`;
      continue;
    }
    if (name.includes(delimiter) || value.includes(delimiter)) throw new Error(`output ${name}: the value contains the delimiter ${delimiter}`);
    out += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  return out;
}

/** What {@link publishToGithub} did. */
export interface PublishResult {
  annotations: number;
  summaryFile?: string;
  outputFile?: string;
  /** Problems writing the files (reported, never fatal: the run's exit code stands). */
  problems: string[];
}

/**
 * Prints the annotations to `out` and appends the summary and outputs to the files that
 * `$GITHUB_STEP_SUMMARY` and `$GITHUB_OUTPUT` name (each skipped when unset). Secrets redacted.
 */
export async function publishToGithub(
  doc: ResultDoc,
  ctx: Omit<GithubContext, 'root'> & { root?: string },
  env: Record<string, string | undefined> = process.env,
  out: { write(s: string): unknown } = process.stdout,
): Promise<PublishResult> {
  const secrets = secretValues(env);
  const root = ctx.root ?? (env.GITHUB_WORKSPACE || process.cwd());
  const annotations = githubAnnotations(doc, { cases: ctx.cases, root });
  for (const a of annotations) out.write(`${redact(a, secrets)}\n`);
  const result: PublishResult = { annotations: annotations.length, problems: [] };
  const summaryFile = env.GITHUB_STEP_SUMMARY;
  if (summaryFile) {
    try {
      // Appended, never overwritten: other steps (and other runs in this step) write there too.
      const before = await readFile(summaryFile, 'utf8').catch(() => '');
      const gap = before === '' || before.endsWith('\n') ? '' : '\n';
      await appendText(summaryFile, gap + redact(buildSummaryMarkdown(doc), secrets));
      result.summaryFile = summaryFile;
    } catch (e) {
      result.problems.push(`cannot append the step summary to ${summaryFile}: ${(e as Error).message}`);
    }
  }
  const outputFile = env.GITHUB_OUTPUT;
  if (outputFile) {
    try {
      const outputs = githubOutputs(doc, ctx).map(([k, v]): [string, string] => [k, redact(v, secrets)]);
      await appendText(outputFile, formatOutputs(outputs));
      result.outputFile = outputFile;
    } catch (e) {
      result.problems.push(`cannot append the step outputs to ${outputFile}: ${(e as Error).message}`);
    }
  }
  return result;
}

/**
 * A run's GitHub Actions output after its console summary: when {@link githubEnabled}
 * (`flag` is `--github`), {@link publishToGithub}; else nothing. Returns the problems writing
 * the files (for warnings: never fatal).
 */
export async function publishRun(flag: boolean | undefined, doc: ResultDoc, ctx: Omit<GithubContext, 'root'>): Promise<string[]> {
  if (!githubEnabled(flag)) return [];
  return (await publishToGithub(doc, ctx)).problems;
}
