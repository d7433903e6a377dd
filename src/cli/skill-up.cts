#!/usr/bin/env node
/**
 * The `skill-up` executable (package.json `bin`). CommonJS on purpose: Node's ES module loader
 * reads its modules through libuv's thread pool, which is created at its first use with
 * UV_THREADPOOL_SIZE threads, so the variable only takes effect when set before any ES module
 * is loaded (measured: an ESM entry that sets it still gets the default 4 threads). Parallel
 * jobs do many small file operations at once and queue on 4 threads; this sets 16 (unless the
 * user chose a size), then hands over to the ES module entry, src/cli/bin.ts.
 */
process.env.UV_THREADPOOL_SIZE ??= '16';
void import('./bin.js');
