/**
 * Progress display. On a TTY: one live status line (done/total, pass/fail/error counts,
 * elapsed, the jobs running now) redrawn at most 10 times a second on stderr. Elsewhere:
 * one plain line per finished job, which CI logs keep readable.
 */
import type { Job } from '../plan/plan.js';
import type { ProgressSink } from './run.js';
import type { JobResult } from './types.js';
import { redact, secretValues } from '../report/redact.js';
import { cutText, oneLine } from '../util/cut.js';

/** Counts shown by the display. */
interface Counts {
  pass: number;
  fail: number;
  error: number;
  skipped: number;
}

/** Creates the display for `total` jobs writing to `out` (default stderr). */
export function createProgress(total: number, out: NodeJS.WriteStream = process.stderr): ProgressSink & { stop(): void } {
  const tty = Boolean(out.isTTY) && process.env.CI === undefined;
  // An engine's error text can quote its environment: no secret value reaches the console.
  const secrets = secretValues();
  const started = Date.now();
  const counts: Counts = { pass: 0, fail: 0, error: 0, skipped: 0 };
  const running = new Set<string>();
  let done = 0;
  let timer: NodeJS.Timeout | undefined;
  const width = () => Math.max(40, (out.columns ?? 100) - 1);
  const line = () => {
    const secs = ((Date.now() - started) / 1000).toFixed(0);
    const head = `[${done}/${total}] ${counts.pass} pass · ${counts.fail} fail · ${counts.error} error · ${secs}s`;
    const now = running.size ? `  running: ${[...running].slice(0, 3).join(', ')}${running.size > 3 ? ` +${running.size - 3}` : ''}` : '';
    return cutText(head + now, width());
  };
  const draw = () => out.write(`\r\x1b[2K${line()}`);
  if (tty) timer = setInterval(draw, 250).unref();
  return {
    jobStarted(job: Job) {
      running.add(job.id);
      if (tty) draw();
    },
    jobFinished(job: Job, r: JobResult) {
      running.delete(job.id);
      done++;
      counts[r.status]++;
      const secs = (r.durationMs / 1000).toFixed(1);
      const why = r.status === 'pass' ? '' : ` — ${firstProblem(r, secrets)}`;
      const text = `${r.status.toUpperCase().padEnd(5)} ${job.id} (${secs}s)${why}`;
      if (tty) {
        if (r.status !== 'pass') out.write(`\r\x1b[2K${cutText(text, width())}\n`);
        draw();
      } else {
        out.write(`[${done}/${total}] ${text}\n`);
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      if (tty) out.write(`\r\x1b[2K`);
    },
  };
}

/** Longest problem shown after a job's progress line, in UTF-16 units. */
const PROBLEM_CHARS = 160;

/** The ` (stderr: <file> in the … folder)` a crash's reason ends with (src/engine/proc.ts describeFailure). */
const STDERR_REF = / \(stderr: [^()]+\)$/;
/** Longest such reference kept whole after the problem (a job id is at most a few path segments). */
const MAX_REF_CHARS = 200;

/**
 * An error's reason, else the first failed assertion (else the reason), on one line of at most
 * {@link PROBLEM_CHARS} units, a cut ending in `…` (src/util/cut.ts), then, whole and on top of
 * that budget, the closing ` (stderr: …)` reference of a crash's reason, so the file holding the
 * whole text is always named. With `secrets`, their values are redacted BEFORE the cut, so a
 * secret straddling it is never shown in part.
 */
export function firstProblem(r: JobResult, secrets?: string[]): string {
  // An error's reason is why nothing was measured: it comes before any assertion that failed on the way.
  const failed = r.status === 'error' && r.reason ? undefined : r.assertions.find((a) => !a.passed);
  const text = failed ? `${failed.text}: ${failed.evidence}` : (r.reason ?? '');
  const one = oneLine(secrets ? redact(text, secrets) : text, Infinity);
  const ref = failed ? undefined : STDERR_REF.exec(one)?.[0];
  // The reference comes on top of the budget: the error line it follows matters as much.
  if (ref && ref.length <= MAX_REF_CHARS) return cutText(one.slice(0, -ref.length), PROBLEM_CHARS) + ref;
  return cutText(one, PROBLEM_CHARS);
}
