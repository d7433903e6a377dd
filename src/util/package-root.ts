/** Locates skill-up's package root (the folder holding its package.json), from source or dist. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/** Absolute path of the package root. @throws Error when no skill-up package.json is above this file. */
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = join(dir, 'package.json');
    if (existsSync(pj) && (JSON.parse(readFileSync(pj, 'utf8')) as { name?: string }).name === 'skill-up') return (cached = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error('skill-up package root not found');
    dir = up;
  }
}
