/**
 * `run -v` / `-vv` (alibaba/skill-up's verbosity flags), on stderr:
 *
 * - `-v`: each engine (and judge script) command line as it starts, `[<job id>] $ <command>`,
 *   and when a job ends its status, attempts, tokens, cost, reason and every assertion with
 *   its evidence (the plain progress line shows only the first problem);
 * - `-vv`: also every line the engine writes to stderr, `[<job id>] stderr: <line>`, as it comes.
 *
 * Secret values from the environment are redacted from every line, as in the reports.
 */
import type { Job } from '../plan/plan.js';
import { setProcessObserver, type ProcessObserver } from '../engine/observe.js';
import { redact, secretValues } from '../report/redact.js';
import { formatCost } from '../cost/totals.js';
import type { ProgressSink } from './run.js';
import type { JobResult } from './types.js';
import { oneLine as cutOneLine } from '../util/cut.js';

/** Longest argument or evidence shown whole; longer ones are cut. */
const MAX_PIECE = 300;

/** One shell word, quoted when needed, cut to MAX_PIECE characters. */
export function shellWord(s: string): string {
  const cut = s.length > MAX_PIECE ? `${s.slice(0, MAX_PIECE)}…` : s;
  return /^[\w@%+=:,./-]+$/.test(cut) ? cut : `'${cut.replace(/'/g, `'\\''`)}'`;
}

/** `s` on one line, at most `max` units, a cut ending in `…` and never inside a surrogate pair. */
function oneLine(s: string, max = MAX_PIECE): string {
  return cutOneLine(s, max);
}

/** The verbose output of one run. `install` hooks the process observer; `uninstall` removes it. */
export function createVerbose(level: number, out: NodeJS.WriteStream = process.stderr) {
  const secrets = secretValues();
  // On a live progress line, clear it first (the display redraws itself after).
  const clear = out.isTTY && process.env.CI === undefined ? '\r\x1b[2K' : '';
  const write = (line: string) => out.write(`${clear}${redact(line, secrets)}\n`);
  const observer: ProcessObserver = {
    spawned(job, file, args, cwd) {
      write(`[${job ?? 'run'}] $ ${[file, ...args].map(shellWord).join(' ')}   (in ${cwd})`);
    },
    ...(level >= 2 ? { stderrLine: (job: string | undefined, line: string) => write(`[${job ?? 'run'}] stderr: ${line}`) } : {}),
  };
  return {
    level,
    install(): void {
      setProcessObserver(observer);
    },
    uninstall(): void {
      setProcessObserver(undefined);
    },
    /** `inner` plus, at each job's end, its reason lines. */
    progress<P extends ProgressSink>(inner: P): P {
      const wrapped = Object.create(inner) as P;
      wrapped.jobStarted = (job: Job) => inner.jobStarted(job);
      wrapped.jobFinished = (job: Job, r: JobResult) => {
        inner.jobFinished(job, r);
        for (const l of reasonLines(r)) write(l);
      };
      return wrapped;
    },
  };
}

/** A finished job in full: status, attempts, time, tokens, cost, reason, then each assertion. */
export function reasonLines(r: JobResult): string[] {
  const tokens = r.usage.input + r.usage.output + r.usage.cacheRead + r.usage.cacheWrite;
  const cost = r.costUsd !== undefined ? `, ${formatCost({ usd: r.costUsd, estimated: Boolean(r.costEstimated) })}` : '';
  const lines = [`[${r.id}] ${r.status.toUpperCase()} (${(r.durationMs / 1000).toFixed(1)}s, ${r.attempts} attempt(s), ${tokens} tokens${cost})`];
  if (r.reason) lines.push(`  reason: ${oneLine(r.reason)}`);
  for (const t of r.turns) if (t.status !== 'completed') lines.push(`  turn ${t.index}: ${t.status}${t.reason ? ` (${oneLine(t.reason)})` : ''}`);
  for (const a of r.assertions) lines.push(`  ${a.passed ? '✓' : '✗'} ${oneLine(a.text, 160)}: ${oneLine(a.evidence)}`);
  return lines;
}
