/**
 * The skill listings engines put in front of the model, read back into skill names. Neutral
 * ground shared by the scripted model server (src/model/conversation.ts, which reads them from
 * requests) and the engine parsers (engines/codex/parse.ts reads Codex's from its rollout file),
 * so neither imports the other.
 *
 * Formats (each verified on the engine's captured requests, engines/<name>/samples/):
 * - Claude Code: "The following skills are available for use with the Skill tool:" then
 *   `- name: description` lines up to the first blank line;
 * - Codex: `<skills_instructions>` … `### Available skills` then `- name: description (file: …)`;
 * - OpenCode, Gemini CLI, Qwen Code: `<available_skills><skill><name>x</name>…`.
 */

const CLAUDE_LISTING = 'The following skills are available for use with the Skill tool:';
/** One `- name: description` entry line (Claude Code's and Codex's listings). */
export const DASH_ENTRY = /^- (\S+?): /;

/** Skill names from every listing format found in `texts`, in listing order, without duplicates. */
export function parseSkillListing(texts: string[]): string[] {
  const names: string[] = [];
  const add = (n: string) => {
    const name = n.trim();
    if (name && !names.includes(name)) names.push(name);
  };
  for (const text of texts) {
    // Claude Code: "- name: description" lines after the header, up to the first blank line.
    let at = text.indexOf(CLAUDE_LISTING);
    while (at >= 0) {
      const body = text.slice(at + CLAUDE_LISTING.length).replace(/^\s*\n/, '');
      const end = body.search(/\n\s*\n/);
      for (const line of (end >= 0 ? body.slice(0, end) : body).split('\n')) {
        const m = DASH_ENTRY.exec(line);
        if (m) add(m[1]!);
      }
      at = text.indexOf(CLAUDE_LISTING, at + 1);
    }
    // Codex: <skills_instructions> … "### Available skills" then "- name: description (file: …)".
    for (const block of text.match(/<skills_instructions>[\s\S]*?(<\/skills_instructions>|$)/g) ?? []) {
      const sec = /###\s*Available skills\s*\n([\s\S]*?)(\n###|$)/.exec(block);
      for (const line of (sec?.[1] ?? '').split('\n')) {
        const m = DASH_ENTRY.exec(line);
        if (m) add(m[1]!);
      }
    }
    // OpenCode / Gemini CLI / Qwen Code: <available_skills><skill><name>x</name>…
    for (const block of text.match(/<available_skills>[\s\S]*?(<\/available_skills>|$)/g) ?? []) {
      for (const m of block.matchAll(/<skill>\s*<name>([^<]+)<\/name>/g)) add(m[1]!);
    }
  }
  return names;
}
