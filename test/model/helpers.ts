/** Shared helpers for the scripted-model tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAnthropicRequest } from '../../src/model/protocols/anthropic.js';
import type { WireContext } from '../../src/model/protocols/protocol.js';
import { parseModelScript } from '../../src/model/script.js';
import type { ModelRequest, ModelScript } from '../../src/model/types.js';

export const FIXTURES = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures');

/** A captured request file: `{method, url, headers, body | "body(trimmed)"}`. */
export interface Captured {
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown> & { messages: Array<{ role: string; content: unknown }> };
}

export function loadCaptured(name: string): Captured {
  const raw = JSON.parse(readFileSync(join(FIXTURES, 'claude-code', name), 'utf8')) as Record<string, unknown>;
  return { url: raw.url as string, headers: raw.headers as Record<string, string>, body: (raw.body ?? raw['body(trimmed)']) as Captured['body'] };
}

/** The full `role:"system"` message of the sample run (the trimmed bodies cut it off). */
export function fullSystemMessage(): string {
  return readFileSync(join(FIXTURES, 'claude-code', 'system-role-message-env-and-skill-listing.txt'), 'utf8');
}

/** A trimmed sample with its cut-off system message replaced by the full one. */
export function withFullSystemMessage(c: Captured): Captured {
  const body = structuredClone(c.body);
  body.messages = body.messages.map((m) => (m.role === 'system' ? { ...m, content: fullSystemMessage() } : m));
  return { ...c, body };
}

export function wire(headers: Record<string, string> = {}, rawChars = 1000): WireContext {
  return { method: 'POST', pathname: '/v1/messages', query: new URLSearchParams('beta=true'), headers, rawChars };
}

/** Parses a captured request as the server would. */
export function parseCaptured(c: Captured): ModelRequest {
  return parseAnthropicRequest(c.body, wire(c.headers, JSON.stringify(c.body).length));
}

export function script(yaml: string): ModelScript {
  return parseModelScript(yaml, '/virtual/model.yaml');
}

/** Cuts a request's messages to the first `n` (an earlier request of the same run). */
export function prefix(req: ModelRequest, n: number): ModelRequest {
  return { ...req, messages: req.messages.slice(0, n) };
}

/** Splits an SSE byte stream into `{event, data}` records. */
export function parseSse(text: string): Array<{ event?: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const rec: { event?: string; data: Record<string, unknown> } = { data: {} };
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) rec.event = line.slice(7);
        else if (line.startsWith('data: ')) rec.data = JSON.parse(line.slice(6)) as Record<string, unknown>;
      }
      return rec;
    });
}
