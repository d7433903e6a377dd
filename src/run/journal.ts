/**
 * The crash-safe journal: `journal.jsonl` in the iteration folder, one JSON line per event,
 * appended (and flushed by the OS on close of each write) as each job finishes. A run killed
 * at any point leaves every finished job's result on disk; `readJournal` recovers them.
 */
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import type { JobResult } from './types.js';

/** First line of a journal. */
export interface JournalHeader {
  type: 'run';
  startedAt: string;
  [key: string]: unknown;
}

/** Appends results to a journal file. Writes are serialised so lines never interleave. */
export class Journal {
  private chain: Promise<void> = Promise.resolve();

  private constructor(readonly file: string) {}

  /** Creates (truncates) the journal and writes its header line. */
  static async create(file: string, header: JournalHeader): Promise<Journal> {
    await writeFile(file, JSON.stringify(header) + '\n');
    return new Journal(file);
  }

  /** Appends one finished job; resolves when the line is written. */
  append(result: JobResult): Promise<void> {
    const line = JSON.stringify({ type: 'job', result }) + '\n';
    this.chain = this.chain.then(() => appendFile(this.file, line));
    return this.chain;
  }

  /** Resolves when every pending line is written. */
  flush(): Promise<void> {
    return this.chain;
  }
}

/** Reads a journal back: its header and every complete job line (a torn last line is ignored). */
export async function readJournal(file: string): Promise<{ header?: JournalHeader; results: JobResult[] }> {
  const text = await readFile(file, 'utf8');
  let header: JournalHeader | undefined;
  const results: JobResult[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let entry: { type?: string; result?: JobResult };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry.type === 'run') header = entry as JournalHeader;
    else if (entry.type === 'job' && entry.result) results.push(entry.result);
  }
  return { header, results };
}
