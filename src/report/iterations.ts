/**
 * The earlier runs of a suite: its iteration-N folders under the output root, newest first,
 * for what a new run learns from the last one (the flakiness behind `--dry-run`'s power
 * table, the cost per job behind its estimate and behind `--max-cost`).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ResultDoc } from './result-json.js';

/**
 * The first non-null `pick` over the readable result.json files of the iteration folders
 * under `outputRoot`, newest (highest N) first; null when the folder is missing or no
 * iteration gives anything. An unreadable iteration is passed over.
 */
export async function fromNewestIteration<T>(outputRoot: string, pick: (doc: ResultDoc, file: string, iteration: number) => T | null): Promise<T | null> {
  let names: string[];
  try {
    names = await readdir(outputRoot);
  } catch {
    return null;
  }
  const iterations = names
    .map((n) => ({ n, k: Number(/^iteration-(\d+)$/.exec(n)?.[1] ?? NaN) }))
    .filter((x) => Number.isInteger(x.k))
    .sort((a, b) => b.k - a.k);
  const { loadResultDoc } = await import('./load.js');
  for (const it of iterations) {
    try {
      const { doc, file } = await loadResultDoc(join(outputRoot, it.n));
      const got = pick(doc, file, it.k);
      if (got !== null) return got;
    } catch {
      // Not a readable run (or not one `pick` can use): try the one before.
    }
  }
  return null;
}
