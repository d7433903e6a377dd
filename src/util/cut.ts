/**
 * Cutting text for display: one rule for every place a reason, a piece of evidence or an
 * answer's first bytes are shortened (the console's progress and `-v` lines, JUnit and GitHub
 * annotations, the custom engine's protocol errors), so a cut always shows as a cut.
 * Kept free of imports so the CLI's progress display can load it cheaply.
 */

/** The mark a cut text ends with. */
export const ELLIPSIS = '…';

/**
 * `text` whole when it has at most `max` UTF-16 units, else its first units followed by `…`,
 * `max` units in all (the `…` counts as one). The cut never splits a surrogate pair: when the
 * last unit kept would be the first half of one, that half is dropped too (one unit shorter).
 * `max` below 1 is taken as 1 (a cut text is at least `…`).
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let head = text.slice(0, Math.max(0, Math.floor(max) - 1));
  const last = head.charCodeAt(head.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) head = head.slice(0, -1);
  return head + ELLIPSIS;
}

/** `text` with every run of white space (newlines included) made one space, trimmed, then cut to `max` units ({@link cutText}). */
export function oneLine(text: string, max: number): string {
  return cutText(text.replace(/\s+/g, ' ').trim(), max);
}
