/**
 * The scripted model's exchange log.
 *
 * One server serves many parallel jobs, so every exchange is attributed:
 * - **job id**: an engine adapter that wants its own log sets the engine's API key to
 *   `skill-up-job:<jobId>` (read from `x-api-key`, `Authorization: Bearer`, `x-goog-api-key`,
 *   `api-key`, or a `key` query parameter). Every engine sends some API key, so this works
 *   for all protocols without engine-specific headers.
 * - **session id**: whatever the protocol carries (Claude Code: `x-claude-code-session-id`).
 *
 * Sinks, all optional:
 * - `<logDir>/<jobId>/model-requests.jsonl` for exchanges with a job id,
 *   `<logDir>/model-requests.jsonl` for the rest; one JSON line per exchange, with the full
 *   request body and headers (credential headers replaced; every known secret value redacted,
 *   src/util/redact.ts);
 * - the server's `onRequest` callback (same entry);
 * - an in-memory index, without request bodies, read with `requestsFor(jobOrSessionId)`.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingHttpHeaders } from 'node:http';
import type { Conversation } from './conversation.js';
import type { PlanTrace, ProtocolId, ReplyBlock } from './types.js';
import { appendText, jsonText } from '../util/out.js';

/** One request/response exchange. */
export interface ExchangeLogEntry {
  /** 1-based order of arrival at this server. */
  seq: number;
  /** ISO time the request arrived. */
  time: string;
  /** Milliseconds from arrival to the end of the response (includes `delay_ms`). */
  durationMs: number;
  jobId?: string;
  sessionId?: string;
  method: string;
  /** Path with query string, as received. */
  url: string;
  protocol?: ProtocolId;
  /** `generate` (a model call), `utility` (count_tokens, models) or `unknown` (404). */
  kind: 'generate' | 'utility' | 'unknown';
  /** HTTP status answered. */
  status: number;
  /** Headers (credentials replaced by `[redacted]`) and parsed JSON body; absent in memory. */
  request?: { headers: Record<string, string | string[] | undefined>; body: unknown };
  /** What the server understood of the request (model calls only). */
  conversation?: Pick<Conversation, 'engine' | 'turn' | 'prompt' | 'cwd' | 'skillsListed' | 'skillsLoaded' | 'toolsOffered'> &
    Partial<Pick<Conversation, 'toolsDeferred' | 'namespacesDeferred'>> & {
    /** Assistant replies since the current prompt. */
    replies: number;
    /** Present (true) only for a grader run's request (`Conversation.judge`). */
    judge?: true;
    /** Present (true) only for the user simulator's request (`Conversation.simulator`). */
    simulator?: true;
  };
  /** Which rule and step answered. */
  trace?: PlanTrace;
  /** The message sent back. */
  reply?: { blocks: ReplyBlock[]; stop: string; usage: { inputTokens: number; outputTokens: number } };
  /** The error sent back (scripted `error:` rule, bad request, internal failure). */
  error?: { status: number; message: string };
}

const JOB_KEY = /^skill-up-job:(.+)$/;
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'x-goog-api-key', 'api-key', 'cookie', 'proxy-authorization']);

/** The job id carried in the API key, if it has the form `skill-up-job:<jobId>`. */
export function jobIdFrom(headers: IncomingHttpHeaders, query: URLSearchParams): string | undefined {
  const keys = [headers['x-api-key'], headers['x-goog-api-key'], headers['api-key'], headers.authorization, query.get('key') ?? undefined];
  for (const raw of keys) {
    const v = Array.isArray(raw) ? raw[0] : raw;
    if (!v) continue;
    const m = JOB_KEY.exec(v.replace(/^Bearer\s+/i, '').trim());
    if (m) return m[1]!;
  }
  return undefined;
}

/** Last `/`-segment of a grader run's job id: `judge-<n>`, n = 1, 2, … (one per grading repeat). */
const JUDGE_SEGMENT = /^judge-[1-9][0-9]*$/;

/**
 * True when `jobId` is a grader run's: an `agent_judge` runs its grader agent under
 * `<job id>/judge-<r>` (r = 1, 2, …), so the grader's requests reach the server with the API key
 * `skill-up-job:<job id>/judge-<r>`. Drives the rules' `judge:` condition. False for undefined.
 */
export function isJudgeJobId(jobId: string | undefined): boolean {
  if (!jobId) return false;
  return JUDGE_SEGMENT.test(jobId.slice(jobId.lastIndexOf('/') + 1));
}

/** Last `/`-segment of the user simulator's job id (src/simulator/ sends `skill-up-job:<job id>/simulator`). */
export const SIMULATOR_SEGMENT = 'simulator';

/** True when `jobId` is the user simulator's (`<job id>/simulator`): drives the rules' `simulator:` condition. False for undefined. */
export function isSimulatorJobId(jobId: string | undefined): boolean {
  return !!jobId && jobId.slice(jobId.lastIndexOf('/') + 1) === SIMULATOR_SEGMENT;
}

/** Headers with credentials replaced. */
export function redactHeaders(headers: IncomingHttpHeaders): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = SECRET_HEADERS.has(k.toLowerCase()) ? '[redacted]' : v;
  return out;
}

/**
 * A job id made safe as a relative folder path. skill-up's job ids are `case/variant/run-k`,
 * so each `/`-separated segment is kept as a folder (the log lands in the job's own folder);
 * every segment is sanitised and may not start with a dot, so nothing escapes `logDir`.
 */
export function safeJobDir(jobId: string): string {
  const parts = jobId
    .split('/')
    .filter((p) => p !== '')
    .map((p) => p.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 100));
  return parts.slice(0, 8).join('/') || '_';
}

/** Appends entries to JSONL files, one write at a time per file, and keeps an in-memory index. */
export class ExchangeLog {
  private readonly chains = new Map<string, Promise<void>>();
  private readonly made = new Set<string>();
  private readonly byId = new Map<string, ExchangeLogEntry[]>();
  private failure: Error | undefined;

  constructor(private readonly logDir?: string) {}

  record(entry: ExchangeLogEntry): void {
    const slim: ExchangeLogEntry = { ...entry };
    delete slim.request;
    for (const id of new Set([entry.jobId, entry.sessionId])) {
      if (!id) continue;
      const list = this.byId.get(id) ?? [];
      list.push(slim);
      this.byId.set(id, list);
    }
    if (!this.logDir) return;
    const dir = entry.jobId ? join(this.logDir, safeJobDir(entry.jobId)) : this.logDir;
    const file = join(dir, 'model-requests.jsonl');
    // Redacted (src/util/out.ts): a request body holds whatever the agent saw, its environment included.
    const line = jsonText(entry, 0, true);
    const prev = this.chains.get(file) ?? Promise.resolve();
    const next = prev
      .then(async () => {
        if (!this.made.has(dir)) {
          await mkdir(dir, { recursive: true });
          this.made.add(dir);
        }
        await appendText(file, line);
      })
      .catch((e: Error) => {
        this.failure ??= e;
      });
    this.chains.set(file, next);
  }

  /** Entries (without request bodies) whose job id or session id is `id`, in arrival order. */
  entriesFor(id: string): ExchangeLogEntry[] {
    return [...(this.byId.get(id) ?? [])];
  }

  /** Drops the in-memory entries of `id` (files are kept). */
  forget(id: string): void {
    this.byId.delete(id);
  }

  /** Waits for pending writes. @throws the first write error, if any happened. */
  async flush(): Promise<void> {
    await Promise.all(this.chains.values());
    if (this.failure) throw this.failure;
  }
}
