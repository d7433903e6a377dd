/**
 * Spotting credentials written where they would leak: a custom engine's command line and URL
 * end up in process lists, logs and reports, so secrets belong in `engine.custom.env` only.
 */

/** Literal credential shapes, each with a name for the message. */
const LITERAL_PATTERNS: readonly { name: string; re: RegExp }[] = [
  { name: 'an Anthropic API key (`sk-ant-…`)', re: /\bsk-ant-[A-Za-z0-9_-]{4,}/ },
  // Generic `sk-…` keys (OpenAI and others): long, and holding a digit, so `sk-my-agent` is not one.
  { name: 'an API key (`sk-…`)', re: /\bsk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{12,}/ },
  { name: 'a GitHub token (`ghp_…`)', re: /\bgh[pousr]_[A-Za-z0-9]{8,}/ },
  { name: 'a GitHub token (`github_pat_…`)', re: /\bgithub_pat_[A-Za-z0-9_]{8,}/ },
  { name: 'a Google API key (`AIza…`)', re: /\bAIza[0-9A-Za-z_-]{16,}/ },
  { name: 'an AWS access key id (`AKIA…`)', re: /\bAKIA[0-9A-Z]{12,}/ },
  { name: 'a Slack token (`xoxb-…`/`xoxp-…`)', re: /\bxox[bpaors]-[A-Za-z0-9-]{8,}/ },
  { name: 'a JSON Web Token (`eyJ….eyJ….…`)', re: /\beyJ[A-Za-z0-9_-]{2,}\.eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]+/ },
];

/** Names that suggest a credential (`MY_TOKEN`, `kwargs.api_key`, `dbPassword`, …). */
const CREDENTIAL_NAME = /(token|secret|passw(or)?d|api[_-]?key|apikey|credential|private[_-]?key|access[_-]?key)/i;

/** What kind of credential `text` holds literally, or undefined. */
export function literalCredential(text: string): string | undefined {
  return LITERAL_PATTERNS.find((p) => p.re.test(text))?.name;
}

/**
 * `${…}` references in `text` that would put a secret on a command line or in a URL:
 * `${api_key}`, `${kwargs.X}` with a credential-like X, or an environment reference such as
 * `${MY_TOKEN}` / `${GITHUB_TOKEN:-x}` with a credential-like name. Returns the references as written.
 */
export function credentialReferences(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_.]*)(?:(?::-|:\?|\?)[^}]*)?\}/g)) {
    const name = m[1]!;
    if (name === 'api_key' || looksLikeCredentialName(name.startsWith('kwargs.') ? name.slice(7) : name)) out.push(m[0]);
  }
  return out;
}

/** Whether a template variable or environment variable name looks like a credential. */
export function looksLikeCredentialName(name: string): boolean {
  // Token *counts* are not secrets: `max_tokens`, `token_limit`, `TOKENS_USED`.
  if (/tokens|token_?(count|limit|budget|usage)/i.test(name)) return false;
  return CREDENTIAL_NAME.test(name);
}
