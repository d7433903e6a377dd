/**
 * The spawn helper's output sink (src/engine/spawn-helper.ts fileSink): what captureStream
 * writes an engine's stdout/stderr through in the helper, with direct system calls. The cap and
 * its marker line hold as with a WriteStream, a failing file (ENOSPC) is one 'error' and the
 * rest of the stream is still drained and counted, and the file is closed at the end.
 */
import * as fs from 'node:fs';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { captureStream, fileSink } from '../../src/engine/spawn-helper.js';

/** Feeds `chunks` into a stream captured through a fileSink on `fd`; the capture's outcome. */
async function capture(fd: number, chunks: (string | Buffer)[], cap: number, marker: boolean) {
  const stream = new PassThrough();
  const c = captureStream(stream, fileSink(fs, fd), cap, marker);
  let failure: Error | undefined;
  void c.failed.then((e) => (failure = e));
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  const total = await c.done;
  await new Promise((r) => setImmediate(r));
  return { total, failure };
}

describe('fileSink (the spawn helper writing engine output)', () => {
  it('keeps the first `cap` bytes, then the marker line, and counts every byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-sink-'));
    const file = join(dir, 'err.txt');
    const { total, failure } = await capture(openSync(file, 'w'), ['abc', Buffer.alloc(10, 'd'), 'tail'], 8, true);
    expect(failure).toBeUndefined();
    expect(total).toBe(17);
    expect(readFileSync(file, 'utf8')).toBe('abcddddd\n[skill-up: cut here at 8 bytes; the process wrote more, which was drained and counted]\n');
  });

  it('writes a stream under the cap whole, without a marker', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-sink-'));
    const file = join(dir, 'out.txt');
    const big = Buffer.alloc(200_000, 'x');
    const { total } = await capture(openSync(file, 'w'), [big, 'end'], 1_000_000, false);
    expect(total).toBe(200_003);
    expect(readFileSync(file, 'utf8')).toBe(`${big.toString()}end`);
  });

  it.runIf(fs.existsSync('/dev/full'))('a file that fails (ENOSPC) is one error; the stream is still drained and counted', async () => {
    const { total, failure } = await capture(openSync('/dev/full', 'w'), ['one', 'two', 'three'], 1000, false);
    expect((failure as NodeJS.ErrnoException)?.code).toBe('ENOSPC');
    expect(total).toBe(11);
  });

  it('closes the file at the end, once (a second end or destroy is harmless)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-sink-'));
    const fd = openSync(join(dir, 'f'), 'w');
    const sink = fileSink(fs, fd);
    sink.write('x');
    let ended = 0;
    sink.end(() => ended++);
    sink.end(() => ended++);
    sink.destroy();
    expect(ended).toBe(2);
    expect(readFileSync(join(dir, 'f'), 'utf8')).toBe('x');
  });
});
