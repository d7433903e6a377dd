/** Importing Anthropic skill-creator evals (`evals/evals.json`) into skill-up suites. */
export { readEvalsJson, parseEvalsJson, skillRootOfEvalsJson, type EvalsFile, type ImportedEval } from './evals-json.js';
export { convertEvals, evalHeader, INLINE_MAX_BYTES, type Converted, type ConvertOptions, type CaseOutput } from './convert.js';
export { writeImported, ImportConflict } from './write.js';
export { resolveAutoTarget, loadEvalsJsonSuite, type AutoTarget } from './auto.js';
