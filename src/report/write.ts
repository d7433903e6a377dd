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
import { constants, rmSync } from 'node:fs';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { ReportFormat } from '../config/types.js';
import type { JobResult } from '../run/types.js';
import { benchmarkBundles, gradingFileName, gradingJson, type GradingJson } from './benchmark.js';
import { buildSummaryMarkdown } from './markdown.js';
import { secretValues } from './redact.js';
import { redactor } from '../util/redact.js';
import { jsonText, writeJson } from '../util/out.js';
import { tempFileDone, tempFileFor } from '../util/temp-files.js';
import { writeSmallFileSync, type FolderHint } from './small-file.js';
import { buildResultJson, jobJson, type ResultDoc, type RunMeta } from './result-json.js';

/** What a write produced. */
export interface WriteResult {
  /** Absolute paths of the report files written (per-run files of `benchmark` are not listed one by one). */
  written: string[];
  /** Formats requested but not written, with the reason (a builder that failed). */
  skipped: { format: ReportFormat; reason: string; io?: boolean }[];
}

/**
 * Loads, in the background, what writing `formats` will need (the JUnit builder, the HTML
 * report's templates), so a run does it while its engines work rather than after its last job.
 * Failures are ignored here: writing the report reports them.
 */
export function prefetchReportModules(formats: readonly ReportFormat[]): void {
  const later = (load: () => Promise<unknown>) => setImmediate(() => void load().catch(() => undefined));
  if (formats.includes('junit')) later(() => import('./junit.js'));
  if (formats.includes('html')) later(async () => (await import('./html/index.js')).prepareHtmlReport());
}

/** Every format this module knows, in the order they are written. */
export const REPORT_FORMATS: readonly ReportFormat[] = ['json', 'junit', 'markdown', 'benchmark', 'html'];

/** Writes a file atomically (temp + rename) so a reader never sees half a report; secrets redacted (src/util/redact.ts). */
async function put(file: string, text: string, _secrets: string[]): Promise<void> {
  await writeAtomic(file, [redactor().redact(text)], false);
}

/** Create or truncate, never through a symbolic link in the last component (as src/util/out.ts writes). */
// Node accepts numeric open flags; @types/node types them as strings.
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0);

/** Bytes gathered before one write system call. */
const WRITE_BATCH = 1024 * 1024;

/**
 * Writes `pieces` to `file` atomically and checked: a temp file beside it (O_NOFOLLOW), every
 * write's byte count checked, then fsync and close, then rename over `file`. Any failure (disk
 * full, quota, I/O error, at the write, the fsync or the close) removes the temp file and is
 * thrown, so a report is either completely written or not there at all (no empty file, no
 * leftover `*.tmp-*`). With `streamRedact`, the bytes pass through the byte-stream redactor.
 */
async function writeAtomic(file: string, pieces: Iterable<string> | AsyncIterable<string>, streamRedact: boolean): Promise<void> {
  const tmp = tempFileFor(file);
  const redacting = streamRedact ? redactor().byteStream() : undefined;
  let fh: FileHandle | undefined;
  let pending: Buffer[] = [];
  let size = 0;
  const flush = async (): Promise<void> => {
    if (size === 0) return;
    const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, size);
    pending = [];
    size = 0;
    for (let off = 0; off < buf.length; ) {
      const { bytesWritten } = await fh!.write(buf, off, buf.length - off);
      if (bytesWritten <= 0) throw Object.assign(new Error(`short write to ${tmp}`), { code: 'EIO' });
      off += bytesWritten;
    }
  };
  const add = async (b: Buffer): Promise<void> => {
    if (b.length === 0) return;
    pending.push(b);
    size += b.length;
    if (size >= WRITE_BATCH) await flush();
  };
  try {
    fh = await open(tmp, WRITE_FLAGS, 0o644);
    for await (const s of pieces) {
      const b = Buffer.from(s, 'utf8');
      await add(redacting ? redacting.push(b) : b);
    }
    if (redacting) await add(redacting.end());
    await flush();
    await fh.sync();
    const h = fh;
    fh = undefined;
    await h.close();
    await rename(tmp, file);
  } catch (e) {
    await fh?.close().catch(() => undefined);
    await rm(tmp, { force: true }).catch(() => undefined);
    throw e;
  } finally {
    tempFileDone(tmp);
  }
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
 * Writes a small per-run JSON file (redacted, src/util/out.ts `jsonText`), creating its folder
 * only when missing (in a run's own folder the job folders exist), leaving an existing file
 * that already holds the same bytes alone and overwriting any other in place (never truncated
 * to 0: src/report/small-file.ts says why that is the slow step of a rewrite). Synchronous on
 * purpose: for thousands of small files, direct system calls are several times faster than
 * round trips through libuv's thread pool.
 */
function putSmall(file: string, value: unknown, hint: FolderHint): void {
  writeSmallFileSync(file, jsonText(value, 2, true), { mkdir: true, hint });
}

/**
 * Writes a job's grading file into its folder `jobDir`: grading.json for a graded run, else
 * ungraded.json (src/report/benchmark.ts `gradingFileName`), removing a grading.json an earlier
 * report left there, so skill-creator's aggregator never reads an errored run as a 0 % one.
 */
function putGrading(jobDir: string, grading: GradingJson, hint: FolderHint): void {
  const name = gradingFileName(grading.status);
  putSmall(join(jobDir, name), grading, hint);
  // Only errored and skipped runs pay for this call; a stale ungraded.json beside a grading.json is read by no tool.
  if (name !== 'grading.json') rmSync(join(jobDir, 'grading.json'), { force: true });
}

/** Options of {@link writeReports} and {@link writeDocReports}. */
export interface WriteOptions {
  /**
   * Write the per-job files (grading.json) with the `benchmark` format; default true. A run
   * passes false: its report listener wrote each one as the job ended ({@link writeJobFiles}).
   */
  jobFiles?: boolean;
}

/**
 * Builds the result.json document of a finished run and writes it (always) with the other
 * requested formats into `dir`.
 */
export async function writeReports(dir: string, meta: RunMeta, results: JobResult[], formats: ReportFormat[], opts: WriteOptions = {}): Promise<WriteResult & { doc: ResultDoc }> {
  const doc = buildResultJson(meta, results);
  const out = await writeDocReports(dir, doc, ['json', ...formats], dir, opts);
  return { ...out, doc };
}

/**
 * Writes a finished job's own report file, `<dir>/<result.outputDir>/grading.json`
 * (skill-creator's shape, src/report/benchmark.ts `gradingJson`; `ungraded.json` for a job that
 * ended in `error` or `skipped`, `gradingFileName`), into its existing job folder
 * (never created here: no folder is made through a link an agent planted), secrets redacted.
 * The run calls it as each job ends, so an interrupted run keeps it too.
 * @throws Error `cannot write <file>: <why>` (disk full, out of descriptors, a folder in the way).
 */
export async function writeJobFiles(dir: string, result: JobResult): Promise<void> {
  const grading = gradingJson(jobJson(result));
  const name = gradingFileName(grading.status);
  const file = join(inside(dir, result.outputDir), name);
  try {
    await writeJson(file, grading, { newline: true });
    if (name !== 'grading.json') await rm(join(inside(dir, result.outputDir), 'grading.json'), { force: true });
  } catch (e) {
    throw new Error(`cannot write ${file}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Writes the requested formats of `doc` into `dir` (created if missing). Formats are written
 * in {@link REPORT_FORMATS} order, each once. A format whose builder fails is listed in
 * `skipped` with the error; the others are still written.
 */
export async function writeDocReports(dir: string, doc: ResultDoc, formats: readonly ReportFormat[], sourceDir: string = dir, opts: WriteOptions = {}): Promise<WriteResult> {
  const secrets = secretValues();
  // Credentials set since the process started are secrets too.
  redactor().addAll(secrets);
  const result: WriteResult = { written: [], skipped: [] };
  const wanted = new Set(formats);
  await mkdir(dir, { recursive: true });
  const one = async (format: ReportFormat): Promise<{ format: ReportFormat; files?: string[]; error?: Error }> => {
    try {
      return { format, files: await writeFormat(dir, doc, format, secrets, sourceDir, opts.jobFiles ?? true) };
    } catch (e) {
      return { format, error: e as Error };
    }
  };
  const formatsInOrder = REPORT_FORMATS.filter((f) => wanted.has(f));
  // A small run's formats are written at once, so their fsyncs overlap; a large one's one at a
  // time, so only one format's text is in memory at any moment (the 10,000-job bound).
  const outcomes =
    doc.jobs.length <= CONCURRENT_FORMATS_UP_TO ? await Promise.all(formatsInOrder.map(one)) : await sequentially(formatsInOrder, one);
  for (const { format, files, error } of outcomes) {
    if (files) {
      result.written.push(...files);
      continue;
    }
    // `io`: the disk refused it (ENOSPC, EACCES, EMFILE, …), as opposed to a builder that cannot make the format from this document.
    const code = (error as NodeJS.ErrnoException).code;
    const io = typeof code === 'string' && /^E[A-Z]+$/.test(code);
    result.skipped.push({ format, reason: `could not be written: ${error!.message}`, ...(io ? { io } : {}) });
  }
  return result;
}

/** Runs with at most this many jobs write their report formats concurrently ({@link writeDocReports}). */
const CONCURRENT_FORMATS_UP_TO = 500;

/** `fn` over `items` one at a time, results in order. */
async function sequentially<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await fn(item));
  return out;
}

async function writeFormat(dir: string, doc: ResultDoc, format: ReportFormat, secrets: string[], sourceDir: string, jobFiles: boolean): Promise<string[]> {
  switch (format) {
    case 'json': {
      const file = join(dir, 'result.json');
      await writeResultFile(file, doc);
      return [file];
    }
    case 'junit': {
      // Loaded only when asked for: junit-report-builder is a 788 KB bundle. Written suite by
      // suite (junitPieces), redacted as a byte stream like result.json.
      const { junitPieces } = await import('./junit.js');
      const file = join(dir, 'report.xml');
      await writeAtomic(file, junitPieces(doc), true);
      return [file];
    }
    case 'markdown': {
      const file = join(dir, 'summary.md');
      await put(file, buildSummaryMarkdown(doc), secrets);
      return [file];
    }
    case 'benchmark':
      return writeBenchmarks(dir, doc, secrets, jobFiles);
    case 'html': {
      // Loaded only when asked for: the renderer (Handlebars, templates) is the heaviest report.
      // Written piece by piece (the page around its data, then the data row by row), redacted as a byte stream like result.json.
      const { renderHtmlPieces } = await import('./html/index.js');
      const file = join(dir, 'report.html');
      await writeAtomic(file, renderHtmlPieces(doc, { transcripts: await readTranscripts(sourceDir, doc) }), true);
      return [file];
    }
  }
}

/**
 * Writes result.json streaming, atomically (temp + rename): the document's keys one by one and
 * `jobs` job by job, each serialised (and redacted, src/util/out.ts) on its own, so no string
 * holds the whole file and no size makes the write fail. The bytes are exactly those of
 * `JSON.stringify(doc, null, 2) + "\n"`. Every write, the fsync and the close are checked:
 * on failure (ENOSPC, EIO, …) the temp file is removed and the error thrown; `file` is left as
 * it was (never an empty or partial result.json).
 */
export async function writeResultFile(file: string, doc: ResultDoc): Promise<void> {
  await writeAtomic(file, resultPieces(doc), true);
}

/** The text of result.json piece by piece (see {@link writeResultFile}). */
function resultPieces(doc: ResultDoc): Generator<string> {
  return objectPieces(doc, 'jobs');
}

/**
 * `jsonText(obj, 2) + "\n"` (each value redacted, src/util/out.ts) piece by piece: one piece per
 * key, and the list under `listKey` one item at a time, so no string holds the whole text.
 * `obj` is a plain JSON object (no `toJSON`).
 */
function* objectPieces(obj: object, listKey: string): Generator<string> {
  yield '{';
  let first = true;
  for (const [key, value] of Object.entries(obj)) {
    if (value === undefined || typeof value === 'function') continue;
    yield `${first ? '' : ','}\n  ${JSON.stringify(key)}: `;
    first = false;
    // Each value serialised at its depth inside a wrapper whose brackets are then cut off (the
    // fixed `[\n  ` … `\n]` around it), rather than re-indented line by line afterwards.
    if (key === listKey && Array.isArray(value) && value.length > 0) {
      yield '[';
      for (const [i, item] of value.entries()) yield `${i ? ',' : ''}\n    ${jsonText([[item ?? null]], 2).slice(10, -6)}`;
      yield '\n  ]';
    } else yield jsonText([value], 2).slice(4, -2);
  }
  yield first ? '}\n' : '\n}\n';
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

/** benchmark.json + benchmark.md per job tree, then grading.json per run (unless `jobFiles` is false) and eval_metadata.json per case. */
async function writeBenchmarks(dir: string, doc: ResultDoc, secrets: string[], jobFiles: boolean): Promise<string[]> {
  const written: string[] = [];
  const hint: FolderHint = { missing: false };
  for (const b of benchmarkBundles(doc)) {
    const root = inside(dir, b.root);
    await mkdir(root, { recursive: true });
    // Streamed run by run (7 MB for 5,000 runs), redacted as a byte stream like result.json.
    await writeAtomic(join(root, 'benchmark.json'), objectPieces(b.benchmark, 'runs'), true);
    await put(join(root, 'benchmark.md'), b.markdown, secrets);
    written.push(join(root, 'benchmark.json'), join(root, 'benchmark.md'));
    // Small per-run files: plain writes, no temp file and rename (that would double the
    // system calls of a 10,000-job run); each is tiny and rewritten whole.
    if (jobFiles) for (const g of b.gradings) putGrading(inside(dir, g.dir), g.grading, hint);
    for (const m of b.evalMetadata) putSmall(join(inside(dir, m.dir), 'eval_metadata.json'), m.metadata, hint);
  }
  // Trigger jobs are in no benchmark (tasks only) but keep their own grading.json.
  if (jobFiles) for (const j of doc.jobs) if (j.trigger) putGrading(inside(dir, j.output_dir), gradingJson(j), hint);
  return written;
}
