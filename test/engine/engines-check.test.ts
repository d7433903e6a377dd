/**
 * `skill-up engines check` runs an engine's requirement checks, not only `--version`: OpenCode
 * without `rg` on PATH fails every job ("opencode needs ripgrep"), so `check` must fail too.
 * The built CLI (dist/, as a user runs it) and the real OpenCode binary the global set-up
 * installed (`SKILL_UP_OPENCODE_BIN`), with a PATH that holds node and, or not, `rg`.
 */
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOnPath } from '../../src/engine/resolve.js';
import { runCli } from '../cli/helpers.js';
import { PINNED } from '../setup/engines.js';

/** A folder holding only links to `node` and, when asked, to `rg`: a PATH of exactly those. */
async function pathWith(tools: { rg: boolean }): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'su-path-'));
  symlinkSync(process.execPath, join(dir, 'node'));
  if (tools.rg) {
    const rg = await findOnPath('rg');
    if (!rg) throw new Error('these tests need ripgrep (`rg`) on PATH');
    symlinkSync(rg, join(dir, 'rg'));
  }
  return dir;
}

describe('skill-up engines check opencode (built CLI, real binary)', () => {
  it('exits 1 with the ripgrep message when `rg` is not on PATH', async () => {
    expect(process.env.SKILL_UP_OPENCODE_BIN, 'the global set-up installs OpenCode').toBeTruthy();
    const r = await runCli(['engines', 'check', 'opencode'], { env: { PATH: await pathWith({ rg: false }) } });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^opencode: unavailable: opencode needs ripgrep \(`rg`\) on PATH/m);
    const json = await runCli(['engines', 'check', '--json', 'opencode'], { env: { PATH: await pathWith({ rg: false }) } });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ name: 'opencode', ok: false, message: expect.stringContaining('opencode needs ripgrep') })]);
  }, 60_000);

  it('exits 0 with the version when `rg` is there', async () => {
    const r = await runCli(['engines', 'check', 'opencode'], { env: { PATH: await pathWith({ rg: true }) } });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^opencode: ok ${PINNED.opencode!.replace(/\./g, '\\.')} `, 'm'));
  }, 60_000);
});
