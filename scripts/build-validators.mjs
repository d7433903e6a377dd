#!/usr/bin/env node
// Writes the user-file schemas (schemas/*.schema.json) as ajv standalone code beside the
// compiled src/config/schema.js, so a run loads ready validators instead of compiling the
// schemas (100–250 ms) every time; and the result schema (schemas/result.schema.json) beside
// src/report/load.js, for every command that reads a result.json (report, compare, merge,
// regrade, a run reading an earlier iteration). Run by `npm run build` after tsc. Each file
// carries a fingerprint of its inputs; the module that reads it ignores it once they change.
import { writeFileSync, renameSync } from 'node:fs';
import { GENERATED_VALIDATORS, standaloneValidatorsCode } from '../dist/src/config/schema.js';
import { GENERATED_RESULT_VALIDATOR, resultValidatorCode } from '../dist/src/report/load.js';

for (const [file, code] of [
  [GENERATED_VALIDATORS, standaloneValidatorsCode()],
  [GENERATED_RESULT_VALIDATOR, resultValidatorCode()],
]) {
  // Written aside and renamed: a run starting meanwhile sees the old file or the new one, never half.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, code);
  renameSync(tmp, file);
  process.stdout.write(`wrote ${file} (${code.length} bytes)\n`);
}
