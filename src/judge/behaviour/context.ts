/**
 * Skill context cost: the estimated tokens an installed skill puts in front of the model, from
 * the requests the engine sent (protocol-neutral `ModelRequest`s, src/model/types.ts):
 *
 * - **listing**: in the first model request that offers tools (title and classifier calls
 *   offer none, src/model/offered.ts), the skill's own entry in the engine's listing among the
 *   context texts (system prompt, system messages, reminders; src/model/conversation.ts
 *   `contextTexts`): the `- <name>: <description>` line (Claude Code, Codex) or the
 *   `<skill>…<name>NAME</name>…</skill>` element, white space allowed around NAME (OpenCode,
 *   Gemini CLI; Qwen Code writes `<name>\nNAME\n</name>`). Only the
 *   installed skills' entries count: an engine's built-in skills are listed in both variants.
 * - **body**: after the call that loads the skill (src/model/conversation.ts `skillOfToolCall`:
 *   a skill tool, or a read of `…/<name>/SKILL.md`), its tool result plus the text the engine
 *   injects after it before the model's next reply (Claude Code sends the body as a text part
 *   after the `Launching skill` result), `<system-reminder>` blocks removed.
 *
 * Tokens are estimated (types.ts TOKEN_ESTIMATE). Linear in the requests' text; stops reading
 * once every loaded skill's body was found.
 */
import { contextTexts, skillOfToolCall, stripReminders } from '../../model/conversation.js';
import type { ModelRequest, NeutralMessage } from '../../model/types.js';
import { estimateTextTokens, TOKEN_ESTIMATE, type SkillContext, type SkillContextEntry } from './types.js';

/** The listing entry of `skill` in `text` (see the module doc), or undefined. */
export function listingEntry(text: string, skill: string): string | undefined {
  const dash = `- ${skill}: `;
  let at = text.indexOf(dash);
  while (at >= 0) {
    if (at === 0 || text[at - 1] === '\n') {
      const end = text.indexOf('\n', at);
      return text.slice(at, end < 0 ? text.length : end + 1);
    }
    at = text.indexOf(dash, at + 1);
  }
  const n = nameElement(text, skill);
  if (n >= 0) {
    const open = text.lastIndexOf('<skill>', n);
    const close = text.indexOf('</skill>', n);
    if (open >= 0 && close > n) return text.slice(open, close + '</skill>'.length);
  }
  return undefined;
}

const isSpace = (ch: string | undefined) => ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t';

/**
 * Where the element `<name>SKILL</name>` starts in `text`, white space allowed around the name
 * (Qwen Code 0.24.4 writes `<name>\nSKILL\n</name>`), or -1. Linear: each `<name>` is looked at
 * once, and the white space skipped after one ends before the next.
 */
function nameElement(text: string, skill: string): number {
  const OPEN = '<name>';
  const CLOSE = '</name>';
  for (let at = text.indexOf(OPEN); at >= 0; at = text.indexOf(OPEN, at + OPEN.length)) {
    let i = at + OPEN.length;
    while (isSpace(text[i])) i++;
    if (!text.startsWith(skill, i)) continue;
    i += skill.length;
    while (isSpace(text[i])) i++;
    if (text.startsWith(CLOSE, i)) return at;
  }
  return -1;
}

/** Text the load of a skill put in context: the call's result and the injected text after it, up to the next assistant message. */
function bodyAfter(messages: NeutralMessage[], callId: string): string | undefined {
  for (let i = 0; i < messages.length; i++) {
    const parts = messages[i]!.parts;
    const at = parts.findIndex((p) => p.type === 'tool_result' && p.id === callId);
    if (at < 0) continue;
    const texts: string[] = [];
    const result = parts[at]!;
    if (result.type === 'tool_result') {
      if (result.isError) return undefined;
      texts.push(stripReminders(result.output));
    }
    for (const p of parts.slice(at + 1)) if (p.type === 'text') texts.push(stripReminders(p.text));
    for (let k = i + 1; k < messages.length && messages[k]!.role !== 'assistant'; k++) {
      for (const p of messages[k]!.parts) if (p.type === 'text') texts.push(stripReminders(p.text));
    }
    return texts.filter(Boolean).join('\n');
  }
  return undefined;
}

/**
 * The skill context cost of one job (see the module doc) for the `installed` skills, from its
 * model requests in order. `activated` names the skills the transcript saw activated, so the
 * reading can stop once their bodies are found. With no request at all: not observed.
 */
export async function skillContextCost(requests: AsyncIterable<ModelRequest> | Iterable<ModelRequest>, installed: readonly string[], activated: readonly string[] = installed): Promise<SkillContext> {
  const entries = new Map<string, SkillContextEntry>(installed.map((s) => [s, { skill: s, listingTokens: 0, bodyTokens: 0, loaded: false }]));
  const wanted = new Set(activated.filter((s) => entries.has(s)));
  let seen = 0;
  let listed = false;
  for await (const req of requests) {
    seen++;
    if (!listed && req.tools.length > 0) {
      listed = true;
      const texts = contextTexts(req);
      for (const e of entries.values()) {
        for (const t of texts) {
          const entry = listingEntry(t, e.skill);
          if (entry !== undefined) {
            e.listingTokens = estimateTextTokens(entry);
            break;
          }
        }
      }
    }
    for (const m of req.messages) {
      for (const p of m.parts) {
        if (p.type !== 'tool_call') continue;
        const skill = skillOfToolCall(p.name, p.input);
        const e = skill !== undefined ? entries.get(skill) : undefined;
        if (!e || e.loaded) continue;
        const body = bodyAfter(req.messages, p.id);
        if (body === undefined) continue;
        e.loaded = true;
        e.bodyTokens = estimateTextTokens(body);
        wanted.delete(e.skill);
      }
    }
    if (listed && wanted.size === 0) break;
  }
  if (seen === 0) return { observed: false, reason: "no model request of this job reached skill-up's scripted model" };
  const skills = [...entries.values()];
  return {
    observed: true,
    method: TOKEN_ESTIMATE,
    listingTokens: skills.reduce((a, s) => a + s.listingTokens, 0),
    bodyTokens: skills.reduce((a, s) => a + s.bodyTokens, 0),
    skills,
  };
}
