/**
 * Writes what `convertEvals` produced (mode `files`): eval.yaml, `cases/eval-<id>.yaml`, and
 * the fixture folders of evals whose input files cannot be inlined. Nothing existing is
 * overwritten unless asked.
 */
import { existsSync } from 'node:fs';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Converted } from './convert.js';

/** Thrown when a file to write already exists and `force` is off; the message lists them. */
export class ImportConflict extends Error {}

/**
 * Writes the converted suite. Returns the absolute paths written (fixture folders once each).
 * @throws ImportConflict when eval.yaml (or eval.yml), a case file or a fixture folder exists and `force` is false.
 */
export async function writeImported(c: Converted, opts: { force?: boolean } = {}): Promise<string[]> {
  const outDir = path.dirname(c.evalFile);
  const fixtureDirs = [...new Set(c.copies.map((x) => fixtureRoot(x.to, outDir)))];
  const targets = [c.evalFile, path.join(outDir, 'eval.yml'), ...c.cases.map((x) => x.file), ...fixtureDirs];
  const existing = targets.filter((t) => existsSync(t));
  if (existing.length && !opts.force) {
    const list = existing.map((e) => path.relative(process.cwd(), e) || e).join(', ');
    throw new ImportConflict(`would overwrite ${list}; pass --force to replace, or --output another folder`);
  }
  const written: string[] = [];
  await mkdir(outDir, { recursive: true });
  await writeFile(c.evalFile, c.evalText);
  written.push(c.evalFile);
  for (const k of c.cases) {
    await mkdir(path.dirname(k.file), { recursive: true });
    await writeFile(k.file, k.text);
    written.push(k.file);
  }
  for (const x of c.copies) {
    await mkdir(path.dirname(x.to), { recursive: true });
    await cp(x.from, x.to, { recursive: true, force: true, preserveTimestamps: true });
  }
  written.push(...fixtureDirs);
  return written;
}

/** `<outDir>/fixtures/<case>` of a copy target. */
function fixtureRoot(to: string, outDir: string): string {
  const rel = path.relative(path.join(outDir, 'fixtures'), to).split(path.sep);
  return path.join(outDir, 'fixtures', rel[0]!);
}
