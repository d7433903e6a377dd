/**
 * Silent failure: a tool call failed, or the engine reported an error, and no answer from that
 * turn on says so.
 *
 * - A **failure** is a tool call the engine marked as an error (`isError`), or whose output
 *   states a non-zero exit code (src/judge/behaviour/shell.ts `callFailed`), or a turn's engine
 *   error. A failed call retried later in the same turn with the same tool and input, that time
 *   succeeding, is **recovered** and not counted as silent (the agent fixed it).
 * - It is **acknowledged** when the answer of its turn or of any later turn contains one of
 *   {@link ACKNOWLEDGEMENTS} (case-insensitive, at the start of a word: `fail` also matches
 *   `failed`, `failure`; `error` matches `errors`). The list is deliberately short and
 *   documented in README.md; a search is one `indexOf` scan per entry over at most
 *   MAX_SCANNED_CHARS characters of each answer: linear.
 * - On an engine that does not report shell exit statuses (`shellUnobservable` given: Gemini
 *   CLI), a shell call not marked failed has an **unknown** outcome: such calls are counted in
 *   `unobservable` (with those no answer acknowledges), never taken as successes.
 */
import type { ToolCall, TranscriptTurn } from '../../engine/types.js';
import { clip } from '../evidence.js';
import { canonicalJson } from './loops.js';
import { callFailed, callSucceeded, observedCall, shellCommandOf } from './shell.js';
import { MAX_LISTED, MAX_SCANNED_CHARS, type SilentFailure, type UnmentionedFailure } from './types.js';

/** Words and phrases that acknowledge a failure, matched case-insensitively at the start of a word. */
export const ACKNOWLEDGEMENTS: readonly string[] = [
  'fail', 'error', 'could not', "couldn't", 'cannot', "can't", 'unable', 'not able', 'did not', "didn't", 'was not', "wasn't",
  'unsuccessful', 'problem', 'issue', 'exception', 'denied', 'refused', 'timed out', 'timeout', 'not found', 'no such',
  'missing', 'broken', 'crash', 'retry', 'retried', 'unfortunately', 'warning', 'non-zero', 'nonzero', 'exit code', 'exit status',
];

const isLetter = (ch: string | undefined) => ch !== undefined && ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch > '\u007f');

/** The first acknowledgement in `text` (see the module doc), or undefined. Linear in `text`. */
export function acknowledgement(text: string): string | undefined {
  const lower = (text.length > MAX_SCANNED_CHARS ? text.slice(0, MAX_SCANNED_CHARS) : text).toLowerCase().replace(/\u2019/g, "'");
  for (const word of ACKNOWLEDGEMENTS) {
    let at = lower.indexOf(word);
    while (at >= 0) {
      if (!isLetter(lower[at - 1])) return word;
      at = lower.indexOf(word, at + 1);
    }
  }
  return undefined;
}

type Turn = Pick<TranscriptTurn, 'index' | 'finalText' | 'error'> & { toolCalls: readonly Pick<ToolCall, 'name' | 'input' | 'output' | 'isError'>[] };

/**
 * The failures of `turns` and those no answer acknowledged (see the module doc). `answered`
 * says which turns' answers count (default: every turn without an engine error);
 * `shellUnobservable` is why the engine's shell outcomes are unknown (shell.ts
 * `shellExitsUnobservable`), undefined when it reports them.
 */
export function silentFailures(turns: readonly Turn[], answered: (t: Turn) => boolean = (t) => !t.error, shellUnobservable?: string): SilentFailure {
  const acked = new Map<number, boolean>();
  const ackFrom = (index: number): boolean => {
    const hit = acked.get(index);
    if (hit !== undefined) return hit;
    const ok = turns.some((t) => t.index >= index && answered(t) && acknowledgement(t.finalText) !== undefined);
    acked.set(index, ok);
    return ok;
  };
  let failures = 0;
  let recovered = 0;
  let unmentionedCount = 0;
  const unmentioned: UnmentionedFailure[] = [];
  const silent = (f: UnmentionedFailure) => {
    unmentionedCount++;
    if (unmentioned.length < MAX_LISTED) unmentioned.push(f);
  };
  let unknownShells = 0;
  let unknownSilent = 0;
  const examples: UnmentionedFailure[] = [];
  for (const t of turns) {
    const calls = t.toolCalls.map((c) => observedCall(c, shellUnobservable === undefined));
    // Later successes of each (tool, input) in this turn, by the index of the last one.
    const lastSuccess = new Map<string, number>();
    const keys = calls.map((c) => `${c.name}\u0000${canonicalJson(c.input)}`);
    calls.forEach((c, i) => {
      if (callSucceeded(c)) lastSuccess.set(keys[i]!, i);
    });
    calls.forEach((c, i) => {
      if (shellUnobservable !== undefined && !callFailed(c) && !callSucceeded(c) && shellCommandOf(c) !== undefined) {
        unknownShells++;
        if (!ackFrom(t.index)) {
          unknownSilent++;
          if (examples.length < MAX_LISTED) examples.push({ turn: t.index, tool: c.name, error: clip(shellCommandOf(c)!, 200) });
        }
        return;
      }
      if (!callFailed(c)) return;
      failures++;
      if ((lastSuccess.get(keys[i]!) ?? -1) > i) {
        recovered++;
        return;
      }
      if (!ackFrom(t.index)) silent({ turn: t.index, tool: c.name, error: clip((c.output ?? '(no output)').trim(), 200) });
    });
    if (t.error) {
      failures++;
      if (!ackFrom(t.index)) silent({ turn: t.index, tool: 'engine', error: clip(`${t.error.kind}: ${t.error.message}`, 200) });
    }
  }
  const out: SilentFailure = { failures, recovered, unmentioned, unmentionedCount, detected: unmentionedCount > 0 };
  if (shellUnobservable !== undefined && unknownShells > 0) out.unobservable = { reason: shellUnobservable, shellCalls: unknownShells, unacknowledged: unknownSilent, examples };
  return out;
}
