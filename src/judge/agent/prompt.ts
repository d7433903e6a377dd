/**
 * The grader's prompts (pure): the grading prompt (criteria with their ids, where the review
 * materials are, the exact answer required) and the one correction prompt that names what was
 * wrong with an unusable answer.
 */
import type { AgentJudgeCriterion } from '../../config/types.js';

/**
 * Words every grader prompt (and correction) starts with. A scripted model's rule can match
 * them (`prompt_contains: "skill-up grader"`) to tell a grader's requests from the agent's.
 */
export const GRADER_PROMPT_MARKER = 'You are the skill-up grader';

/** The answer shape, as the prompts spell it out. */
export const ANSWER_SHAPE = '{"results":[{"id":"c1","passed":true,"evidence":"…"}]}';

/** One review material as the prompt lists it: its path (relative to the grader's working folder) and what it is. */
export interface MaterialLine {
  path: string;
  what: string;
}

/** Characters of a previous answer quoted in a fresh correction prompt. */
export const MAX_QUOTED_REPLY_CHARS = 16 * 1024;

function criteriaList(criteria: readonly AgentJudgeCriterion[]): string {
  return criteria.map((c) => `- ${c.id}: ${c.text.replace(/\s*\n\s*/g, ' ')}`).join('\n');
}

function answerRules(criteria: readonly AgentJudgeCriterion[]): string {
  const ids = criteria.map((c) => `"${c.id}"`).join(', ');
  return [
    'Answer with exactly one JSON object and nothing else:',
    ANSWER_SHAPE,
    `- one result per criterion, each id exactly once: ${ids};`,
    '- `passed`: true or false (true only when the criterion clearly holds);',
    '- `evidence`: a non-empty sentence saying what you saw (a file and its content, a line of the transcript, the final message).',
  ].join('\n');
}

/**
 * The grading prompt. `materials` are the context folder's files (src/run/grader.ts writes
 * them); `finalMessage`, when given, is quoted inline as well (a short answer saves the
 * grader a read).
 */
export function graderPrompt(opts: { criteria: readonly AgentJudgeCriterion[]; contextDir: string; materials: readonly MaterialLine[]; finalMessage?: string }): string {
  const parts = [
    `${GRADER_PROMPT_MARKER}: you check the work a coding agent did against the criteria below.`,
    'Your working folder is a copy of the agent\'s workspace as the agent left it: read its files to check each criterion. Do not change files; your changes are not graded.',
  ];
  if (opts.materials.length) {
    parts.push(`Review materials, in \`${opts.contextDir}/\`:\n${opts.materials.map((m) => `- \`${m.path}\`: ${m.what}`).join('\n')}`);
  }
  if (opts.finalMessage !== undefined) parts.push(`The agent's final message:\n<<<\n${opts.finalMessage}\n>>>`);
  parts.push(`Criteria:\n${criteriaList(opts.criteria)}`, answerRules(opts.criteria));
  return parts.join('\n\n');
}

/**
 * The correction prompt after an unusable answer: what was wrong (`problems`, as
 * parseGraderReply words them), the criteria again, and the answer required. With
 * `previousReply` (an engine that cannot resume the grader's session) the prompt is fresh:
 * it carries the original prompt and the previous answer (cut at MAX_QUOTED_REPLY_CHARS).
 */
export function correctionPrompt(opts: { criteria: readonly AgentJudgeCriterion[]; problems: readonly string[]; original?: string; previousReply?: string }): string {
  const parts: string[] = [];
  if (opts.original !== undefined) {
    const prev = opts.previousReply ?? '';
    const quoted = prev.length > MAX_QUOTED_REPLY_CHARS ? `${prev.slice(0, MAX_QUOTED_REPLY_CHARS)}… [cut]` : prev;
    parts.push(opts.original, `Your previous answer was:\n<<<\n${quoted}\n>>>`);
  }
  parts.push(
    `${GRADER_PROMPT_MARKER}: your previous answer could not be used:\n${opts.problems.map((p) => `- ${p}`).join('\n')}`,
    `Criteria:\n${criteriaList(opts.criteria)}`,
    answerRules(opts.criteria),
  );
  return parts.join('\n\n');
}
