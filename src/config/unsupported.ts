/** alibaba/skill-up sections skill-up accepts but does not act on yet. */
import type { Field } from './yaml-source.js';

/**
 * `mcp` and `user_simulator` (alibaba features skill-up does not have yet) are accepted so
 * alibaba files load; a warning says they are ignored unless they are empty.
 */
export function warnUnsupportedSections(owner: Field): void {
  for (const key of ['mcp', 'user_simulator']) {
    const f = owner.get(key);
    const empty = f.missing || (f.isMap() && f.entries().every(([, v]) => v.missing || (Array.isArray(v.value) && v.value.length === 0)));
    if (owner.has(key) && !empty) f.warn(`\`${key}\` is not supported yet; ignored`, 'key');
  }
}
