/**
 * CommonJS packages loaded with `require()`. Importing one from an ES module makes Node first
 * scan its source for export names (cjs-module-lexer), which costs more than the load itself
 * for large bundles (measured on Node 20, fresh process: junit-report-builder 115 ms by
 * `import`, 23 ms by `require`; handlebars/runtime 32 vs 10 ms; yaml 47 vs 36 ms).
 */
import { createRequire } from 'node:module';

/** `require` resolving from skill-up's own modules. Type the result with `import type * as Lib from 'pkg'` and `as typeof Lib`. */
export const requireCjs = createRequire(import.meta.url);
