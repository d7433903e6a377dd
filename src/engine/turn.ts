/**
 * Pieces every CLI engine adapter's `runTurn` shares: reading the engine's line-oriented
 * output file, and the part of a turn's error that the process outcome alone decides.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { describeFailure, maxStreamBytes, truncationError, type ProcResult } from './proc.js';
import { findKnownEngine } from './known.js';
import { probeVersion, resolveEngineBinary, type ResolvedEngine } from './resolve.js';
import { EngineUnavailable, type EngineError } from './types.js';

/** Feeds every line of `file` to `push`, streaming (any size, bounded memory per line). A missing file has no lines. */
export async function feedLines(file: string, push: (line: string) => void): Promise<void> {
  let stream;
  try {
    stream = createReadStream(file, { encoding: 'utf8' });
    const rl = createInterface({ input: stream, crlfDelay: Infinity });
    for await (const line of rl) push(line);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  } finally {
    stream?.destroy();
  }
}

/**
 * The error the process outcome alone decides, checked first by every adapter: could not
 * start (`missing` when the executable is absent or not executable, else `crash`), then
 * `timeout`, then `cancelled`, then stdout cut at the cap (`protocol`). Undefined when the
 * process ran to its own end, so the adapter goes on with what the engine's output reports
 * and the exit code.
 */
export function processError(r: ProcResult, timeoutMs: number, stderrTail: string): EngineError | undefined {
  if (r.startError) {
    const missing = r.startErrorCode === 'ENOENT' || r.startErrorCode === 'EACCES';
    return { kind: missing ? 'missing' : 'crash', message: describeFailure(r, timeoutMs, stderrTail) };
  }
  if (r.timedOut) return { kind: 'timeout', message: describeFailure(r, timeoutMs, '') };
  if (r.cancelled) return { kind: 'cancelled', message: describeFailure(r, timeoutMs, '') };
  // Output cut at the cap (src/engine/proc.ts maxStreamBytes): what was parsed is not the whole turn.
  if (r.stdoutTruncated) return truncationError('stdout', r.stdoutBytes, maxStreamBytes());
  return undefined;
}

/** Prints an engine install's progress line on stderr (the adapters have no other channel). */
export function progressLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

/**
 * An engine's executable for a job (override variable, pinned version in the cache, PATH,
 * newest cached): never throws for a missing one, which every turn then reports as an
 * `error` of kind `missing` with this reason.
 */
export async function resolveForJob(engine: string, version: string | undefined): Promise<{ bin?: string; binSource?: ResolvedEngine['source']; missing?: string }> {
  const known = findKnownEngine(engine)!;
  try {
    const r = await resolveEngineBinary({ npmPackage: known.npmPackage, bin: known.bin, version, engine, onProgress: progressLine });
    return { bin: r.path, binSource: r.source };
  } catch (e) {
    if (!(e instanceof EngineUnavailable)) throw e;
    return { missing: e.message };
  }
}

/**
 * The `check` of a CLI engine: resolves (installing a pinned version into the cache, with one
 * progress line) and returns the version the executable reports.
 * @throws EngineUnavailable when it cannot be resolved, installed or run.
 */
export async function checkEngineBinary(engine: string, version: string | undefined): Promise<{ version?: string }> {
  const known = findKnownEngine(engine)!;
  const r = await resolveEngineBinary({ npmPackage: known.npmPackage, bin: known.bin, version, engine, onProgress: progressLine });
  return { version: await probeVersion(r.path) };
}
