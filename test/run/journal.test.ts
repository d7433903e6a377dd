import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal, readJournal } from '../../src/run/journal.js';
import { makeResult } from './helpers.js';

describe('journal', () => {
  it('keeps every appended job and survives a torn last line', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'su-journal-')), 'journal.jsonl');
    const j = await Journal.create(file, { type: 'run', startedAt: 'now', jobs: 3 });
    await Promise.all([j.append(makeResult({ id: 'a' })), j.append(makeResult({ id: 'b', status: 'fail' }))]);
    appendFileSync(file, '{"type":"job","result":{"id":"c"'); // a crash mid-write
    const back = await readJournal(file);
    expect(back.header?.jobs).toBe(3);
    expect(back.results.map((r) => [r.id, r.status])).toEqual([['a', 'pass'], ['b', 'fail']]);
  });
});
