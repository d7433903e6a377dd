/**
 * Keeps secrets out of everything skill-up writes (design.md, "Conventions"). The redactor
 * itself lives in src/util/redact.ts (one process-wide instance, applied at write time by
 * src/util/out.ts and to the console); these two functions are the older API, kept for its
 * callers: both now also apply the process-wide redactor.
 */
import { envSecrets, Redactor, redactor } from '../util/redact.js';

/** Secret values found in `env` (src/util/redact.ts `envSecrets`), longest first. */
export function secretValues(env: Record<string, string | undefined> = process.env): string[] {
  return envSecrets(env).sort((a, b) => b.length - a.length);
}

/** One redactor per secrets list given (callers compute the list once and reuse it). */
const byList = new WeakMap<string[], Redactor>();

/** A redactor for exactly `secrets` (cached per list), or undefined for an empty list. */
export function listRedactor(secrets: string[]): Redactor | undefined {
  if (secrets.length === 0) return undefined;
  let r = byList.get(secrets);
  if (!r) byList.set(secrets, (r = new Redactor(secrets)));
  return r;
}

/** Returns `text` with every value of `secrets` and every secret the process-wide redactor knows replaced by `[REDACTED]`, in any encoding. */
export function redact(text: string, secrets: string[]): string {
  const once = redactor().redact(text);
  return listRedactor(secrets)?.redact(once) ?? once;
}
