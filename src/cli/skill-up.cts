#!/usr/bin/env node
/**
 * The `skill-up` executable: what the `skill-up` command (bin/skill-up, package.json `bin`)
 * runs, and runnable as it is (`node dist/src/cli/skill-up.cjs`). It first takes back
 * `NODE_EXTRA_CA_CERTS`, which the launcher keeps from Node's start (src/cli/extra-ca.cts).
 * CommonJS on purpose: Node's ES module loader reads its modules through libuv's thread pool,
 * which is created at its first use with UV_THREADPOOL_SIZE threads, so the variable only takes
 * effect when set before any ES module is loaded (measured: an ESM entry that sets it still gets
 * the default 4 threads). Parallel jobs do many small file operations at once and queue on 4
 * threads; this sets 16 (unless the user chose a size), then runs the CLI from its bundle with a
 * code cache (src/cli/bundle-loader.cts), or from the ES module entry, src/cli/bin.ts, when
 * there is none.
 */
// The loaders use only built-in modules and synchronous reads: nothing starts the pool before UV_THREADPOOL_SIZE is set.
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runBundle } from './bundle-loader.cjs';
import { adoptExtraCaCerts, trustExtraCaCertsNow } from './extra-ca.cjs';

adoptExtraCaCerts();
process.env.UV_THREADPOOL_SIZE ??= '16';
// V8 doubles its young generation (to 2 × 16 MB) whenever a scavenge finds many survivors, which
// a run's steady stream of job records does: measured on 200 jobs, peak RSS 115 MB with the
// growth, 91 MB without, at no cost in wall time. `--max-semi-space-size` is read only when the
// heap is made, but the growth factor is read at each growth, so it can still be set here.
setFlagsFromString('--semi-space-growth-factor=1');
// A function is optimised by TurboFan (on V8's worker threads) once it has run for V8's
// "interrupt budget" of bytecode (132 KB by default). A run's per-job code is glue around system
// calls, which the optimising compiler barely speeds up while its compiles were a tenth of a
// 200-job run's CPU; eight times the budget leaves them to the loops that are really hot (report
// rendering over thousands of jobs). Measured on 200 no-op jobs, 8 alternating rounds: skill-up's
// CPU 0.68 -> 0.59 s (issue 13). Read at each function's next budget check, so it can be set here.
setFlagsFromString('--interrupt-budget=1048576');
// The bundle's import() of a package is this file's: vm.Script code has no import() of its own.
if (!runBundle(join(__dirname, 'skill-up.bundle.cjs'), (specifier) => import(specifier))) {
  // The ES modules' `import`s of node:https pass no CommonJS hook: their trust goes in now (7–9 ms, on a path 90 ms slower anyway).
  trustExtraCaCertsNow();
  void import('./bin.js');
}
