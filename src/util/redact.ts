/**
 * The one secret redactor of skill-up (design.md, "Conventions": secrets never reach a report,
 * transcript or log). A process-wide {@link Redactor} knows the VALUES of every secret:
 *
 * - from skill-up's own environment ({@link envSecrets}): every variable whose name looks like
 *   a credential (`*_KEY`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*AUTH*`, `*COOKIE*`, …), every
 *   literal credential shape in any value (`sk-…`, `ghp_…`, `AKIA…`, `xoxb-…`, JWTs, PEM private
 *   keys), the password in any URL's userinfo (`postgres://u:pw@h/db` → `pw` and `u:pw`) and
 *   credential-named query parameters (`?token=…`);
 * - from the suite (src/engine/env.ts `prepareSuiteEnv`): every value of `environment.env`,
 *   `engine.custom.env` and `engine.custom.http.headers`, as expanded.
 *
 * Values shorter than {@link MIN_SECRET_LENGTH} characters are never treated as secrets: they
 * would match ordinary words and numbers (`1`, `true`, `C.UTF-8`) all over the reports.
 *
 * Each secret is searched in several encodings, so a transformed copy is caught too: as is,
 * URL-encoded (`%XX` upper and lower case, `+` for spaces), JSON-escaped once and twice,
 * JSON-escaped for an HTML `<script>` (`\u003c`…) or with `\/`, HTML/XML-escaped, and base64
 * (standard and URL-safe alphabets) at all three byte alignments, with the characters that
 * depend on neighbouring bytes trimmed off both ends. All variants of all secrets are compiled
 * into ONE regular expression (a trie of literals, longest match first), built lazily and
 * rebuilt only when a secret is added; with no secret every call returns its input at once.
 *
 * Text is searched as UTF-16 strings; bytes (raw engine output, copied files) are searched as
 * latin1 strings against the UTF-8 bytes of each variant, so binary data passes unchanged
 * except where a secret's bytes occur.
 */

/** What replaces a secret. */
export const REDACTED = '[REDACTED]';

/**
 * Values shorter than this are not secrets (8 characters: shorter values are common words,
 * flags and numbers, and too short to be a credential anyway).
 */
export const MIN_SECRET_LENGTH = 8;

/** Names of credential-like variables. `AUTH` but not `AUTHOR` (`GIT_AUTHOR_NAME` is no secret). */
const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH(?!OR)|COOKIE|PRIVATE|WEBHOOK|DSN)/i;

/** Whole `_`-separated name parts that name a credential (`DB_PASS`, `MYSQL_PWD`, `PGPASS`, `SSHPASS`, …). */
const SECRET_PART = /^(PASS|PWD|PGPASS|SSHPASS|SESSID|SESSIONID|SESSIONKEY)$/i;
/** Names that are never credentials: the working directories, desktop-session descriptors. */
const NOT_SECRET_NAME = /^(PWD|OLDPWD|DESKTOP_SESSION|GDMSESSION|XDG_SESSION_.*)$/i;

/**
 * True when a variable's name looks like a credential: a credential word anywhere in it (see
 * `SECRET_NAME`), or a whole `_`/`-`/`.`-separated part such as `PASS`, `PWD`, `PGPASS`,
 * `SSHPASS`, or `SESSION` as the last part or before `ID`/`KEY`/`TOKEN` (`SESSION_ID`,
 * `APP_SESSION`). `PWD` and `OLDPWD` themselves are the working directory, never secrets;
 * parts are matched whole, so `PASSAGE` or `COMPASS` are not.
 */
export function isSecretName(name: string): boolean {
  if (NOT_SECRET_NAME.test(name)) return false;
  if (SECRET_NAME.test(name)) return true;
  const parts = name.split(/[_.-]+/).filter(Boolean);
  return parts.some((p, i) => SECRET_PART.test(p) || (/^SESSION$/i.test(p) && (i === parts.length - 1 || /^(ID|KEY|TOKEN)$/i.test(parts[i + 1]!))));
}

/**
 * A credential word ending a `_`/`-`/`.`-separated name part (`API_KEY`, `APIKEY`, `DB_PASS`,
 * `GITHUB_TOKEN`), stricter than `SECRET_NAME`: `KEYNAME` or `TOKEN_PATH` are not.
 */
const CREDENTIAL_PART_END = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|AUTH|COOKIE|PRIVATE|WEBHOOK|DSN|PASS|PWD|SESSION|SESSIONID|SESSID)S?$/i;

/** True when some `_`/`-`/`.`-separated part of `name` ends in a credential word ({@link CREDENTIAL_PART_END}). */
function isCredentialPartName(name: string): boolean {
  if (NOT_SECRET_NAME.test(name)) return false;
  return name.split(/[_.-]+/).some((p) => p !== '' && CREDENTIAL_PART_END.test(p));
}

/** A plain word or identifier: letters, `_`, `-`, `.` only (`with_skill`, `production`, `final_message`). */
const PLAIN_WORD = /^[A-Za-z_.-]+$/;

/**
 * Whether a value the suite gives in `environment.env` / `engine.custom.env` (as expanded) is
 * registered as a secret: always, unless it is a plain word or identifier ({@link PLAIN_WORD})
 * under a name none of whose `_`-separated parts ends in a credential word (`KEY`, `TOKEN`,
 * `SECRET`, `PASSWORD`, `PASS`, `PWD`, `AUTH`, `SESSION`, …) and without a credential shape
 * ({@link valueSecrets}). `VARIANT_LABEL: with_skill` and `KEYNAME: final_message` are no
 * secrets; `DB_PASS: hunter_two`, `APIKEY: abcdefghij` and `GREETING: "Hello, World"` are.
 */
export function suiteValueIsSecret(name: string, value: string): boolean {
  if (!PLAIN_WORD.test(value)) return true;
  return isCredentialPartName(name) || valueSecrets(value).length > 0;
}

/**
 * skill-up's own structural words (variants, statuses, error kinds, the marker itself): never
 * secrets, whoever registers them, or progress lines, job ids and result.json would break.
 */
const STRUCTURAL = /^(\[REDACTED\]|REDACTED|with_skill|without_skill|completed|cancelled|protocol|timeout|skipped|running|finished|passed|failed|error|scripted|undefined|null|true|false)$/i;

/** Values that look like secrets by name but are placeholders skill-up itself uses. */
const PLACEHOLDER = /^(dummy|skill-up-job:.*|skill-up-scripted)$/;

/** Literal credential shapes found anywhere in a value (whatever the variable is called). */
const LITERAL_SECRETS: readonly RegExp[] = [
  /\bsk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{12,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{16,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{16,}/g,
  /\bAIza[0-9A-Za-z_-]{16,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{12,}/g,
  /\bxox[bpaors]-[A-Za-z0-9-]{8,}/g,
  /\beyJ[A-Za-z0-9_-]{2,}\.eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]+/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];

/** `scheme://userinfo@`: the userinfo of a URL anywhere in a value. */
const URL_USERINFO = /[A-Za-z][A-Za-z0-9+.-]*:\/\/([^\s/?#@"'<>]+)@/g;
/** `?name=value` / `&name=value` query parameters. */
const QUERY_PARAM = /[?&]([^=&#\s"'<>]+)=([^&#\s"'<>]+)/g;
/** Query parameter names that carry credentials. */
const SECRET_PARAM = /(key|token|secret|passw(or)?d|pwd|auth|signature|sig|credential|session)/i;

/** Decodes `%XX` escapes, or returns `s` unchanged when it is not valid percent-encoding. */
function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The secret parts of URLs in `value`: userinfo passwords (raw and decoded) and credential query parameters. */
export function urlSecrets(value: string): string[] {
  const out: string[] = [];
  if (!value.includes('://') && !value.includes('=')) return out;
  for (const m of value.matchAll(URL_USERINFO)) {
    const info = m[1]!;
    const colon = info.indexOf(':');
    if (colon < 0) {
      // `https://TOKEN@github.com/…`: a lone userinfo is a token more often than a user name.
      out.push(info, percentDecode(info));
      continue;
    }
    const pass = info.slice(colon + 1);
    if (pass === '') continue;
    out.push(info, pass, percentDecode(pass));
  }
  for (const m of value.matchAll(QUERY_PARAM)) {
    if (SECRET_PARAM.test(m[1]!)) out.push(m[2]!, percentDecode(m[2]!));
  }
  return out;
}

/**
 * The secret values in an environment: credential-named variables' values, literal credential
 * shapes in any value, URL userinfo passwords and credential query parameters. Placeholders
 * (`dummy`, `skill-up-job:…`) and values shorter than {@link MIN_SECRET_LENGTH} are left out.
 */
export function envSecrets(env: Record<string, string | undefined>): string[] {
  const out = new Set<string>();
  const add = (v: string | undefined) => {
    if (v && v.length >= MIN_SECRET_LENGTH && !PLACEHOLDER.test(v)) out.add(v);
  };
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (isSecretName(name)) add(value);
    for (const s of valueSecrets(value)) add(s);
  }
  return [...out];
}

/** Secrets inside one value whatever its name: literal credential shapes and URL credentials. */
export function valueSecrets(value: string): string[] {
  const out: string[] = [];
  if (value.length < MIN_SECRET_LENGTH) return out;
  for (const re of LITERAL_SECRETS) for (const m of value.matchAll(re)) out.push(m[0]);
  out.push(...urlSecrets(value));
  return out;
}

/** Bits 6i..6i+5 of a base64 text belong to character i: the characters of `bytes` encoded at
 * each of the three alignments, without those that also depend on a neighbouring byte. */
function base64Variants(bytes: Buffer): string[] {
  const out: string[] = [];
  const n = bytes.length;
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const start = Math.ceil((8 * k) / 6);
    const end = Math.floor((8 * (k + n)) / 6);
    if (end - start < MIN_SECRET_LENGTH) continue;
    const std = enc.slice(start, end);
    out.push(std);
    const url = std.replace(/\+/g, '-').replace(/\//g, '_');
    if (url !== std) out.push(url);
  }
  return out;
}

/** `s` escaped for HTML/XML text and attributes, in the spellings common serialisers use. */
function htmlVariants(s: string): string[] {
  if (!/[&<>"']/.test(s)) return [];
  const base = s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return [
    base.replace(/"/g, '&quot;').replace(/'/g, '&#39;'),
    base.replace(/"/g, '&quot;').replace(/'/g, '&#x27;'),
    base.replace(/"/g, '&quot;').replace(/'/g, '&apos;'),
    base.replace(/"/g, '&#34;').replace(/'/g, '&#39;'),
    base,
  ];
}

/** The body of `JSON.stringify(s)` (without the quotes). */
function jsonBody(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

/** Every encoded form of `secret` searched for (the secret itself first). */
export function secretVariants(secret: string): string[] {
  const out = new Set<string>([secret]);
  const uri = encodeURIComponent(secret);
  const lower = (u: string) => u.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  // RFC 3986 strict (`!'()*` escaped too), Python's quote() (keeps `/`), quote_plus, encodeURI.
  const strict = uri.replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const python = strict.replace(/%2F/g, '/');
  for (const u of [uri, strict, python, encodeURI(secret)]) {
    out.add(u);
    out.add(lower(u));
    out.add(u.replace(/%20/g, '+'));
  }
  const j1 = jsonBody(secret);
  out.add(j1);
  out.add(jsonBody(j1));
  out.add(j1.replace(/\//g, '\\/'));
  out.add(j1.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'));
  // ensure_ascii serialisers (Python's json.dumps) escape every non-ASCII character.
  out.add(j1.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  for (const h of htmlVariants(secret)) out.add(h);
  for (const b of base64Variants(Buffer.from(secret, 'utf8'))) out.add(b);
  return [...out].filter((v) => v.length >= MIN_SECRET_LENGTH || v === secret);
}

/** Object keys never redacted ({@link Redactor.redactValue}): identifiers, as skill-up's schema uses. */
const SCHEMA_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

type TrieNode = { kids: Map<string, TrieNode>; end: boolean };

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|/-]/;

/** One literal character as regex source. */
function escapeChar(c: string): string {
  return REGEX_SPECIAL.test(c) ? `\\${c}` : c;
}

/**
 * A regular expression source matching any of `words`, the longest at each position: a trie
 * (shared prefixes factored out, so a position is rejected after one character test per branch,
 * not once per word), greedy optional groups where a word ends inside a longer one.
 */
export function trieSource(words: Iterable<string>): string {
  const root: TrieNode = { kids: new Map(), end: false };
  for (const w of words) {
    if (w === '') continue;
    let n = root;
    for (const ch of w) {
      let c = n.kids.get(ch);
      if (!c) n.kids.set(ch, (c = { kids: new Map(), end: false }));
      n = c;
    }
    n.end = true;
  }
  const build = (node: TrieNode): string => {
    const alts: string[] = [];
    for (const [ch, child] of node.kids) {
      // Follow a chain of single-child nodes without recursing (secrets can be kilobytes long).
      let s = escapeChar(ch);
      let n = child;
      while (n.kids.size === 1 && !n.end) {
        const [c2, next] = n.kids.entries().next().value!; // the one child
        s += escapeChar(c2);
        n = next;
      }
      alts.push(s + build(n));
    }
    if (alts.length === 0) return '';
    const body = alts.length === 1 ? alts[0]! : `(?:${alts.join('|')})`;
    return node.end ? `(?:${body})?` : body;
  };
  return build(root);
}

/** A compiled redactor state: one regex over text, one over latin1-decoded bytes. */
interface Compiled {
  text: RegExp;
  bytes: RegExp;
  /** Longest variant in UTF-8 bytes. */
  maxBytes: number;
  /** Shortest variant in UTF-16 units (texts shorter than this cannot hold one). */
  minChars: number;
}

/**
 * Redacts the values of known secrets, in every encoding {@link secretVariants} lists. One
 * instance is process-wide ({@link redactor}); tests may make their own.
 */
export class Redactor {
  private readonly secrets = new Set<string>();
  private compiled: Compiled | undefined;
  private dirty = false;

  /** A redactor knowing `values` (each subject to {@link MIN_SECRET_LENGTH}). */
  constructor(values: Iterable<string> = []) {
    this.addAll(values);
  }

  /** A redactor knowing the secrets of `env` ({@link envSecrets}). */
  static fromEnv(env: Record<string, string | undefined>): Redactor {
    return new Redactor(envSecrets(env));
  }

  /** Adds one secret value; returns whether it was taken (long enough, not a placeholder, new). */
  add(value: string | undefined): boolean {
    if (!value || value.length < MIN_SECRET_LENGTH || PLACEHOLDER.test(value) || STRUCTURAL.test(value) || this.secrets.has(value)) return false;
    this.secrets.add(value);
    this.dirty = true;
    return true;
  }

  /** Adds several secret values. */
  addAll(values: Iterable<string>): void {
    for (const v of values) this.add(v);
  }

  /** Adds the secrets of an environment ({@link envSecrets}). */
  addEnv(env: Record<string, string | undefined>): void {
    this.addAll(envSecrets(env));
  }

  /** Number of secret values known (not counting encoded variants). */
  get size(): number {
    return this.secrets.size;
  }

  /** True when no secret is known: every method then returns its input unchanged. */
  get empty(): boolean {
    return this.secrets.size === 0;
  }

  /** The secret values known, longest first. */
  values(): string[] {
    return [...this.secrets].sort((a, b) => b.length - a.length);
  }

  /** The longest UTF-8 byte length of any searched variant (0 without secrets). */
  get maxBytes(): number {
    return this.compile()?.maxBytes ?? 0;
  }

  private compile(): Compiled | undefined {
    if (this.secrets.size === 0) return undefined;
    if (this.compiled && !this.dirty) return this.compiled;
    const variants = new Set<string>();
    for (const s of this.secrets) for (const v of secretVariants(s)) variants.add(v);
    const byteForms = [...variants].map((v) => Buffer.from(v, 'utf8').toString('latin1'));
    this.compiled = {
      text: new RegExp(trieSource(variants), 'g'),
      bytes: new RegExp(trieSource(byteForms), 'g'),
      maxBytes: Math.max(...byteForms.map((b) => b.length)),
      minChars: Math.min(...[...variants].map((v) => v.length)),
    };
    // V8 interprets a regex on its first run and compiles it to machine code on the next:
    // spend the slow first run on a tiny string (measured: 100 ms → 7 ms on an 11 MB text).
    for (const re of [this.compiled.text, this.compiled.bytes]) {
      re.test('\0');
      re.test('\0');
      re.lastIndex = 0;
    }
    this.dirty = false;
    return this.compiled;
  }

  /** `text` with every secret (in any encoding) replaced by {@link REDACTED}. */
  redact(text: string): string {
    const c = this.compile();
    if (!c || text.length < c.minChars) return text;
    c.text.lastIndex = 0;
    return text.replace(c.text, REDACTED);
  }

  /** True when `text` holds a secret in any encoding. */
  has(text: string): boolean {
    const c = this.compile();
    if (!c || text.length < c.minChars) return false;
    c.text.lastIndex = 0;
    return c.text.test(text);
  }

  /** `bytes` with every secret's UTF-8 bytes (in any encoding) replaced; the same buffer when none occurs. */
  redactBytes(bytes: Buffer): Buffer {
    const c = this.compile();
    if (!c || bytes.length === 0) return bytes;
    const s = bytes.toString('latin1');
    c.bytes.lastIndex = 0;
    if (!c.bytes.test(s)) return bytes;
    c.bytes.lastIndex = 0;
    return Buffer.from(s.replace(c.bytes, REDACTED), 'latin1');
  }

  /**
   * `value` with every string redacted, however deep. Object keys that are identifiers (letters,
   * digits, `_`, `$`: skill-up's schema, and the names engines give) are never redacted; any
   * other key is (an agent-chosen key such as a file name or a dashed token). Returns `value` itself
   * when nothing changed, so the common case allocates nothing.
   */
  redactValue<T>(value: T): T {
    if (this.empty) return value;
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redact(v);
      if (Array.isArray(v)) {
        let changed = false;
        const out = v.map((x) => {
          const y = walk(x);
          if (y !== x) changed = true;
          return y;
        });
        return changed ? out : v;
      }
      if (v && typeof v === 'object' && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null)) {
        let changed = false;
        const entries = Object.entries(v).map(([k, x]) => {
          const k2 = SCHEMA_KEY.test(k) ? k : this.redact(k);
          const y = walk(x);
          if (k2 !== k || y !== x) changed = true;
          return [k2, y] as const;
        });
        return changed ? Object.fromEntries(entries) : v;
      }
      return v;
    };
    return walk(value) as T;
  }

  /**
   * `JSON.stringify(value, null, indent)` with no secret in it. The text is searched once; only
   * when it holds a secret is the value redacted string by string (so JSON escapes stay whole,
   * and identifier keys, skill-up's schema, are never touched: see {@link redactValue}) and
   * serialised again.
   */
  jsonText(value: unknown, indent?: number): string {
    const text = JSON.stringify(value, null, indent) ?? 'null';
    if (!this.has(text)) return text;
    return JSON.stringify(this.redactValue(JSON.parse(text)), null, indent);
  }

  /**
   * A chunk-by-chunk redactor for a byte stream: a secret split across chunks is still found,
   * because the last `maxBytes - 1` bytes of each chunk are held back until the next one.
   */
  byteStream(): ByteStreamRedactor {
    return new ByteStreamRedactor(this);
  }

  /** @internal the compiled state, for {@link ByteStreamRedactor}. */
  state(): Compiled | undefined {
    return this.compile();
  }
}

/** Redacts a byte stream chunk by chunk, holding back a carry so secrets spanning chunks are caught. */
export class ByteStreamRedactor {
  private carry: Buffer = Buffer.alloc(0);

  /** Redacts with `redactor`'s secrets as they are when each chunk arrives. */
  constructor(private readonly redactor: Redactor) {}

  /** Takes the next chunk; returns the bytes that are decided (possibly none). */
  push(chunk: Buffer): Buffer {
    const c = this.redactor.state();
    const all = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    if (!c) {
      this.carry = Buffer.alloc(0);
      return all;
    }
    const s = all.toString('latin1');
    // A variant starting before `safe` fits in `s` whatever comes next, so it is decided.
    const safe = s.length - (c.maxBytes - 1);
    const re = c.bytes;
    re.lastIndex = 0;
    let out: string[] | undefined;
    let last = 0;
    for (let m = re.exec(s); m && m.index < safe; m = re.exec(s)) {
      (out ??= []).push(s.slice(last, m.index), REDACTED);
      last = m.index + m[0].length;
    }
    const cut = Math.max(last, safe, 0);
    this.carry = Buffer.from(all.subarray(cut));
    if (!out) return all.subarray(0, cut);
    out.push(s.slice(last, cut));
    return Buffer.from(out.join(''), 'latin1');
  }

  /** Ends the stream: returns the held-back bytes, redacted. */
  end(): Buffer {
    const rest = this.carry;
    this.carry = Buffer.alloc(0);
    return this.redactor.redactBytes(rest);
  }
}

let global: Redactor | undefined;

/**
 * The process-wide redactor: created on first use from `process.env`, extended when a suite
 * is loaded (src/engine/env.ts `prepareSuiteEnv`). Every file skill-up writes
 * (src/util/out.ts) and every line it prints ({@link installConsoleRedaction}) passes it.
 */
export function redactor(): Redactor {
  return (global ??= Redactor.fromEnv(process.env));
}

/** Replaces the process-wide redactor (tests); `undefined` makes the next use start afresh from `process.env`. */
export function resetRedactor(r?: Redactor): void {
  global = r;
}

let consoleInstalled = false;

/**
 * Makes every write to `process.stdout` and `process.stderr` pass the process-wide redactor
 * (progress lines, `-v`/`-vv` engine output, error messages, annotations). Installed once at
 * CLI start (src/cli/bin.ts). A secret split across two separate write calls is not joined;
 * skill-up writes whole lines.
 */
export function installConsoleRedaction(): void {
  if (consoleInstalled) return;
  consoleInstalled = true;
  for (const stream of [process.stdout, process.stderr]) {
    const original = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    const patched = (chunk: unknown, ...rest: unknown[]): boolean => {
      const r = redactor();
      if (!r.empty) {
        const encoding = typeof rest[0] === 'string' ? rest[0] : undefined;
        if (typeof chunk === 'string' && (encoding === undefined || /^utf-?8$/i.test(encoding))) chunk = r.redact(chunk);
        else if (chunk instanceof Uint8Array) chunk = r.redactBytes(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
      return original(chunk, ...rest);
    };
    stream.write = patched;
  }
}
