/**
 * Turns a request into what to answer: picks the rule (match.ts), the step (match.ts),
 * fills `{{cwd}}` / `{{turn}}` / `{{prompt}}`, maps the step's action onto an offered tool
 * (tools.ts) and estimates usage. Pure and synchronous: no I/O, no clock, no randomness,
 * so the same request always gets the same answer (ids are hashes of the request).
 *
 * Steps of a reply: consecutive `say`s are gathered into the text of the next step; a step
 * ends at each tool action (`use_skill`, `write_file`, `run`, `read_file`, `tool`, `mcp_tool`). So
 * `[say A, write_file, say B]` is two steps: "A" + Write tool call (stop `tool_use`), then
 * "B" (stop `end_turn`). Past the last step the answer is the reply's last `say` text, or
 * "Done." when it has none.
 *
 * `mcp_tool {server, tool, input}` calls the tool under the engine's own address for it
 * (protocols/engines.ts `mcpToolAddress`: its definition's `model.mcpTool`, else
 * `mcp__<server>__<tool>`), when the request offers it or lists it as deferred
 * (conversation.ts `addressListed`); otherwise the answer is the "not offered" text.
 */
import { createHash } from 'node:crypto';
import { addressListed, contextTexts, qualifiedToolName, skillFilesOf, viewConversation, type Conversation } from './conversation.js';
import { mcpToolAddress } from './protocols/engines.js';
import { firstMatch, stepIndex } from './match.js';
import { mapToolAction, type ToolTable } from './tools.js';
import type { Action, ModelReply, ModelRequest, ModelScript, Plan, PlanTrace, ReplyBlock } from './types.js';

/** One model message's worth of a reply: text to say, then at most one tool action. */
export interface Step {
  texts: string[];
  action?: Exclude<Action, { kind: 'say' }>;
}

/** Groups a reply's actions into steps (see the module doc). */
export function groupSteps(reply: Action[]): Step[] {
  const steps: Step[] = [];
  let texts: string[] = [];
  for (const a of reply) {
    if (a.kind === 'say') texts.push(a.text);
    else {
      steps.push({ texts, action: a });
      texts = [];
    }
  }
  if (texts.length > 0) steps.push({ texts });
  return steps;
}

/**
 * The placeholder grammar of a model script's strings, one for the check (script.ts) and the
 * fill (below): `{{…}}` with no brace inside, its name the content without surrounding blanks,
 * which must be one of {@link TEMPLATE_VARIABLES}. No escape: unlike a case's turns
 * (src/config/turn-template.ts), a script cannot send a literal `{{name}}`. Linear: the blanks
 * are trimmed in code (`\s*([^}]*?)\s*` backtracks quadratically on long blanks) and a run
 * of `{` is never rescanned.
 */
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;

/** Names usable as `{{name}}` in any string of a rule. */
export const TEMPLATE_VARIABLES = ['cwd', 'turn', 'prompt'] as const;

/** The `{{name}}` placeholders of `text`, in order: each name as written, blanks trimmed. */
export function placeholderNames(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!.trim());
}

/** Values for `{{name}}` placeholders. */
export interface TemplateVars {
  cwd?: string;
  turn: number;
  prompt: string;
}

/**
 * Replaces `{{cwd}}` (`.` when unknown), `{{turn}}` and `{{prompt}}` in every string of
 * `value`; any other placeholder (refused by the script check) is left as written.
 */
export function fillTemplate<T>(value: T, vars: TemplateVars): T {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (m, content: string) => {
      const name = content.trim();
      return name === 'cwd' ? (vars.cwd ?? '.') : name === 'turn' ? String(vars.turn) : name === 'prompt' ? vars.prompt : m;
    }) as T;
  }
  if (Array.isArray(value)) return value.map((v) => fillTemplate(v, vars)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillTemplate(v, vars)])) as T;
  }
  return value;
}

/** Token estimate used for every figure: characters / 4, rounded up, at least 1. */
export function estimateTokens(chars: number): number {
  return Math.max(1, Math.ceil(chars / 4));
}

/**
 * Plans the answer to `req`.
 * @param table the protocol's tool table (how abstract actions become its tools).
 * @returns the plan and the conversation view it was derived from.
 */
export function planResponse(script: ModelScript, req: ModelRequest, table: ToolTable): { plan: Plan; conversation: Conversation } {
  const conv = viewConversation(req);
  const rule = firstMatch(script, conv);
  const vars: TemplateVars = { turn: conv.turn, prompt: conv.prompt };
  if (conv.cwd) vars.cwd = conv.cwd;
  const idSeed = createHash('sha256').update(JSON.stringify(req.messages)).digest('hex');

  if (!rule) {
    const excerpt = conv.prompt.length > 80 ? conv.prompt.slice(0, 77) + '...' : conv.prompt;
    const text = `[scripted-model] no rule matched this request (turn ${conv.turn}, prompt: "${excerpt}")`;
    return { plan: replyPlan(req, idSeed, [{ type: 'text', text }], 0, { rule: -1, step: 0, exhausted: false }), conversation: conv };
  }

  const step = stepIndex(script, req, conv, rule);
  const trace: PlanTrace = { rule: rule.index, step, exhausted: false };
  if (rule.name !== undefined) trace.ruleName = rule.name;

  if (rule.error) {
    const plan: Plan = { kind: 'error', status: rule.error.status, message: fillTemplate(rule.error.message, vars), delayMs: rule.delayMs, trace };
    if (rule.error.type) plan.errorType = rule.error.type;
    return { plan, conversation: conv };
  }

  const reply = rule.reply ?? [];
  const steps = groupSteps(reply);
  const current = steps[step];
  if (!current) {
    trace.exhausted = true;
    const lastSay = [...reply].reverse().find((a) => a.kind === 'say');
    const text = fillTemplate(lastSay?.kind === 'say' ? lastSay.text : 'Done.', vars);
    return { plan: replyPlan(req, idSeed, [{ type: 'text', text }], rule.delayMs, trace), conversation: conv };
  }

  const blocks: ReplyBlock[] = [];
  const said = current.texts.map((t) => fillTemplate(t, vars)).join('\n\n');
  if (said) blocks.push({ type: 'text', text: said });
  const action = current.action ? fillTemplate(current.action, vars) : undefined;
  if (action?.kind === 'tool') {
    blocks.push({ type: 'tool_call', id: toolId(idSeed, 0), name: action.name, input: action.input });
  } else if (action?.kind === 'mcp_tool') {
    const address = mcpToolAddress(req.engine, action.server, action.tool);
    if (addressListed(conv, address)) {
      blocks.push({ type: 'tool_call', id: toolId(idSeed, 0), name: address.name, ...(address.namespace !== undefined ? { namespace: address.namespace } : {}), input: action.input });
    } else {
      trace.missingTool = qualifiedToolName(address);
      blocks.push({ type: 'text', text: `[scripted-model] tool ${trace.missingTool} not offered by this engine` });
    }
  } else if (action) {
    const mapped = mapToolAction(action, req.tools, table, { ...(vars.cwd ? { cwd: vars.cwd } : {}), skillFiles: skillFilesOf(contextTexts(req)) });
    if (mapped.ok) blocks.push({ type: 'tool_call', id: toolId(idSeed, 0), name: mapped.name, input: mapped.input });
    else {
      trace.missingTool = mapped.wanted;
      blocks.push({ type: 'text', text: `[scripted-model] tool ${mapped.wanted} not offered by this engine` });
    }
  }
  if (blocks.length === 0) blocks.push({ type: 'text', text: '' });
  return { plan: replyPlan(req, idSeed, blocks, rule.delayMs, trace), conversation: conv };
}

function toolId(seed: string, k: number): string {
  return createHash('sha256').update(`${seed}:tool:${k}`).digest('hex').slice(0, 24);
}

function replyPlan(req: ModelRequest, seed: string, blocks: ReplyBlock[], delayMs: number, trace: PlanTrace): Plan {
  const outChars = blocks.reduce((n, b) => n + (b.type === 'text' ? b.text.length : b.name.length + JSON.stringify(b.input).length), 0);
  const reply: ModelReply = {
    id: seed.slice(0, 24),
    model: req.model,
    blocks,
    stop: blocks.some((b) => b.type === 'tool_call') ? 'tool_use' : 'end_turn',
    usage: { inputTokens: estimateTokens(req.rawChars), outputTokens: estimateTokens(outChars) },
  };
  return { kind: 'reply', reply, delayMs, trace };
}
