/**
 * One request to the user simulator's model: OpenAI Chat Completions or Anthropic Messages,
 * not streamed. The API key goes only into the request's auth header; no error message
 * quotes it (only the variable it came from is ever named).
 */
import { cutText, oneLine } from '../util/cut.js';

/** A message of the simulator's own conversation with its model. */
export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** Where and how to call the simulator's model. */
export interface SimulatorEndpoint {
  protocol: 'openai' | 'anthropic';
  /** The whole endpoint URL (`…/chat/completions` or `…/v1/messages`). */
  url: string;
  model: string;
  /** The API key's value (a secret; see the module doc). */
  apiKey: string;
}

/** A request that got no usable answer; `timeout` when the request's deadline struck. */
export class SimulatorCallError extends Error {
  constructor(
    message: string,
    readonly timeout = false,
  ) {
    super(message);
  }
}

/** Output tokens an Anthropic request asks for at most (a user message is short). */
const MAX_TOKENS = 1024;

/**
 * Sends `messages` (after `system`) and returns the answer's text.
 * @param timeoutMs deadline of this request; `signal` cancels it earlier (the job's own deadline).
 * @throws SimulatorCallError on a timeout, a network error, a non-2xx status or an answer without text.
 */
export async function completeChat(ep: SimulatorEndpoint, system: string, messages: ChatMessage[], signal: AbortSignal, timeoutMs: number): Promise<string> {
  const timer = AbortSignal.timeout(Math.max(1, timeoutMs));
  const both = AbortSignal.any([signal, timer]);
  const anthropic = ep.protocol === 'anthropic';
  const body = anthropic
    ? { model: ep.model, max_tokens: MAX_TOKENS, system, messages, stream: false }
    : { model: ep.model, messages: [{ role: 'system', content: system }, ...messages], stream: false };
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'skill-up-user-simulator' };
  if (anthropic) {
    headers['x-api-key'] = ep.apiKey;
    headers['anthropic-version'] = '2023-06-01';
  } else headers.authorization = `Bearer ${ep.apiKey}`;
  let res: Response;
  let text: string;
  try {
    res = await fetch(ep.url, { method: 'POST', headers, body: JSON.stringify(body), signal: both });
    text = await res.text();
  } catch (e) {
    if (timer.aborted) throw new SimulatorCallError(`no answer within ${Math.round(timeoutMs / 1000)} s`, true);
    if (signal.aborted) throw new SimulatorCallError('cancelled', true);
    throw new SimulatorCallError(`request to ${ep.url} failed: ${(e as Error).message}`);
  }
  if (!res.ok) throw new SimulatorCallError(`${ep.url} answered HTTP ${res.status}: ${oneLine(text, 200)}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new SimulatorCallError(`${ep.url} answered something that is not JSON: ${cutText(text.trim(), 120)}`);
  }
  const answer = anthropic ? anthropicText(json) : openaiText(json);
  if (answer === undefined) throw new SimulatorCallError(`${ep.url} answered no message text`);
  return answer;
}

function openaiText(json: unknown): string | undefined {
  const content = (json as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message?.content;
  return typeof content === 'string' ? content : undefined;
}

function anthropicText(json: unknown): string | undefined {
  const content = (json as { content?: { type?: string; text?: unknown }[] })?.content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((b) => b?.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
  return texts.length ? texts.join('') : undefined;
}
