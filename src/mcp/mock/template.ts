/**
 * The answer templates of a mocked MCP tool: `{{params.x}}` is the call's argument `x`,
 * `{{params.x | default:'y'}}` is `y` when `x` is missing, null or the empty string, and
 * `\{{` is a literal `{{`. Any other `{{…}}` is refused when the spec is loaded, so a typo
 * (`{{param.x}}`) is a config error instead of text an agent reads. A template is parsed once
 * by a hand-written scanner (no regular expression touches the text, each character is looked
 * at a bounded number of times), so parsing and rendering are linear in the template's size.
 */

/** One piece of a parsed template: literal text, or an argument to insert. */
export type TemplatePart =
  | { kind: 'text'; text: string }
  | {
      kind: 'param';
      /** The argument's path: `params.a.b` → `['a', 'b']` (a dotted path reads into an object argument). */
      path: string[];
      /** The text used when the argument is missing, null or empty; undefined when none was written. */
      fallback?: string;
    };

/** A parsed template, ready for {@link renderTemplate}. */
export interface Template {
  parts: TemplatePart[];
}

/** A template that cannot be parsed: `offset` is the 0-based index in the text where the bad placeholder starts. */
export class TemplateError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

const PLACEHOLDER_HELP = "write {{params.<name>}} or {{params.<name> | default:'text'}}, or \\{{ for a literal {{";

/** Cuts a placeholder for an error message, so a huge broken one does not flood the terminal. */
function shown(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function isNameChar(c: number): boolean {
  // A-Z a-z 0-9 _ -
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 45;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 9;
}

/**
 * Parses the inside of one `{{…}}` (without the braces).
 * @throws TemplateError naming the placeholder and what is expected.
 */
function parsePlaceholder(inner: string, offset: number): TemplatePart {
  const fail = (why: string) => new TemplateError(`placeholder \`{{${shown(inner)}}}\` ${why}: ${PLACEHOLDER_HELP}`, offset);
  let i = 0;
  const skip = () => {
    while (i < inner.length && isSpace(inner.charCodeAt(i))) i++;
  };
  skip();
  if (!inner.startsWith('params.', i)) throw fail('is not a parameter');
  i += 'params.'.length;
  const path: string[] = [];
  for (;;) {
    const start = i;
    while (i < inner.length && isNameChar(inner.charCodeAt(i))) i++;
    if (i === start) throw fail('has an empty or invalid parameter name');
    path.push(inner.slice(start, i));
    if (inner.charCodeAt(i) !== 46 /* . */) break;
    i++;
  }
  skip();
  if (i === inner.length) return { kind: 'param', path };
  if (inner.charCodeAt(i) !== 124 /* | */) throw fail(`has unexpected text after the parameter name`);
  i++;
  skip();
  if (!inner.startsWith('default:', i)) throw fail("has a filter other than default:'…'");
  i += 'default:'.length;
  skip();
  const quote = inner[i];
  if (quote !== "'" && quote !== '"') throw fail('needs a quoted default');
  const close = inner.indexOf(quote, i + 1);
  if (close < 0) throw fail('has an unclosed quote');
  const fallback = inner.slice(i + 1, close);
  i = close + 1;
  skip();
  if (i !== inner.length) throw fail('has unexpected text after the default');
  return { kind: 'param', path, fallback };
}

/**
 * Parses `text` into literal pieces and parameter placeholders.
 * @throws TemplateError for a `{{` without its `}}`, or a placeholder other than `params.…`.
 */
export function parseTemplate(text: string): Template {
  const parts: TemplatePart[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open < 0) {
      literal += text.slice(i);
      break;
    }
    // `\{{` is a literal `{{`: the backslash is dropped.
    if (open > i && text.charCodeAt(open - 1) === 92 /* \ */) {
      literal += text.slice(i, open - 1) + '{{';
      i = open + 2;
      continue;
    }
    literal += text.slice(i, open);
    const close = text.indexOf('}}', open + 2);
    if (close < 0) throw new TemplateError(`\`{{\` at offset ${open} is never closed by \`}}\`: ${PLACEHOLDER_HELP}`, open);
    if (literal) parts.push({ kind: 'text', text: literal });
    literal = '';
    parts.push(parsePlaceholder(text.slice(open + 2, close), open));
    i = close + 2;
  }
  if (literal) parts.push({ kind: 'text', text: literal });
  return { parts };
}

/** What {@link renderTemplate} made: the text, and the placeholders that had no argument and no default. */
export interface Rendered {
  text: string;
  /** Dotted paths (`a.b`) of arguments the template named that were missing, null or empty and had no default (rendered as ''). */
  missing: string[];
}

function lookup(args: Record<string, unknown>, path: string[]): unknown {
  let v: unknown = args;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/**
 * Fills `template` with the call's `args`. A string argument is inserted as it is, any other
 * value as JSON. A missing, null or empty argument takes the placeholder's default; without
 * one it renders as the empty string and its path is listed in `missing` (the call log records it).
 */
export function renderTemplate(template: Template, args: Record<string, unknown>): Rendered {
  let text = '';
  const missing: string[] = [];
  for (const part of template.parts) {
    if (part.kind === 'text') {
      text += part.text;
      continue;
    }
    const v = lookup(args, part.path);
    if (v === undefined || v === null || v === '') {
      if (part.fallback !== undefined) text += part.fallback;
      else missing.push(part.path.join('.'));
      continue;
    }
    text += typeof v === 'string' ? v : JSON.stringify(v);
  }
  return { text, missing };
}
