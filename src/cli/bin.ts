#!/usr/bin/env node
/**
 * The ES module entry of the CLI (`node dist/src/cli/bin.js …`): the same start as the
 * executable's bundle (src/cli/skill-up.cts), from the unbundled modules.
 */
// libuv's thread pool size (UV_THREADPOOL_SIZE) is set by the executable, src/cli/skill-up.cts:
// here, in an ES module, it would come too late (the module loader has started the pool).
import { start } from './entry.js';

await start();
