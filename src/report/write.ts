/**
 * Writes the reports of a run into its iteration folder, each scanned for secrets first.
 */
import { writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReportFormat } from '../config/types.js';
import type { JobResult } from '../run/types.js';
import { buildJunit } from './junit.js';
import { redact, secretValues } from './redact.js';
import { buildResultJson, type RunMeta } from './result-json.js';

/** Writes a file atomically (temp + rename) so a reader never sees half a report. */
async function put(file: string, text: string, secrets: string[]): Promise<void> {
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, redact(text, secrets));
  await rename(tmp, file);
}

/**
 * Writes `result.json` (always) and the other requested formats into `dir`.
 * Returns the paths written. Formats not built by this version are reported by the caller.
 */
export async function writeReports(dir: string, meta: RunMeta, results: JobResult[], formats: ReportFormat[]): Promise<string[]> {
  const secrets = secretValues();
  const written: string[] = [];
  const doc = buildResultJson(meta, results);
  await put(join(dir, 'result.json'), JSON.stringify(doc, null, 2) + '\n', secrets);
  written.push(join(dir, 'result.json'));
  if (formats.includes('junit')) {
    await put(join(dir, 'report.xml'), buildJunit(meta.skill.name, results), secrets);
    written.push(join(dir, 'report.xml'));
  }
  return written;
}
