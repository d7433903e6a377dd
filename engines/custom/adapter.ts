/**
 * Engine `custom`: the user's own agent, run as a local command or called over HTTP.
 * Contract: engines/custom/README.md (after alibaba/skill-up's custom engine).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { CustomEngineConfig } from '../../src/config/types.js';
import { blankTurn, type EngineAdapter, type EngineContext, type EngineError, type TranscriptTurn } from '../../src/engine/types.js';
import { describeFailure, maxStreamBytes, readHead, readTail, runProcess, truncationError, type StderrRef } from '../../src/engine/proc.js';
import { textFromFile, turnTextFields } from '../../src/engine/final-text.js';
import { agentEnv, type EnvAllowList } from '../../src/engine/env.js';
import { createRawWriteStream } from '../../src/util/out.js';
import { expandTemplate, TemplateError } from './template.js';
import { ContainmentError, resolveInside } from '../../src/util/contain.js';
import { quoteStart, readSessionResultFile, SessionResultError, type FileSessionResult, type SessionInput } from './session.js';

/** Where skills are installed for a custom agent: the cross-client `.agents/skills` convention (agentskills.io). */
export const CUSTOM_SKILL_DIR = '.agents/skills';

/** A custom agent receives the common base only (src/engine/env.ts) plus what the suite names. */
export const CUSTOM_ENV_ALLOW: EnvAllowList = {};


interface Prepared {
  /** The agent's whole environment: allow-listed base, `environment.env`, `HOME`, `engine.custom.env`. */
  env: Record<string, string | undefined>;
  /** What `${VAR}` in the command, args, cwd, url and headers expands against: skill-up's environment plus `env`. */
  templateEnv: Record<string, string | undefined>;
  vars: Record<string, string>;
  skillRoot: string;
}

/** Builds the adapter for one `engine.custom` block (resume support depends on `conversation_mode`). */
export function createCustomAdapter(cfg: CustomEngineConfig, skillRoot: string): EngineAdapter<Prepared> {
  return {
    name: 'custom',
    skillDirs: [CUSTOM_SKILL_DIR],
    supportsResume: cfg.conversationMode === 'stateful',
    envAllow: CUSTOM_ENV_ALLOW,
    async prepare(ctx) {
      const vars: Record<string, string> = {
        workspace: ctx.workspace,
        case_id: ctx.case.id,
        variant: ctx.variant,
        trial: String(ctx.trial),
        model: [ctx.engine.model.provider, ctx.engine.model.name].filter(Boolean).join('/'),
        model_provider: ctx.engine.model.provider ?? '',
        model_name: ctx.engine.model.name ?? '',
        max_turns: String(ctx.case.maxTurns),
        skill_root: skillRoot,
        skills_dir: join(ctx.workspace, CUSTOM_SKILL_DIR),
        home: ctx.homeDir,
        output_dir: ctx.outputDir,
      };
      for (const [k, v] of Object.entries(cfg.kwargs)) vars[`kwargs.${k}`] = v;
      // Only the common base and environment.env (src/engine/env.ts), never skill-up's whole
      // environment: anything else the agent needs is named in engine.custom.env.
      const env: Record<string, string | undefined> = { ...agentEnv(ctx, CUSTOM_ENV_ALLOW), HOME: ctx.homeDir };
      for (const [k, v] of Object.entries(cfg.env)) env[k] = expandTemplate(v, vars, ctx.baseEnv);
      if (ctx.modelBaseUrl) env.SKILL_UP_MODEL_URL = ctx.modelBaseUrl;
      return { env, templateEnv: { ...ctx.baseEnv, ...env }, vars, skillRoot };
    },
    /** A command shipped beside the suite (a path, relative to the skill root): that one file, for a container. */
    containerPaths(prep) {
      const command = cfg.local?.command;
      if (!command || !command.includes('/') || command.includes('{{')) return [];
      return [isAbsolute(command) ? command : resolve(prep.skillRoot, command)];
    },
    async runTurn(ctx, prep, turn) {
      const started = performance.now();
      const base = blankTurn(turn);
      const fail = (error: EngineError): TranscriptTurn => ({ ...base, error, durationMs: performance.now() - started });
      const timeoutMs = Math.min(turn.timeoutMs, cfg.timeoutSeconds ? cfg.timeoutSeconds * 1000 : Infinity);
      const input: SessionInput = {
        case_id: ctx.case.id,
        variant: ctx.variant,
        trial: ctx.trial,
        workspace: ctx.workspace,
        model: { provider: ctx.engine.model.provider, name: ctx.engine.model.name, base_url: ctx.engine.model.baseUrl },
        messages: (cfg.conversationMode === 'stateful' ? [turn.prompt] : turn.history).map((content) => ({ role: 'user', content })),
        max_turns: ctx.case.maxTurns,
        timeout_seconds: Number.isFinite(timeoutMs) ? Math.ceil(timeoutMs / 1000) : 0,
        ...(turn.sessionId ? { session_id: turn.sessionId } : {}),
      };
      const vars = { ...prep.vars, prompt: turn.prompt, session_id: turn.sessionId ?? '', timeout_seconds: String(input.timeout_seconds) };
      try {
        const call: Call = { cfg, ctx, prep, vars, input, timeoutMs, base, started };
        return cfg.transport === 'http' ? await runHttp(call) : await runLocal(call);
      } catch (e) {
        if (e instanceof TemplateError) return fail({ kind: 'crash', message: `engine.custom template: ${e.message}` });
        throw e;
      }
    },
  };
}

/** A SessionResult's fields as a turn patch (the final message whole, or its preview and file). */
function fromResult(parsed: FileSessionResult): Partial<TranscriptTurn> {
  return {
    exitCode: parsed.exitCode,
    finalText: parsed.finalMessage,
    ...(parsed.finalMessageFile ? { finalTextFile: parsed.finalMessageFile, finalTextBytes: parsed.finalMessageBytes } : {}),
    sessionId: parsed.sessionId,
    usage: parsed.usage,
    costUsd: parsed.costUsd,
    toolCalls: parsed.toolCalls,
    skillActivations: parsed.skillActivations,
    skillsListed: parsed.skillsListed,
  };
}

/** The stderr file's job-folder-relative path and its first 8 KB, for a failure's message (src/engine/proc.ts describeFailure). */
async function stderrRef(file: string, rel: string): Promise<StderrRef> {
  return { file: rel, head: (await readHead(file, 8192)).text };
}

/**
 * The message of an unusable SessionResult: where it was read from (`source`: `stdout`,
 * `output_file <path> (in the workspace)`, `the answer of POST <url>`), what is wrong, and what
 * the agent actually wrote (its first characters, cut with `…`), or that it wrote no file at all.
 */
export async function sessionResultProblem(e: SessionResultError, source: string, file: string): Promise<string> {
  const head = await readHead(file, 512);
  if (head.size === 0 && !(await exists(file))) return `${source}: not written (the agent exited without writing it)`;
  // Parse errors quote the text already; a missing or malformed field does not.
  const quoted = /; it (?:starts with: [\s\S]*|is empty)$/.test(e.message);
  return `${source}: ${e.message}${quoted ? '' : quoteStart(head.text)}`;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** How an error names `output_file`: its path relative to the workspace, with `/`. */
function outputFileSource(workspace: string, expanded: string): string {
  const rel = relative(workspace, resolve(workspace, expanded)).split(sep).join('/');
  return `output_file ${rel} (in the workspace)`;
}

/** One invocation's inputs, shared by both transports. */
interface Call {
  cfg: CustomEngineConfig;
  ctx: EngineContext;
  prep: Prepared;
  vars: Record<string, string>;
  input: SessionInput;
  timeoutMs: number;
  base: TranscriptTurn;
  started: number;
}

function finish(base: TranscriptTurn, started: number, patch: Partial<TranscriptTurn>): TranscriptTurn {
  return { ...base, ...patch, durationMs: performance.now() - started };
}

async function runLocal({ cfg, ctx, prep, vars, input, timeoutMs, base, started }: Call): Promise<TranscriptTurn> {
  const local = cfg.local!;
  const inputRel = expandTemplate(local.inputFile ?? '.skill-up/session-input.json', vars, prep.templateEnv);
  // input_file, output_file and cwd must stay inside the workspace once expanded, symbolic
  // links followed (src/util/contain.ts); otherwise the turn is an error naming the field.
  const refused = (e: unknown) => {
    if (e instanceof ContainmentError) return finish(base, started, { error: { kind: 'crash', message: e.message } });
    throw e;
  };
  let inputFile: string;
  let outputFile: string | undefined;
  const outputRel = local.outputFile ? expandTemplate(local.outputFile, vars, prep.templateEnv) : undefined;
  try {
    inputFile = await resolveInside(ctx.workspace, inputRel, 'engine.custom.local.input_file');
    outputFile = outputRel !== undefined ? await resolveInside(ctx.workspace, outputRel, 'engine.custom.local.output_file') : undefined;
  } catch (e) {
    return refused(e);
  }
  const allVars = { ...vars, input_file: inputFile, output_file: outputFile ?? '' };
  // Direct system calls for these few small writes: each thread-pool hand-off costs more CPU than the call (issue 13).
  const inputText = JSON.stringify(input, null, 2);
  mkdirSync(dirname(inputFile), { recursive: true });
  if (inputText.length <= 64 * 1024) writeFileSync(inputFile, inputText);
  else await writeFile(inputFile, inputText);
  if (outputFile) mkdirSync(dirname(outputFile), { recursive: true });
  let command = expandTemplate(local.command, allVars, prep.templateEnv);
  // A relative path with a slash is the agent shipped beside the suite: resolve it against the skill root.
  if (command.includes('/') && !isAbsolute(command)) command = resolve(prep.skillRoot, command);
  const args = local.args.map((a) => expandTemplate(a, allVars, prep.templateEnv));
  let cwd = ctx.workspace;
  try {
    if (local.cwd) cwd = await resolveInside(ctx.workspace, expandTemplate(local.cwd, allVars, prep.templateEnv), 'engine.custom.local.cwd');
  } catch (e) {
    return refused(e);
  }
  mkdirSync(join(ctx.outputDir, 'outputs'), { recursive: true });
  const stdoutRel = `outputs/turn-${base.index}.stdout.txt`;
  const stderrRel = `outputs/turn-${base.index}.stderr.txt`;
  const stdoutFile = join(ctx.outputDir, stdoutRel);
  const stderrFile = join(ctx.outputDir, stderrRel);
  const r = await (ctx.runProcess ?? runProcess)(command, args, { cwd, env: prep.env, stdoutFile, stderrFile, timeoutMs, signal: ctx.signal });
  const rawFiles = [stdoutRel, stderrRel];
  const ended = r.timedOut ? 'timeout' : r.cancelled ? 'cancelled' : undefined;
  if (r.startError || ended || r.signal) {
    const kind = r.startError ? 'missing' : (ended ?? 'crash');
    return finish(base, started, { rawFiles, error: { kind, message: describeFailure(r, timeoutMs, await readTail(stderrFile, 2000), await stderrRef(stderrFile, stderrRel)) } });
  }
  if (cfg.responseFormat === 'text') {
    if (r.exitCode !== 0) {
      return finish(base, started, { rawFiles, exitCode: r.exitCode, error: { kind: 'crash', message: describeFailure(r, timeoutMs, await readTail(stderrFile, 2000), await stderrRef(stderrFile, stderrRel)) } });
    }
    if (r.stdoutTruncated) return finish(base, started, { rawFiles, exitCode: 0, error: truncationError('the answer (stdout)', r.stdoutBytes, maxStreamBytes()) });
    // The answer is the whole stdout, trailing white space left out: a large one stays in the
    // stdout file itself (one copy on disk), the turn holds a preview and the reference.
    return finish(base, started, { rawFiles, exitCode: 0, ...turnTextFields(await textFromFile(ctx.outputDir, stdoutRel, 'end')) });
  }
  if (!outputFile && r.stdoutTruncated) {
    return finish(base, started, { rawFiles, exitCode: r.exitCode, error: truncationError('the SessionResult (stdout)', r.stdoutBytes, maxStreamBytes()) });
  }
  // The agent may have made output_file a link out of the workspace (to /etc/passwd): checked again now.
  if (outputFile) {
    try {
      outputFile = await resolveInside(ctx.workspace, outputFile, 'engine.custom.local.output_file');
    } catch (e) {
      return refused(e);
    }
  }
  try {
    const parsed = await readSessionResultFile(outputFile ?? stdoutFile, ctx.outputDir, `outputs/turn-${base.index}.final.txt`, maxStreamBytes());
    return finish(base, started, { rawFiles, ...fromResult(parsed) });
  } catch (e) {
    if (!(e instanceof SessionResultError)) throw e;
    const source = outputFile && outputRel !== undefined ? outputFileSource(ctx.workspace, outputRel) : 'stdout';
    const why = r.exitCode !== 0 ? describeFailure(r, timeoutMs, await readTail(stderrFile, 2000), await stderrRef(stderrFile, stderrRel)) : await sessionResultProblem(e, source, outputFile ?? stdoutFile);
    return finish(base, started, { rawFiles, exitCode: r.exitCode, error: { kind: r.exitCode !== 0 ? 'crash' : 'protocol', message: why } });
  }
}

async function runHttp({ cfg, ctx, prep, vars, input, timeoutMs, base, started }: Call): Promise<TranscriptTurn> {
  const http = cfg.http!;
  const url = expandTemplate(http.url, vars, prep.templateEnv);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(http.headers)) headers[k] = expandTemplate(v, vars, prep.templateEnv);
  const signals = [ctx.signal];
  if (Number.isFinite(timeoutMs)) signals.push(AbortSignal.timeout(timeoutMs));
  const outDir = join(ctx.outputDir, 'outputs');
  await mkdir(outDir, { recursive: true });
  const rawRel = `outputs/turn-${base.index}.response.json`;
  const rawFiles = [rawRel];
  const rawFile = join(ctx.outputDir, rawRel);
  const cap = maxStreamBytes();
  const signal = AbortSignal.any(signals);
  try {
    const { res } = await post(url, headers, JSON.stringify(input), signal);
    const body = await saveBody(res, rawFile, cap);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const head = (await readHead(rawFile, 2000)).text.slice(0, 500);
      return finish(base, started, { rawFiles, error: { kind: 'api', message: `HTTP ${status} from ${url}: ${head}` } });
    }
    if (body.cut) return finish(base, started, { rawFiles, error: truncationError('the answer', body.bytes, cap, true) });
  } catch (e) {
    const err = e as Error;
    if (ctx.signal.aborted) return finish(base, started, { error: { kind: 'cancelled', message: 'cancelled' } });
    if (err.name === 'TimeoutError' || (signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError')) {
      return finish(base, started, { error: { kind: 'timeout', message: `timed out after ${(timeoutMs / 1000).toFixed(1)} s` } });
    }
    const cause = (err as { cause?: Error }).cause;
    return finish(base, started, { error: { kind: 'crash', message: `POST ${url} failed: ${cause?.message ?? err.message}` } });
  }
  if (cfg.responseFormat === 'text') return finish(base, started, { rawFiles, exitCode: 0, ...turnTextFields(await textFromFile(ctx.outputDir, rawRel, 'end')) });
  try {
    const parsed = await readSessionResultFile(rawFile, ctx.outputDir, `outputs/turn-${base.index}.final.txt`, cap);
    return finish(base, started, { rawFiles, ...fromResult(parsed) });
  } catch (e) {
    if (!(e instanceof SessionResultError)) throw e;
    return finish(base, started, { rawFiles, error: { kind: 'protocol', message: await sessionResultProblem(e, `the answer of POST ${url}`, rawFile) } });
  }
}


/** Redirects followed at most, as `fetch` would (307/308 repeat the POST; 301/302/303 become a GET). */
const MAX_REDIRECTS = 5;

/**
 * POSTs `body` to `url` with node:http(s) (not `fetch`: its HTTP client alone costs some 30 MB
 * of memory, and node's streams give backpressure to the socket), following redirects. Resolves
 * once the answer's headers arrive; the body is still to be read. Rejects on a network error
 * or when `signal` aborts.
 */
function post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal, hops = 0): Promise<{ res: IncomingMessage; url: string }> {
  return new Promise((resolvePost, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      reject(new Error(`invalid URL ${JSON.stringify(url)}`));
      return;
    }
    const send = target.protocol === 'https:' ? httpsRequest : target.protocol === 'http:' ? httpRequest : undefined;
    if (!send) {
      reject(new Error(`unsupported protocol ${target.protocol} (http: or https:)`));
      return;
    }
    const payload = body === '' ? undefined : Buffer.from(body);
    const req = send(target, { method: payload ? 'POST' : 'GET', headers: payload ? { ...headers, 'content-length': String(payload.length) } : headers, signal }, (res) => {
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(status) && location && hops < MAX_REDIRECTS) {
        res.resume();
        const next = new URL(location, target).toString();
        const again = status === 307 || status === 308 ? body : '';
        post(next, headers, again, signal, hops + 1).then(resolvePost, reject);
        return;
      }
      resolvePost({ res, url });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Streams an HTTP answer's body into `file` (RAW, for parsing and grading; redacted in place at job end), pausing the
 * socket while the file falls behind, so memory holds one network chunk. Past `cap` bytes it
 * stops: the first `cap` bytes are kept and the connection is closed, so reading ends at once
 * (and the agent stops sending). `bytes` counts what arrived (a lower bound when cut).
 */
async function saveBody(res: IncomingMessage, file: string, cap: number): Promise<{ bytes: number; cut: boolean }> {
  const out = createRawWriteStream(file);
  const failed = new Promise<never>((_, rej) => out.once('error', rej));
  failed.catch(() => undefined);
  let bytes = 0;
  let cut = false;
  try {
    for await (const chunk of res) {
      const value = chunk as Buffer;
      const room = cap - bytes;
      bytes += value.length;
      if (value.length > room) {
        if (room > 0) out.write(value.subarray(0, room));
        cut = true;
        res.destroy();
        break;
      }
      if (!out.write(value)) await Promise.race([new Promise<void>((r) => out.once('drain', () => r())), failed]);
    }
  } finally {
    await Promise.race([new Promise<void>((r) => out.end(() => r())), failed]).catch(() => undefined);
  }
  return { bytes, cut };
}
