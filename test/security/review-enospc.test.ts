/**
 * Review finding 1: a full disk at report time. Every report write is checked (each write,
 * the fsync, the close); a report that could not be written is never announced with
 * `wrote …`, leaves no empty file and no `*.tmp-*` behind, and makes the run exit 3 with one
 * `error:` line per report.
 *
 * The disk is a real 5 MB tmpfs, so these tests need root and a working `mount` (CI runs as
 * root); they are skipped otherwise.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeDocReports, writeResultFile } from '../../src/report/write.js';
import type { ResultDoc } from '../../src/report/result-json.js';
import { runCli, writeSkill } from '../cli/helpers.js';

/** Mounts a fresh tmpfs of `size` and returns its path, or undefined when that is not possible. */
function tmpfs(size: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'su-enospc-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    return undefined;
  }
}

const mounts: string[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
});

const CAN_MOUNT = (() => {
  const m = tmpfs('1m');
  if (!m) return false;
  execFileSync('umount', [m]);
  return true;
})();

/** Fills the file system holding `dir` until ENOSPC. */
function fill(dir: string): void {
  try {
    execFileSync('sh', ['-c', `head -c 100000000 /dev/zero > "${dir}/filler" 2>/dev/null`], { stdio: 'ignore' });
  } catch {
    /* ENOSPC: what we want */
  }
}

/** Every path under `dir` (relative). */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      out.push(r);
      if (e.isDirectory()) walk(join(d, e.name), r);
    }
  };
  walk(dir, '');
  return out;
}

describe.skipIf(!CAN_MOUNT)('reports on a full disk (real tmpfs)', () => {
  it('writeResultFile rejects with ENOSPC and leaves neither result.json nor a temp file', async () => {
    const dir = tmpfs('5m')!;
    mounts.push(dir);
    fill(dir);
    const doc = { schema_version: 'x', jobs: [{ id: 'a', text: 'y'.repeat(100_000) }] } as unknown as ResultDoc;
    await expect(writeResultFile(join(dir, 'result.json'), doc)).rejects.toMatchObject({ code: 'ENOSPC' });
    expect(tree(dir)).toEqual(['filler']);
  });

  it('writeDocReports lists every format it could not write and writes none of them', async () => {
    const dir = tmpfs('5m')!;
    mounts.push(dir);
    fill(dir);
    const doc = { schema_version: 'x', jobs: [] } as unknown as ResultDoc;
    const r = await writeDocReports(dir, doc, ['json', 'junit', 'markdown']).catch((e) => e);
    // The builders may fail on this minimal doc; what matters: nothing announced, nothing left.
    if (!(r instanceof Error)) {
      expect(r.written).toEqual([]);
      expect(r.skipped.map((s: { format: string }) => s.format)).toEqual(['json', 'junit', 'markdown']);
    }
    expect(tree(dir)).toEqual(['filler']);
  });

  it('a run whose agent fills the disk after answering exits 3, prints no `wrote` line, leaves no empty or temp report', async () => {
    const out = tmpfs('5m')!;
    mounts.push(out);
    const skill = writeSkill({
      'evals/agent.sh': ['#!/usr/bin/env bash', 'echo "the answer"', 'head -c 100000000 /dev/zero > "$1/filler" 2>/dev/null', 'exit 0'].join('\n'),
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'environment: { type: none }',
        'engine:',
        '  name: filler',
        '  custom:',
        '    transport: local',
        '    response_format: text',
        '    local: { command: ./evals/agent.sh, args: ["${output_dir}"] }',
        'report: { formats: [junit, markdown, html] }',
        'cases:',
        '  inline:',
        '    - id: one',
        '      input: { turns: [{ content: hi }] }',
        '      judges: [{ id: ans, type: rule_based, success: [{ output_contains: { all: ["answer"] } }] }]',
      ].join('\n'),
    });
    const r = await runCli(['run', skill, '--output-dir', out]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).not.toMatch(/wrote .*result\.json/);
    const files = tree(out);
    expect(files.filter((f) => /\.tmp-/.test(f)), files.join('\n')).toEqual([]);
    for (const f of files) {
      if (/(result\.json|report\.xml|summary\.md|report\.html)$/.test(f)) expect(statSync(join(out, f)).size, f).toBeGreaterThan(0);
    }
    // One error line per report that could not be written (result.json at least).
    expect(r.stderr).toMatch(/error: (report format `json` not written|cannot write the reports)/);
  }, 120_000);

  it('`skill-up report` with no --format on a full disk exits 3 with error lines (a refused write is never a note)', async () => {
    const skill = writeSkill({
      'evals/agent.sh': ['#!/usr/bin/env bash', 'echo "the answer"', 'exit 0'].join('\n'),
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'environment: { type: none }',
        'engine:',
        '  name: plain',
        '  custom:',
        '    transport: local',
        '    response_format: text',
        '    local: { command: ./evals/agent.sh }',
        'cases:',
        '  inline:',
        '    - id: one',
        '      input: { prompt: hi }',
        '      judges: [{ id: ans, type: rule_based, success: [{ output_contains: { all: ["answer"] } }] }]',
      ].join('\n'),
    });
    const done = mkdtempSync(join(tmpdir(), 'su-enospc-src-'));
    const first = await runCli(['run', skill, '--output-dir', done]);
    expect(first.code, first.stderr).toBe(0);
    const disk = tmpfs('5m')!;
    mounts.push(disk);
    cpSync(join(done, 'iteration-1'), join(disk, 'it'), { recursive: true });
    fill(disk);
    const r = await runCli(['report', join(disk, 'it')]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^error: \w+ not written: could not be written: .*ENOSPC/m);
    expect(r.stderr).not.toMatch(/^note: .*ENOSPC/m);
  }, 120_000);
});

describe('reports: a failing write is never announced (no mount needed)', () => {
  it('writeResultFile into a missing folder rejects and creates nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-wrf-'));
    await expect(writeResultFile(join(dir, 'gone', 'result.json'), { jobs: [] } as unknown as ResultDoc)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('writeResultFile writes exactly JSON.stringify(doc, null, 2) + newline', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-wrf-'));
    mkdirSync(join(dir, 'x'));
    writeFileSync(join(dir, 'x', 'keep'), '');
    const doc = { a: 1, jobs: [{ id: 'j', n: [1, 2] }, { id: 'k' }], z: { q: 'w' } } as unknown as ResultDoc;
    await writeResultFile(join(dir, 'result.json'), doc);
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(join(dir, 'result.json'), 'utf8')).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(existsSync(join(dir, 'x', 'keep'))).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['result.json', 'x']);
  });
});
