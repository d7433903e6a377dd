/**
 * Users' regular expressions (`output_matches`, `capture`, post-conditions, the scripted
 * model's `prompt_matches`) are Go `regexp` syntax, i.e. RE2, and run on RE2 itself
 * (`re2js`, a pure JavaScript port): matching takes time linear in the text, whatever the
 * pattern, so no pattern can hang a run (`(a+)+$` against `aaaa…!` is instant, where a
 * backtracking engine never finishes). RE2 has no lookahead, lookbehind or backreference;
 * a pattern using them is refused when the config is loaded (`regexError`).
 *
 * skill-up's own (internal) patterns stay JavaScript `RegExp`s.
 */
import { RE2JS } from 're2js';

/**
 * A user pattern compiled with RE2, usable where a `RegExp` is expected: `exec`, `test`,
 * `String.prototype.match`/`search`/`replace` (non-global) and `matchAll` all match with
 * RE2, `split` included.
 *
 * `source` and `flags` are a JavaScript stand-in, not the pattern: an expression with the
 * same capture groups (numbered and named) that matches only the empty string, so code that
 * inspects the group layout (`new RegExp(re.source, re.flags).exec('')`) keeps working.
 * Never match with it; `pattern` is what the user wrote.
 */
export class Re2RegExp extends RegExp {
  /** The RE2 pattern as written. */
  readonly pattern: string;
  /** Number of capture groups. */
  readonly groupCount: number;
  /** Names of the named capture groups, in group order. */
  readonly groupNames: string[];
  private readonly re2: RE2JS;

  /** @throws SyntaxError (see `compileRegex`). */
  constructor(pattern: string) {
    const re2 = compileRe2(pattern);
    const named = Object.entries(re2.namedGroups()).sort((a, b) => a[1] - b[1]);
    super(groupSkeleton(re2.groupCount(), new Map(named.map(([n, i]) => [i, n]))), '');
    this.pattern = pattern;
    this.re2 = re2;
    this.groupCount = re2.groupCount();
    this.groupNames = named.map(([n]) => n);
  }

  /** The first match in `text` (RE2 leftmost-first semantics), shaped like `RegExp.prototype.exec`'s. */
  override exec(text: string): RegExpExecArray | null {
    return this.re2.exec(String(text)) as RegExpExecArray | null;
  }

  /** True when the pattern matches anywhere in `text`. */
  override test(text: string): boolean {
    return this.re2.test(String(text));
  }

  /** Every non-overlapping match, like `String.prototype.matchAll` with a global RegExp. */
  override [Symbol.matchAll](text: string): RegExpStringIterator<RegExpExecArray> {
    return this.re2.matchAll(String(text)) as unknown as RegExpStringIterator<RegExpExecArray>;
  }

  /**
   * `String.prototype.split` with RE2 matches and JavaScript's rules (ECMA-262
   * RegExp.prototype[@@split]): an empty match at the start or end, or right after the
   * previous match, does not split; capture groups are spliced in; `limit` caps the result.
   */
  override [Symbol.split](text: string, limit?: number): string[] {
    const s = String(text);
    const max = limit === undefined ? 2 ** 32 - 1 : limit >>> 0;
    if (max === 0) return [];
    if (s === '') return this.re2.test('') ? [] : [s];
    const out: string[] = [];
    let last = 0;
    for (const m of this.re2.matchAll(s) as Iterable<RegExpExecArray>) {
      const start = m.index;
      const end = start + m[0].length;
      if (m[0].length === 0 && (start === 0 || start >= s.length || start === last)) continue;
      out.push(s.slice(last, start));
      if (out.length >= max) return out;
      for (let i = 1; i < m.length; i++) {
        out.push(m[i]!);
        if (out.length >= max) return out;
      }
      last = end;
    }
    out.push(s.slice(last));
    return out;
  }

  /** `/pattern/`, as written. */
  override toString(): string {
    return `/${this.pattern}/`;
  }
}

/** An empty-matching JavaScript source with `count` groups, named as in `names` (index → name). */
function groupSkeleton(count: number, names: Map<number, string>): string {
  let s = '';
  for (let i = 1; i <= count; i++) {
    const name = names.get(i);
    // RE2 allows names a JavaScript group cannot have (a leading digit): those stay unnamed.
    s += name !== undefined && /^[A-Za-z_$][\w$]*$/.test(name) ? `(?<${name}>)` : '()';
  }
  return s;
}

function compileRe2(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (e) {
    throw new SyntaxError(describeRe2Error(pattern, (e as Error).message), { cause: e });
  }
}

/** JavaScript/PCRE constructs that RE2 lacks, found outside character classes, with their names. */
function unsupportedConstruct(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (!inClass && /[1-9]/.test(next)) return `backreference \`\\${next}\``;
      if (!inClass && next === 'k' && pattern[i + 2] === '<') return 'backreference `\\k<…>`';
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      if (pattern[i + 1] === '^') i++;
      if (pattern[i + 1] === ']') i++; // a leading `]` is a literal
      continue;
    }
    if (c !== '(' || pattern[i + 1] !== '?') continue;
    const rest = pattern.slice(i + 2, i + 4);
    if (rest.startsWith('<=')) return 'lookbehind `(?<=…)`';
    if (rest.startsWith('<!')) return 'negative lookbehind `(?<!…)`';
    if (rest.startsWith('=')) return 'lookahead `(?=…)`';
    if (rest.startsWith('!')) return 'negative lookahead `(?!…)`';
    if (rest.startsWith('>')) return 'atomic group `(?>…)`';
  }
  return undefined;
}

/**
 * Why RE2 refused `pattern`. A pattern that JavaScript refuses too (an unclosed group …) gets
 * JavaScript's familiar message; one that only RE2 refuses says it is not RE2 syntax, naming
 * the construct when it is a known JavaScript/PCRE one (lookaround, backreference).
 */
function describeRe2Error(pattern: string, message: string): string {
  const js = javascriptSyntaxError(pattern);
  if (js !== undefined) return js;
  const construct = unsupportedConstruct(pattern);
  if (construct) return `${construct} is not RE2 syntax (patterns are Go/RE2 regular expressions, which have no lookahead, lookbehind or backreferences)`;
  return `not RE2 syntax: ${message.replace(/^error parsing regexp: /, '')}`;
}

/**
 * The V8 compile error of `pattern` read as JavaScript (after the two translations Go syntax
 * needs: a leading `(?i)`-style flag group, `(?P<name>`), or undefined when it compiles.
 * Only compiled, never matched.
 */
function javascriptSyntaxError(pattern: string): string | undefined {
  let source = pattern;
  let flags = 'u';
  const lead = /^\(\?([imsU]+)\)/.exec(source);
  if (lead) {
    source = source.slice(lead[0].length);
    for (const f of lead[1]!) if (f !== 'U' && !flags.includes(f)) flags += f;
  }
  source = source.replace(/\(\?P<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>');
  try {
    new RegExp(source, flags);
    return undefined;
  } catch {
    // Some valid patterns (e.g. `\-` outside a class) are invalid only under the `u` flag.
    try {
      new RegExp(source, flags.replace('u', ''));
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  }
}

/**
 * Compiles a user's regular expression (Go `regexp` / RE2 syntax: inline flags such as
 * `(?i)` anywhere, `(?P<name>…)` and `(?<name>…)` groups, `\pL`, `[[:alpha:]]`) to an RE2
 * matcher that runs in linear time.
 *
 * @throws SyntaxError when the pattern is not valid RE2, e.g. a lookbehind `(?<=x)` or a
 *   backreference `\1` ("… is not RE2 syntax …").
 */
export function compileRegex(pattern: string): Re2RegExp {
  return new Re2RegExp(pattern);
}

/** Returns why `pattern` is not a valid RE2 expression (e.g. "lookbehind … is not RE2 syntax …"), or undefined when it compiles. */
export function regexError(pattern: string): string | undefined {
  try {
    compileRe2(pattern);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
