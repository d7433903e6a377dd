#!/usr/bin/env node
/** The `skill-up` executable: runs the CLI and sets the exit code. */
import { main } from './main.js';
import { installConsoleRedaction, redactor } from '../util/redact.js';

// Parallel jobs do many small file operations at once; libuv's default pool of 4 threads
// queues them. It is created on first use, so this takes effect when set before any I/O.
process.env.UV_THREADPOOL_SIZE ??= '16';

// `skill-up run … | head` closes the pipe early: the run must go on and write its reports,
// not die of EPIPE on the next line of progress.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}

// Every line skill-up prints passes the redactor: secrets of its environment now, the suite's
// once it is loaded (src/engine/env.ts prepareSuiteEnv).
redactor();
installConsoleRedaction();

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Whatever handle might linger (a stuck socket), the command is done: leave within a second.
    setTimeout(() => process.exit(code), 1000).unref();
  },
  (e) => {
    process.stderr.write(`skill-up: internal error: ${(e as Error).stack ?? e}\n`);
    process.exitCode = 3;
  },
);
