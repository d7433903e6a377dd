/**
 * Partial matching of tool-call arguments for `tool_called` / `tool_called_in_turn`.
 *
 * Every key given in the expectation must match the call's argument of that key:
 * - a string matches an equal string, or a string that ENDS WITH it (so `path: hello.py`
 *   matches an engine's absolute `/tmp/ws/hello.py`);
 * - numbers, booleans and null match strictly (same type and value);
 * - objects match recursively and partially (keys absent from the expectation are ignored);
 * - arrays match element-wise and must have the same length.
 * Keys of the actual arguments not named in the expectation are ignored. When the engine
 * reports the arguments as a JSON string, it is parsed first.
 */
import { jsonClip } from './evidence.js';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A JSON-encoded object or array given as a string is decoded; anything else is returned as is. */
export function decodeArgs(actual: unknown): unknown {
  if (typeof actual === 'string') {
    const t = actual.trim();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return JSON.parse(t) as unknown;
      } catch {
        /* not JSON */
      }
    }
  }
  return actual;
}

/**
 * Returns undefined when `actual` matches `expected`, else a short description of the first
 * mismatch, e.g. `path: expected "hello.py", got "/ws/main.py"`.
 */
export function argsMismatch(expected: unknown, actual: unknown, at = ''): string | undefined {
  const where = at === '' ? 'arguments' : at;
  if (typeof expected === 'string') {
    if (typeof actual === 'string' && (actual === expected || actual.endsWith(expected))) return undefined;
    return `${where}: expected ${jsonClip(expected, 120)}, got ${jsonClip(actual, 120)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${where}: expected an array, got ${jsonClip(actual, 120)}`;
    if (actual.length !== expected.length) return `${where}: expected ${expected.length} elements, got ${actual.length}`;
    for (let i = 0; i < expected.length; i++) {
      const m = argsMismatch(expected[i], actual[i], `${where}[${i}]`);
      if (m) return m;
    }
    return undefined;
  }
  if (isPlainObject(expected)) {
    const obj = at === '' ? decodeArgs(actual) : actual;
    if (!isPlainObject(obj)) return `${where}: expected an object, got ${jsonClip(obj, 120)}`;
    for (const [k, v] of Object.entries(expected)) {
      if (!(k in obj)) return `${at === '' ? k : `${at}.${k}`}: missing`;
      const m = argsMismatch(v, obj[k], at === '' ? k : `${at}.${k}`);
      if (m) return m;
    }
    return undefined;
  }
  // number, boolean, null (and anything else): strict equality, types included.
  if (actual === expected) return undefined;
  return `${where}: expected ${jsonClip(expected, 120)}, got ${jsonClip(actual, 120)}`;
}

/** True when `actual` matches the partial expectation `expected` (see module doc). */
export function argsMatch(expected: Record<string, unknown> | undefined, actual: unknown): boolean {
  if (!expected || Object.keys(expected).length === 0) return true;
  return argsMismatch(expected, actual) === undefined;
}
