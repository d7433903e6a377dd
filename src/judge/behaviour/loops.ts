/**
 * Tool loops: the same tool called with the same input several times in a row within one
 * turn, the signature of an agent stuck retrying. Inputs compare as canonical JSON (object
 * keys sorted), so `{a, b}` and `{b, a}` are the same input. One pass over each turn's calls,
 * each input serialised once: linear in the transcript's size (itself bounded per turn,
 * src/run/types.ts MAX_TOOL_IO_CHARS_PER_TURN).
 */
import type { ToolCall } from '../../engine/types.js';
import { jsonClip } from '../evidence.js';
import { DEFAULT_LOOP_REPEATS, type ToolLoop } from './types.js';

/** Deepest nesting serialised; deeper values compare by their type only. */
const MAX_DEPTH = 64;

/** JSON with object keys sorted, so equal inputs give equal strings whatever the key order. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? '[…]' : '{…}';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  const obj = value as Record<string, unknown>;
  return `{${Object.keys(obj)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k], depth + 1)}`)
    .join(',')}}`;
}

/**
 * The longest run of identical consecutive calls (same name, same input) over the turns, and
 * whether it reaches `threshold` (at least 2; default DEFAULT_LOOP_REPEATS). Ties: the first run.
 */
export function longestToolRun(turns: readonly { index: number; toolCalls: readonly Pick<ToolCall, 'name' | 'input'>[] }[], threshold = DEFAULT_LOOP_REPEATS): ToolLoop {
  let best: { run: number; tool?: string; turn?: number; input?: unknown } = { run: 0 };
  for (const t of turns) {
    let prev: string | undefined;
    let run = 0;
    for (const c of t.toolCalls) {
      const key = `${c.name}\u0000${canonicalJson(c.input)}`;
      run = key === prev ? run + 1 : 1;
      prev = key;
      if (run > best.run) best = { run, tool: c.name, turn: t.index, input: c.input };
    }
  }
  const loop: ToolLoop = { longestRun: best.run, threshold, detected: best.run >= threshold };
  if (best.tool !== undefined) {
    loop.tool = best.tool;
    loop.turn = best.turn;
    loop.input = jsonClip(best.input, 200);
  }
  return loop;
}
