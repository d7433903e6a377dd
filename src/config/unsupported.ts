/** alibaba/skill-up sections skill-up accepts but does not act on yet. */
import type { Field } from './yaml-source.js';

/**
 * `mcp` (an alibaba feature skill-up does not have yet) is accepted so alibaba files load; a
 * warning says it is ignored unless it is empty. (`user_simulator` is built: src/config/eval.ts, case.ts.)
 */
export function warnUnsupportedSections(owner: Field): void {
  for (const key of ['mcp']) {
    const f = owner.get(key);
    const empty = f.missing || (f.isMap() && f.entries().every(([, v]) => v.missing || (Array.isArray(v.value) && v.value.length === 0)));
    if (owner.has(key) && !empty) f.warn(`\`${key}\` is not supported yet; ignored`, 'key');
  }
}
