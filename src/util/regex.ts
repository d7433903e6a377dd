/**
 * Compiles a user's regular expression. Patterns in v1alpha1 files are Go `regexp` (RE2)
 * syntax; the two constructs that differ from JavaScript in practice are handled:
 * a leading inline flag group `(?i)`, `(?m)`, `(?s)` (or a combination) becomes JS flags,
 * and `(?P<name>…)` named groups become `(?<name>…)`.
 *
 * @throws SyntaxError with the engine's message when the pattern does not compile.
 */
export function compileRegex(pattern: string): RegExp {
  let source = pattern;
  let flags = 'u';
  const lead = /^\(\?([imsU]+)\)/.exec(source);
  if (lead) {
    source = source.slice(lead[0].length);
    for (const f of lead[1]!) if (f !== 'U' && !flags.includes(f)) flags += f;
  }
  source = source.replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>');
  try {
    return new RegExp(source, flags);
  } catch {
    // Some valid RE2 patterns (e.g. `\-` outside a class) are invalid under the `u` flag.
    return new RegExp(source, flags.replace('u', ''));
  }
}

/** Returns the compile error message for `pattern`, or undefined when it compiles. */
export function regexError(pattern: string): string | undefined {
  try {
    compileRegex(pattern);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
