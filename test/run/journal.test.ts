import { appendFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Journal, readJournal } from '../../src/run/journal.js';
import { makeResult } from './helpers.js';

const file = () => join(mkdtempSync(join(tmpdir(), 'su-journal-')), 'journal.jsonl');
const lines = (f: string) => readFileSync(f, 'utf8').split('\n').filter(Boolean);

describe('journal', () => {
  afterEach(() => {
    delete process.env.SU_JOURNAL_TEST_TOKEN;
  });

  it('keeps every appended job and survives a torn last line', async () => {
    const f = file();
    const j = await Journal.create(f, { type: 'run', startedAt: 'now', jobs: 3 });
    await Promise.all([j.append(makeResult({ id: 'a' })), j.append(makeResult({ id: 'b', status: 'fail' }))]);
    appendFileSync(f, '{"type":"job","result":{"id":"c"'); // a crash mid-write
    const back = await readJournal(f);
    expect(back.header?.jobs).toBe(3);
    expect(back.results.map((r) => [r.id, r.status])).toEqual([['a', 'pass'], ['b', 'fail']]);
    expect(back.tornTail).toBe(true);
    expect(back.badLines).toBe(1);
    await j.close();
  });

  it('has each line on disk, whole, once append resolves (no buffering in the process)', async () => {
    const f = file();
    const j = await Journal.create(f, { type: 'run', startedAt: 'now' });
    expect(lines(f)).toHaveLength(1);
    for (let i = 0; i < 5; i++) {
      await j.append(makeResult({ id: `job-${i}` }));
      // Read by another handle before close: what a SIGKILL at this moment would leave.
      const now = lines(f);
      expect(now).toHaveLength(i + 2);
      expect(JSON.parse(now.at(-1)!).result.id).toBe(`job-${i}`);
    }
    await j.close();
    await expect(j.append(makeResult({ id: 'late' }))).rejects.toThrow(/closed/);
  });

  it('reopen cuts off a torn last line, so the next line is whole; the last line per job id wins', async () => {
    const f = file();
    const j = await Journal.create(f, { type: 'run', startedAt: 'now', jobs: 2 });
    await j.append(makeResult({ id: 'a', status: 'error', reason: 'engine crashed' }));
    await j.append(makeResult({ id: 'b' }));
    await j.close();
    appendFileSync(f, '{"type":"job","res'); // power loss mid-line
    const again = await Journal.reopen(f);
    await again.write({ type: 'resume', at: 'later' });
    await again.append(makeResult({ id: 'a', status: 'pass' }));
    await again.close();
    for (const l of lines(f)) expect(() => JSON.parse(l)).not.toThrow();
    const back = await readJournal(f);
    expect(back.tornTail).toBe(false);
    expect(back.badLines).toBe(0);
    expect(back.results.map((r) => r.id)).toEqual(['a', 'b', 'a']);
    // The order is each id's first line; the result is its last.
    expect([...back.latest.values()].map((r) => [r.id, r.status])).toEqual([['a', 'pass'], ['b', 'pass']]);
    expect(back.resumes).toEqual([{ type: 'resume', at: 'later' }]);
  });

  it('reopens a file whose only line is torn (killed while writing the header) as empty', async () => {
    const f = file();
    writeFileSync(f, '{"type":"run","startedA');
    const j = await Journal.reopen(f);
    await j.close();
    expect(readFileSync(f, 'utf8')).toBe('');
  });

  it('has no header when the first line is not the run record', async () => {
    const f = file();
    writeFileSync(f, `${JSON.stringify({ type: 'job', result: makeResult({ id: 'a' }) })}\n${JSON.stringify({ type: 'run', startedAt: 'x' })}\nnot json\n${JSON.stringify({ type: 'job', result: makeResult({ id: 'b' }) })}\n`);
    const back = await readJournal(f);
    expect(back.header).toBeUndefined();
    // A garbled line in the middle is skipped; the lines after it are kept.
    expect(back.results.map((r) => r.id)).toEqual(['a', 'b']);
    expect(back.badLines).toBe(2);
    expect(back.tornTail).toBe(false);
  });

  it('never writes a credential value from the environment', async () => {
    process.env.SU_JOURNAL_TEST_TOKEN = 'journal-canary-0123456789';
    const f = file();
    const j = await Journal.create(f, { type: 'run', startedAt: 'now', argv: ['--x', 'journal-canary-0123456789'] });
    await j.append(makeResult({ id: 'a', finalMessage: 'the token is journal-canary-0123456789', reason: 'x "journal-canary-0123456789"' }));
    await j.close();
    const text = readFileSync(f, 'utf8');
    expect(text).not.toContain('journal-canary-0123456789');
    expect((await readJournal(f)).results[0]!.finalMessage).toBe('the token is [REDACTED]');
  });

  it('writes lines that arrive during a sync together (one write, one fdatasync), each append resolving only once its line is on disk', async () => {
    const f = file();
    const j = await Journal.create(f, { type: 'run', startedAt: 'now' });
    const probe = await open(f, 'r');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const datasync = vi.spyOn(proto, 'datasync');
    try {
      const ids = Array.from({ length: 30 }, (_, i) => `job-${i}`);
      const onDisk = await Promise.all(ids.map((id) => j.append(makeResult({ id })).then(() => readFileSync(f, 'utf8').includes(`"id":"${id}"`))));
      expect(onDisk.every(Boolean)).toBe(true);
      const got = await readJournal(f);
      expect(got.badLines).toBe(0);
      expect(got.results.map((r) => r.id)).toEqual(ids);
      expect(datasync.mock.calls.length).toBeLessThan(ids.length);
    } finally {
      vi.restoreAllMocks();
      await j.close();
    }
  });

  // Its speed (about 0.3-0.5 ms per synced line) is measured by `npm run bench` (journal).
  it('appends in constant work per line: one write of that line and one fdatasync, on the file opened once', async () => {
    const f = file();
    const j = await Journal.create(f, { type: 'run', startedAt: 'now' });
    // Every FileHandle shares this prototype: spying on it sees the journal's own handle.
    const probe = await open(f, 'r');
    const proto = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const write = vi.spyOn(proto, 'write');
    const datasync = vi.spyOn(proto, 'datasync');
    const sync = vi.spyOn(proto, 'sync');
    try {
      const r = makeResult({ id: 'a', finalMessage: 'x'.repeat(2000) });
      for (let i = 0; i < 40; i++) {
        const before = statSync(f).size;
        await j.append({ ...r, id: `job-${i}` });
        expect(write).toHaveBeenCalledTimes(i + 1);
        expect(datasync).toHaveBeenCalledTimes(i + 1);
        // The bytes written are this line only (nothing rewritten as the journal grows), and the file grew by exactly them.
        const line = write.mock.calls[i]![0] as unknown as Buffer;
        expect(line.toString()).toBe(`${lines(f)[i + 1]}\n`);
        expect(statSync(f).size - before).toBe(line.length);
      }
      expect(new Set(write.mock.contexts).size).toBe(1);
      expect(sync).not.toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
      await j.close();
    }
  });
});
