/**
 * The comparison as JSON: the {@link Comparison} object with snake_case keys (as result.json),
 * tagged with `kind: "skill-up.compare"` and `version: 1`. Rates and points are fractions
 * (0.1 = 10 points); intervals are 95 %.
 */
import type { Comparison } from './compare.js';

/** Format version of the compare JSON. */
export const COMPARE_JSON_VERSION = 1;

/** camelCase keys → snake_case, recursively (the comparison holds no user-chosen keys). */
function snake(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snake);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`), snake(x)]));
  }
  return v;
}

/** The JSON document of a comparison (a plain object; `JSON.stringify` it). Pure. */
export function comparisonJson(c: Comparison): Record<string, unknown> {
  return { kind: 'skill-up.compare', version: COMPARE_JSON_VERSION, ...(snake(c) as Record<string, unknown>) };
}
