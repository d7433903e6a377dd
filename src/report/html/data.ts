/**
 * The run data the HTML report embeds, in a compact form the page's script decodes
 * (`assets/report.client.js`), and its safe embedding in a `<script type="application/json">`.
 *
 * Compactness: a run repeats the same strings many times (a case's prompt and assertion texts
 * in every trial and variant, tool names, skill names, identical evidence), so such strings are
 * stored once in a string table `s` and referred to by their index; records are positional
 * arrays rather than objects with repeated keys. Long texts are clipped (see {@link LIMITS}):
 * the report is for reading, the full record stays in result.json and transcript.json.
 */
import type { ResultDoc } from '../result-json.js';

/**
 * A string: an index into {@link ReportData.s} (−1 when the value is absent), or, for values
 * unique to one job (job id, start time, session id, folder), the string itself, which saves
 * the string table a lookup it could never reuse.
 */
export type Sx = number | string;
/** Token counts `[input, output, cache_read, cache_write]`. */
export type Usage4 = [number, number, number, number];
/** A tool call: `[name, input as JSON text, is_error 0|1, output text or −1]`. */
export type ToolRow = [Sx, Sx, 0 | 1, Sx];
/** A skill activation: `[skill, via]`. */
export type ActivationRow = [Sx, Sx];
/** An assertion: `[text, passed 0|1, evidence]`. */
export type AssertionRow = [Sx, 0 | 1, Sx];
/** One turn, with named fields (result.json's turn, the transcript's tool outputs and engine error). */
export interface TurnRow {
  /** 1-based. */
  index: number;
  prompt: Sx;
  /** `completed`, `failed`, `skipped` or `error`. */
  status: Sx;
  /** The turn's final answer (`final_text`). */
  final: Sx;
  reason: Sx;
  /** Milliseconds. */
  durationMs: number;
  tokens: Usage4;
  /** USD, null when not reported. */
  costUsd: number | null;
  toolCalls: ToolRow[];
  activations: ActivationRow[];
  /** Skills the engine offered the model in this turn; null when not observable. */
  skillsListed: Sx[] | null;
  sessionId: Sx;
  /** The engine's error of this turn, from its transcript. */
  error: Sx;
}
/**
 * What a case's details show of one job: `[job id, attempts, started_at, tokens,
 * engine_duration_ms, final_message, skills installed, skills offered|null, skill activations,
 * assertions, turns, output_dir, artifacts]`.
 */
export type DetailRow = [Sx, number, Sx, Usage4, number, Sx, Sx[], Sx[] | null, ActivationRow[], AssertionRow[], TurnRow[], Sx, Sx[]];
/**
 * One job: `[case index into c, engine index into e, variant 0 = with_skill | 1 = without_skill,
 * trial (1-based), status 0 pass | 1 fail | 2 error | 3 skipped, duration_ms, tokens total,
 * cost_usd|null, reason, details, and 1 when cost_usd is an estimate (absent otherwise)]`.
 */
export type JobRow = [number, number, 0 | 1, number, 0 | 1 | 2 | 3, number, number, number | null, Sx, DetailRow, 1?];

/** The document embedded in the page as `<script type="application/json" id="data">`. */
export interface ReportData {
  /** Format version of this structure. */
  v: 1;
  /** String table. */
  s: string[];
  /** Engine names, in the order of the table's column groups. */
  e: string[];
  /** Case ids, in first-appearance order. */
  c: string[];
  /** Variant columns: `[0, 1]` when any job ran without the skill, else `[0]` (0 = with_skill, 1 = without_skill). */
  vs: (0 | 1)[];
  /** Jobs, in result.json order. */
  j: JobRow[];
}

/** Most characters kept of each kind of text (the rest is replaced by a note giving the full length). */
export const LIMITS = {
  /** A tool call's input, as JSON text. */
  toolInput: 6_000,
  /** A tool call's output (from a transcript). */
  toolOutput: 6_000,
  /** Prompts, final answers, evidence, reasons. */
  text: 40_000,
} as const;

const STATUS = { pass: 0, fail: 1, error: 2, skipped: 3 } as const;

/** Keeps the first `max` characters of `s` and says how long it was. */
export function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}\n… [clipped: ${s.length.toLocaleString('en-US')} characters in all; the full text is in the job folder]`;
}

/** JSON text of a tool input, `input` itself when it is already a string. */
function inputText(input: unknown): string {
  if (input === undefined) return '';
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input) ?? '';
  } catch {
    return String(input);
  }
}

/** A tool call as a transcript (transcript.json, camelCase) may hold it. */
interface TranscriptTool {
  name: string;
  input: unknown;
  output?: string;
  isError?: boolean;
}
/** The parts of a transcript turn the report uses. */
interface TranscriptTurnView {
  index: number;
  toolCalls: TranscriptTool[];
  error?: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads the turns of a transcript.json value defensively; unknown shapes give no turns. */
function transcriptTurns(t: unknown): Map<number, TranscriptTurnView> {
  const out = new Map<number, TranscriptTurnView>();
  if (!isObj(t) || !Array.isArray(t.turns)) return out;
  t.turns.forEach((raw, i) => {
    if (!isObj(raw)) return;
    const index = typeof raw.index === 'number' ? raw.index : i + 1;
    const calls = Array.isArray(raw.toolCalls) ? raw.toolCalls : Array.isArray(raw.tool_calls) ? raw.tool_calls : [];
    const toolCalls = calls.filter(isObj).map((c) => ({
      name: typeof c.name === 'string' ? c.name : '?',
      input: c.input,
      ...(typeof c.output === 'string' ? { output: c.output } : {}),
      ...(c.isError === true || c.is_error === true ? { isError: true } : {}),
    }));
    const err = isObj(raw.error) ? `${String(raw.error.kind ?? 'error')}: ${String(raw.error.message ?? '')}` : undefined;
    out.set(index, { index, toolCalls, ...(err ? { error: err } : {}) });
  });
  return out;
}

/**
 * Builds the compact {@link ReportData} of a result.json document.
 *
 * @param transcripts optional transcript.json values keyed by job id (`result.jobs[].id`) or
 *   job folder (`output_dir`); they add each tool call's output and a turn's engine error to
 *   what result.json holds.
 * @param engineOrder engine names in column order (every engine of `doc.jobs` must be in it).
 */
export function buildReportData(doc: ResultDoc, engineOrder: string[], transcripts: Record<string, unknown> = {}): ReportData {
  const b = reportDataBuilder(engineOrder, transcripts);
  const jobs = doc.jobs.map(b.rowOf);
  return b.finish(jobs);
}

/**
 * The script-safe JSON text of {@link buildReportData} (see {@link scriptSafeJson}) in pieces,
 * the same bytes as `scriptSafeJson(buildReportData(doc, engineOrder, transcripts))`. Each job's
 * row is serialised as soon as it is built, so a 10,000-job run holds its rows' text (a few MB)
 * rather than their objects and the whole text and its escaped copies at once.
 */
export function* reportDataPieces(doc: ResultDoc, engineOrder: string[], transcripts: Record<string, unknown> = {}): Generator<string> {
  const b = reportDataBuilder(engineOrder, transcripts);
  // The string table comes first in the text but is complete only once every row is built.
  const rows = doc.jobs.map((job) => scriptSafeJson(b.rowOf(job)));
  // `{…,"j":[]}` with the rows spliced into the brackets (`j` is ReportData's last key).
  yield scriptSafeJson(b.finish([])).slice(0, -2);
  const CHUNK = 256;
  for (let i = 0; i < rows.length; i += CHUNK) yield `${i ? ',' : ''}${rows.slice(i, i + CHUNK).join(',')}`;
  yield ']}';
}

/** Builds the rows of {@link ReportData} one job at a time, sharing one string table. */
function reportDataBuilder(engineOrder: string[], transcripts: Record<string, unknown>): { rowOf: (job: ResultDoc['jobs'][number]) => JobRow; finish: (jobs: JobRow[]) => ReportData } {
  const s: string[] = [];
  const index = new Map<string, number>();
  const S = (v: string | undefined | null): Sx => {
    if (v === undefined || v === null) return -1;
    let i = index.get(v);
    if (i === undefined) {
      i = s.length;
      s.push(v);
      index.set(v, i);
    }
    return i;
  };
  const T = (v: string | undefined | null): Sx => (v === undefined || v === null ? -1 : S(clip(v, LIMITS.text)));
  const usage = (u: { input: number; output: number; cache_read: number; cache_write: number }): Usage4 => [u.input, u.output, u.cache_read, u.cache_write];
  const acts = (a: { skill: string; via: string }[]): ActivationRow[] => a.map((x) => [S(x.skill), S(x.via)]);

  const engines = new Map(engineOrder.map((e, i) => [e, i]));
  const cases = new Map<string, number>();
  const variants = new Set<0 | 1>();
  const rowOf = (job: ResultDoc['jobs'][number]): JobRow => {
    let ci = cases.get(job.case_id);
    if (ci === undefined) cases.set(job.case_id, (ci = cases.size));
    const ei = engines.get(job.engine);
    if (ei === undefined) throw new Error(`engine ${job.engine} of job ${job.id} is not in the engine order`);
    const variant: 0 | 1 = job.variant === 'with_skill' ? 0 : 1;
    variants.add(variant);
    const tr = transcriptTurns(transcripts[job.id] ?? transcripts[job.output_dir]);
    const turns: TurnRow[] = job.turns.map((t) => {
      const tt = tr.get(t.index);
      // The transcript's calls are the same calls plus their outputs; use them when they cover result.json's.
      const calls: TranscriptTool[] =
        tt && tt.toolCalls.length >= t.tool_calls.length
          ? tt.toolCalls
          : t.tool_calls.map((c) => ({ name: c.name, input: c.input, ...('is_error' in c && c.is_error ? { isError: true } : {}) }));
      return {
        index: t.index,
        prompt: T(t.prompt),
        status: S(t.status),
        final: T(t.final_text),
        reason: T(t.reason),
        durationMs: t.duration_ms,
        tokens: usage(t.tokens),
        costUsd: t.cost_usd ?? null,
        toolCalls: calls.map((c): ToolRow => [S(c.name), S(clip(inputText(c.input), LIMITS.toolInput)), c.isError ? 1 : 0, c.output === undefined ? -1 : S(clip(c.output, LIMITS.toolOutput))]),
        activations: acts(t.skill_activations),
        skillsListed: t.skills_listed ? t.skills_listed.map(S) : null,
        sessionId: t.session_id ?? -1,
        error: S(tt?.error),
      };
    });
    const detail: DetailRow = [
      job.id,
      job.attempts,
      job.started_at,
      usage(job.tokens),
      job.engine_duration_ms,
      T(job.final_message),
      job.skills_installed.map(S),
      job.skills_offered ? job.skills_offered.map(S) : null,
      acts(job.skill_activations),
      job.assertions.map((a): AssertionRow => [T(a.text), a.passed ? 1 : 0, T(a.evidence)]),
      turns,
      job.output_dir,
      job.artifacts.map(S),
    ];
    const row: JobRow = [ci, ei, variant, job.trial, STATUS[job.status], job.duration_ms, job.tokens.total, job.cost_usd ?? null, T(job.reason), detail];
    if (job.cost_usd !== undefined && job.cost_estimated) row.push(1);
    return row;
  };
  return { rowOf, finish: (jobs) => ({ v: 1, s, e: engineOrder, c: [...cases.keys()], vs: variants.has(1) ? [0, 1] : [0], j: jobs }) };
}

/**
 * JSON text safe inside an HTML `<script>` element: `<`, `>`, `&`, U+2028 and U+2029 become
 * `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029` (all can only occur inside JSON strings, where
 * the escapes mean the same characters), so no data can close the element or open a comment.
 */
export function scriptSafeJson(value: unknown): string {
  // Five native string replacements are several times faster than one regex with a callback on
  // multi-megabyte texts full of markup.
  return JSON.stringify(value)
    .replaceAll('<', '\\u003c')
    .replaceAll('>', '\\u003e')
    .replaceAll('&', '\\u0026')
    .replaceAll('\u2028', '\\u2028')
    .replaceAll('\u2029', '\\u2029');
}
