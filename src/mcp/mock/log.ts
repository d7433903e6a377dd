/**
 * The call log of a mocked MCP server: one JSON line per `tools/call`, appended in call order.
 * Every line is bounded (the result text and the arguments' JSON are each cut to
 * {@link MAX_LOGGED_CHARS}), and a failed write never reaches the server: it is counted, and
 * the first error kept, for the command to report when it stops.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { cutText } from '../../util/cut.js';

/** Longest result text, and longest arguments JSON, one log line keeps (64 Ki UTF-16 units). */
export const MAX_LOGGED_CHARS = 64 * 1024;

/** One line of the call log. */
export interface CallLogEntry {
  /** ISO 8601 time of the call. */
  ts: string;
  server: string;
  tool: string;
  /** The call's arguments; replaced by `arguments_cut` when their JSON is longer than {@link MAX_LOGGED_CHARS}. */
  arguments?: Record<string, unknown>;
  /** The first {@link MAX_LOGGED_CHARS} characters of the arguments' JSON, ending in `…`. */
  arguments_cut?: string;
  /** The answer's text, cut to {@link MAX_LOGGED_CHARS} (ending in `…` when cut). */
  result: string;
  isError: boolean;
  /** For `tool_responses`: which entry answered (`responses[0]`, `default`). */
  matched?: string;
  /** Template arguments that were missing and had no default (rendered as the empty string). */
  missing_params?: string[];
}

/** Appends {@link CallLogEntry} lines to one file; see the module doc. */
export class CallLog {
  private chain: Promise<void> = Promise.resolve();
  private dirMade = false;
  /** Lines that could not be written. */
  failures = 0;
  /** The first write error's message. */
  firstError?: string;

  constructor(readonly file: string) {}

  /** Queues one line; returns once it is written or has failed (never rejects). */
  append(entry: Omit<CallLogEntry, 'ts' | 'result' | 'arguments' | 'arguments_cut'> & { result: string; arguments: Record<string, unknown> }): Promise<void> {
    const argsJson = JSON.stringify(entry.arguments);
    const line: CallLogEntry = {
      ts: new Date().toISOString(),
      server: entry.server,
      tool: entry.tool,
      ...(argsJson.length > MAX_LOGGED_CHARS ? { arguments_cut: cutText(argsJson, MAX_LOGGED_CHARS) } : { arguments: entry.arguments }),
      result: cutText(entry.result, MAX_LOGGED_CHARS),
      isError: entry.isError,
      ...(entry.matched !== undefined ? { matched: entry.matched } : {}),
      ...(entry.missing_params?.length ? { missing_params: entry.missing_params } : {}),
    };
    const text = JSON.stringify(line) + '\n';
    this.chain = this.chain.then(async () => {
      try {
        if (!this.dirMade) {
          await mkdir(path.dirname(this.file), { recursive: true });
          this.dirMade = true;
        }
        await appendFile(this.file, text, 'utf8');
      } catch (e) {
        this.failures++;
        this.firstError ??= (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      }
    });
    return this.chain;
  }

  /** Resolves once every queued line is written or has failed. */
  flush(): Promise<void> {
    return this.chain;
  }
}
