/**
 * The CLI's start: checks the open-file limit, guards stdout/stderr against EPIPE, installs the
 * console redactor and runs {@link main}, setting the exit code. Called by the ES module entry
 * (src/cli/bin.ts) and by the bundle the executable loads (src/cli/skill-up.cts, scripts/bundle.mjs).
 */
// Only this small module is loaded before the open-file limit is checked: the rest of skill-up
// is imported below, once it is known to fit (Node's loader opens its modules concurrently).
import { openFileLimit, RESERVED_FDS } from '../run/limits.js';

/** Runs the CLI on `process.argv`; resolves once the command has been started (it sets `process.exitCode` when done). */
export async function start(): Promise<void> {
  // Below this many open files, loading skill-up's modules fails with EMFILE (measured: 63; see
  // src/run/limits.ts). Say so in one line instead of an internal error. `SKILL_UP_FD_CHECK=0`
  // turns the check off, as it does the run's.
  if (process.env.SKILL_UP_FD_CHECK !== '0') {
    const limit = openFileLimit();
    if (limit !== undefined && limit < RESERVED_FDS) {
      // Written before leaving: a pipe may be asynchronous (macOS).
      await new Promise((done) => process.stderr.write(`skill-up needs at least ${RESERVED_FDS} open files (ulimit -n is ${limit}); raise it with \`ulimit -n 1024\`\n`, done));
      process.exit(3);
    }
  }

  // `skill-up run … | head` closes the pipe early: the run must go on and write its reports,
  // not die of EPIPE on the next line of progress.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
    });
  }

  const [{ main }, { installConsoleRedaction, redactor }] = await Promise.all([import('./main.js'), import('../util/redact.js')]);

  // Every line skill-up prints passes the redactor: secrets of its environment now, the suite's
  // once it is loaded (src/engine/env.ts prepareSuiteEnv).
  redactor();
  installConsoleRedaction();

  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
      // Whatever handle might linger (a stuck socket), the command is done: leave within a second.
      setTimeout(() => process.exit(code), 1000).unref();
      // Leave as soon as what was printed is out, rather than when the event loop has drained:
      // Node's own teardown of the heap cost a one-job run 10-20 ms (issue 13). Every command
      // awaits its work before it returns (a server command returns when it is stopped).
      void printed().then(() => process.exit(code));
    },
    (e) => {
      process.stderr.write(`skill-up: internal error: ${(e as Error).stack ?? e}\n`);
      process.exitCode = 3;
    },
  );
}

/** Resolves once stdout and stderr hold nothing unwritten (at once for a file or a TTY, and for pipes on Linux, where writes are synchronous). */
function printed(): Promise<void> {
  const pending = [process.stdout, process.stderr].filter((s) => s.writableLength > 0 && !s.destroyed);
  return Promise.all(pending.map((s) => new Promise<void>((done) => s.once('drain', done).once('close', done).once('error', () => done())))).then(() => undefined);
}
