/**
 * The scripted model's HTTP server (node:http, 127.0.0.1 only).
 *
 * Each request goes to the first protocol module that claims its method and path
 * (`PROTOCOLS`); model calls are planned from the script (plan.ts) and rendered by the
 * module, utility routes are answered by the module, and anything else (engines' probes
 * such as `HEAD /` or `HEAD /api/hello`) gets an immediate 404 JSON. The server keeps no
 * conversation state, so any number of engines, jobs and resumed sessions can share it.
 *
 * Logging and per-job attribution: see log.ts (`skill-up-job:<jobId>` API keys,
 * `<logDir>/<jobId>/model-requests.jsonl`, `onRequest`, `requestsFor`).
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import { ExchangeLog, isJudgeJobId, isSimulatorJobId, jobIdFrom, redactHeaders, type ExchangeLogEntry } from './log.js';
import { registerExchangeSource, unregisterExchangeSource } from './offered.js';
import { planResponse } from './plan.js';
import { anthropicProtocol } from './protocols/anthropic.js';
import { geminiProtocol } from './protocols/gemini.js';
import { openaiChatProtocol } from './protocols/openai-chat.js';
import { openaiResponsesProtocol } from './protocols/openai-responses.js';
import { jsonResponse, ProtocolError, type ProtocolModule, type Rendered, type WireContext } from './protocols/protocol.js';
import type { ModelScript } from './types.js';

/** Protocol modules in the order they are asked to claim a request. */
export const PROTOCOLS: ProtocolModule[] = [openaiChatProtocol, anthropicProtocol, openaiResponsesProtocol, geminiProtocol];

/** Largest request body accepted, in bytes. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface ModelServerOptions {
  /**
   * The rules. A function picks a script per request (e.g. per job, from the job id the
   * API key carries); it is called for every model call.
   */
  script: ModelScript | ((who: { jobId?: string; sessionId?: string }) => ModelScript);
  /** TCP port; 0 or absent = a free port chosen by the OS. */
  port?: number;
  /** Only loopback is supported. */
  host?: '127.0.0.1';
  /**
   * Also listen on this Unix socket (a path, created; removed on close), with the same
   * handler: the Docker runtime mounts it into containers that have no network of their own.
   */
  socketPath?: string;
  /** Folder for JSONL exchange logs (created when missing); none = no files. */
  logDir?: string;
  /** Called after every exchange with its full log entry. Exceptions are ignored. */
  onRequest?: (entry: ExchangeLogEntry) => void;
  /** Protocol modules to serve; defaults to `PROTOCOLS`. */
  protocols?: ProtocolModule[];
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>` (no trailing slash, no `/v1`). */
  url: string;
  port: number;
  /** The Unix socket it also listens on ({@link ModelServerOptions.socketPath}). */
  socketPath?: string;
  /** Exchanges (without request bodies) of a job id or a session id, in arrival order. */
  requestsFor(id: string): ExchangeLogEntry[];
  /** Frees the in-memory entries of a job or session id (and the engine noted for a job). */
  forget(id: string): void;
  /** Stops listening, drops open connections, cancels pending delays and flushes log files. */
  close(): Promise<void>;
}

/**
 * Starts the server and resolves once it listens.
 * @throws Error when the port cannot be bound (e.g. EADDRINUSE).
 */
export async function startModelServer(opts: ModelServerOptions): Promise<ModelServer> {
  const protocols = opts.protocols ?? PROTOCOLS;
  const log = new ExchangeLog(opts.logDir);
  const timers = new Set<NodeJS.Timeout>();
  /** Job id → the engine that job runs, as its adapter told (src/model/offered.ts `noteJobEngine`). */
  const jobEngines = new Map<string, string>();
  let seq = 0;
  let closing = false;

  const handler: RequestListener = (req, res) => {
    const started = Date.now();
    const entry: ExchangeLogEntry = {
      seq: ++seq,
      time: new Date(started).toISOString(),
      durationMs: 0,
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      kind: 'unknown',
      status: 0,
    };
    handle(req, res, entry)
      .catch((e: Error) => {
        const status = e instanceof ProtocolError ? e.status : 500;
        const message = e instanceof ProtocolError ? `[scripted-model] ${e.message}` : `[scripted-model] internal error: ${e.message}`;
        entry.error = { status, message };
        if (!res.headersSent) send(res, entry, jsonResponse(status, { type: 'error', error: { type: status >= 500 ? 'api_error' : 'invalid_request_error', message } }));
        else res.destroy();
      })
      .finally(() => {
        entry.durationMs = Date.now() - started;
        log.record(entry);
        try {
          opts.onRequest?.(entry);
        } catch {
          /* a listener's failure must not break the server */
        }
      });
  };
  const server = createServer(handler);
  // Containers without a network reach the run's server through this socket (src/runtime/docker/relay.ts).
  const socketServer = opts.socketPath ? createServer(handler) : undefined;

  const wait = (ms: number) =>
    new Promise<void>((resolveWait) => {
      if (ms <= 0 || closing) return resolveWait();
      const t = setTimeout(() => {
        timers.delete(t);
        resolveWait();
      }, ms);
      timers.add(t);
    });

  async function handle(req: IncomingMessage, res: ServerResponse, entry: ExchangeLogEntry): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const raw = await readBody(req);
    const jobId = jobIdFrom(req.headers, url.searchParams);
    if (jobId) entry.jobId = jobId;
    const jobEngine = jobId ? jobEngines.get(jobId) : undefined;
    const ctx: WireContext = { method, pathname: url.pathname, query: url.searchParams, headers: req.headers, rawChars: raw.length, ...(jobEngine ? { jobEngine } : {}) };
    let body: unknown;
    let bodyError: string | undefined;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw);
      } catch (e) {
        bodyError = `invalid JSON body: ${(e as Error).message}`;
        body = raw.length > 2000 ? raw.slice(0, 2000) + '…' : raw;
      }
    }
    entry.request = { headers: redactHeaders(req.headers), body };

    let protocol: ProtocolModule | undefined;
    let kind: 'generate' | 'utility' | undefined;
    for (const p of protocols) {
      kind = p.route(method, url.pathname);
      if (kind) {
        protocol = p;
        break;
      }
    }
    if (!protocol || !kind) {
      const message = `[scripted-model] no route for ${method} ${url.pathname}`;
      entry.error = { status: 404, message };
      return send(res, entry, jsonResponse(404, { type: 'error', error: { type: 'not_found_error', message } }), method === 'HEAD');
    }
    entry.protocol = protocol.id;
    entry.kind = kind;
    if (kind === 'utility') return send(res, entry, protocol.utility(ctx, bodyError ? undefined : body));

    if (bodyError) {
      entry.error = { status: 400, message: bodyError };
      return send(res, entry, protocol.renderError(400, bodyError));
    }
    let request;
    try {
      request = protocol.parse(body, ctx);
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      entry.error = { status: e.status, message: e.message };
      return send(res, entry, protocol.renderError(e.status, e.message));
    }
    if (request.sessionId) entry.sessionId = request.sessionId;
    // A grader run (`<job id>/judge-<r>`): the rules' `judge: true` condition holds for it.
    if (isJudgeJobId(jobId)) request.judge = true;
    // The user simulator (`<job id>/simulator`, src/simulator/): `simulator: true` holds for it.
    if (isSimulatorJobId(jobId)) request.simulator = true;

    const who: { jobId?: string; sessionId?: string } = {};
    if (jobId) who.jobId = jobId;
    if (request.sessionId) who.sessionId = request.sessionId;
    const script = typeof opts.script === 'function' ? opts.script(who) : opts.script;
    const { plan, conversation } = planResponse(script, request, protocol.toolTable);
    entry.conversation = {
      engine: conversation.engine,
      turn: conversation.turn,
      prompt: conversation.prompt,
      ...(conversation.cwd ? { cwd: conversation.cwd } : {}),
      skillsListed: conversation.skillsListed,
      skillsLoaded: conversation.skillsLoaded,
      toolsOffered: conversation.toolsOffered,
      // What `tool_listed` also counts (deferred listings): only when there are any, to keep the log small.
      ...(conversation.toolsDeferred.length ? { toolsDeferred: conversation.toolsDeferred } : {}),
      ...(conversation.namespacesDeferred.length ? { namespacesDeferred: conversation.namespacesDeferred } : {}),
      replies: conversation.replyStarts.length,
      ...(conversation.judge ? { judge: true as const } : {}),
      ...(conversation.simulator ? { simulator: true as const } : {}),
    };
    entry.trace = plan.trace;
    await wait(plan.delayMs);
    if (plan.kind === 'error') {
      entry.error = { status: plan.status, message: plan.message };
      return send(res, entry, protocol.renderError(plan.status, plan.message, plan.errorType));
    }
    entry.reply = { blocks: plan.reply.blocks, stop: plan.reply.stop, usage: plan.reply.usage };
    send(res, entry, protocol.render(plan.reply, request.stream));
  }

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  if (socketServer) {
    await new Promise<void>((resolveListen, reject) => {
      socketServer.once('error', reject);
      socketServer.listen(opts.socketPath, () => {
        socketServer.off('error', reject);
        resolveListen();
      });
    }).catch((e: Error) => {
      server.close();
      throw e;
    });
  }
  const port = (server.address() as AddressInfo).port;
  // In-process jobs read what their engine offered the model from here (src/model/offered.ts).
  registerExchangeSource(`http://127.0.0.1:${port}`, { requestsFor: (id) => log.entriesFor(id), noteJobEngine: (id, engine) => jobEngines.set(id, engine) });

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    ...(opts.socketPath ? { socketPath: opts.socketPath } : {}),
    requestsFor: (id) => log.entriesFor(id),
    forget: (id) => {
      log.forget(id);
      jobEngines.delete(id);
    },
    async close() {
      closing = true;
      unregisterExchangeSource(`http://127.0.0.1:${port}`);
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const closed = (srv: typeof server) =>
        new Promise<void>((resolveClose) => {
          srv.close(() => resolveClose());
          srv.closeAllConnections();
        });
      await Promise.all([closed(server), ...(socketServer ? [closed(socketServer)] : [])]);
      await log.flush();
    },
  };
}

function send(res: ServerResponse, entry: ExchangeLogEntry, r: Rendered, headOnly = false): void {
  entry.status = r.status;
  if (res.destroyed) return;
  const isStream = r.headers['content-type']?.startsWith('text/event-stream');
  const headers: Record<string, string | number> = { ...r.headers };
  if (!isStream) headers['content-length'] = Buffer.byteLength(r.chunks.join(''));
  res.writeHead(r.status, headers);
  if (headOnly) {
    res.end();
    return;
  }
  for (const c of r.chunks) res.write(c);
  res.end();
}

/** Reads the whole body as UTF-8, undoing gzip/deflate/br content-encoding. */
async function readBody(req: IncomingMessage): Promise<string> {
  const enc = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
  let stream: Readable = req;
  if (enc === 'gzip' || enc === 'x-gzip') stream = req.pipe(createGunzip());
  else if (enc === 'deflate') stream = req.pipe(createInflate());
  else if (enc === 'br') stream = req.pipe(createBrotliDecompress());
  else if (enc !== 'identity') throw new ProtocolError(`unsupported content-encoding ${enc}`, 415);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stream) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ProtocolError(`request body over ${MAX_BODY_BYTES} bytes`, 413);
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
