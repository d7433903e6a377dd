/**
 * `post_condition` of a turn: checked on that turn's answer before the next turn is sent.
 * The multi-turn loop decides what to do on failure (`on_fail`); this only grades.
 */
import type { PostCondition } from '../config/types.js';
import { q, qList } from './evidence.js';
import { searchedEvidence as substringEvidence, searchString, searchText, type JudgedText, type Searched } from './text.js';
import type { Assertion } from './types.js';

/**
 * Grades `text` (one turn's answer) against a post-condition: one assertion per
 * `must_contain_all` string, one for the whole `must_contain_any` list (when non-empty), one
 * per `must_not_contain` string. Case-sensitive substring matching. `passed` when all pass.
 */
export function evaluatePostCondition(text: string, pc: PostCondition): { passed: boolean; assertions: Assertion[] } {
  return gradePostCondition(searchString(text), pc);
}

/**
 * {@link evaluatePostCondition} on a turn's answer as judges read it: a large answer kept in a
 * file is searched by streaming it (src/judge/text.ts), so memory stays bounded.
 */
export async function evaluatePostConditionOn(text: JudgedText, pc: PostCondition): Promise<{ passed: boolean; assertions: Assertion[] }> {
  if (typeof text === 'string') return evaluatePostCondition(text, pc);
  return gradePostCondition(await searchText(text, [...pc.mustContainAll, ...pc.mustContainAny, ...pc.mustNotContain]), pc);
}

function gradePostCondition(text: Searched, pc: PostCondition): { passed: boolean; assertions: Assertion[] } {
  const assertions: Assertion[] = [];
  for (const s of pc.mustContainAll) {
    const r = substringEvidence(text, s, 'turn answer');
    assertions.push({ text: `post_condition must_contain_all: ${q(s, 120)}`, passed: r.found, evidence: r.evidence });
  }
  if (pc.mustContainAny.length > 0) {
    const hit = pc.mustContainAny.map((s) => ({ s, r: substringEvidence(text, s, 'turn answer') })).find((h) => h.r.found);
    assertions.push({
      text: `post_condition must_contain_any: ${qList(pc.mustContainAny)}`,
      passed: hit !== undefined,
      evidence: hit ? `${q(hit.s, 80)} ${hit.r.evidence}` : `none found in turn answer (${text.length} chars): ${q(text.head, 200)}`,
    });
  }
  for (const s of pc.mustNotContain) {
    const r = substringEvidence(text, s, 'turn answer');
    assertions.push({
      text: `post_condition must_not_contain: ${q(s, 120)}`,
      passed: !r.found,
      evidence: r.found ? r.evidence : `not found in turn answer (${text.length} chars)`,
    });
  }
  return { passed: assertions.every((a) => a.passed), assertions };
}
