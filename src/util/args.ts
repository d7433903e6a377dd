/**
 * Command-line parsing on node:util `parseArgs`, with usage errors that name the flag and
 * exit with code 2 instead of a stack trace.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { didYouMean } from './did-you-mean.js';

/** A usage mistake: the CLI prints the message and the command's help hint, exit code 2. */
export class UsageError extends Error {}

/** Parses `argv` against `options`; unknown flags and missing values become UsageError. */
export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  // `--min-uplift -10`: node's parser takes a value starting with `-` for an option; a negative
  // number after a string option is meant as its value, so join the two as `--flag=-10`.
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const name = /^--([^=]+)$/.exec(a)?.[1];
    const next = argv[i + 1];
    if (name && (options as Record<string, { type: string }>)[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      args.push(`${a}=${next}`);
      i++;
    } else args.push(a);
  }
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    const message = (e as Error).message;
    const unknown = /^Unknown option '(--?[^']+)'/.exec(message)?.[1];
    if (unknown) {
      const names = Object.keys(options).map((n) => `--${n}`);
      // The name alone: `--=3` names no option (its did-you-mean compares `--`, not `--=3`).
      throw new UsageError(`unknown option \`${unknown}\`${didYouMean(unknown.split('=')[0]!, names, { maxDistance: 3 })}`);
    }
    throw new UsageError(message.replace(/^TypeError \[[A-Z_]+\]: /, ''));
  }
}

/** A plain decimal number as people write it: no hex (`0x10`), no `Infinity`, no blanks. */
export const DECIMAL = /^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;

/** Parses an integer flag within [min, max] (decimal digits only). */
export function intFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got \`${value}\``);
  return n;
}

/** Splits repeatable, comma-separable flags: `--engine a,b --engine c` → [a, b, c]. */
export function listFlag(values: string[] | undefined): string[] {
  return (values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

/**
 * A number flag in [min, max]; `percent` also accepts `80%` (→ 0.8) for a fraction.
 * @throws UsageError naming the flag, the range and the value given.
 */
export function numberFlag(name: string, value: string | undefined, min: number, max: number, what: string, percent = false): number | undefined {
  if (value === undefined) return undefined;
  const m = percent ? /^\s*(-?[\d.]+)\s*%\s*$/.exec(value) : null;
  const n = m ? (DECIMAL.test(m[1]!) ? Number(m[1]) / 100 : NaN) : DECIMAL.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < min || n > max) throw new UsageError(`--${name} must be ${what}, got \`${value}\``);
  return n;
}
