/**
 * Reads a job's model requests back from its exchange log (`<job folder>/model-requests.jsonl`,
 * src/model/log.ts) as protocol-neutral `ModelRequest`s, for measures computed after the job
 * (the skill context cost, src/judge/behaviour/context.ts) and from a saved run.
 *
 * The log holds each request's full (redacted) body; each `generate` line is parsed again by
 * the protocol module that served it (its `protocol` id). Lines are read one at a time, so
 * memory holds one request at once (each at most MAX_BODY_BYTES). A line that no longer
 * parses (torn, or changed by redaction) is skipped.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { exchangeMark } from './offered.js';
import { PROTOCOLS } from './server.js';
import type { ModelRequest } from './types.js';

/** The exchange log file of a job folder. */
export const EXCHANGE_LOG_FILE = 'model-requests.jsonl';

interface LoggedEntry {
  kind?: string;
  method?: string;
  url?: string;
  protocol?: string;
  request?: { headers?: Record<string, string | string[] | undefined>; body?: unknown };
  conversation?: { engine?: string };
}

/**
 * The model requests logged in `file`, in arrival order (`generate` calls only). A missing
 * file yields nothing. Stops reading when the consumer stops iterating.
 */
export async function* loggedRequests(file: string): AsyncGenerator<ModelRequest> {
  let stream;
  try {
    await stat(file);
    stream = createReadStream(file, { encoding: 'utf8' });
  } catch {
    return;
  }
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      const req = parseLine(line);
      if (req) yield req;
    }
  } finally {
    lines.close();
    stream.destroy();
  }
}

function parseLine(line: string): ModelRequest | undefined {
  if (!line.trim()) return undefined;
  let e: LoggedEntry;
  try {
    e = JSON.parse(line) as LoggedEntry;
  } catch {
    return undefined;
  }
  if (e.kind !== 'generate' || !e.request || e.request.body === undefined) return undefined;
  const protocol = PROTOCOLS.find((p) => p.id === e.protocol);
  if (!protocol) return undefined;
  const url = new URL(e.url ?? '/', 'http://127.0.0.1');
  try {
    return protocol.parse(e.request.body, {
      method: e.method ?? 'POST',
      pathname: url.pathname,
      query: url.searchParams,
      headers: e.request.headers ?? {},
      rawChars: JSON.stringify(e.request.body).length,
      ...(e.conversation?.engine ? { jobEngine: e.conversation.engine } : {}),
    });
  } catch {
    return undefined;
  }
}

/** Newline-terminated lines in `file` (0 when missing), counted by streaming its bytes. */
async function lineCount(file: string): Promise<number> {
  try {
    await stat(file);
  } catch {
    return 0;
  }
  let n = 0;
  for await (const chunk of createReadStream(file)) {
    const buf = chunk as Buffer;
    for (let at = buf.indexOf(10); at >= 0; at = buf.indexOf(10, at + 1)) n++;
  }
  return n;
}

/**
 * Waits until the exchange log of job `jobId` at `file` holds every exchange the running
 * server at `baseUrl` has filed for it (the server appends each line asynchronously after the
 * response), at most `timeoutMs` (default 2000). Resolves either way; no server = at once.
 */
export async function settleExchangeLog(file: string, baseUrl: string | undefined, jobId: string | undefined, timeoutMs = 2000): Promise<void> {
  const expected = exchangeMark(baseUrl, jobId);
  if (expected === 0) return;
  const until = Date.now() + timeoutMs;
  while ((await lineCount(file)) < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
}
