/** Where a JSON file stops parsing, for a `file:line:col` message (trigger eval sets, evals.json). */

/**
 * Where a JSON.parse error is, 1-based, and its message without the offset: at the offset the
 * message names; a file that ends too early ("Unexpected end of JSON input", which names no
 * offset, or an offset past the last non-blank character) just after its last non-blank
 * character, said as "the file ends before the JSON is complete";
 * any other message without an offset at 1:1.
 */
export function jsonSyntaxError(text: string, raw: string): { line: number; col: number; message: string } {
  const m = /position (\d+)/.exec(raw);
  const end = text.trimEnd().length;
  // Node says either "Unexpected end of JSON input" (no offset) or names an offset at or past the last character.
  const truncated = m ? Number(m[1]) >= end : /end of (JSON )?input/i.test(raw);
  const offset = truncated ? end : m ? Number(m[1]) : 0;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const col = offset - before.lastIndexOf('\n');
  const message = truncated
    ? 'the file ends before the JSON is complete (truncated? a closing `]`, `}` or `"` is missing)'
    : raw.replace(/ in JSON at position \d+.*$/, '').replace(/^JSON\.parse: /, '');
  return { line, col, message };
}
