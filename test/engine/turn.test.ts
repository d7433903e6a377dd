import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProcResult } from '../../src/engine/proc.js';
import { feedLines, processError } from '../../src/engine/turn.js';

const ran: ProcResult = { exitCode: 0, timedOut: false, cancelled: false, durationMs: 5, stdoutBytes: 0, stderrBytes: 0 };

describe('processError', () => {
  it('classifies a failed start by its system error code, then timeout, then cancel', () => {
    expect(processError({ ...ran, exitCode: null, startError: 'command not found: x', startErrorCode: 'ENOENT' }, 1000, '')?.kind).toBe('missing');
    expect(processError({ ...ran, exitCode: null, startError: 'permission denied', startErrorCode: 'EACCES' }, 1000, '')?.kind).toBe('missing');
    expect(processError({ ...ran, exitCode: null, startError: 'x: spawn E2BIG', startErrorCode: 'E2BIG' }, 1000, '')?.kind).toBe('crash');
    expect(processError({ ...ran, exitCode: null, timedOut: true }, 1500, '')).toEqual({ kind: 'timeout', message: 'timed out after 1.5 s (process group killed)' });
    expect(processError({ ...ran, exitCode: null, cancelled: true }, 1000, '')?.kind).toBe('cancelled');
    expect(processError({ ...ran, exitCode: 3 }, 1000, 'boom')).toBeUndefined();
  });
});

describe('feedLines', () => {
  it('streams every line, including a last one without a newline, and treats a missing file as empty', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'su-lines-')), 'out.jsonl');
    writeFileSync(file, 'a\r\nb\n\nc');
    const lines: string[] = [];
    await feedLines(file, (l) => lines.push(l));
    expect(lines).toEqual(['a', 'b', '', 'c']);
    const none: string[] = [];
    await feedLines(join(file, '..', 'nope'), (l) => none.push(l));
    expect(none).toEqual([]);
  });
});
