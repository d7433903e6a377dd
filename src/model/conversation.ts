/**
 * The protocol-neutral view of a model request: what the user asked in the current turn,
 * which turn it is, which skills the engine listed and which were loaded, the working
 * directory, the tools offered, and how far the model already got in this turn.
 *
 * Everything here is derived from the request alone (the server keeps no state), so a
 * resumed session, a retried request and many parallel jobs all get consistent answers.
 *
 * Definitions (all relative to `ModelRequest.messages`, optionally cut at `upTo`):
 * - **prompt message**: a `user` message with no tool result and at least one text part
 *   that is neither `meta` nor empty once `<system-reminder>…</system-reminder>` blocks are
 *   removed. The *current* prompt is the last one; `turn` counts prompt messages (1-based).
 * - **step boundaries**: the indices of assistant messages after the current prompt that
 *   start a model reply; consecutive assistant messages (no user message between) are one
 *   reply, because some engines replay one reply as several messages.
 * - **skills listed**: names found in the skill listings of any context text (system
 *   prompt, system/developer messages, meta parts, `<system-reminder>` blocks): Claude's
 *   "The following skills are available for use with the Skill tool:" list, Codex's
 *   `<skills_instructions>` "### Available skills" list, and `<available_skills>` XML
 *   (OpenCode, Gemini CLI, Qwen Code).
 * - **skills loaded**: since the current prompt, a tool call whose result came back without
 *   error and that either is a skill tool (`Skill`, `skill`, `activate_skill`: the name is
 *   its `skill`/`name`/`command` input) or mentions a path `…/<name>/SKILL.md` in any string
 *   input (a Read, `cat`, etc.).
 * - **judge**: the request comes from a grader run (`ModelRequest.judge`, set by the server
 *   from a job id `<job id>/judge-<n>`), not from the agent being evaluated.
 * - **simulator**: the request comes from the user simulator (`ModelRequest.simulator`, from
 *   a job id `<job id>/simulator`, src/simulator/).
 * - **tools listed** (`toolListed`): a tool is listed when the request offers it (`tools`;
 *   a tool in a Responses namespace as `<namespace>__<name>`) or lists it as deferred — offered by
 *   name, its schema loaded on demand: Claude Code's "The following deferred tools are now available
 *   via ToolSearch. …:" list (one name a line, in a system message or reminder), and Codex's
 *   "Deferred tool namespaces:" list (`- <namespace>[: description]` lines), where a namespace
 *   counts for every tool in it. A canonical `mcp__<server>__<tool>` is looked up under the
 *   engine's own address for it (`ModelProfile.mcpTool`, protocols/engines.ts `mcpToolAddress`).
 * - **cwd**: the first of `Primary working directory: …` (Claude Code), `<cwd>…</cwd>`
 *   (Codex), `Working directory: …` (OpenCode), `I'm currently working in the directory: …`
 *   (Gemini CLI, Qwen Code) in the context texts.
 */
import type { EngineName, ModelRequest, NeutralMessage, NeutralPart, ToolSpec } from './types.js';
import type { ModelToolAddress } from '../engine/definition.js';
import { parseMcpToolCallName } from '../engine/mcp.js';
import { DASH_ENTRY, parseSkillListing } from '../engine/skill-listing.js';
import { mcpToolAddress } from './protocols/engines.js';

export interface Conversation {
  engine: EngineName;
  /** True for a grader run's request (`ModelRequest.judge`, from the job id), false for the agent's own. */
  judge: boolean;
  /** True for the user simulator's request (`ModelRequest.simulator`, from the job id `<job id>/simulator`). */
  simulator: boolean;
  /** Text of the current prompt (reminders and engine-injected text removed); '' when none. */
  prompt: string;
  /** 1-based number of the current user turn; 0 when the request has no prompt message. */
  turn: number;
  /** Index in `messages` of the current prompt message; -1 when none. */
  promptIndex: number;
  /** Working directory the engine announced, when found. */
  cwd?: string;
  /** Skill names in the engine's listing, in listing order, without duplicates. */
  skillsListed: string[];
  /** Skills loaded since the current prompt, in load order. */
  skillsLoaded: string[];
  /** Names of the tools offered (`tools`); a tool in a namespace as `<namespace>__<name>` ({@link qualifiedToolName}). */
  toolsOffered: string[];
  /** The offered tools that sit in a namespace: namespace → its function names (Codex's `{type: "namespace"}` tools). */
  toolNamespaces: Record<string, string[]>;
  /**
   * Tool names the engine listed as deferred (offered by name, schema loaded on demand: Claude
   * Code's ToolSearch list), in order, without duplicates. A `prefix*` entry stands for every
   * tool whose name starts with `prefix` (Claude's shortened list, `mcp__srv__* (42)`).
   */
  toolsDeferred: string[];
  /** Tool namespaces listed as deferred (Codex's `Deferred tool namespaces:`), in order; each stands for all its tools. */
  namespacesDeferred: string[];
  /** Indices of messages that start an assistant reply after the current prompt. */
  replyStarts: number[];
  /** The latest tool result since the current prompt. */
  lastToolResult?: { output: string; isError: boolean };
  /** Number of messages this view covers. */
  upTo: number;
}

const REMINDER = /<system-reminder>[\s\S]*?(<\/system-reminder>|$)/g;

/** Removes `<system-reminder>` blocks (an unclosed one runs to the end) and trims. */
export function stripReminders(text: string): string {
  return text.replace(REMINDER, '').trim();
}

/** Prompt text of a user message, or undefined when it is not a prompt message. */
export function promptTextOf(msg: NeutralMessage): string | undefined {
  if (msg.role !== 'user') return undefined;
  if (msg.parts.some((p) => p.type === 'tool_result')) return undefined;
  const texts = msg.parts
    .filter((p): p is Extract<NeutralPart, { type: 'text' }> => p.type === 'text' && !p.meta)
    .map((p) => stripReminders(p.text))
    .filter((t) => t.length > 0);
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** Builds the view of `req.messages.slice(0, upTo)`. */
export function viewConversation(req: ModelRequest, upTo = req.messages.length): Conversation {
  const messages = req.messages.slice(0, upTo);
  let promptIndex = -1;
  let turn = 0;
  let prompt = '';
  messages.forEach((m, i) => {
    const t = promptTextOf(m);
    if (t !== undefined) {
      promptIndex = i;
      turn++;
      prompt = t;
    }
  });

  const replyStarts: number[] = [];
  for (let i = promptIndex + 1; i < messages.length; i++) {
    if (messages[i]!.role === 'assistant' && (i === 0 || messages[i - 1]!.role !== 'assistant')) replyStarts.push(i);
  }

  const context = contextTexts(req, messages);
  const view: Conversation = {
    engine: req.engine,
    judge: req.judge === true,
    simulator: req.simulator === true,
    prompt,
    turn,
    promptIndex,
    skillsListed: parseSkillListing(context),
    skillsLoaded: skillsLoadedSince(messages, promptIndex + 1),
    toolsOffered: req.tools.map(qualifiedToolName),
    toolNamespaces: namespacesOf(req.tools),
    toolsDeferred: deferredTools(context),
    namespacesDeferred: deferredNamespaces(context),
    replyStarts,
    upTo: messages.length,
  };
  const cwd = findCwd(context);
  if (cwd) view.cwd = cwd;
  const last = lastToolResultSince(messages, promptIndex + 1);
  if (last) view.lastToolResult = last;
  return view;
}

/** Texts the engine supplies as context: system prompt, system messages, meta parts, reminders. */
export function contextTexts(req: ModelRequest, messages: NeutralMessage[] = req.messages): string[] {
  const out = [...req.system];
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type !== 'text') continue;
      if (m.role === 'system' || p.meta) out.push(p.text);
      else if (m.role === 'user') for (const r of p.text.match(REMINDER) ?? []) out.push(r);
    }
  }
  return out;
}

// ───────────────────────────── skill listings ─────────────────────────────

// The listing formats live in src/engine/skill-listing.ts (shared with engines/codex/parse.ts).
export { parseSkillListing };

// ───────────────────────────── skills loaded / tool results ─────────────────────────────

const SKILL_TOOLS = new Set(['skill', 'activate_skill']);
/** Tools that write files: a `SKILL.md` path in their input is authoring a skill, not loading one. */
const WRITING_TOOLS = /^(write|edit|multiedit|notebookedit|write_file|replace|create_file|apply_patch)$/i;
const SKILL_MD = /(?:^|[\s/'"`=])([^\s/'"`=]+)\/SKILL\.md\b/g;

/** Skill a tool call loads, if any (see the module doc). */
export function skillOfToolCall(name: string, input: unknown): string | undefined {
  const obj = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  if (SKILL_TOOLS.has(name.toLowerCase())) {
    for (const key of ['skill', 'name', 'command']) {
      const v = obj[key];
      if (typeof v === 'string' && v.trim()) return v.trim().replace(/^\//, '');
    }
  }
  if (WRITING_TOOLS.test(name)) return undefined;
  for (const s of stringsIn(input)) {
    for (const m of s.matchAll(SKILL_MD)) return m[1]!;
  }
  return undefined;
}

function stringsIn(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringsIn(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) stringsIn(x, out);
  return out;
}

function skillsLoadedSince(messages: NeutralMessage[], from: number): string[] {
  const results = new Map<string, boolean>();
  for (let i = from; i < messages.length; i++) {
    for (const p of messages[i]!.parts) if (p.type === 'tool_result') results.set(p.id, p.isError);
  }
  const loaded: string[] = [];
  for (let i = from; i < messages.length; i++) {
    for (const p of messages[i]!.parts) {
      if (p.type !== 'tool_call' || results.get(p.id) !== false) continue;
      const skill = skillOfToolCall(p.name, p.input);
      if (skill && !loaded.includes(skill)) loaded.push(skill);
    }
  }
  return loaded;
}

function lastToolResultSince(messages: NeutralMessage[], from: number): Conversation['lastToolResult'] {
  for (let i = messages.length - 1; i >= from; i--) {
    const parts = messages[i]!.parts;
    for (let k = parts.length - 1; k >= 0; k--) {
      const p = parts[k]!;
      if (p.type === 'tool_result') return { output: p.output, isError: p.isError };
    }
  }
  return undefined;
}

// ───────────────────────────── tools listed ─────────────────────────────

/** How a tool shows in `toolsOffered`: its name, or `<namespace>__<name>` for a tool in a namespace (Codex's MCP naming). */
export function qualifiedToolName(t: Pick<ToolSpec, 'name' | 'namespace'>): string {
  return t.namespace === undefined ? t.name : `${t.namespace}__${t.name}`;
}

function namespacesOf(tools: ToolSpec[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const t of tools) if (t.namespace !== undefined) (out[t.namespace] ??= []).push(t.name);
  return out;
}

/**
 * Claude Code 2.1.332's headings of a deferred-tool list (its bundle: "The following deferred tools
 * are now available via ToolSearch. Their schemas are NOT loaded …:", and the "are available via"
 * form of a resumed or shortened list); the names follow, one a line, up to a blank line.
 */
const DEFERRED_TOOLS_HEADING = /^The following deferred tools are (?:now )?available via \S+?\.[^\n]*:[^\S\n]*$/;
/** One entry of that list: a tool name, or `prefix* (N)` for N tools of one server in a shortened list. */
const DEFERRED_TOOL_ENTRY = /^([A-Za-z0-9_.:-]+\*?)(?: \(\d+\))?$/;

/** Tool names in the context texts' deferred-tool lists (Claude Code), in order, without duplicates. */
export function deferredTools(texts: string[]): string[] {
  return listedAfter(texts, DEFERRED_TOOLS_HEADING, (line) => DEFERRED_TOOL_ENTRY.exec(line)?.[1]);
}

/** Codex 0.171.0's heading of its deferred namespaces (`<tools>` block of a developer message, engines/codex/samples). */
const DEFERRED_NAMESPACES_HEADING = /^Deferred tool namespaces:[^\S\n]*$/;

/** Namespaces in the context texts' `Deferred tool namespaces:` lists (Codex: `- <name>` or `- <name>: <description>`), in order, once each. */
export function deferredNamespaces(texts: string[]): string[] {
  return listedAfter(texts, DEFERRED_NAMESPACES_HEADING, (line) => /^- ([A-Za-z0-9_.-]+)(?::|$)/.exec(line)?.[1]);
}

/** The entries `entry` reads from the lines after each line matching `heading`, up to the first line it refuses. */
function listedAfter(texts: string[], heading: RegExp, entry: (line: string) => string | undefined): string[] {
  const out: string[] = [];
  for (const text of texts) {
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!heading.test(lines[i]!.trim())) continue;
      for (let k = i + 1; k < lines.length; k++) {
        const name = entry(lines[k]!.trim());
        if (name === undefined) break;
        if (!out.includes(name)) out.push(name);
      }
    }
  }
  return out;
}

/** Whether `name` is among `names`, a `prefix*` entry counting for every name it starts. */
function inListing(names: readonly string[], name: string): boolean {
  return names.some((n) => (n.endsWith('*') ? name.startsWith(n.slice(0, -1)) : n === name));
}

/** Whether the request offers or lists as deferred the tool at `address` (see the module doc). */
export function addressListed(conv: Conversation, address: ModelToolAddress): boolean {
  if (address.namespace !== undefined) {
    return (conv.toolNamespaces[address.namespace]?.includes(address.name) ?? false) || conv.namespacesDeferred.includes(address.namespace);
  }
  return conv.toolsOffered.includes(address.name) || inListing(conv.toolsDeferred, address.name);
}

/**
 * Whether the request offers or lists as deferred tool `name`: a name as the engine sends it
 * (`Bash`, `ToolSearch`, Codex's `mcp__tickets__get_ticket` for a namespaced tool), or a
 * canonical `mcp__<server>__<tool>` under the engine's address for it (`mcpToolAddress`:
 * `tickets_get_ticket` on OpenCode, function `get_ticket` in namespace `mcp__tickets` on Codex).
 */
export function toolListed(conv: Conversation, name: string): boolean {
  if (conv.toolsOffered.includes(name) || inListing(conv.toolsDeferred, name)) return true;
  const mcp = parseMcpToolCallName(name);
  return mcp !== undefined && addressListed(conv, mcpToolAddress(conv.engine, mcp.server, mcp.tool));
}

// ───────────────────────────── cwd ─────────────────────────────

const CWD_PATTERNS = [
  /Primary working directory: *([^\n]+)/,
  // First and last characters not blank: a lazy group beside `\s*` would backtrack quadratically.
  /<cwd>\s*([^<\s](?:[^<\n]*[^<\s])?)\s*<\/cwd>/,
  /I'm currently working in the directory: *([^\n]+)/,
  /Working directory: *([^\n]+)/,
];

/** The engine's working directory from the first context text that states one. */
export function findCwd(texts: string[]): string | undefined {
  for (const re of CWD_PATTERNS) {
    for (const t of texts) {
      const m = re.exec(t);
      if (m) return m[1]!.trim();
    }
  }
  return undefined;
}

// ───────────────────────────── skill files ─────────────────────────────

/**
 * Skill name → SKILL.md path, from Codex's `<skills_instructions>` listing: entries
 * `- name: description (file: r1/name/SKILL.md)` with the short path expanded through the
 * `### Skill roots` table (`` - `r1` = `/abs/.agents/skills` ``); a path that names no root is
 * kept as written. Source: engines/codex/samples/skills-instructions-developer-message.txt.
 * Listings without paths (Claude, `<available_skills>`) contribute nothing.
 */
export function skillFilesOf(texts: string[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (const text of texts) {
    for (const block of text.match(/<skills_instructions>[\s\S]*?(<\/skills_instructions>|$)/g) ?? []) {
      const roots = new Map<string, string>();
      for (const m of block.matchAll(/^- `([^`]+)` = `([^`]+)`\s*$/gm)) roots.set(m[1]!, m[2]!);
      const sec = /###\s*Available skills\s*\n([\s\S]*?)(\n###|$)/.exec(block);
      for (const line of (sec?.[1] ?? '').split('\n')) {
        const name = DASH_ENTRY.exec(line)?.[1];
        const file = /\(file: ([^()]+)\)\s*$/.exec(line)?.[1]?.trim();
        if (!name || !file || name in files) continue;
        const slash = file.indexOf('/');
        const root = slash > 0 ? roots.get(file.slice(0, slash)) : undefined;
        files[name] = root ? `${root.replace(/\/+$/, '')}/${file.slice(slash + 1)}` : file;
      }
    }
  }
  return files;
}
