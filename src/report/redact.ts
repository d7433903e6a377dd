/**
 * Keeps secrets out of everything skill-up writes (design.md, "Conventions"): the values of
 * credential-like environment variables are replaced before a report or log reaches disk.
 */

const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;
/** Values this short are not treated as secrets (they would match ordinary words). */
const MIN_SECRET_LENGTH = 8;

/** Secret values found in `env`: variables whose name looks like a credential. */
export function secretValues(env: Record<string, string | undefined> = process.env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name) && value !== 'dummy') values.add(value);
  }
  return [...values].sort((a, b) => b.length - a.length);
}

/** Returns `text` with every secret value replaced by `[REDACTED]`. */
export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[REDACTED]');
  return out;
}
