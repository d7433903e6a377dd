#!/usr/bin/env node
// Writes the user-file schemas (schemas/*.schema.json) as ajv standalone code beside the
// compiled src/config/schema.js, so a run loads ready validators instead of compiling the
// schemas (100–250 ms) every time. Run by `npm run build` after tsc. The file carries a
// fingerprint of its inputs; src/config/schema.ts ignores it once the schemas change.
import { writeFileSync, renameSync } from 'node:fs';
import { GENERATED_VALIDATORS, standaloneValidatorsCode } from '../dist/src/config/schema.js';

const code = standaloneValidatorsCode();
// Written aside and renamed: a run starting meanwhile sees the old file or the new one, never half.
const tmp = `${GENERATED_VALIDATORS}.${process.pid}.tmp`;
writeFileSync(tmp, code);
renameSync(tmp, GENERATED_VALIDATORS);
process.stdout.write(`wrote ${GENERATED_VALIDATORS} (${code.length} bytes)\n`);
