/**
 * Anthropic `evals.json` → skill-up's eval.yaml and case files (alibaba/skill-up `v1alpha1`
 * format, loaded by `loadSuite`). The mapping, eval by eval:
 *
 * | evals.json                    | skill-up                                                      |
 * |-------------------------------|---------------------------------------------------------------|
 * | `id`                          | case id `eval-<id>` (the folder name skill-creator's tools use) |
 * | `prompt`                      | `input.prompt`; its first line (cut) is the `title`           |
 * | `expected_output`             | `description` (a human description, not a check)              |
 * | `files`                       | text files inline in `context.files` at the same path; when   |
 * |                               | one is binary, large or a folder, all are copied to           |
 * |                               | `evals/fixtures/eval-<id>/` and used as `context.repo_fixture` |
 * | `expectations` / `assertions` | an `agent_judge` with those statements as `criteria`          |
 *
 * The statements stay criteria, as written: they are not turned into mechanical checks by
 * guessing. At run time a grader agent checks them (src/run/grader.ts): on the job's own
 * engine and model unless the judge names `engine` / `model`, in a copy of the finished
 * workspace, answering per criterion with evidence; the case passes when at least
 * `pass_threshold` (0.7) of them hold. The generated files say so.
 *
 * The eval-level settings follow skill-creator: Claude Code as the engine, every case run with
 * and without the skill (`benchmark.enabled`), 3 runs per configuration.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { ConfigError } from '../config/diagnostics.js';
import type { EvalsFile, ImportedEval } from './evals-json.js';

/** Largest file inlined into a case (bytes); larger ones go to a fixture folder. */
export const INLINE_MAX_BYTES = 256 * 1024;

/** Options of {@link convertEvals}. */
export interface ConvertOptions {
  /**
   * `files`: eval.yaml with `cases.files`, one case file per eval, fixtures copied (for
   * `skill-up import`). `memory`: one eval.yaml document with the cases under `cases.inline`
   * and nothing to copy (for `skill-up run --auto`); a binary input file is then an error.
   */
  mode: 'files' | 'memory';
  /** Absolute folder that holds (or would hold) eval.yaml; `cases/` and `fixtures/` go inside it. Default: `<skill>/evals`. */
  outDir?: string;
}

/** One generated case file. */
export interface CaseOutput {
  id: string;
  /** Absolute path of the case file. */
  file: string;
  text: string;
  /** The case document (as in the file). */
  data: Record<string, unknown>;
}

/** What {@link convertEvals} produces. */
export interface Converted {
  /** Absolute path of eval.yaml. */
  evalFile: string;
  /** eval.yaml: the comment header and the document. */
  evalText: string;
  evalData: Record<string, unknown>;
  /** Case files (`files` mode only). */
  cases: CaseOutput[];
  /** Input files to copy into fixture folders (`files` mode only): absolute source → absolute target. */
  copies: { from: string; to: string }[];
  /** Notes for the user (one line each): binary files moved to fixtures, evals without expectations. */
  notes: string[];
}

const ENGINE_NOTE = 'skill-creator runs its evals in Claude Code; pin `version:` (an exact npm version) for repeatable runs';

/** The comment at the top of the generated eval.yaml. */
export function evalHeader(source: string, anyCriteria: boolean): string {
  const lines = [
    `Converted from ${source} (Anthropic skill-creator format) by \`skill-up import\`.`,
    'yaml-language-server: $schema=https://skill-up.dev/schemas/eval.schema.json',
    '',
    'Each eval became a case: `prompt` → input.prompt, `expected_output` → description,',
    '`files` → context.files (or a fixture folder), `expectations` → an agent_judge.',
  ];
  if (anyCriteria) {
    lines.push(
      '',
      'NOTE: the expectations are kept as `agent_judge` criteria, as written. After the agent\'s',
      'turns, a grader agent checks them on a copy of the finished workspace, on the same engine',
      'and model as the job (Claude Code here; `--model` / `--model-script` of `skill-up run`',
      'change both; a judge `engine:` / `model:` gives the grader its own), answering each',
      'criterion with evidence; a case passes when at least 70% hold (`pass_threshold`). Where a',
      'statement can be checked mechanically (a file exists, the answer contains a phrase, a tool',
      'was called), add an `expect` block or a `rule_based` judge to the case yourself (see the',
      'README, "Writing a suite") and drop that criterion.',
    );
  }
  return lines.map((l) => (l ? `# ${l}` : '#')).join('\n');
}

/**
 * Converts a checked evals.json. Reads the input files (to decide inline or fixture) but
 * writes nothing.
 *
 * @throws ConfigError for an input file that is missing, or (in `memory` mode) binary.
 */
export function convertEvals(evals: EvalsFile, opts: ConvertOptions): Converted {
  const outDir = path.resolve(opts.outDir ?? path.join(evals.skillDir, 'evals'));
  const evalFile = path.join(outDir, 'eval.yaml');
  // The skill root of the generated eval.yaml, as loadSuite will compute it.
  const root = path.basename(outDir) === 'evals' ? path.dirname(outDir) : outDir;
  const posix = (p: string) => p.split(path.sep).join('/');
  // Problems are reported at their place in evals.json, into the bag the reader filled.
  const bag = evals.bag;
  const notes: string[] = [];
  const copies: Converted['copies'] = [];
  const caseDocs: { id: string; data: Record<string, unknown>; comment: string }[] = [];

  for (const ev of evals.evals) {
    const id = `eval-${ev.id}`;
    const data: Record<string, unknown> = {};
    if (opts.mode === 'memory') data.id = id;
    data.title = titleOf(ev.prompt);
    if (ev.expectedOutput) data.description = ev.expectedOutput;
    data.input = { prompt: ev.prompt };
    const ctx = contextOf(ev, evals, opts.mode, path.join(outDir, 'fixtures', id));
    if (ctx.inline) data.context = { files: ctx.inline };
    if (ctx.fixture) {
      data.context = { repo_fixture: posix(path.relative(root, ctx.fixture.dir)) };
      copies.push(...ctx.fixture.copies);
      notes.push(`${id}: ${ctx.fixture.why}; its input files are copied to ${posix(path.relative(root, ctx.fixture.dir))}/`);
    }
    if (ev.expectations.length) data.judge = { type: 'agent_judge', criteria: ev.expectations };
    else notes.push(`${id}: no expectations in evals.json; only the exit code is checked`);
    const comment = [
      `eval ${JSON.stringify(ev.id)} of ${path.basename(evals.file)}${evals.skillName ? ` (skill ${evals.skillName})` : ''}`,
      ...(ev.files.length ? [`input files are placed in the workspace at the paths evals.json gives: ${ev.files.join(', ')}`] : []),
      ...(ev.expectations.length
        ? ['the criteria below are graded by an agent_judge: a grader agent on the job\'s engine and model checks them on a copy of the', 'finished workspace; add `expect` / a `rule_based` judge for what can be checked mechanically']
        : ['evals.json gave no expectations: only the exit code is checked (cases.defaults.expect)']),
    ].join('\n');
    caseDocs.push({ id, data, comment });
  }
  if (bag.hasErrors) throw new ConfigError(bag.sorted());

  const casesDir = path.join(outDir, 'cases');
  const evalData: Record<string, unknown> = { schema_version: 'v1alpha1' };
  if (path.resolve(root) !== path.resolve(evals.skillDir)) {
    evalData.skills = [{ source: 'local_path', path: posix(path.relative(root, evals.skillDir)) || '.' }];
  }
  evalData.engine = { name: 'claude_code' };
  const defaults = { timeout_seconds: 300, expect: { exit_code: 0 } };
  evalData.cases =
    opts.mode === 'files'
      ? { files: [`${posix(path.relative(root, casesDir))}/*.yaml`], defaults }
      : { inline: caseDocs.map((c) => c.data), defaults };
  evalData.trials = 3;
  evalData.benchmark = { enabled: true };
  evalData.report = { formats: ['json', 'junit', 'markdown', 'benchmark', 'html'] };

  const anyCriteria = evals.evals.some((e) => e.expectations.length > 0);
  const body = stringify(evalData, { lineWidth: 0 }).replace(/^engine:\n {2}name: claude_code\n/m, `engine:\n  name: claude_code # ${ENGINE_NOTE}\n`);
  const evalText = `${evalHeader(posix(path.relative(root, evals.file)) || path.basename(evals.file), anyCriteria)}\n${body}`;
  const cases: CaseOutput[] =
    opts.mode === 'files'
      ? caseDocs.map((c) => ({
          id: c.id,
          file: path.join(casesDir, `${c.id}.yaml`),
          data: c.data,
          text: `${c.comment.split('\n').map((l) => `# ${l}`).join('\n')}\n${stringify(c.data, { lineWidth: 0 })}`,
        }))
      : [];
  return { evalFile, evalText, evalData, cases, copies: opts.mode === 'files' ? copies : [], notes };
}

/** First non-empty line of the prompt, at most 80 characters. */
function titleOf(prompt: string): string {
  const line = prompt.split('\n').find((l) => l.trim() !== '')?.trim() ?? prompt.trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

interface Ctx {
  inline?: Record<string, string>;
  fixture?: { dir: string; copies: { from: string; to: string }[]; why: string };
}

/** Decides how an eval's files reach the workspace: inline text, or a fixture folder. */
function contextOf(ev: ImportedEval, evals: EvalsFile, mode: ConvertOptions['mode'], fixtureDir: string): Ctx {
  if (ev.files.length === 0) return {};
  const inline: Record<string, string> = {};
  let why: string | undefined;
  const ok: string[] = [];
  ev.files.forEach((rel, j) => {
    const abs = path.join(evals.skillDir, rel);
    const at = ev.at.get('files').get(j);
    let st;
    try {
      st = statSync(abs);
    } catch {
      at.error(`input file \`${rel}\` not found (looked for ${abs}; paths in evals.json are relative to the skill root)`);
      return;
    }
    ok.push(rel);
    if (st.isDirectory()) {
      why ??= `\`${rel}\` is a folder`;
      return;
    }
    if (st.size > INLINE_MAX_BYTES) {
      why ??= `\`${rel}\` is larger than ${INLINE_MAX_BYTES / 1024} KiB`;
      return;
    }
    const text = textOf(readFileSync(abs));
    if (text === undefined) {
      why ??= `\`${rel}\` is not a UTF-8 text file`;
      return;
    }
    inline[rel] = text;
  });
  if (ok.length < ev.files.length) return {};
  if (!why) return { inline };
  if (mode === 'memory') {
    ev.at.get('files').error(`${why}: \`run --auto\` can only put text files into the workspace; convert the evals with \`skill-up import\`, which copies such files into a fixture folder`);
    return {};
  }
  return { fixture: { dir: fixtureDir, copies: ok.map((rel) => ({ from: path.join(evals.skillDir, rel), to: path.join(fixtureDir, rel) })), why } };
}

/** The UTF-8 text of `buf`, or undefined when it holds a NUL byte or invalid UTF-8. */
function textOf(buf: Buffer): string | undefined {
  if (buf.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(buf);
  } catch {
    return undefined;
  }
}
