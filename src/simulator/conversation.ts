/**
 * What the user simulator is asked: a system text (its role) and one user message holding the
 * scenario, this turn's instruction, the conversation so far (each user message sent and the
 * agent's final answer of each turn, from the transcript) and the decision format.
 */
import { cutText } from '../util/cut.js';
import type { DecisionMode } from './decision.js';

/** One finished turn as the simulator sees it. */
export interface SimulatedExchange {
  /** The user message the agent received. */
  user: string;
  /** The agent's final answer of that turn (a preview for a very large answer). */
  agent: string;
}

/** Input of {@link buildSimulatorPrompt}. */
export interface SimulatorPromptInput {
  /** The case's `user_simulator.scenario`, when set. */
  scenario?: string;
  /** The `respond` turn's instruction (absent or `''` for none). */
  instruction?: string;
  history: SimulatedExchange[];
  mode: DecisionMode;
}

/** Characters of each message quoted to the simulator; longer ones are cut (`…`). */
export const MAX_QUOTED_CHARS = 8000;

/** The simulator's system text: it plays the user, never the agent. */
export const SIMULATOR_SYSTEM =
  'You play the user of an AI coding agent in a test conversation. Write as that user would: in the first person, briefly, never as the agent, and never do the agent\'s work yourself. Answer with one JSON object and nothing else.';

/** The user message of a simulator request (see the module doc). */
export function buildSimulatorPrompt(input: SimulatorPromptInput): string {
  const parts: string[] = [];
  if (input.scenario) parts.push(`Scenario (who you are and what you want):\n${input.scenario.trim()}`);
  if (input.instruction) parts.push(`Instruction for your next message:\n${input.instruction.trim()}`);
  const lines = ['The conversation so far:'];
  input.history.forEach((h, i) => {
    lines.push(`--- user (turn ${i + 1}) ---`, cutText(h.user, MAX_QUOTED_CHARS), `--- agent (turn ${i + 1}) ---`, cutText(h.agent, MAX_QUOTED_CHARS) || '(no answer)');
  });
  if (input.history.length === 0) lines.push('(nothing yet)');
  parts.push(lines.join('\n'));
  parts.push(
    input.mode === 'must_reply'
      ? 'Write the user\'s next message. Answer with exactly this JSON and nothing else:\n{"action":"reply","message":"<the user\'s next message>"}'
      : 'Decide what the user does next. Answer with exactly one of these JSON objects and nothing else:\n{"action":"reply","message":"<the user\'s next message>"}\n{"action":"stop","reason":"<why the conversation ends: the user has what they wanted, or gives up>"}',
  );
  return parts.join('\n\n');
}

/** The correction request sent once after an answer that was no valid decision. */
export function correctionPrompt(problem: string, mode: DecisionMode): string {
  const format = mode === 'must_reply' ? '{"action":"reply","message":"…"}' : '{"action":"reply","message":"…"} or {"action":"stop","reason":"…"}';
  return `Your answer was not a valid decision: ${problem}. Answer again with only the JSON object ${format}, no other text.`;
}
