/** The `config/` stage: eval.yaml and case files → a validated `Suite`. */
export { loadSuite, resolveEvalFile, skillRootOf, type LoadOptions, type LoadResult, type InvalidCase } from './load.js';
export { ConfigError, DiagnosticBag, formatDiagnostic, type Diagnostic } from './diagnostics.js';
export { schemaPath } from './schema.js';
export { BUILTIN_ENGINES, ENGINE_ALIASES, canonicalEngineName } from './engines.js';
export type * from './types.js';
