/**
 * The crash-safe journal: `journal.jsonl` in the iteration folder, one JSON line per record.
 * The first line is the run header (`type: "run"`: the suite, its hash, the plan and the
 * flags, everything `run --resume` and `report` need); then one `type: "job"` line per
 * finished job, and one `type: "resume"` line each time `run --resume` continues the run.
 *
 * Durability: the file is opened once; a line is written with one `write()` followed by
 * `fdatasync` before `append` resolves, so a job counts as recorded only once its line is on
 * disk, and a SIGKILL or a power loss leaves every recorded job readable. Lines that arrive
 * while a sync is under way are written together after it, with one `write()` and one
 * `fdatasync` (group commit): at parallelism 16 the jobs no longer queue behind one sync each. At worst the last line is torn:
 * readers skip it, and `Journal.reopen` cuts it off before appending. A job run again (by a
 * resume) gets a new line; readers take the last line per job id. Lines are redacted like
 * the reports (no credential value from the environment reaches the file).
 *
 * Cost, measured on ext4 (virtio disk, 2 cores), 1,000 job lines of 2.6 KB: 0.04 ms a line for
 * a plain write, 0.35–0.5 ms with fdatasync and redaction: under half a millisecond per job,
 * against jobs that take seconds.
 */
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { redactJson } from './events.js';
import { secretValues } from '../report/redact.js';
import type { JobResult } from './types.js';

/** First line of a journal. */
export interface JournalHeader {
  type: 'run';
  startedAt: string;
  [key: string]: unknown;
}

/** A line written when `run --resume` continues the run (src/run/resume.ts). */
export interface JournalResume {
  type: 'resume';
  at: string;
  [key: string]: unknown;
}

/** Appends records to a journal file. Writes are serialised so lines never interleave. */
export class Journal {
  /** Lines waiting for the next write, each with its caller's promise. */
  private queue: { line: Buffer; done: () => void; fail: (e: unknown) => void }[] = [];
  /** The write-and-sync loop while it runs. */
  private chain: Promise<void> = Promise.resolve();
  private writing = false;
  /** A write failed part-way: the next one starts on a line of its own. */
  private torn = false;
  private closed = false;
  private readonly secrets = secretValues();

  private constructor(
    readonly file: string,
    private readonly fh: FileHandle,
  ) {}

  /** Creates (truncates) the journal and writes its header line, synced with its folder entry. */
  static async create(file: string, header: JournalHeader): Promise<Journal> {
    const j = new Journal(file, await open(file, 'w'));
    await j.write(header);
    await syncDir(dirname(file));
    return j;
  }

  /**
   * Opens an existing journal for appending (a resume). A torn last line (no newline at the
   * end: the process died mid-write) is cut off first, so the next line starts a line of its own.
   */
  static async reopen(file: string): Promise<Journal> {
    const fh = await open(file, 'r+');
    try {
      const { size } = await fh.stat();
      const end = await lastNewline(fh, size);
      if (end < size) {
        await fh.truncate(end);
        await fh.datasync();
      }
    } finally {
      await fh.close();
    }
    return new Journal(file, await open(file, 'a'));
  }

  /** Appends one finished job; resolves when the line is on disk, rejects when it could not be written. */
  append(result: JobResult): Promise<void> {
    return this.write({ type: 'job', result });
  }

  /** Appends any other record (a `resume` line); resolves when it is on disk. */
  write(entry: { type: string; [key: string]: unknown }): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`journal ${this.file} is closed`));
    const line = Buffer.from(JSON.stringify(redactJson(entry, this.secrets)) + '\n');
    const written = new Promise<void>((done, fail) => this.queue.push({ line, done, fail }));
    if (!this.writing) {
      this.writing = true;
      this.chain = this.drain();
    }
    return written;
  }

  /** Writes and syncs the queued lines, a batch at a time, until none is left. Never rejects. */
  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0);
      const lines = batch.map((b) => b.line);
      // A line cut short by an earlier failure is ended first, so this batch's lines stay whole.
      if (this.torn) lines.unshift(Buffer.from('\n'));
      const buf = lines.length === 1 ? lines[0]! : Buffer.concat(lines);
      let off = 0;
      try {
        // One write() for the batch; the loop only matters on a short write (a full disk).
        while (off < buf.length) off += (await this.fh.write(buf, off, buf.length - off)).bytesWritten;
        await this.fh.datasync();
        this.torn = false;
        for (const b of batch) b.done();
      } catch (e) {
        // Disk full, I/O error: this batch's callers are told; later lines are still tried,
        // and flush/close never throw for it.
        if (off > 0) this.torn = true;
        for (const b of batch) b.fail(e);
      }
    }
    this.writing = false;
  }

  /** Resolves when every pending line is written. */
  flush(): Promise<void> {
    return this.chain;
  }

  /** Waits for pending lines, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.chain;
    } finally {
      await this.fh.close();
    }
  }
}

/** What {@link readJournal} recovers. */
export interface JournalContents {
  /** The first line, when it is a run header. */
  header?: JournalHeader;
  /** Every complete job line, in file order (a job run again appears again). */
  results: JobResult[];
  /** The last result per job id (what a reader uses), in order of each id's first line. */
  latest: Map<string, JobResult>;
  /** `resume` lines, in order. */
  resumes: JournalResume[];
  /** Lines that did not parse (a torn last line included). */
  badLines: number;
  /** The last line did not parse: the writer died mid-line. */
  tornTail: boolean;
}

/** Reads a journal back line by line (bounded by the results it holds), tolerating a torn last line. */
export async function readJournal(file: string): Promise<JournalContents> {
  const out: JournalContents = { results: [], latest: new Map(), resumes: [], badLines: 0, tornTail: false };
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let first = true;
  for await (const line of lines) {
    if (!line.trim()) continue;
    let entry: { type?: string; result?: JobResult } | undefined;
    try {
      entry = JSON.parse(line);
    } catch {
      entry = undefined;
    }
    const isFirst = first;
    first = false;
    out.tornTail = entry === undefined;
    if (!entry || typeof entry !== 'object') {
      out.badLines++;
      continue;
    }
    if (entry.type === 'run' && isFirst) out.header = entry as JournalHeader;
    else if (entry.type === 'resume') out.resumes.push(entry as JournalResume);
    else if (entry.type === 'job' && entry.result && typeof entry.result.id === 'string') {
      out.results.push(entry.result);
      // A Map keeps an id at the place of its first line: the order stays stable across resumes.
      out.latest.set(entry.result.id, entry.result);
    } else out.badLines++;
  }
  return out;
}

/** Offset just after the last `\n` of the file (0 when there is none). */
async function lastNewline(fh: FileHandle, size: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024);
  let pos = size;
  while (pos > 0) {
    const start = Math.max(0, pos - chunk.length);
    const { bytesRead } = await fh.read(chunk, 0, pos - start, start);
    const i = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (i >= 0) return start + i + 1;
    pos = start;
  }
  return 0;
}

/** fsyncs a folder, so a newly created file's entry survives a power loss (best effort: not every file system allows it). */
async function syncDir(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    /* not supported here */
  }
}
