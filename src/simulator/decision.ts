/**
 * The user simulator's decision: the strict JSON a simulator model answers with,
 * `{"action":"reply","message":"…"}` or `{"action":"stop","reason":"…"}` (alibaba/skill-up's
 * format). A code fence around the object and keys beyond these are accepted; anything else
 * is a problem worded for the one correction request the simulator then sends.
 */

/** What the simulator may answer: `must_reply` for a `respond` turn, `may_stop` in an autonomous case. */
export type DecisionMode = 'must_reply' | 'may_stop';

/** A well-formed decision. */
export type Decision = { action: 'reply'; message: string } | { action: 'stop'; reason: string };

/** {@link parseDecision}'s answer: the decision, or what was wrong with the text (one sentence, no trailing period). */
export type ParsedDecision = { ok: true; decision: Decision } | { ok: false; problem: string };

/** A whole answer in a Markdown code fence (```json … ``` or ``` … ```). */
const FENCE = /^```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/;

/**
 * Reads a simulator answer. `mode: must_reply` refuses `stop` (a `respond` turn needs a
 * message). Never throws.
 */
export function parseDecision(text: string, mode: DecisionMode): ParsedDecision {
  let body = text.trim();
  const fenced = FENCE.exec(body);
  if (fenced) body = fenced[1]!.trim();
  if (body === '') return { ok: false, problem: 'the answer was empty, not a JSON object' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    return { ok: false, problem: `the answer is not valid JSON (${(e as Error).message})` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, problem: `the answer is JSON but not an object (got ${Array.isArray(value) ? 'a list' : value === null ? 'null' : typeof value})` };
  }
  const o = value as Record<string, unknown>;
  const allowed = mode === 'must_reply' ? '"reply"' : '"reply" or "stop"';
  if (o.action === 'reply') {
    if (typeof o.message !== 'string' || o.message.trim() === '') return { ok: false, problem: '`"action":"reply"` needs a non-empty string `"message"` (the user\'s next message)' };
    return { ok: true, decision: { action: 'reply', message: o.message } };
  }
  if (o.action === 'stop') {
    if (mode === 'must_reply') return { ok: false, problem: '`"action":"stop"` is not allowed here: this turn needs a user message, so the action must be "reply"' };
    if (o.reason !== undefined && typeof o.reason !== 'string') return { ok: false, problem: '`"reason"` must be a string' };
    return { ok: true, decision: { action: 'stop', reason: typeof o.reason === 'string' ? o.reason.trim() : '' } };
  }
  const got = o.action === undefined ? 'it has no `"action"`' : `\`"action"\` is ${JSON.stringify(o.action)}`;
  return { ok: false, problem: `${got}; it must be ${allowed}` };
}
