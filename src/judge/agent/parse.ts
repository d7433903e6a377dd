/**
 * Reading a grader's answer (pure). The contract (alibaba/skill-up 0.9.1's, with stable ids):
 * exactly one JSON object `{"results":[{"id":"c1","passed":true,"evidence":"…"}, …]}` holding
 * one result per criterion id, each with a boolean `passed` and non-empty `evidence`. The
 * object may be fenced (```json … ```) or surrounded by prose; the first JSON object with a
 * `results` list is the answer.
 */
import type { AgentJudgeCriterion } from '../../config/types.js';

/** One criterion's verdict as the grader gave it. */
export interface CriterionVerdict {
  passed: boolean;
  evidence: string;
}

/** A usable answer (`results`: criterion id → verdict, every criterion present) or what was wrong with it. */
export type ParsedReply = { ok: true; results: Map<string, CriterionVerdict> } | { ok: false; problems: string[] };

/** Characters of a reply that are searched for the JSON (a longer reply is read up to here). */
export const MAX_REPLY_CHARS = 1024 * 1024;
/** Characters of one criterion's evidence kept. */
export const MAX_EVIDENCE_CHARS = 4000;
/** Problems listed in a correction (more are counted). */
const MAX_PROBLEMS = 20;
/** `{"results"` starts tried when the balanced scan of the whole text finds no answer. */
const MAX_RESULT_STARTS = 8;

/**
 * The end (exclusive) of the balanced JSON value opening with `{` at `start`, strings and
 * escapes respected, or -1 when it never closes. Linear in the characters scanned.
 */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return i + 1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

/** JSON.parse, or undefined. */
function tryParse(s: string): unknown {
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

const hasResults = (v: unknown): v is { results: unknown } => typeof v === 'object' && v !== null && !Array.isArray(v) && 'results' in v;

/**
 * The first JSON object with a `results` key in `reply`, or undefined: tried in order, the
 * whole reply, each fenced block (```…```), each top-level balanced `{…}` of the text, then
 * the balanced value from each `{"results"` (a stray `{` in the prose before the answer would
 * otherwise hide it). Each step is linear in the reply's length.
 */
export function findResultsJson(reply: string): { results: unknown } | undefined {
  const text = reply.length > MAX_REPLY_CHARS ? reply.slice(0, MAX_REPLY_CHARS) : reply;
  const whole = tryParse(text.trim());
  if (hasResults(whole)) return whole;
  // Fenced blocks: ``` or ```json … ```.
  let at = 0;
  for (;;) {
    const open = text.indexOf('```', at);
    if (open < 0) break;
    const bodyStart = text.indexOf('\n', open + 3);
    if (bodyStart < 0) break;
    const close = text.indexOf('```', bodyStart + 1);
    if (close < 0) break;
    const v = tryParse(text.slice(bodyStart + 1, close).trim());
    if (hasResults(v)) return v;
    at = close + 3;
  }
  // Top-level balanced objects, in one pass.
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '{') continue;
    const end = balancedEnd(text, i);
    if (end < 0) break;
    const v = tryParse(text.slice(i, end));
    if (hasResults(v)) return v;
    i = end - 1;
  }
  const starts = /\{\s*"results"/g;
  let m: RegExpExecArray | null;
  let tried = 0;
  while ((m = starts.exec(text)) !== null && tried++ < MAX_RESULT_STARTS) {
    const end = balancedEnd(text, m.index);
    if (end < 0) break;
    const v = tryParse(text.slice(m.index, end));
    if (hasResults(v)) return v;
  }
  return undefined;
}

/** `s` shown in a problem: quoted, cut at 60 characters. */
function shown(s: unknown): string {
  const t = typeof s === 'string' ? s : JSON.stringify(s) ?? String(s);
  return `\`${t.length > 60 ? `${t.slice(0, 57)}...` : t}\``;
}

/**
 * Checks a grader's reply against the criteria. Problems name exactly what was wrong, in the
 * words the correction prompt repeats to the grader: no JSON object with a `results` list;
 * `results` not a list; an item that is not an object; a missing, unknown or duplicate id; a
 * `passed` that is not a boolean; an empty or missing `evidence`; a criterion without a result.
 */
export function parseGraderReply(reply: string, criteria: readonly AgentJudgeCriterion[]): ParsedReply {
  const found = findResultsJson(reply);
  if (!found) {
    return { ok: false, problems: ['the answer holds no JSON object with a `results` list (expected {"results":[{"id":"c1","passed":true,"evidence":"…"}]})'] };
  }
  if (!Array.isArray(found.results)) return { ok: false, problems: ['`results` is not a list'] };
  const known = new Set(criteria.map((c) => c.id));
  const results = new Map<string, CriterionVerdict>();
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [i, item] of (found.results as unknown[]).entries()) {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      problems.push(`result ${i + 1} is not an object`);
      continue;
    }
    const r = item as Record<string, unknown>;
    const id = r.id;
    if (typeof id !== 'string' || id === '') {
      problems.push(`result ${i + 1} has no \`id\` (a criterion id such as \`${criteria[0]?.id ?? 'c1'}\`)`);
      continue;
    }
    if (!known.has(id)) {
      problems.push(`unknown criterion id ${shown(id)} (the ids are ${criteria.map((c) => `\`${c.id}\``).join(', ')})`);
      continue;
    }
    if (seen.has(id)) {
      problems.push(`criterion \`${id}\` is answered more than once`);
      results.delete(id);
      continue;
    }
    seen.add(id);
    let ok = true;
    if (typeof r.passed !== 'boolean') {
      problems.push(`\`passed\` of \`${id}\` is ${r.passed === undefined ? 'missing' : shown(r.passed)}, not true or false`);
      ok = false;
    }
    const evidence = typeof r.evidence === 'string' ? r.evidence.trim() : '';
    if (evidence === '') {
      problems.push(`\`evidence\` of \`${id}\` is ${r.evidence === undefined ? 'missing' : 'empty'} (say what you saw: a file, a line, a message)`);
      ok = false;
    }
    if (ok) results.set(id, { passed: r.passed as boolean, evidence: evidence.length > MAX_EVIDENCE_CHARS ? `${evidence.slice(0, MAX_EVIDENCE_CHARS)}…` : evidence });
  }
  for (const c of criteria) if (!seen.has(c.id)) problems.push(`no result for criterion \`${c.id}\``);
  if (problems.length === 0) return { ok: true, results };
  const more = problems.length - MAX_PROBLEMS;
  return { ok: false, problems: more > 0 ? [...problems.slice(0, MAX_PROBLEMS), `… and ${more} more problem(s)`] : problems };
}
