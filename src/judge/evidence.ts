/**
 * Small formatters for assertion `evidence`: every judge shows what it saw in the same
 * shape, so a reader can check a verdict without opening the transcript.
 */

/** Truncates `s` to at most `max` characters, marking the cut with `…`. */
export function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`;
}

/** `s` clipped to `max` characters and JSON-quoted (so new lines and quotes stay visible). */
export function q(s: string, max = 200): string {
  return JSON.stringify(clip(s, max));
}

/** A list of strings as `["a", "b"]`, each clipped. */
export function qList(items: readonly string[], max = 80): string {
  return `[${items.map((s) => q(s, max)).join(', ')}]`;
}

/**
 * The text around `[offset, offset + length)` with `radius` characters either side, JSON-quoted,
 * with `…` where it was cut: `"…context…"`.
 */
export function around(text: string, offset: number, length: number, radius = 40): string {
  const start = Math.max(0, offset - radius);
  const end = Math.min(text.length, offset + length + radius);
  const body = text.slice(start, end);
  return JSON.stringify(`${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`);
}

/** Any JSON-serialisable value as compact JSON clipped to `max` characters. */
export function jsonClip(value: unknown, max = 300): string {
  let s: string;
  try {
    s = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  return clip(s, max);
}

/** The first `limit` names joined with `, ` and `(+N more)` when cut; `none` when empty. */
export function nameList(names: readonly string[], limit = 20): string {
  if (names.length === 0) return 'none';
  const shown = names.slice(0, limit).join(', ');
  return names.length > limit ? `${shown} (+${names.length - limit} more)` : shown;
}

/** A byte count as `123 bytes`. */
export function bytes(n: number): string {
  return `${n} byte${n === 1 ? '' : 's'}`;
}
