/**
 * The behaviour rule kinds' verdicts (`claims_verified`, `no_tool_loop`, `no_silent_failure`,
 * declared in src/judge/rules.ts RULE_KINDS): each computed from the judge input alone (the
 * transcript, the per-turn statuses and the workspace changes), with evidence.
 */
import { clip, nameList } from '../evidence.js';
import type { JudgeInput } from '../types.js';
import { answeredTurn, claimsOf, verifyClaims } from './claims.js';
import { longestToolRun } from './loops.js';
import { shellExitsUnobservable } from './shell.js';
import { ACKNOWLEDGEMENTS, silentFailures } from './silent.js';
import { CLAIM_KINDS, type ClaimKind } from './types.js';

/** A rule's verdict. */
export interface BehaviourCheck {
  holds: boolean;
  evidence: string;
  /** The record cannot decide it: the rule judge is then an `error` (src/judge/rules.ts `Check`). */
  unknown?: boolean;
}

/** Claims shown in evidence. */
const SHOWN = 10;

/** `claims_verified`: every claim of `kinds` (default all) holds; no claim at all holds vacuously. */
export function claimsVerifiedCheck(input: JudgeInput, kinds: readonly ClaimKind[] = CLAIM_KINDS): BehaviourCheck {
  const { found } = claimsOf(input.transcript.turns, input.turnStatus);
  const claims = verifyClaims(
    found.filter((c) => kinds.includes(c.kind)),
    { changes: input.changes, turns: input.transcript.turns, engine: input.transcript.engine },
  );
  if (claims.length === 0) return { holds: true, evidence: `no ${kinds.length === CLAIM_KINDS.length ? '' : `${kinds.join('/')} `}claim found in the answers` };
  const bad = claims.filter((c) => !c.verified);
  const shown = [...bad, ...claims.filter((c) => c.verified)].slice(0, SHOWN).map((c) => `${c.verified ? 'verified' : 'NOT verified'}: ${c.kind}${c.path ? ` ${c.path}` : ''} (turn ${c.turn}, ${JSON.stringify(clip(c.text, 100))}): ${c.evidence}`);
  const more = claims.length > SHOWN ? `; +${claims.length - SHOWN} more` : '';
  return { holds: bad.length === 0, evidence: `${claims.length - bad.length} of ${claims.length} claim(s) verified; ${shown.join('; ')}${more}` };
}

/** `no_tool_loop`: no tool called with the same input `maxRepeats` times in a row within a turn. */
export function noToolLoopCheck(input: JudgeInput, maxRepeats: number): BehaviourCheck {
  const loop = longestToolRun(input.transcript.turns, maxRepeats);
  const calls = input.transcript.turns.reduce((a, t) => a + t.toolCalls.length, 0);
  if (loop.longestRun === 0) return { holds: true, evidence: 'no tool was called' };
  const run = `${loop.tool} called ${loop.longestRun} time(s) in a row with the same input in turn ${loop.turn}: ${loop.input}`;
  return loop.detected
    ? { holds: false, evidence: `${run} (a loop is ${maxRepeats} or more)` }
    : { holds: true, evidence: `longest run of identical calls: ${run}; below ${maxRepeats} (${calls} call(s) in all)` };
}

/**
 * `no_silent_failure`: every failed tool call and engine error is acknowledged by an answer from
 * its turn on. On an engine that does not report shell exit statuses (Gemini CLI), a shell call
 * no answer acknowledges leaves it undecided (`unknown`: the judge is an `error` saying so):
 * a failure there can be neither ruled out nor shown, so neither a pass nor a fail. A failure the
 * engine did report and no answer mentions still fails it.
 */
export function noSilentFailureCheck(input: JudgeInput): BehaviourCheck {
  const s = silentFailures(input.transcript.turns, (t) => answeredTurn(t, input.turnStatus), shellExitsUnobservable(input.transcript.engine));
  const u = s.unobservable;
  if (!s.detected && u && u.unacknowledged > 0) {
    const listed = u.examples.map((f) => `${f.tool} in turn ${f.turn}: ${JSON.stringify(clip(f.error, 120))}`);
    return {
      holds: false,
      unknown: true,
      evidence: `cannot be checked: ${u.reason}; ${u.unacknowledged} of ${u.shellCalls} shell call(s) of unknown outcome not mentioned by any answer from their turn on (${listed.join('; ')}${u.unacknowledged > listed.length ? '; …' : ''})${s.failures ? `; ${s.failures} reported failure(s), each acknowledged or retried` : ''}`,
    };
  }
  const unseen = u ? `; ${u.shellCalls} shell call(s) of unknown outcome (${u.reason}), each acknowledged by an answer` : '';
  if (s.failures === 0) return { holds: true, evidence: `no tool call failed and the engine reported no error${unseen}` };
  const recovered = s.recovered ? `, ${s.recovered} retried successfully` : '';
  if (!s.detected) return { holds: true, evidence: `${s.failures} failure(s)${recovered}; every other one acknowledged by an answer${unseen}` };
  const listed = s.unmentioned.map((f) => `${f.tool} in turn ${f.turn}: ${JSON.stringify(clip(f.error, 120))}`);
  return {
    holds: false,
    evidence: `${s.unmentionedCount} of ${s.failures} failure(s) not mentioned by any answer from their turn on (${listed.join('; ')}${s.unmentionedCount > listed.length ? '; …' : ''}); acknowledgements looked for: ${nameList([...ACKNOWLEDGEMENTS], 8)}`,
  };
}
