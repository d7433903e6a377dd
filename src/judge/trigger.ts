/**
 * The trigger judge: a trigger case (CaseSpec.shouldTrigger) is graded only on whether the
 * skill under test was activated, from the activations the engine's transcript shows
 * (TranscriptTurn.skillActivations: Claude Code's `Skill` tool, Codex's read of SKILL.md, …;
 * README "Engines"). Engine errors never reach it: the job is `error` before grading.
 */
import type { SkillActivation } from '../engine/types.js';
import type { Grading } from './types.js';

/** What a trigger job observed, kept on the job (JobResult.trigger) for the stats stage. */
export interface TriggerVerdict {
  /** The skill under test. */
  skill: string;
  shouldTrigger: boolean;
  /** Whether `skill` was activated in any turn. */
  activated: boolean;
  /** The query sent (the case's first turn as written). */
  query: string;
}

/**
 * Grades a trigger job: `pass` iff (skill activated in any turn) == `shouldTrigger`, with one
 * assertion whose evidence names how the skill was activated, or which skills the engine
 * offered when it was not (so a reader can tell "not listed" from "listed, not chosen").
 */
export function gradeTrigger(
  verdict: Omit<TriggerVerdict, 'activated'>,
  activations: readonly SkillActivation[],
  offered: readonly string[] | undefined,
): { grading: Grading; trigger: TriggerVerdict } {
  const hits = activations.filter((a) => a.skill === verdict.skill);
  const activated = hits.length > 0;
  const passed = activated === verdict.shouldTrigger;
  const via = [...new Set(hits.map((a) => a.via))].join(', ');
  const others = [...new Set(activations.filter((a) => a.skill !== verdict.skill).map((a) => a.skill))];
  const listing = offered === undefined ? 'the skills offered are not observable on this engine' : offered.length ? `offered: ${offered.join(', ')}` : 'no skill was offered';
  const evidence = activated
    ? `it was activated ${hits.length} time(s) (${via})`
    : `it was not activated (${listing}${others.length ? `; activated instead: ${others.join(', ')}` : ''})`;
  // Worded as the expectation, so "expectation: what happened" reads right in every report line.
  const text = verdict.shouldTrigger ? `the skill \`${verdict.skill}\` should be activated by this query` : `the skill \`${verdict.skill}\` should not be activated by this query`;
  const grading: Grading = {
    status: passed ? 'pass' : 'fail',
    assertions: [{ text, passed, evidence }],
    ...(passed ? {} : { reason: verdict.shouldTrigger ? 'trigger missed: the skill should have been activated and was not' : 'false trigger: the skill was activated and should not have been' }),
  };
  return { grading, trigger: { ...verdict, activated } };
}
