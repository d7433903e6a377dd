/**
 * `run --max-cost USD`: before each job starts, the spent amount plus the estimates of the
 * running jobs plus the next job's estimate must stay within the budget; the first job that
 * would pass it stops the scheduling (running jobs finish, the rest are not run).
 *
 * A job's estimate is the mean cost of this run's finished attempts of the same engine and
 * variant, else of any finished attempt, else the previous iteration's mean (prior.ts), else
 * unknown: then one job runs alone to learn it. Engines without a cost (the scripted model,
 * or an engine whose jobs report none and whose model is not priced) are not counted, and
 * the budget says so once.
 */
import type { Job } from '../plan/plan.js';
import type { JobResult } from '../run/types.js';
import { priorMean, type CostPrior } from './prior.js';
import { usd } from './totals.js';

/** Options of {@link CostBudget}. */
export interface BudgetOptions {
  prior?: CostPrior | null;
  /** Engines on the scripted model: no cost, never counted. */
  scriptedEngines?: Iterable<string>;
  /** Every engine of the run (to say when none can be counted). */
  engines?: Iterable<string>;
  /** Engine id → display name, for messages. */
  names?: Map<string, string>;
  /** One line to stderr (once per fact). */
  log?: (line: string) => void;
}

/** The budget guard of one `skill-up run` (all its iterations). */
export class CostBudget {
  /** USD spent so far: every finished attempt's cost, reported or estimated (retries included). */
  spent = 0;
  /** Set once the budget refused a job: no job starts after that. */
  stopped = false;
  /** Jobs refused, per iteration folder (reset by {@link beginIteration}). */
  notRun: Job[] = [];
  private readonly costs = new Map<string, number[]>();
  private readonly all: number[] = [];
  private readonly running = new Set<Job>();
  private readonly scripted: Set<string>;
  /** Engines whose finished jobs had no cost (and none had one). */
  private readonly unpriced = new Set<string>();
  private readonly priced = new Set<string>();
  private waiters: (() => void)[] = [];
  private readonly said = new Set<string>();
  private readonly log: (line: string) => void;
  private readonly names: Map<string, string>;

  constructor(
    readonly maxUsd: number,
    private readonly opts: BudgetOptions = {},
  ) {
    this.scripted = new Set(opts.scriptedEngines ?? []);
    this.log = opts.log ?? ((l) => process.stderr.write(`${l}\n`));
    this.names = opts.names ?? new Map();
    const engines = [...(opts.engines ?? [])];
    if (this.scripted.size && engines.length && engines.every((e) => this.scripted.has(e))) {
      this.once('scripted', `--max-cost ${usd(maxUsd)}: the scripted model has no cost, so the budget cannot bind`);
    } else {
      for (const e of this.scripted) this.once(`scripted:${e}`, `--max-cost ${usd(maxUsd)}: ${this.name(e)} uses the scripted model (no cost): its jobs are not counted against the budget`);
    }
  }

  /** The reason recorded for the jobs this budget refused. */
  get reason(): string {
    return `--max-cost ${usd(this.maxUsd)} reached`;
  }

  /** Starts a new iteration folder: its not-run list starts empty (spent and learned costs carry over). */
  beginIteration(): void {
    this.notRun = [];
  }

  /** The expected cost of `job`; 0 for an engine without cost; null when nothing is known yet. */
  estimate(job: Pick<Job, 'engine' | 'variant'>): number | null {
    if (this.scripted.has(job.engine)) return 0;
    const own = this.costs.get(`${job.engine}\u0000${job.variant}`);
    if (own?.length) return mean(own);
    if (this.unpriced.has(job.engine)) return 0;
    if (this.all.length) return mean(this.all);
    return priorMean(this.opts.prior ?? null, job.engine, job.variant);
  }

  /**
   * Whether `job` may start. Resolves false (and records the job as not run) once the budget
   * is reached; waits while a first job runs alone to learn the cost; false on abort.
   */
  async admit(job: Job, signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      if (this.stopped) {
        this.notRun.push(job);
        return false;
      }
      const next = this.estimate(job);
      if (next === null) {
        if (this.running.size === 0) {
          this.running.add(job);
          return true; // nothing known yet: this job runs alone and teaches the cost per job
        }
        await this.nextRelease(signal);
        continue;
      }
      const committed = [...this.running].reduce((a, r) => a + (this.estimate(r) ?? 0), 0);
      if (next > 0 && this.spent + committed + next > this.maxUsd + 1e-12) {
        this.stopped = true;
        this.notRun.push(job);
        this.log(
          `${this.reason}: spent ${usd(this.spent)}${this.running.size ? ` + ${this.running.size} running job(s) ~${usd(committed)}` : ''} + the next job ~${usd(next)} would pass it; no new job starts${this.running.size ? ' (the running ones finish)' : ''}`,
        );
        return false;
      }
      this.running.add(job);
      return true;
    }
  }

  /** Counts one finished attempt (its cost already set: reported or estimated). */
  attempted(job: Pick<Job, 'engine' | 'variant'>, result: JobResult): void {
    if (result.costUsd !== undefined) {
      this.spent += result.costUsd;
      const k = `${job.engine}\u0000${job.variant}`;
      this.costs.set(k, [...(this.costs.get(k) ?? []), result.costUsd]);
      this.all.push(result.costUsd);
      this.priced.add(job.engine);
      this.unpriced.delete(job.engine);
      return;
    }
    // An attempt that never reached the engine says nothing about its cost.
    if (this.scripted.has(job.engine) || this.priced.has(job.engine) || result.turns.length === 0) return;
    this.unpriced.add(job.engine);
    this.once(`unpriced:${job.engine}`, `--max-cost ${usd(this.maxUsd)}: ${this.name(job.engine)} reported no cost and its model has no price in skill-up's table: its jobs are not counted against the budget`);
  }

  /** The job is over (or was never started): its slot's estimate is released. */
  released(job: Job): void {
    if (!this.running.delete(job)) return;
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private nextRelease(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private name(e: string): string {
    return this.names.get(e) ?? e;
  }

  private once(key: string, line: string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    this.log(line);
  }
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
