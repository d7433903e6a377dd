/**
 * Engine `custom`: the user's own agent, run as a local command or called over HTTP.
 * Contract: engines/custom/README.md (after alibaba/skill-up's custom engine).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { CustomEngineConfig } from '../../src/config/types.js';
import { blankTurn, type EngineAdapter, type EngineContext, type EngineError, type TranscriptTurn } from '../../src/engine/types.js';
import { describeFailure, readHead, readTail, runProcess } from '../../src/engine/proc.js';
import { expandTemplate, TemplateError } from './template.js';
import { parseSessionResult, SessionResultError, type SessionInput } from './session.js';

/** Where skills are installed for a custom agent: the cross-client `.agents/skills` convention (agentskills.io). */
export const CUSTOM_SKILL_DIR = '.agents/skills';

/** Most of an agent's stdout read back for parsing; the whole output stays on disk. */
export const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;

interface Prepared {
  env: Record<string, string | undefined>;
  vars: Record<string, string>;
  skillRoot: string;
}

/** Builds the adapter for one `engine.custom` block (resume support depends on `conversation_mode`). */
export function createCustomAdapter(cfg: CustomEngineConfig, skillRoot: string): EngineAdapter<Prepared> {
  return {
    name: 'custom',
    skillDirs: [CUSTOM_SKILL_DIR],
    supportsResume: cfg.conversationMode === 'stateful',
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
      const env: Record<string, string | undefined> = { ...ctx.baseEnv, HOME: ctx.homeDir };
      for (const [k, v] of Object.entries(cfg.env)) env[k] = expandTemplate(v, vars, ctx.baseEnv);
      if (ctx.modelBaseUrl) env.SKILL_UP_MODEL_URL = ctx.modelBaseUrl;
      return { env, vars, skillRoot };
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

/** A SessionResult's fields as a turn patch. @throws SessionResultError */
function fromResult(text: string): Partial<TranscriptTurn> {
  const parsed = parseSessionResult(text);
  return {
    exitCode: parsed.exitCode,
    finalText: parsed.finalMessage,
    sessionId: parsed.sessionId,
    usage: parsed.usage,
    costUsd: parsed.costUsd,
    toolCalls: parsed.toolCalls,
    skillActivations: parsed.skillActivations,
    skillsListed: parsed.skillsListed,
  };
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
  const inputRel = expandTemplate(local.inputFile ?? '.skill-up/session-input.json', vars, prep.env);
  const inputFile = resolve(ctx.workspace, inputRel);
  const outputFile = local.outputFile ? resolve(ctx.workspace, expandTemplate(local.outputFile, vars, prep.env)) : undefined;
  const allVars = { ...vars, input_file: inputFile, output_file: outputFile ?? '' };
  await mkdir(dirname(inputFile), { recursive: true });
  await writeFile(inputFile, JSON.stringify(input, null, 2));
  if (outputFile) await mkdir(dirname(outputFile), { recursive: true });
  let command = expandTemplate(local.command, allVars, prep.env);
  // A relative path with a slash is the agent shipped beside the suite: resolve it against the skill root.
  if (command.includes('/') && !isAbsolute(command)) command = resolve(prep.skillRoot, command);
  const args = local.args.map((a) => expandTemplate(a, allVars, prep.env));
  const cwd = local.cwd ? resolve(ctx.workspace, expandTemplate(local.cwd, allVars, prep.env)) : ctx.workspace;
  const outDir = join(ctx.outputDir, 'outputs');
  await mkdir(outDir, { recursive: true });
  const stdoutRel = `outputs/turn-${base.index}.stdout.txt`;
  const stderrRel = `outputs/turn-${base.index}.stderr.txt`;
  const stdoutFile = join(ctx.outputDir, stdoutRel);
  const stderrFile = join(ctx.outputDir, stderrRel);
  const r = await runProcess(command, args, { cwd, env: prep.env, stdoutFile, stderrFile, timeoutMs, signal: ctx.signal });
  const rawFiles = [stdoutRel, stderrRel];
  const ended = r.timedOut ? 'timeout' : r.cancelled ? 'cancelled' : undefined;
  if (r.startError || ended || r.signal) {
    const kind = r.startError ? 'missing' : (ended ?? 'crash');
    return finish(base, started, { rawFiles, error: { kind, message: describeFailure(r, timeoutMs, await readTail(stderrFile, 2000)) } });
  }
  if (cfg.responseFormat === 'text') {
    if (r.exitCode !== 0) {
      return finish(base, started, { rawFiles, exitCode: r.exitCode, error: { kind: 'crash', message: describeFailure(r, timeoutMs, await readTail(stderrFile, 2000)) } });
    }
    const out = await readHead(stdoutFile, MAX_OUTPUT_BYTES);
    const finalText = out.truncated ? `${out.text}\n[skill-up: output truncated at ${MAX_OUTPUT_BYTES} of ${r.stdoutBytes} bytes]` : out.text;
    return finish(base, started, { rawFiles, exitCode: 0, finalText: finalText.trimEnd() });
  }
  const out = await readHead(outputFile ?? stdoutFile, MAX_OUTPUT_BYTES);
  if (out.truncated) {
    const size = outputFile ? out.size : r.stdoutBytes;
    return finish(base, started, { rawFiles, exitCode: r.exitCode, error: { kind: 'protocol', message: `SessionResult larger than ${MAX_OUTPUT_BYTES} bytes (${size})` } });
  }
  try {
    return finish(base, started, { rawFiles, ...fromResult(out.text) });
  } catch (e) {
    if (!(e instanceof SessionResultError)) throw e;
    const why = r.exitCode !== 0 ? describeFailure(r, timeoutMs, await readTail(stderrFile, 2000)) : e.message;
    return finish(base, started, { rawFiles, exitCode: r.exitCode, error: { kind: r.exitCode !== 0 ? 'crash' : 'protocol', message: why } });
  }
}

async function runHttp({ cfg, ctx, prep, vars, input, timeoutMs, base, started }: Call): Promise<TranscriptTurn> {
  const http = cfg.http!;
  const url = expandTemplate(http.url, vars, prep.env);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(http.headers)) headers[k] = expandTemplate(v, vars, prep.env);
  const signals = [ctx.signal];
  if (Number.isFinite(timeoutMs)) signals.push(AbortSignal.timeout(timeoutMs));
  const outDir = join(ctx.outputDir, 'outputs');
  await mkdir(outDir, { recursive: true });
  const rawRel = `outputs/turn-${base.index}.response.json`;
  const rawFiles = [rawRel];
  let text: string;
  try {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(input), signal: AbortSignal.any(signals) });
    text = await res.text();
    await writeFile(join(ctx.outputDir, rawRel), text);
    if (!res.ok) {
      return finish(base, started, { rawFiles, error: { kind: 'api', message: `HTTP ${res.status} from ${url}: ${text.slice(0, 500)}` } });
    }
  } catch (e) {
    const err = e as Error;
    if (ctx.signal.aborted) return finish(base, started, { error: { kind: 'cancelled', message: 'cancelled' } });
    if (err.name === 'TimeoutError') {
      return finish(base, started, { error: { kind: 'timeout', message: `timed out after ${(timeoutMs / 1000).toFixed(1)} s` } });
    }
    const cause = (err as { cause?: Error }).cause;
    return finish(base, started, { error: { kind: 'crash', message: `POST ${url} failed: ${cause?.message ?? err.message}` } });
  }
  if (cfg.responseFormat === 'text') return finish(base, started, { rawFiles, exitCode: 0, finalText: text.trimEnd() });
  try {
    return finish(base, started, { rawFiles, ...fromResult(text) });
  } catch (e) {
    if (!(e instanceof SessionResultError)) throw e;
    return finish(base, started, { rawFiles, error: { kind: 'protocol', message: e.message } });
  }
}

