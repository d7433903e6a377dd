import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ComparedDoc } from '../../src/compare/index.js';
import type { JobResult } from '../../src/run/types.js';
import { makeDoc, makeResult } from '../report/helpers.js';

type Status = JobResult['status'];
/** One case's trials: `P` pass, `F` fail, `E` error, `S` skipped (e.g. 'PPF'). */
export type Pattern = string;

const STATUS: Record<string, Status> = { P: 'pass', F: 'fail', E: 'error', S: 'skipped' };

/** The jobs of `cases` (case id → trial pattern) for one engine and variant. */
export function jobs(cases: Record<string, Pattern>, variant: 'with_skill' | 'without_skill' = 'with_skill', engine = 'custom'): JobResult[] {
  return Object.entries(cases).flatMap(([caseId, pattern]) =>
    [...pattern].map((ch, i) =>
      makeResult({
        id: `${engine}/${caseId}/${variant}/run-${i + 1}`,
        caseId,
        engine,
        variant,
        trial: i + 1,
        status: STATUS[ch]!,
        ...(ch === 'E' ? { reason: 'engine crashed' } : {}),
        outputDir: `${caseId}/${variant}/run-${i + 1}`,
      }),
    ),
  );
}

/** `n` cases named `case-1`… with the same pattern. */
export function uniform(n: number, pattern: Pattern, prefix = 'case'): Record<string, Pattern> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}-${i + 1}`, pattern]));
}

/** A result document of `results`, named `source`, as `loadResultDoc` would give it. */
export function doc(results: JobResult[], source = 'run/result.json', iteration = 1): ComparedDoc {
  return { doc: JSON.parse(JSON.stringify(makeDoc(results, { iteration }))), source };
}

/** Writes result.json of `results` into a new iteration folder; returns the folder. */
export function writeRun(results: JobResult[], iteration = 1): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'su-compare-')), `iteration-${iteration}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'result.json'), JSON.stringify(makeDoc(results, { iteration }), null, 2));
  return dir;
}
