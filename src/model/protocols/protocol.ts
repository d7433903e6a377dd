/**
 * The boundary between the scripted model and a wire protocol. A protocol module knows one
 * API's routes, request shape and response format, and nothing about rules: it turns the
 * HTTP body into a `ModelRequest` and a `ModelReply` back into bytes. Adding the OpenAI
 * Responses, Chat Completions or Gemini API means adding one module here and listing it in
 * `PROTOCOLS` (server.ts); match, plan, conversation and the script format stay as they are.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ToolTable } from '../tools.js';
import type { ModelReply, ModelRequest, ProtocolId, ReplyBlock } from '../types.js';

/** An HTTP response as data: status, headers and body chunks (one chunk per SSE event). */
export interface Rendered {
  status: number;
  headers: Record<string, string>;
  chunks: string[];
}

/** What the server knows about an incoming request when it asks a module to parse it. */
export interface WireContext {
  method: string;
  /** URL path without the query string. */
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Length of the raw body in characters. */
  rawChars: number;
  /**
   * The engine the request's job runs, when the API key carries a job id (`skill-up-job:<jobId>`)
   * and that job's adapter told the server (src/model/offered.ts `noteJobEngine`).
   */
  jobEngine?: string;
}

/** Thrown by `parse` for a body the protocol rejects; answered with `status` (default 400). */
export class ProtocolError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export interface ProtocolModule {
  readonly id: ProtocolId;
  /**
   * Claims a request: `generate` = a model call answered from the script, `utility` = an
   * auxiliary endpoint answered by `utility` (token counting, model lists), undefined = not
   * this protocol's.
   */
  route(method: string, pathname: string): 'generate' | 'utility' | undefined;
  /** Answers a `utility` route. `body` is the parsed JSON body (undefined when none or invalid). */
  utility(ctx: WireContext, body: unknown): Rendered;
  /** Wire body → neutral request. @throws ProtocolError for a malformed body. */
  parse(body: unknown, ctx: WireContext): ModelRequest;
  /** How abstract actions map onto the tools of this protocol's engines. */
  readonly toolTable: ToolTable;
  /** Neutral reply → response; SSE when `stream`, one JSON document otherwise. */
  render(reply: ModelReply, stream: boolean): Rendered;
  /** An error response in the protocol's own error shape. `type` overrides the derived error type. */
  renderError(status: number, message: string, type?: string): Rendered;
}

/** A JSON response. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Rendered {
  return { status, headers: { 'content-type': 'application/json', ...headers }, chunks: [JSON.stringify(body)] };
}

/** `event: <name>\ndata: <json>\n\n` */
export function sseEvent(name: string | undefined, data: unknown): string {
  return `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

export const SSE_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
};

/**
 * The name a protocol without tool namespaces (Messages, Chat Completions, Gemini) sends for a
 * reply's tool call: `name`, or `<namespace>__<name>` when the call names a namespace (no engine
 * on those protocols offers one; the join is Codex's own flat spelling of its MCP tools).
 */
export function flatToolName(b: Pick<Extract<ReplyBlock, { type: 'tool_call' }>, 'name' | 'namespace'>): string {
  return b.namespace === undefined ? b.name : `${b.namespace}__${b.name}`;
}
