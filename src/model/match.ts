/**
 * Rule selection and step derivation.
 *
 * The first rule whose every `when` condition holds for the conversation view answers.
 *
 * The step of that rule's reply to send is derived from the request alone: it is the number
 * of assistant replies since the current prompt that **this same rule** produced. Which rule
 * produced an earlier reply is found by re-matching the conversation as it stood just before
 * that reply. (Counting every assistant reply since the prompt would be wrong as soon as two
 * rules take part in one turn: after `use_skill` from rule A, rule B must start at its step
 * 0, not at step 1.)
 */
import { toolListed, viewConversation, type Conversation } from './conversation.js';
import type { ModelRequest, ModelScript, Rule } from './types.js';

/** True when every condition of `rule.when` holds for `conv`. */
export function ruleMatches(rule: Rule, conv: Conversation): boolean {
  const w = rule.when;
  const prompt = conv.prompt.toLowerCase();
  if (w.promptContains && !w.promptContains.some((s) => prompt.includes(s.toLowerCase()))) return false;
  if (w.promptMatches) {
    w.promptMatches.lastIndex = 0;
    if (!w.promptMatches.test(conv.prompt)) return false;
  }
  if (w.skillListed !== undefined && !conv.skillsListed.includes(w.skillListed)) return false;
  if (w.skillLoaded !== undefined) {
    const n = conv.skillsLoaded.length;
    if (w.skillLoaded === true && n === 0) return false;
    if (w.skillLoaded === false && n > 0) return false;
    if (typeof w.skillLoaded === 'string' && !conv.skillsLoaded.includes(w.skillLoaded)) return false;
  }
  if (w.turn && !w.turn.includes(conv.turn)) return false;
  if (w.toolResultContains) {
    const out = conv.lastToolResult?.output.toLowerCase();
    if (out === undefined || !w.toolResultContains.some((s) => out.includes(s.toLowerCase()))) return false;
  }
  if (w.toolListed && !w.toolListed.some((name) => toolListed(conv, name))) return false;
  if (w.engine && !w.engine.includes(conv.engine)) return false;
  if (w.judge !== undefined && w.judge !== conv.judge) return false;
  if (w.simulator !== undefined && w.simulator !== conv.simulator) return false;
  return true;
}

/** The first matching rule, or undefined. */
export function firstMatch(script: ModelScript, conv: Conversation): Rule | undefined {
  return script.rules.find((r) => ruleMatches(r, conv));
}

/**
 * 0-based step of `rule` for the request: how many replies since the current prompt were
 * answered by `rule` (see the module doc).
 */
export function stepIndex(script: ModelScript, req: ModelRequest, conv: Conversation, rule: Rule): number {
  let step = 0;
  for (const start of conv.replyStarts) {
    const before = viewConversation(req, start);
    if (firstMatch(script, before) === rule) step++;
  }
  return step;
}
