/**
 * Pieces every CLI engine's turn shares (src/engine/cli-engine.ts): reading the engine's
 * line-oriented output file, and the part of a turn's error that the process outcome alone decides.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { describeFailure, maxStreamBytes, truncationError, type ProcResult } from './proc.js';
import type { EngineError } from './types.js';

/**
 * Feeds every line of `file` to `push`, streaming (any size, bounded memory per line), from
 * byte `start` on (default 0). A missing file has no lines.
 */
export async function feedLines(file: string, push: (line: string) => void, start = 0): Promise<void> {
  let stream;
  try {
    stream = createReadStream(file, { encoding: 'utf8', start });
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
