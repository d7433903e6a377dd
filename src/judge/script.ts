/**
 * The `script` judge: runs the skill author's program in the job workspace and passes when it
 * exits 0. One assertion, `script: <path>`, whose evidence is the script's stdout (trimmed,
 * at most 4 KB) with its stderr appended as `[stderr: …]`.
 *
 * The script gets the common base of skill-up's environment (src/engine/env.ts: PATH, locale,
 * proxies, …; never its credentials), `HOME`, and the suite's `environment.env`, plus:
 * | variable | value |
 * |---|---|
 * | `EVAL_FINAL_MESSAGE` | the final message (cut to 120,000 bytes: the OS limit for one variable is 128 KiB) |
 * | `EVAL_FINAL_MESSAGE_FILE` | absolute path of a file holding the whole final message in its first `EVAL_FINAL_MESSAGE_BYTES` bytes: `outputs/response.md`, or for a message over the inline limit (64 KiB) the file that holds it (a raw stdout file may go on with trailing white space) |
 * | `EVAL_FINAL_MESSAGE_BYTES` | the final message's length in UTF-8 bytes |
 * | `EVAL_EXIT_CODE` | the engine's exit code of the last turn |
 * | `EVAL_TRANSCRIPT_PATH` | absolute path of the transcript JSON (empty when none) |
 * | `EVAL_WORKSPACE` | absolute path of the workspace (also the cwd) |
 * | `EVAL_SKILL_DIR` | absolute path of the skill root |
 * | `EVAL_CASE_ID` | the case id |
 *
 * A script with the executable bit runs directly; otherwise (or if the OS refuses to exec it)
 * `.sh` runs via bash, `.py` via python3, `.js`/`.mjs`/`.cjs` via node, anything else via bash.
 * It runs in its own process group: on timeout (`timeoutSeconds`, default 30) or cancellation
 * the whole group is killed, and after the script exits any background child it left is swept.
 */
import { access, constants, stat } from 'node:fs/promises';
import path from 'node:path';
import { clip } from './evidence.js';
import { finalMessageText, textHead } from './text.js';
import { childProcessEnv } from '../engine/env.js';
import { trackGroup, untrackGroup } from '../engine/proc.js';
import type { JudgeOutcome } from './outcome.js';
import type { JudgeInput } from './types.js';

/** Default script timeout in seconds, when `timeoutSeconds` is not positive. */
export const DEFAULT_SCRIPT_TIMEOUT_SECONDS = 30;
/** Most stdout characters kept as evidence. */
export const MAX_STDOUT_EVIDENCE = 4096;
/** Most stderr characters appended to the evidence. */
export const MAX_STDERR_EVIDENCE = 2048;
/** Most bytes of the final message passed in `EVAL_FINAL_MESSAGE`. */
export const MAX_ENV_MESSAGE_BYTES = 120_000;

/** Cuts `s` to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function cutBytes(s: string, maxBytes: number): string {
  const buf = Buffer.from(s, 'utf8');
  if (buf.length <= maxBytes) return s;
  let end = maxBytes;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/** The interpreter used for a non-executable script, by extension: `[command, ...args]`. */
export function interpreterFor(scriptPath: string): string[] {
  const ext = path.extname(scriptPath).toLowerCase();
  if (ext === '.py') return ['python3'];
  if (ext === '.js' || ext === '.mjs' || ext === '.cjs') return ['node'];
  return ['bash'];
}

function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

interface RunResult {
  exitCode?: number;
  stdout: string;
  stderr: string;
  signal?: string;
  startError?: string;
  errno?: string;
  timedOut: boolean;
  cancelled: boolean;
}

async function runOnce(file: string, args: string[], input: JudgeInput, env: Record<string, string>, timeoutMs: number): Promise<RunResult> {
  if (input.signal?.aborted) return { stdout: '', stderr: '', timedOut: false, cancelled: true };
  // Loaded on first use: a command that grades nothing never loads execa (100+ modules).
  const { execa } = await import('execa');
  const child = execa(file, args, {
    cwd: input.workspace,
    env,
    extendEnv: false, // `env` is complete: src/engine/env.ts childProcessEnv
    detached: true,
    reject: false,
    stdin: 'ignore',
    stripFinalNewline: false,
  });
  const pid = child.pid;
  // Killed with skill-up however it ends, SIGKILL included (engine/reaper.ts).
  if (pid) trackGroup(pid);
  let timedOut = false;
  let cancelled = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(pid);
  }, timeoutMs);
  const onAbort = () => {
    cancelled = true;
    killGroup(pid);
  };
  input.signal?.addEventListener('abort', onAbort, { once: true });
  // Once the script itself has ended, sweep children it left behind (they may hold stdout open).
  child.on('exit', () => killGroup(pid));
  try {
    const r = await child;
    const startError = r.exitCode === undefined && !r.signal && r.failed ? r.originalMessage ?? r.shortMessage : undefined;
    return {
      exitCode: r.exitCode,
      stdout: typeof r.stdout === 'string' ? r.stdout : '',
      stderr: typeof r.stderr === 'string' ? r.stderr : '',
      signal: r.signal,
      startError,
      errno: r.code,
      timedOut,
      cancelled,
    };
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onAbort);
    if (pid) untrackGroup(pid);
  }
}

/** `EVAL_FINAL_MESSAGE_FILE` and `EVAL_FINAL_MESSAGE_BYTES` (none when the job folder is unknown). */
function messageFileEnv(input: JudgeInput): Record<string, string> {
  if (input.finalMessageFile) return { EVAL_FINAL_MESSAGE_FILE: input.finalMessageFile.path, EVAL_FINAL_MESSAGE_BYTES: String(input.finalMessageFile.bytes) };
  if (input.jobDir === undefined) return {};
  return { EVAL_FINAL_MESSAGE_FILE: path.join(input.jobDir, 'outputs', 'response.md'), EVAL_FINAL_MESSAGE_BYTES: String(Buffer.byteLength(input.finalMessage)) };
}

/** Builds the evidence string from a script's output. */
export function scriptEvidence(stdout: string, stderr: string): string {
  const out = clip(stdout.trim(), MAX_STDOUT_EVIDENCE);
  const err = stderr.trim();
  const parts = [out === '' ? '(no output)' : out];
  if (err !== '') parts.push(`[stderr: ${clip(err, MAX_STDERR_EVIDENCE)}]`);
  return parts.join(' ');
}

/**
 * Runs a `script` judge. Never throws. Only the script's own verdict is a `pass` (exit 0) or a
 * `fail` (any other exit code). A script that gave none — it cannot start (missing, not a file,
 * no interpreter), ran past its timeout, or was killed by a signal (the OOM killer included) —
 * makes the outcome an `error` naming the script and the reason, with the evidence kept in a
 * failed assertion: a judge that could not judge says nothing about the skill, so it must not
 * count against it (and `retry_policy` may retry it). Cancellation (`input.signal`) is an `error` too.
 */
export async function runScriptJudge(spec: { scriptPath: string; timeoutSeconds: number }, input: JudgeInput): Promise<JudgeOutcome> {
  const abs = path.isAbsolute(spec.scriptPath) ? spec.scriptPath : path.resolve(input.skillDir, spec.scriptPath);
  const rel = path.relative(input.skillDir, abs);
  const text = `script: ${rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : abs}`;
  const seconds = spec.timeoutSeconds > 0 ? spec.timeoutSeconds : DEFAULT_SCRIPT_TIMEOUT_SECONDS;
  const fail = (evidence: string, reason = evidence): JudgeOutcome => ({
    status: 'fail',
    assertions: [{ text, passed: false, evidence }],
    reason,
  });
  /** No verdict from the script: an `error`, the evidence kept. */
  const noVerdict = (evidence: string, reason = evidence): JudgeOutcome => ({
    status: 'error',
    assertions: [{ text, passed: false, evidence }],
    reason: `script judge ${text.slice('script: '.length)}: ${reason}`,
  });

  try {
    const st = await stat(abs);
    if (!st.isFile()) return noVerdict(`script could not start: ${abs} is not a regular file`);
  } catch {
    return noVerdict(`script could not start: ${abs} does not exist`);
  }

  const env: Record<string, string> = childProcessEnv({
    // The suite author's own program, run as the user: it keeps HOME (user-installed packages).
    ...(process.env.HOME ? { HOME: process.env.HOME } : {}),
    // A large message is read from the head of its file (src/judge/text.ts), never whole.
    EVAL_FINAL_MESSAGE: cutBytes(await textHead(finalMessageText(input), MAX_ENV_MESSAGE_BYTES), MAX_ENV_MESSAGE_BYTES),
    ...messageFileEnv(input),
    EVAL_EXIT_CODE: String(input.exitCode),
    EVAL_TRANSCRIPT_PATH: input.transcriptPath ?? '',
    EVAL_WORKSPACE: input.workspace,
    EVAL_SKILL_DIR: input.skillDir,
    EVAL_CASE_ID: input.case.id,
  });

  let executable = false;
  try {
    await access(abs, constants.X_OK);
    executable = true;
  } catch {
    /* not executable */
  }
  const [interp, ...interpArgs] = interpreterFor(abs);
  const timeoutMs = seconds * 1000;
  let r = executable ? await runOnce(abs, [], input, env, timeoutMs) : await runOnce(interp!, [...interpArgs, abs], input, env, timeoutMs);
  if (executable && r.startError && (r.errno === 'ENOEXEC' || r.errno === 'EACCES')) {
    // e.g. no shebang line: fall back to the interpreter for its extension.
    r = await runOnce(interp!, [...interpArgs, abs], input, env, timeoutMs);
  }

  if (r.cancelled) {
    return { status: 'error', assertions: [], reason: 'script judge cancelled' };
  }
  if (r.timedOut) {
    const ev = `script timed out after ${seconds}s`;
    const partial = r.stdout.trim() || r.stderr.trim() ? `; output so far: ${scriptEvidence(r.stdout, r.stderr)}` : '';
    return noVerdict(`${ev}${partial}`, ev);
  }
  if (r.startError) return noVerdict(`script could not start: ${r.startError}`);
  if (r.exitCode === undefined) {
    const killed = `script killed by ${r.signal ?? 'a signal'}`;
    return noVerdict(`${killed}: ${scriptEvidence(r.stdout, r.stderr)}`, killed);
  }
  const evidence = scriptEvidence(r.stdout, r.stderr);
  if (r.exitCode === 0) return { status: 'pass', assertions: [{ text, passed: true, evidence }] };
  return fail(`${evidence} [exit code ${r.exitCode}]`, `script exited with code ${r.exitCode}`);
}
