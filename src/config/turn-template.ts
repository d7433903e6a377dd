/**
 * `{{variable}}` in turn messages: a value an earlier turn captured (`capture:`), filled in
 * just before the turn is sent. One place for the syntax, used by validation (every
 * `{{name}}` must be captured by an earlier turn) and by the run (src/run/job.ts).
 *
 * A literal `{{` is written `\{{` (as in Handlebars): `\{{ name }}` is sent as `{{ name }}`.
 * In a YAML double-quoted string the backslash itself must be doubled (`"\\{{ name }}"`);
 * plain, single-quoted and block (`|`) strings take `\{{` as it is.
 */

/** `\{{` (an escaped, literal `{{`) or `{{ name }}`, where name is a capture variable. */
const TOKEN = /\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The escape that sends a literal `{{`. */
export const LITERAL_BRACES = '\\{{';

/** One `{{name}}` reference in a message. */
export interface TurnVariableRef {
  name: string;
  /** The reference as written, e.g. `{{ name }}`. */
  text: string;
  /** Character offset in the message. */
  index: number;
}

/** The `{{name}}` references of `content`, in order; escaped `\{{` ones are not references. */
export function turnVariables(content: string): TurnVariableRef[] {
  const out: TurnVariableRef[] = [];
  for (const m of content.matchAll(TOKEN)) {
    if (m[1] !== undefined) out.push({ name: m[1], text: m[0], index: m.index });
  }
  return out;
}

/**
 * The message to send: every `{{name}}` replaced by `vars[name]` and every `\{{` by `{{`.
 * A reference without a value is left as written and listed in `missing` (the run then stops
 * the job with an error: validation reports it first).
 */
export function fillTurnTemplate(content: string, vars: Readonly<Record<string, string>>): { text: string; missing: string[] } {
  const missing: string[] = [];
  const text = content.replace(TOKEN, (m, name: string | undefined) => {
    if (name === undefined) return '{{';
    if (Object.prototype.hasOwnProperty.call(vars, name)) return vars[name]!;
    missing.push(name);
    return m;
  });
  return { text, missing };
}

/** The hint appended to an "is not captured" error: how to send the braces literally instead. */
export function literalBracesHint(ref: TurnVariableRef): string {
  return `if the braces are meant literally (a Jinja or Handlebars template), write \`${LITERAL_BRACES}${ref.text.slice(2)}\`, which is sent as \`${ref.text}\``;
}
