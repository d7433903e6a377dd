/**
 * Temporary files of atomic writes (src/util/temp-files.ts): a process that exits while one
 * is being written (a second Ctrl-C exits at once) leaves none behind; a finished write's file
 * is not touched at exit.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../dist/src/util/temp-files.js', import.meta.url));

describe('temporary files of atomic writes', () => {
  it('a process that exits mid-write removes the listed temp files; a renamed one stays where it went', () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-temp-files-'));
    const pending = join(dir, 'report.html.tmp-1-a');
    const done = join(dir, 'summary.md.tmp-1-b');
    const renamed = join(dir, 'summary.md');
    const script = `
      const { writeFileSync, renameSync } = require('node:fs');
      import(${JSON.stringify(MODULE)}).then((m) => {
        writeFileSync(${JSON.stringify(pending)}, 'half');
        m.tempFileStarted(${JSON.stringify(pending)});
        writeFileSync(${JSON.stringify(done)}, 'whole');
        m.tempFileStarted(${JSON.stringify(done)});
        renameSync(${JSON.stringify(done)}, ${JSON.stringify(renamed)});
        m.tempFileDone(${JSON.stringify(done)});
        process.exit(130);
      });`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(130);
    expect(existsSync(pending)).toBe(false);
    expect(existsSync(renamed)).toBe(true);
  });
});
