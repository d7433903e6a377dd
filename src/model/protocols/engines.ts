/**
 * Which engine a request comes from, for the `engine:` rule condition (`ModelRequest.engine`),
 * read from the engines' definitions (engines/<name>/index.ts, `model`): the protocol each
 * speaks and, where several share one, the marks of their requests. No engine name is written
 * here; a new engine's definition is all the server needs.
 */
import type { ModelProfile, ModelProtocolId } from '../../engine/definition.js';
import { CUSTOM_ENGINE, engineDefinitions } from '../../../engines/index.js';

/** The engines speaking `protocol`, in registry order, with their profiles. */
function speakers(protocol: ModelProtocolId): { name: string; profile: ModelProfile }[] {
  return engineDefinitions()
    .filter((d) => d.model.protocol === protocol)
    .map((d) => ({ name: d.name, profile: d.model }));
}

/** The engine of a protocol one engine speaks (the first registered), else `custom`. */
export function engineOfProtocol(protocol: ModelProtocolId): string {
  return speakers(protocol)[0]?.name ?? CUSTOM_ENGINE;
}

/** A request's first messages as role and text, enough to recognise the engine. */
export interface OpeningMessage {
  role: string;
  text: string;
}

/**
 * The engine of a request on a shared protocol: the first engine whose `userAgent` mark is in
 * the lower-cased `user-agent`; else, over the opening messages in order, the first whose
 * `systemPrompt` matches a system/developer message or whose `userMarker` is in a user
 * message; else `custom`.
 */
export function recogniseEngine(protocol: ModelProtocolId, userAgent: string, opening: OpeningMessage[]): string {
  const engines = speakers(protocol);
  const ua = userAgent.toLowerCase();
  for (const e of engines) if (e.profile.userAgent?.some((mark) => ua.includes(mark))) return e.name;
  for (const m of opening) {
    for (const e of engines) {
      if ((m.role === 'system' || m.role === 'developer') && e.profile.systemPrompt?.test(m.text)) return e.name;
      if (m.role === 'user' && e.profile.userMarker !== undefined && m.text.includes(e.profile.userMarker)) return e.name;
    }
  }
  return CUSTOM_ENGINE;
}

/** The model profile of engine `name`, or undefined (`custom`, unknown). */
export function profileOf(name: string): ModelProfile | undefined {
  return engineDefinitions().find((d) => d.name === name)?.model;
}
