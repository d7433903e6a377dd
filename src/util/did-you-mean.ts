/**
 * The one did-you-mean of skill-up: the candidate a mistyped word (a key, a value, a flag, a
 * command) was most likely meant to be. Used by config, model-script and SKILL.md diagnostics
 * (src/config/schema-errors.ts) and by every command's argument parser (src/util/args.ts).
 * Kept free of other imports so the CLI's entry point can load it cheaply.
 */
import { closest, distance } from 'fastest-levenshtein';

/** How {@link nearest} compares. */
export interface NearestOptions {
  /**
   * Largest edit distance still taken for a typo. Default: a third of the candidate's length,
   * at least 2 (a short word allows few edits, a long one more).
   */
  maxDistance?: number | ((candidate: string) => number);
  /**
   * Compare case-insensitively and take `-`, `_` and a space for the same character, so
   * `allowed_tools` finds `allowed-tools` and `Must-Contain` finds `must_contain` at once.
   * Default true.
   */
  loose?: boolean;
}

const fold = (s: string) => s.trim().toLowerCase().replace(/[-_ ]/g, '_');

/**
 * The candidate `word` was most likely meant to be, or undefined when none is plausibly a
 * typo of it. An exact match after folding (see {@link NearestOptions.loose}) wins; otherwise
 * the Levenshtein-closest candidate within the distance limit. A word with no letter or digit
 * (empty, blanks, a bare `--`) is a typo of nothing: undefined, never the shortest candidate
 * (which is what an edit distance from nothing would pick: a key `""` → `id`).
 */
export function nearest(word: string, candidates: readonly string[], options: NearestOptions = {}): string | undefined {
  if (candidates.length === 0 || !/[\p{L}\p{N}]/u.test(word)) return undefined;
  const loose = options.loose ?? true;
  const norm = loose ? fold : (s: string) => s;
  const w = norm(word);
  const folded = candidates.map(norm);
  const exact = folded.indexOf(w);
  if (exact >= 0) return candidates[exact];
  const best = closest(w, folded);
  const index = folded.indexOf(best);
  const limitOf = options.maxDistance ?? ((c: string) => Math.max(2, Math.floor(c.length / 3)));
  const limit = typeof limitOf === 'number' ? limitOf : limitOf(best);
  return distance(w, best) <= limit ? candidates[index] : undefined;
}

/** "; did you mean `x`?" for the {@link nearest} candidate, or the empty string. */
export function didYouMean(word: string, candidates: readonly string[], options?: NearestOptions): string {
  const near = nearest(word, candidates, options);
  return near === undefined ? '' : `; did you mean \`${near}\`?`;
}
