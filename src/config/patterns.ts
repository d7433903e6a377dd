/**
 * Checks of user regular expressions (Go/RE2 syntax, compiled the way the judges will).
 */
import { compileRegex, regexError } from '../util/regex.js';
import type { Field } from './yaml-source.js';

/** Reports `field` when its pattern does not compile. Returns the compiled pattern when it does. */
export function checkRegex(field: Field): RegExp | undefined {
  const pattern = field.str();
  if (pattern === undefined) return undefined;
  const problem = regexError(pattern);
  if (problem !== undefined) {
    field.error(`regular expression \`${pattern}\` does not compile: ${cleanRegexMessage(problem)}`);
    return undefined;
  }
  return compileRegex(pattern);
}

/**
 * Reports a capture `pattern` that does not compile or has neither a group named `value` nor
 * exactly one group (the captured value would be ambiguous).
 */
export function checkCapturePattern(field: Field): void {
  const re = checkRegex(field);
  if (!re) return;
  // An alternative that always matches the empty string reveals the group layout.
  const probe = new RegExp(`(?:${re.source})|`, re.flags).exec('');
  const groups = probe ? probe.length - 1 : 0;
  const named = probe?.groups ? Object.keys(probe.groups) : [];
  if (named.includes('value')) return;
  if (groups === 1) return;
  const found = groups === 0 ? 'it has no group' : `it has ${groups} groups${named.length ? ` (named ${named.map((n) => `\`${n}\``).join(', ')})` : ''}`;
  field.error(`capture pattern \`${field.str()}\` must have a group named \`value\`, e.g. \`token=(?P<value>\\w+)\`, or exactly one group; ${found}`);
}

function cleanRegexMessage(message: string): string {
  // V8: "Invalid regular expression: /(a/u: Unterminated group" → "Unterminated group".
  const m = /^Invalid regular expression: \/.*\/[a-z]*: (.*)$/s.exec(message);
  return m ? m[1]! : message;
}
