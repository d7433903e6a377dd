/**
 * Whether the two arms of a case (`with_skill`, `without_skill`) were offered the same tools
 * and ran under the same permission mode, from result.json's per-turn `tools_offered` and
 * `permission_mode`. A difference means the comparison is not only about the skill, so the
 * HTML report shows it as a warning per case.
 *
 * The skill tool itself (Claude Code `Skill`, OpenCode / Qwen Code `skill`, Gemini CLI
 * `activate_skill`) may be offered only when a skill is installed: that is the treatment, not a
 * confound, so it is left out of the comparison ({@link SKILL_TOOLS}). A job whose turns did
 * not record what was offered is left out too (nothing to compare, nothing to warn about).
 */
import type { ResultDoc } from '../result-json.js';

/** Tool names that load skills: expected to differ between the arms, never warned about. */
export const SKILL_TOOLS: ReadonlySet<string> = new Set(['Skill', 'skill', 'activate_skill']);

/** One case of one engine whose arms were offered different tools or permission modes. */
export interface ArmDifference {
  engine: string;
  caseId: string;
  /** Tools offered only in with_skill / only in without_skill (skill tools excluded), sorted. */
  onlyWith: string[];
  onlyWithout: string[];
  /** Permission modes seen per arm, sorted; both empty unless they differ. */
  permissionWith: string[];
  permissionWithout: string[];
  /** One sentence naming the difference, e.g. `tools only in with_skill: Bash; permission mode: with_skill default, without_skill bypassPermissions`. */
  text: string;
}

interface Seen {
  tools?: Set<string>;
  modes?: Set<string>;
}

/** Every (engine, case) whose arms differ, in the order of result.json's jobs. */
export function armDifferences(doc: ResultDoc): ArmDifference[] {
  const byKey = new Map<string, { engine: string; caseId: string; arms: Record<string, Seen> }>();
  for (const j of doc.jobs) {
    const k = `${j.engine}\u0000${j.case_id}`;
    let entry = byKey.get(k);
    if (!entry) byKey.set(k, (entry = { engine: j.engine, caseId: j.case_id, arms: {} }));
    const arm = (entry.arms[j.variant] ??= {});
    for (const t of j.turns) {
      if (t.tools_offered) {
        arm.tools ??= new Set();
        for (const name of t.tools_offered) if (!SKILL_TOOLS.has(name)) arm.tools.add(name);
      }
      if (t.permission_mode) (arm.modes ??= new Set()).add(t.permission_mode);
    }
  }
  const out: ArmDifference[] = [];
  for (const { engine, caseId, arms } of byKey.values()) {
    const w = arms.with_skill;
    const wo = arms.without_skill;
    if (!w || !wo) continue;
    const onlyWith = w.tools && wo.tools ? [...w.tools].filter((t) => !wo.tools!.has(t)).sort() : [];
    const onlyWithout = w.tools && wo.tools ? [...wo.tools].filter((t) => !w.tools!.has(t)).sort() : [];
    const mw = [...(w.modes ?? [])].sort();
    const mwo = [...(wo.modes ?? [])].sort();
    const modesDiffer = w.modes !== undefined && wo.modes !== undefined && mw.join('\u0000') !== mwo.join('\u0000');
    if (onlyWith.length === 0 && onlyWithout.length === 0 && !modesDiffer) continue;
    const parts: string[] = [];
    if (onlyWith.length) parts.push(`tools only in with_skill: ${onlyWith.join(', ')}`);
    if (onlyWithout.length) parts.push(`tools only in without_skill: ${onlyWithout.join(', ')}`);
    if (modesDiffer) parts.push(`permission mode: with_skill ${mw.join('/')}, without_skill ${mwo.join('/')}`);
    out.push({
      engine,
      caseId,
      onlyWith,
      onlyWithout,
      permissionWith: modesDiffer ? mw : [],
      permissionWithout: modesDiffer ? mwo : [],
      text: parts.join('; '),
    });
  }
  return out;
}
