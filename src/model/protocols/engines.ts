/**
 * Which engine a request comes from, for the `engine:` rule condition (`ModelRequest.engine`),
 * read from the engines' definitions (engines/<name>/index.ts, `model`): the protocol each
 * speaks and, where several share one, the marks of their requests. The same rule holds for
 * every protocol. No engine name is written here; a new engine's definition is all the server
 * needs.
 */
import type { ModelProfile, ModelProtocolId, ModelToolAddress } from '../../engine/definition.js';
import { mcpToolCallName } from '../../engine/mcp.js';
import { CUSTOM_ENGINE, engineDefinitions } from '../../../engines/index.js';
import type { NeutralMessage } from '../types.js';
import type { WireContext } from './protocol.js';

/** The engines speaking `protocol`, in registry order, with their profiles. */
function speakers(protocol: ModelProtocolId): { name: string; profile: ModelProfile }[] {
  return engineDefinitions()
    .filter((d) => d.model.protocol === protocol)
    .map((d) => ({ name: d.name, profile: d.model }));
}

/** Whether a profile names any mark of its requests (`userAgent`, `systemPrompt`, `userMarker`). */
function hasMarks(p: ModelProfile): boolean {
  return (p.userAgent?.length ?? 0) > 0 || p.systemPrompt !== undefined || p.userMarker !== undefined;
}

/** A request's first messages as role and text, enough to recognise the engine. */
export interface OpeningMessage {
  role: string;
  text: string;
}

/**
 * The engine of a request on `protocol`, in this order:
 * 1. `jobEngine` (the engine the request's job runs, when the server knows it), if it speaks `protocol`;
 * 2. the first engine of the protocol whose `userAgent` mark is in the lower-cased `user-agent`;
 *    else, over the opening messages in order, the first whose `systemPrompt` matches a
 *    system/developer message or whose `userMarker` is in a user message;
 * 3. the protocol's only engine that declares no marks (with one engine on the protocol, that
 *    engine whatever its marks): the one the others' marks tell apart;
 * 4. else `custom` (no engine, or several that the marks do not tell apart).
 */
export function recogniseEngine(protocol: ModelProtocolId, userAgent: string, opening: OpeningMessage[], jobEngine?: string): string {
  const engines = speakers(protocol);
  if (jobEngine !== undefined && engines.some((e) => e.name === jobEngine)) return jobEngine;
  const ua = userAgent.toLowerCase();
  for (const e of engines) if (e.profile.userAgent?.some((mark) => ua.includes(mark))) return e.name;
  for (const m of opening) {
    for (const e of engines) {
      if ((m.role === 'system' || m.role === 'developer') && e.profile.systemPrompt?.test(m.text)) return e.name;
      if (m.role === 'user' && e.profile.userMarker !== undefined && m.text.includes(e.profile.userMarker)) return e.name;
    }
  }
  if (engines.length === 1) return engines[0]!.name;
  const unmarked = engines.filter((e) => !hasMarks(e.profile));
  return unmarked.length === 1 ? unmarked[0]!.name : CUSTOM_ENGINE;
}

/** How many of a request's first messages `engineOfRequest` reads for marks. */
const OPENING_MESSAGES = 3;

/**
 * The engine of a parsed request (see {@link recogniseEngine}): `user-agent` and the job's
 * engine from `ctx`, the opening messages from the request's `system` texts and its first
 * messages' text parts.
 */
export function engineOfRequest(protocol: ModelProtocolId, ctx: Pick<WireContext, 'headers' | 'jobEngine'>, system: readonly string[], messages: readonly NeutralMessage[]): string {
  const opening: OpeningMessage[] = [
    ...system.map((text) => ({ role: 'system', text })),
    ...messages.slice(0, OPENING_MESSAGES).map((m) => ({
      role: m.role,
      text: m.parts.map((p) => (p.type === 'text' ? p.text : '')).filter(Boolean).join('\n'),
    })),
  ];
  return recogniseEngine(protocol, userAgentOf(ctx.headers), opening, ctx.jobEngine);
}

/** The `user-agent` header as one string (empty when absent). */
export function userAgentOf(headers: WireContext['headers']): string {
  const ua = headers['user-agent'];
  return String((Array.isArray(ua) ? ua[0] : ua) ?? '');
}

/** The model profile of engine `name`, or undefined (`custom`, unknown). */
export function profileOf(name: string): ModelProfile | undefined {
  return engineDefinitions().find((d) => d.name === name)?.model;
}

/**
 * How engine `engine` offers tool `tool` of MCP server `server` to the model: its definition's
 * `model.mcpTool`, else (`custom`, an engine without one) the canonical `mcp__<server>__<tool>`.
 */
export function mcpToolAddress(engine: string, server: string, tool: string): ModelToolAddress {
  return profileOf(engine)?.mcpTool?.(server, tool) ?? { name: mcpToolCallName(server, tool) };
}
