/**
 * Watching the engine processes of a run from outside the adapters (`run -v` / `-vv`): the job
 * each process belongs to travels with the async call chain of the job (AsyncLocalStorage),
 * so `runProcess` can name it without any adapter passing it along.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What an observer hears about each engine (or judge script) process. */
export interface ProcessObserver {
  /** A process was started: its file, arguments and working folder; `job` is the job id when known. */
  spawned?(job: string | undefined, file: string, args: readonly string[], cwd: string): void;
  /** One line the process wrote to stderr (without its line break). */
  stderrLine?(job: string | undefined, line: string): void;
}

const scope = new AsyncLocalStorage<string>();
let observer: ProcessObserver | undefined;

/**
 * Runs `fn` with every process it starts attributed to job `id` (when an observer is installed:
 * only an observer asks; without one the job's chain goes untagged, since AsyncLocalStorage
 * turns on Node 20's promise hooks, a cost on every promise of the run, issue 13).
 */
export function withJob<T>(id: string, fn: () => Promise<T>): Promise<T> {
  return observer ? scope.run(id, fn) : fn();
}

/** The job id of the current call chain, if any. */
export function currentJob(): string | undefined {
  return scope.getStore();
}

/** Installs (or, with undefined, removes) the process observer. */
export function setProcessObserver(o: ProcessObserver | undefined): void {
  observer = o;
}

/** The installed observer, if any. */
export function processObserver(): ProcessObserver | undefined {
  return observer;
}
