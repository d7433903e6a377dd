/**
 * Writes the reports of a run, each scanned for secrets first (design.md, "Conventions").
 * Every report is built from the result.json document, so `skill-up run` (fresh results) and
 * `skill-up report` (a saved result.json) write the same files:
 *
 * | format      | files (relative to the report folder)                                         |
 * |-------------|--------------------------------------------------------------------------------|
 * | `json`      | `result.json` (schemas/result.schema.json)                                    |
 * | `junit`     | `report.xml` (JUnit XML, src/report/junit.ts)                                  |
 * | `markdown`  | `summary.md` (GitHub step summary / PR comment, src/report/markdown.ts)        |
 * | `benchmark` | `benchmark.json` + `benchmark.md` per job tree, `grading.json` per run,        |
 * |             | `eval_metadata.json` per case (skill-creator's files, src/report/benchmark.ts) |
 * | `html`      | `report.html` (one self-contained page, src/report/html/)                      |
 */
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { ReportFormat } from '../config/types.js';
import type { JobResult } from '../run/types.js';
import { buildBenchmarks } from './benchmark.js';
import { buildJunit } from './junit.js';
import { buildSummaryMarkdown } from './markdown.js';
import { secretValues } from './redact.js';
import { redactor } from '../util/redact.js';
import { createRedactingWriteStream, jsonText, writeJson, writeJsonSync, writeText } from '../util/out.js';
import { buildResultJson, type ResultDoc, type RunMeta } from './result-json.js';

/** What a write produced. */
export interface WriteResult {
  /** Absolute paths of the report files written (per-run files of `benchmark` are not listed one by one). */
  written: string[];
  /** Formats requested but not written, with the reason (a builder that failed). */
  skipped: { format: ReportFormat; reason: string }[];
}

/** Every format this module knows, in the order they are written. */
export const REPORT_FORMATS: readonly ReportFormat[] = ['json', 'junit', 'markdown', 'benchmark', 'html'];

/** Writes a file atomically (temp + rename) so a reader never sees half a report; secrets redacted (src/util/out.ts). */
async function put(file: string, text: string, _secrets: string[]): Promise<void> {
  await writeText(file, text, { atomic: true });
}

/** `dir/rel`, refusing a `rel` that leaves `dir` (job folders come from a file that may have been edited). */
function inside(dir: string, rel: string): string {
  // A string check, not path.relative: this runs once per job folder.
  if (isAbsolute(rel) || /^[A-Za-z]:/.test(rel) || rel.split(/[\\/]/).includes('..')) {
    throw new Error(`job folder \`${rel}\` is outside the report folder`);
  }
  return join(dir, rel);
}

/**
 * Writes a small per-run JSON file, creating its folder only when missing (in a run's own
 * folder the job folders exist). Synchronous on purpose: for thousands of small files, direct
 * system calls are several times faster than round trips through libuv's thread pool.
 */
function putSmall(file: string, value: unknown): void {
  writeJsonSync(file, value, { mkdir: true, newline: true });
}

/**
 * Builds the result.json document of a finished run and writes it (always) with the other
 * requested formats into `dir`.
 */
export async function writeReports(dir: string, meta: RunMeta, results: JobResult[], formats: ReportFormat[]): Promise<WriteResult & { doc: ResultDoc }> {
  const doc = buildResultJson(meta, results);
  const out = await writeDocReports(dir, doc, ['json', ...formats]);
  return { ...out, doc };
}

/**
 * Writes the requested formats of `doc` into `dir` (created if missing). Formats are written
 * in {@link REPORT_FORMATS} order, each once. A format whose builder fails is listed in
 * `skipped` with the error; the others are still written.
 */
export async function writeDocReports(dir: string, doc: ResultDoc, formats: readonly ReportFormat[], sourceDir: string = dir): Promise<WriteResult> {
  const secrets = secretValues();
  // Credentials set since the process started are secrets too.
  redactor().addAll(secrets);
  const result: WriteResult = { written: [], skipped: [] };
  const wanted = new Set(formats);
  await mkdir(dir, { recursive: true });
  for (const format of REPORT_FORMATS) {
    if (!wanted.has(format)) continue;
    try {
      result.written.push(...(await writeFormat(dir, doc, format, secrets, sourceDir)));
    } catch (e) {
      result.skipped.push({ format, reason: `could not be written: ${(e as Error).message}` });
    }
  }
  return result;
}

async function writeFormat(dir: string, doc: ResultDoc, format: ReportFormat, secrets: string[], sourceDir: string): Promise<string[]> {
  switch (format) {
    case 'json': {
      const file = join(dir, 'result.json');
      await writeResultFile(file, doc);
      return [file];
    }
    case 'junit': {
      const file = join(dir, 'report.xml');
      await put(file, buildJunit(doc), secrets);
      return [file];
    }
    case 'markdown': {
      const file = join(dir, 'summary.md');
      await put(file, buildSummaryMarkdown(doc), secrets);
      return [file];
    }
    case 'benchmark':
      return writeBenchmarks(dir, doc, secrets);
    case 'html': {
      // Loaded only when asked for: the renderer (Handlebars, templates) is the heaviest report.
      const { renderHtmlReport } = await import('./html/index.js');
      const file = join(dir, 'report.html');
      await put(file, renderHtmlReport(doc, { transcripts: await readTranscripts(sourceDir, doc) }), secrets);
      return [file];
    }
  }
}

/**
 * Writes result.json streaming, atomically (temp + rename): the document's keys one by one and
 * `jobs` job by job, each serialised (and redacted, src/util/out.ts) on its own, so no string
 * holds the whole file and no size makes the write fail. The bytes are exactly those of
 * `JSON.stringify(doc, null, 2) + "\n"`.
 */
export async function writeResultFile(file: string, doc: ResultDoc): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const out = createRedactingWriteStream(tmp);
  const failed = new Promise<never>((_, rej) => out.once('error', rej));
  failed.catch(() => undefined);
  const put = async (s: string) => {
    if (!out.write(s)) await Promise.race([new Promise((r) => out.once('drain', r)), failed]);
  };
  try {
    await put('{');
    let first = true;
    for (const [key, value] of Object.entries(doc)) {
      if (value === undefined || typeof value === 'function') continue;
      await put(`${first ? '' : ','}\n  ${JSON.stringify(key)}: `);
      first = false;
      if (key === 'jobs' && Array.isArray(value) && value.length > 0) {
        await put('[');
        for (const [i, job] of value.entries()) await put(`${i ? ',' : ''}\n    ${jsonText(job ?? null, 2).replace(/\n/g, '\n    ')}`);
        await put('\n  ]');
      } else await put(jsonText(value, 2).replace(/\n/g, '\n  '));
    }
    await put(first ? '}\n' : '\n}\n');
    await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]);
    await rename(tmp, file);
  } catch (e) {
    out.destroy();
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  }
}

/** Runs this large are rendered from result.json alone: reading every job's transcript would dominate. */
const MAX_TRANSCRIPT_JOBS = 1000;

/**
 * The jobs' transcript.json files (tool outputs, engine errors) keyed by job id, for the HTML
 * report; missing or unreadable ones are left out (the page then shows result.json's turns).
 */
async function readTranscripts(sourceDir: string, doc: ResultDoc): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (doc.jobs.length > MAX_TRANSCRIPT_JOBS) return out;
  await Promise.all(
    doc.jobs.map(async (j) => {
      try {
        out[j.id] = JSON.parse(await readFile(inside(sourceDir, join(j.output_dir, 'transcript.json')), 'utf8'));
      } catch {
        /* no transcript for this job */
      }
    }),
  );
  return out;
}

/** benchmark.json + benchmark.md per job tree, then grading.json per run and eval_metadata.json per case. */
async function writeBenchmarks(dir: string, doc: ResultDoc, secrets: string[]): Promise<string[]> {
  const written: string[] = [];
  for (const b of buildBenchmarks(doc)) {
    const root = inside(dir, b.root);
    await mkdir(root, { recursive: true });
    await writeJson(join(root, 'benchmark.json'), b.benchmark, { atomic: true, newline: true });
    await put(join(root, 'benchmark.md'), b.markdown, secrets);
    written.push(join(root, 'benchmark.json'), join(root, 'benchmark.md'));
    // Small per-run files: plain writes, no temp file and rename (that would double the
    // system calls of a 10,000-job run); each is tiny and rewritten whole.
    for (const g of b.gradings) putSmall(join(inside(dir, g.dir), 'grading.json'), g.grading);
    for (const m of b.evalMetadata) putSmall(join(inside(dir, m.dir), 'eval_metadata.json'), m.metadata);
  }
  return written;
}
