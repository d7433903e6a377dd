/**
 * Claims an agent's answers make, and whether they hold.
 *
 * Extraction is conservative and linear-time (one pass over at most MAX_SCANNED_CHARS
 * characters per answer, no regular expression): the answer is cut into lines, each line into
 * sentences (at `.`, `!` or `?` followed by white space), each sentence into words, with a
 * `backtick span` kept as one word. Then:
 *
 * - **file claims**: a sentence with a claim verb in the past tense (`created`, `wrote`,
 *   `written`, `saved`, `generated`, `produced` → `file_created`; `updated`, `modified`,
 *   `changed`, `edited`, `rewrote`, `rewritten`, `fixed`, `refactored`, `added`, `appended` →
 *   `file_changed`; `deleted`, `removed` → `file_deleted`) and a path: a backtick span that
 *   looks like a path (no white space, and an extension, a `/`, or a well-known extensionless
 *   name such as `Makefile`), or a plain word with an extension (`report.md`, `src/a.ts`).
 *   Each path takes the nearest claim verb before it in the sentence, else the first after it
 *   ("report.md was created"). A verb with a negation or a modal among the four words before it
 *   (`not`, `never`, `couldn't`, `will`, `would`, `can`, …) claims nothing, nor one followed by
 *   `nothing`, `none`, `no`, `zero` ("I deleted nothing; `keep.md` is unchanged"); neither
 *   does a question. A line ending in `:` (or a heading) with a claim verb and no path passes its verb
 *   on to the list items right below it (`Files created:` then `- a.md`).
 *   Not paths: URLs, domain names (`example.com`), `e.g.`, numbers and versions, and
 *   product names such as `Node.js` (a capitalised name with `.js`, no folder).
 * - **tests pass**: a sentence with `test`, `tests`, `suite` or `specs` and `pass`, `passes`,
 *   `passed`, `passing`, `succeeded` or `green`, and no failure, negation, condition,
 *   instruction or exception word (`failed`, `not`, `if`, `should`, `run`, `make sure`,
 *   `except`, …), nor `but`, `save`, `besides`, `other than`, `apart from`, `aside from` within
 *   six words after the pass word ("All 12 tests pass except 2" / "but 2" claims nothing).
 *
 * Verification: a file claim holds when the path is among the files the agent added or
 * modified (a deletion: deleted), compared from the end at a path-segment boundary (so
 * `report.md` matches `docs/report.md` and an absolute `/tmp/ws/report.md` matches
 * `report.md`). "Tests pass" holds when the last test command (src/judge/behaviour/shell.ts)
 * run up to that answer's turn succeeded; no test command run, or one whose outcome the engine
 * does not report (Gemini CLI's shell, shell.ts `shellExitsUnobservable`) = not verified.
 */
import type { TranscriptTurn } from '../../engine/types.js';
import type { WorkspaceChanges } from '../../runtime/changes.js';
import { clip, nameList } from '../evidence.js';
import { callFailed, callSucceeded, isTestCommand, observedCall, shellCommandOf, shellExitsUnobservable } from './shell.js';
import { MAX_CLAIMS, MAX_CLAIM_TEXT_CHARS, MAX_SCANNED_CHARS, type Claim, type ClaimKind, type FoundClaim } from './types.js';

const VERBS: Record<string, ClaimKind> = {
  created: 'file_created',
  wrote: 'file_created',
  written: 'file_created',
  saved: 'file_created',
  generated: 'file_created',
  produced: 'file_created',
  updated: 'file_changed',
  modified: 'file_changed',
  changed: 'file_changed',
  edited: 'file_changed',
  rewrote: 'file_changed',
  rewritten: 'file_changed',
  fixed: 'file_changed',
  refactored: 'file_changed',
  added: 'file_changed',
  appended: 'file_changed',
  deleted: 'file_deleted',
  removed: 'file_deleted',
};
/** Words that, among the four before a claim verb, make it no claim. */
const BLOCKERS = new Set([
  'not', 'no', 'never', 'nothing', "n't", 'cannot', "can't", "couldn't", "didn't", "don't", "doesn't", "wasn't", "weren't", "won't", "wouldn't", "isn't", "aren't", "haven't", "hasn't", "hadn't", 'neither', 'nor', 'unable', 'failed',
  'will', 'would', 'should', 'could', 'can', 'may', 'might', 'must', 'shall', 'need', 'needs', 'want', 'if', 'unless', 'once', 'when', 'until', 'be',
]);
/** Objects right after a claim verb that make it claim nothing ("I deleted nothing", "changed no files"). */
const NO_OBJECT = new Set(['nothing', 'none', 'no', 'zero']);
const TEST_SUBJECTS = new Set(['test', 'tests', 'suite', 'specs', 'spec']);
const PASS_WORDS = new Set(['pass', 'passes', 'passed', 'passing', 'succeed', 'succeeds', 'succeeded', 'green']);
/** Words that make a "tests pass" sentence no claim (a failure report, a negation, a condition, an instruction). */
const TEST_BLOCKERS = new Set([
  ...BLOCKERS,
  'fail', 'fails', 'failing', 'failure', 'failures', 'error', 'errors', 'broken', 'skipped', 'run', 'try', 'verify', 'check', 'ensure', 'make', 'please', 'expect', 'expected', 'whether', 'should',
  'except', 'excepting', 'excluding',
]);
/** Words that, within {@link EXCEPTION_WINDOW} words after a pass word, make the pass partial ("pass but 2", "pass other than …"). */
const EXCEPTIONS = new Set(['but', 'save', 'besides']);
/** Two-word exceptions after a pass word: the first word, then the second. */
const EXCEPTION_PAIRS: Record<string, string> = { other: 'than', apart: 'from', aside: 'from' };
/** Words after a pass word searched for an exception. */
const EXCEPTION_WINDOW = 6;
/** Extensionless file names accepted in backticks. */
const BARE_NAMES = new Set(['makefile', 'dockerfile', 'readme', 'license', 'gemfile', 'rakefile', 'procfile', 'justfile', 'jenkinsfile', 'vagrantfile', 'containerfile']);
/** Endings of domain names, not files, when a plain word has no folder. */
const DOMAIN_ENDINGS = new Set(['com', 'org', 'net', 'io', 'gov', 'edu', 'co', 'uk', 'de', 'fr', 'ai', 'dev', 'app']);

/** One word of a sentence. `code`: it was a backtick span. */
interface Word {
  raw: string;
  /** Lower-cased, surrounding punctuation removed (for verbs and keywords). */
  bare: string;
  code: boolean;
}

const OPENERS = '([{"\'<*_';
const CLOSERS = '.,;:!?)]}"\'>*_';

function trimPunct(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && OPENERS.includes(s[a]!)) a++;
  while (b > a && CLOSERS.includes(s[b - 1]!)) b--;
  return s.slice(a, b);
}

/** A sentence: its words, its text, and whether it is a question or ends in `:`. */
interface Sentence {
  words: Word[];
  text: string;
  question: boolean;
  colon: boolean;
}

/** Cuts one line into sentences; linear in the line. */
function sentencesOf(line: string): Sentence[] {
  const out: Sentence[] = [];
  let words: Word[] = [];
  let start = 0;
  let i = 0;
  const finish = (end: number, last: string) => {
    if (words.length) out.push({ words, text: line.slice(start, end).trim(), question: last === '?', colon: last === ':' });
    words = [];
    start = end;
  };
  while (i < line.length) {
    const ch = line[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\r') {
      i++;
      continue;
    }
    if (ch === '`') {
      const close = line.indexOf('`', i + 1);
      if (close > i + 1) {
        const raw = line.slice(i + 1, close);
        words.push({ raw, bare: raw.toLowerCase(), code: true });
        i = close + 1;
        continue;
      }
    }
    // A backtick that opens no span is part of the word (and the scan always advances).
    let j = ch === '`' ? i + 1 : i;
    while (j < line.length && line[j] !== ' ' && line[j] !== '\t' && line[j] !== '`' && line[j] !== '\r') j++;
    const raw = line.slice(i, j);
    words.push({ raw, bare: trimPunct(raw).toLowerCase(), code: false });
    i = j;
    const last = raw[raw.length - 1];
    // A sentence ends at `.`, `!` or `?` followed by white space (or the line's end): `report.md` does not end one.
    if (last === '.' || last === '!' || last === '?') finish(j, last);
  }
  const tail = line.trimEnd();
  finish(line.length, tail[tail.length - 1] ?? '');
  return out;
}

/**
 * The path a word names, or undefined when it does not look like a file path (see the module
 * doc). Markdown links `[text](path)` give their target; a leading `./` is dropped.
 */
export function pathOf(word: { raw: string; code: boolean }): string | undefined {
  let s = word.raw;
  if (s.length > 1024) return undefined;
  const link = s.indexOf('](');
  if (!word.code && link >= 0) s = s.slice(link + 2);
  s = word.code ? s.trim() : trimPunct(s);
  if (s.startsWith('./')) s = s.slice(2);
  if (s === '' || s.includes('//') || s.toLowerCase().startsWith('www.')) return undefined;
  for (const ch of s) {
    const ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || '_-./~+@%'.includes(ch);
    if (!ok) return undefined;
  }
  if (s.endsWith('/')) return undefined;
  const slash = s.lastIndexOf('/');
  const name = s.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const base = dot >= 0 ? name.slice(0, dot) : name;
  const ext = dot >= 0 ? name.slice(dot + 1) : '';
  const extOk = ext.length >= 1 && ext.length <= 10 && /[a-z]/i.test(ext) && !ext.includes('-');
  const dotfile = dot === 0 && name.length > 1;
  if (!extOk) {
    if (!word.code) return undefined;
    if (slash >= 0 && name !== '' && !name.includes('.')) return s;
    return BARE_NAMES.has(name.toLowerCase()) ? s : undefined;
  }
  if (!dotfile && base === '') return undefined;
  if (!word.code && slash < 0) {
    if (/^\d+$/.test(base)) return undefined;
    if (base.length === 1 && ext.length === 1) return undefined; // e.g, i.e
    if (DOMAIN_ENDINGS.has(ext.toLowerCase())) return undefined;
    if (ext === 'js' && base[0]! >= 'A' && base[0]! <= 'Z' && !base.includes('.')) return undefined; // Node.js, Next.js
  }
  return s;
}

const isListItem = (line: string): boolean => {
  const t = line.trimStart();
  if (t.startsWith('- ') || t.startsWith('* ') || t.startsWith('+ ')) return true;
  let k = 0;
  while (k < t.length && k < 4 && t[k]! >= '0' && t[k]! <= '9') k++;
  return k > 0 && (t[k] === '.' || t[k] === ')') && t[k + 1] === ' ';
};

/** The claim kind of the verb at `i`, unless a blocker is among the four words before it or a "nothing" object right after it. */
function verbAt(words: Word[], i: number): ClaimKind | undefined {
  const w = words[i]!;
  if (w.code) return undefined;
  const kind = VERBS[w.bare];
  if (!kind) return undefined;
  const next = words[i + 1];
  if (next && !next.code && NO_OBJECT.has(next.bare)) return undefined;
  for (let k = Math.max(0, i - 4); k < i; k++) {
    const b = words[k]!.bare;
    if (BLOCKERS.has(b) || b.endsWith("n't")) return undefined;
  }
  return kind;
}

function testsPass(s: Sentence): boolean {
  if (s.question) return false;
  let subject = false;
  let passAt = -1;
  const words = s.words;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.code && TEST_BLOCKERS.has(w.bare)) return false;
    if (!w.code && w.bare.endsWith("n't")) return false;
    if (TEST_SUBJECTS.has(w.bare) || (w.code && isTestCommand(w.raw))) subject = true;
    if (!w.code && PASS_WORDS.has(w.bare)) passAt = i;
    else if (!w.code && passAt >= 0 && i - passAt <= EXCEPTION_WINDOW) {
      // "All 12 tests pass but 2", "… pass other than the e2e suite": a partial pass claims nothing.
      if (EXCEPTIONS.has(w.bare)) return false;
      const second = EXCEPTION_PAIRS[w.bare];
      if (second !== undefined && words[i + 1]?.bare === second) return false;
    }
  }
  return subject && passAt >= 0;
}

/**
 * The claims of one answer (see the module doc), in order of appearance, without duplicates
 * (same kind and path). Reads at most MAX_SCANNED_CHARS characters; keeps at most `max` claims.
 */
export function extractClaims(answer: string, turn: number, max = MAX_CLAIMS): FoundClaim[] {
  const out: FoundClaim[] = [];
  const seen = new Set<string>();
  const add = (c: FoundClaim) => {
    const key = `${c.kind}\u0000${c.path ?? ''}`;
    if (seen.has(key) || out.length >= max) return;
    seen.add(key);
    out.push(c);
  };
  let pending: ClaimKind | undefined;
  const text = answer.length > MAX_SCANNED_CHARS ? answer.slice(0, MAX_SCANNED_CHARS) : answer;
  let lineStart = 0;
  while (lineStart <= text.length && out.length < max) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const line = text.slice(lineStart, lineEnd);
    lineStart = lineEnd + 1;
    if (line.trim() === '') continue;
    const listItem = isListItem(line);
    if (!listItem) pending = undefined;
    const heading = line.trimStart().startsWith('#');
    for (const s of sentencesOf(line)) {
      const clipped = clip(s.text, MAX_CLAIM_TEXT_CHARS);
      if (testsPass(s)) add({ text: clipped, kind: 'tests_pass', turn });
      if (s.question) continue;
      const verbs: (ClaimKind | undefined)[] = s.words.map((_, i) => verbAt(s.words, i));
      const paths: { at: number; path: string }[] = [];
      s.words.forEach((w, i) => {
        if (verbs[i] || VERBS[w.bare]) return;
        const p = pathOf(w);
        if (p !== undefined) paths.push({ at: i, path: p });
      });
      const anyVerb = verbs.some(Boolean);
      const blockedVerb = s.words.some((w, i) => !w.code && VERBS[w.bare] && !verbs[i]);
      if (paths.length === 0) {
        if (anyVerb && (s.colon || heading)) pending = verbs.find(Boolean);
        continue;
      }
      // Nearest verb before each path, else the first verb after it.
      let before: ClaimKind | undefined;
      const after: (ClaimKind | undefined)[] = new Array<ClaimKind | undefined>(s.words.length + 1);
      for (let i = s.words.length - 1; i >= 0; i--) after[i] = verbs[i] ?? after[i + 1];
      let p = 0;
      for (let i = 0; i < s.words.length && p < paths.length; i++) {
        if (verbs[i]) before = verbs[i];
        while (p < paths.length && paths[p]!.at === i) {
          const kind = before ?? after[i + 1] ?? (listItem && !anyVerb && !blockedVerb ? pending : undefined);
          if (kind) add({ text: clipped, kind, path: paths[p]!.path, turn });
          p++;
        }
      }
    }
  }
  return out;
}

/** The changed path `claimed` refers to: equal, or equal from the end at a `/` boundary; undefined when none. */
export function matchPath(claimed: string, candidates: readonly string[]): string | undefined {
  const c = claimed.replace(/\\/g, '/');
  let best: string | undefined;
  for (const p of candidates) {
    if (p === c) return p;
    if ((p.endsWith(`/${c}`) || c.endsWith(`/${p}`)) && (best === undefined || p.length > best.length)) best = p;
  }
  return best;
}

/** What verification needs: the workspace changes (undefined when unknown), the turns and the engine. */
export interface ClaimContext {
  changes?: WorkspaceChanges;
  turns: readonly Pick<TranscriptTurn, 'index' | 'toolCalls'>[];
  /** The transcript's engine name: on an engine that does not report shell exit statuses (shell.ts `shellExitsUnobservable`) no test command is known to have succeeded. */
  engine?: string;
}

function changedList(changes: WorkspaceChanges): string {
  return `added: ${nameList(changes.added, 10)}; modified: ${nameList(changes.modified, 10)}${changes.truncated ? ' (the change lists are truncated)' : ''}`;
}

function verifyFile(c: FoundClaim, changes: WorkspaceChanges | undefined): Pick<Claim, 'verified' | 'evidence'> {
  const path = c.path ?? '';
  if (!changes) return { verified: false, evidence: `${path}: the workspace changes were not recorded, so the claim cannot be checked` };
  if (c.kind === 'file_deleted') {
    const hit = matchPath(path, changes.deleted);
    if (hit) return { verified: true, evidence: `${hit} was deleted by the agent` };
    const still = matchPath(path, [...changes.added, ...changes.modified]);
    return { verified: false, evidence: still ? `${still} still exists (the agent ${changes.added.includes(still) ? 'added' : 'modified'} it)` : `${path} is not among the files the agent deleted (deleted: ${nameList(changes.deleted, 10)})` };
  }
  const added = matchPath(path, changes.added);
  if (added) return { verified: true, evidence: `${added} was added by the agent` };
  const modified = matchPath(path, changes.modified);
  if (modified) return { verified: true, evidence: `${modified} was modified by the agent${c.kind === 'file_created' ? ' (it existed before)' : ''}` };
  const deleted = matchPath(path, changes.deleted);
  if (deleted) return { verified: false, evidence: `${deleted} was deleted by the agent, not ${c.kind === 'file_created' ? 'created' : 'changed'}` };
  return { verified: false, evidence: `${path} is not among the files the agent added or modified (${changedList(changes)})` };
}

function verifyTests(c: FoundClaim, turns: ClaimContext['turns'], engine: string | undefined): Pick<Claim, 'verified' | 'evidence'> {
  const shells: { turn: number; command: string; call: TranscriptTurn['toolCalls'][number] }[] = [];
  for (const t of turns) {
    if (t.index > c.turn) continue;
    for (const call of t.toolCalls) {
      const command = shellCommandOf(call);
      if (command !== undefined) shells.push({ turn: t.index, command, call });
    }
  }
  const tests = shells.filter((s) => isTestCommand(s.command));
  const last = tests[tests.length - 1];
  if (!last) {
    return { verified: false, evidence: `no test command ran${shells.length ? ` (shell commands: ${nameList(shells.map((s) => JSON.stringify(clip(s.command, 60))), 5)})` : ' (no shell command at all)'}` };
  }
  const shown = JSON.stringify(clip(last.command, 120));
  const unobservable = shellExitsUnobservable(engine);
  const call = observedCall(last.call, unobservable === undefined);
  if (callFailed(call)) return { verified: false, evidence: `the last test command ${shown} (turn ${last.turn}) failed: ${JSON.stringify(clip(call.output ?? '', 160))}` };
  if (!callSucceeded(call)) return { verified: false, evidence: `the last test command ${shown} (turn ${last.turn}) ran, but the engine did not report its outcome${unobservable ? ` (${unobservable})` : ''}` };
  return { verified: true, evidence: `${shown} ran in turn ${last.turn} and succeeded (${tests.length} test command(s) in all)` };
}

/** Verifies each claim (see the module doc). Pure. */
export function verifyClaims(found: readonly FoundClaim[], ctx: ClaimContext): Claim[] {
  return found.map((c) => ({ ...c, ...(c.kind === 'tests_pass' ? verifyTests(c, ctx.turns, ctx.engine) : verifyFile(c, ctx.changes)) }));
}

/** A turn's status as the conversation recorded it (TurnResult.status). */
export type TurnStatus = 'completed' | 'skipped' | 'failed' | 'error';

/** Whether turn `t` gave an answer that counts: its recorded status, else no engine error. */
export function answeredTurn(t: Pick<TranscriptTurn, 'index' | 'error'>, turnStatus: readonly TurnStatus[] | undefined): boolean {
  const s = turnStatus?.[t.index - 1];
  return s === undefined ? !t.error : s === 'completed' || s === 'failed';
}

/** Every claim of the answered turns' answers, in order, without duplicates across turns, at most MAX_CLAIMS. */
export function claimsOf(turns: readonly Pick<TranscriptTurn, 'index' | 'finalText' | 'error'>[], turnStatus?: readonly TurnStatus[]): { found: FoundClaim[]; total: number } {
  const found: FoundClaim[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const t of turns) {
    if (!answeredTurn(t, turnStatus)) continue;
    for (const c of extractClaims(t.finalText, t.index, MAX_CLAIMS + 1)) {
      const key = `${c.kind}\u0000${c.path ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      total++;
      if (found.length < MAX_CLAIMS) found.push(c);
    }
  }
  return { found, total };
}
