/**
 * What `skill-up init` reads out of a skill's SKILL.md to write its starter cases: the
 * description's first sentence (the skill's main promise), its "use when …" clause (when the
 * skill should be used) and the body's first heading. Pure functions of the text.
 */

/** The facts of a SKILL.md that the starter suite is built from. */
export interface SkillFacts {
  /** The frontmatter `name` (the name the engines list the skill under). */
  name: string;
  /** The frontmatter `description`, as written. */
  description: string;
  /** The Markdown after the frontmatter, when there is one. */
  body?: string;
}

/** The parts of a description the starter prompts use. */
export interface DescriptionParts {
  /** The first sentence, without its closing full stop, white space collapsed (never empty). */
  promise: string;
  /** What follows "use … when(ever)" / "use … for" in the description, up to its sentence's end; undefined when there is no such clause. */
  whenToUse?: string;
  /** The body's first Markdown heading (`# …`), else the skill name. */
  title: string;
}

// A sentence ends at . ! or ? followed by blank and a capital, a quote or a bracket; `e.g.` and
// `etc.` stay inside their sentence.
const SENTENCE_END = /(?<!\b(?:e\.g|i\.e|etc|vs))[.!?]["')\]]*\s+(?=["'(A-Z])/;

/**
 * Splits a description into its promise, its "when to use" clause and the skill's title.
 * Never throws; a description of one sentence has no `whenToUse` unless that sentence has one.
 */
export function describeSkill(facts: SkillFacts): DescriptionParts {
  const text = facts.description.replace(/\s+/g, ' ').trim();
  const sentences = splitSentences(text);
  const promise = stripEnd(sentences[0] ?? facts.name) || facts.name;
  let whenToUse: string | undefined;
  for (const s of sentences) {
    // "Use this skill when …", "Use it when …", "Claude should use this skill whenever …", "Invoke when …";
    // "for" or "if" only after an imperative "Use" ("Uses the palette for slides" is a promise).
    const m = /\b(?:use|used|invoke|invoked|trigger|triggered)\b.*?\bwhen(?:ever)?\s+(.+)$/i.exec(s) ?? /^use\b.*?\b(?:for|if)\s+(.+)$/i.exec(s);
    if (m) {
      whenToUse = stripEnd(m[1]!);
      break;
    }
  }
  const heading = facts.body?.split(/\r?\n/).map((l) => /^#{1,3}[ \t]+([^\n]+?)[ \t]*#*[ \t]*$/.exec(l)?.[1]).find((h) => h !== undefined);
  return { promise, ...(whenToUse ? { whenToUse } : {}), title: heading ?? facts.name };
}

/** The description's sentences, in order (at least one when the text is not blank). */
function splitSentences(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  for (;;) {
    const m = SENTENCE_END.exec(rest);
    if (!m) break;
    out.push(rest.slice(0, m.index + m[0].trimEnd().length));
    rest = rest.slice(m.index + m[0].length);
  }
  if (rest.trim()) out.push(rest);
  return out.map((s) => s.trim()).filter(Boolean);
}

/** A sentence without its closing full stop (a `?`, `!` or closing quote stays). */
function stripEnd(s: string): string {
  return s.trim().replace(/\.+$/, '').trim();
}
