import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PINNED } from '../setup/engines.js';
import { runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ENGINES = Object.keys(PINNED);

describe('one run across every engine (real binaries, scripted model, offline)', () => {
  it(`runs the Claude Code example on ${ENGINES.join(', ')} with --baseline: each shows the skill activation only in with_skill`, async () => {
    const out = join(tmpdir(), 'matrix-out');
    const r = await runCli([
      'run', join(ROOT, 'examples/brand-guidelines'),
      '--engine', ENGINES.join(','), '--baseline',
      '--case', 'brand-palette', '--case', 'heading-font',
      '--output-dir', out,
    ]);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    expect(doc.engines.map((e: { name: string }) => e.name)).toEqual(ENGINES);
    expect(doc.jobs).toHaveLength(ENGINES.length * 2 * 2);
    for (const engine of ENGINES) {
      const jobs = doc.jobs.filter((j: { engine: string }) => j.engine === engine);
      for (const j of jobs) {
        // Job folders are per engine: <engine>/<case>/<variant>/run-k.
        expect(j.output_dir.startsWith(`${engine}/`)).toBe(true);
        if (j.variant === 'with_skill') {
          expect(j.status, `${j.id}: ${j.reason ?? JSON.stringify(j.assertions)}`).toBe('pass');
          expect(j.skill_activations.map((a: { skill: string }) => a.skill)).toContain('brand-guidelines');
        } else {
          expect(j.status, `${j.id}: ${j.reason ?? ''}`).toBe('fail');
          expect(j.skill_activations).toEqual([]);
          expect(j.skills_installed).toEqual([]);
        }
      }
      expect(r.stdout).toContain(`${engine} uplift: +100 points`);
    }
    // Per-engine comparison in the stats block.
    expect(doc.summary.uplift.map((u: { engine: string }) => u.engine)).toEqual(ENGINES);
  }, 900_000);
});
