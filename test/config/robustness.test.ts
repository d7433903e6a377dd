/**
 * Bad input never escapes as anything but a ConfigError: every value of the valid fixture
 * suite, in turn, is replaced by a value of each wrong kind (null, a string, a number, a
 * list, a map), and loading must either succeed or throw ConfigError with located errors.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/diagnostics.js';
import { loadSuite } from '../../src/config/load.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixture = path.join(here, 'fixtures', 'valid', 'hello-skill');

type Path = (string | number)[];

function allPaths(value: unknown, at: Path = []): Path[] {
  const out: Path[] = at.length ? [at] : [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...allPaths(v, [...at, i])));
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...allPaths(v, [...at, k]));
  return out;
}

function setAt(doc: unknown, p: Path, value: unknown): unknown {
  const copy = structuredClone(doc) as Record<string | number, unknown>;
  let node = copy;
  for (const seg of p.slice(0, -1)) node = node[seg] as Record<string | number, unknown>;
  node[p[p.length - 1]!] = value;
  return copy;
}

const WRONG: unknown[] = [null, 'x', 7, [], {}];

describe.each(['evals/eval.yaml', 'evals/cases/python.yaml', 'evals/cases/multi-turn.yaml'])('every value of %s, replaced', (rel) => {
  it('loads or throws ConfigError, never anything else', { timeout: 120_000 }, async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'skill-up-robust-')), 'hello-skill');
    cpSync(fixture, dir, { recursive: true });
    const file = path.join(dir, rel);
    const original = parse(readFileSync(file, 'utf8')) as unknown;
    let configErrors = 0;
    for (const p of allPaths(original)) {
      for (const value of WRONG) {
        writeFileSync(file, stringify(setAt(original, p, value)));
        try {
          await loadSuite(dir, { cwd: dir });
        } catch (e) {
          if (!(e instanceof ConfigError)) throw new Error(`${rel} ${JSON.stringify(p)} = ${JSON.stringify(value)}: ${(e as Error).stack}`, { cause: e });
          const errors = e.diagnostics.filter((d) => d.severity === 'error');
          expect(errors.length, `${JSON.stringify(p)} = ${JSON.stringify(value)}`).toBeGreaterThan(0);
          // Every error of this single-value mutation points at a real line.
          for (const d of errors) expect(d.line, `${d.message} (${JSON.stringify(p)})`).toBeGreaterThan(0);
          configErrors++;
        }
      }
    }
    expect(configErrors).toBeGreaterThan(0);
  });
});
