/**
 * What an engine offered the model in one turn (skills listed, tool names), read from the
 * requests it sent skill-up's scripted model server: the route for engines whose own output
 * does not say (OpenCode, Gemini CLI; Qwen Code's skills; Codex's tools).
 *
 * The server runs in skill-up's own process and files every exchange under the job id the
 * engine's API key carries (`skill-up-job:<jobId>`, src/model/log.ts), synchronously when the
 * response ends, so right after an engine process exits its turn's requests are all indexed.
 * Servers register here by base URL while they listen (`startModelServer`); a job knows the
 * URL it was given (`EngineContext.modelBaseUrl`), and tells the server which engine it runs
 * ({@link noteJobEngine}). With a real model there is no server, and
 * nothing is filled in.
 */
import type { TranscriptTurn } from '../engine/types.js';
import type { ExchangeLogEntry } from './log.js';

/** The part of a running server this module reads and tells. */
interface ExchangeSource {
  requestsFor(id: string): ExchangeLogEntry[];
  /** Records that job `jobId` runs engine `engine` (see {@link noteJobEngine}). */
  noteJobEngine(jobId: string, engine: string): void;
}

const live = new Map<string, ExchangeSource>();

function key(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

/** Makes a listening server's exchanges readable by its base URL (`http://127.0.0.1:<port>`). */
export function registerExchangeSource(baseUrl: string, source: ExchangeSource): void {
  live.set(key(baseUrl), source);
}

/** Forgets a server (on close). */
export function unregisterExchangeSource(baseUrl: string): void {
  live.delete(key(baseUrl));
}

/**
 * Tells the server at `baseUrl` that job `jobId` runs engine `engine` (a canonical name), so it
 * files that job's requests under the engine it really is (`ModelRequest.engine`, the rules'
 * `engine:` condition) even where several engines share a protocol. No-op without a server or a
 * job id (a real model, a job outside a run).
 */
export function noteJobEngine(baseUrl: string | undefined, jobId: string | undefined, engine: string): void {
  if (!baseUrl || !jobId) return;
  live.get(key(baseUrl))?.noteJobEngine(jobId, engine);
}

/**
 * How many exchanges the server at `baseUrl` has filed under `jobId` so far: take it before a
 * turn and pass it to {@link offeredSince} after. 0 when there is no such server.
 */
export function exchangeMark(baseUrl: string | undefined, jobId: string | undefined): number {
  if (!baseUrl || !jobId) return 0;
  return live.get(key(baseUrl))?.requestsFor(jobId).length ?? 0;
}

/** Skills and tools the model was offered in a span of a job's exchanges. */
export interface OfferedToModel {
  /** Skill names in the engine's listings, in order, without duplicates (empty when none was listed). */
  skillsListed: string[];
  /** Tool names of the first model request that offered any (an engine's title or router call offers none). */
  toolsOffered: string[];
}

/**
 * What the model requests filed under `jobId` after `mark` offered, or undefined when there
 * were none (no server at `baseUrl`, a real model, or an engine that never reached the model).
 * Only model calls that offer tools count: title, router and classifier calls (no tools, no
 * listing) would otherwise make every turn look as if no skill had been listed.
 */
export function offeredSince(baseUrl: string | undefined, jobId: string | undefined, mark: number): OfferedToModel | undefined {
  if (!baseUrl || !jobId) return undefined;
  const entries = live.get(key(baseUrl))?.requestsFor(jobId).slice(mark) ?? [];
  const calls = entries.filter((e) => e.kind === 'generate' && e.conversation && e.conversation.toolsOffered.length > 0);
  if (calls.length === 0) return undefined;
  const skillsListed: string[] = [];
  for (const c of calls) for (const s of c.conversation!.skillsListed) if (!skillsListed.includes(s)) skillsListed.push(s);
  return { skillsListed, toolsOffered: [...calls[0]!.conversation!.toolsOffered] };
}

/**
 * Fills `turn.skillsListed` and `turn.toolsOffered` from the requests of the turn (see
 * {@link offeredSince}) where the engine's own output left them unset; what the engine
 * reported itself is never replaced.
 */
export function fillOfferedFromModel(turn: TranscriptTurn, baseUrl: string | undefined, jobId: string | undefined, mark: number): void {
  if (turn.skillsListed !== undefined && turn.toolsOffered !== undefined) return;
  const seen = offeredSince(baseUrl, jobId, mark);
  if (!seen) return;
  turn.skillsListed ??= seen.skillsListed;
  turn.toolsOffered ??= seen.toolsOffered;
}
