/**
 * `NODE_EXTRA_CA_CERTS` for skill-up's own process, loaded at first use. Node 20 reads and
 * parses that file at every start (measured on these machines: `node -e 0` 105 ms with the
 * system bundle set, 34 ms without), so the `skill-up` launcher (bin/skill-up) moves it to
 * `SKILL_UP_EXTRA_CA_CERTS` before Node starts. {@link adoptExtraCaCerts} puts it back in
 * `process.env`, so every child process (engines, npm, judges) and every reader of the
 * environment sees the user's own, and gives skill-up's own TLS connections the trust Node
 * documents for the variable: its certificates extend the well-known roots, and neither is used
 * when a `ca` option is given explicitly.
 *
 * Node 20 has no `tls.setDefaultCACertificates`; instead `tls.createSecureContext` is wrapped,
 * which `tls.connect`, `https.request`, `fetch` (Node's undici) and dockerode all reach through
 * the `node:tls` module object (test/cli/extra-ca.test.ts). The wrapper is installed lazily:
 * requiring `node:tls` costs 7–9 ms on these machines (streams, net, crypto), more than most
 * commands spend on anything TLS. It goes in when one of those modules is first required by
 * CommonJS (the bundle's lazy `node:https`, dockerode's `https`) or `fetch` is first called.
 */
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import type * as Tls from 'node:tls';

/** The options of `tls.createSecureContext` that shape the context (Node 20.20's `createSecureContext` and `configSecureContext`). */
export const CONTEXT_KEYS = [
  'allowPartialTrustChain',
  'ca',
  'cert',
  'ciphers',
  'clientCertEngine',
  'crl',
  'dhparam',
  'ecdhCurve',
  'honorCipherOrder',
  'key',
  'maxVersion',
  'minVersion',
  'passphrase',
  'pfx',
  'privateKeyEngine',
  'privateKeyIdentifier',
  'secureOptions',
  'secureProtocol',
  'sessionIdContext',
  'sessionTimeout',
  'sigalgs',
  'ticketKeys',
] as const;

/** CommonJS requests that mean a TLS connection may follow. */
const TLS_MODULES = new Set(['tls', 'node:tls', 'https', 'node:https', 'http2', 'node:http2']);

/** Node's module loader (internal, but stable since Node 0.x and what every require hook wraps). */
const loader = Module as unknown as { _load: (this: unknown, request: string, parent: unknown, isMain: boolean) => unknown };

let installNow: (() => void) | undefined;

/**
 * At the start of the executable, before anything reads the environment: when the launcher moved
 * `NODE_EXTRA_CA_CERTS` to `SKILL_UP_EXTRA_CA_CERTS`, moves it back (`process.env` is then the
 * user's) and arranges for skill-up's own TLS connections to trust the file's certificates from
 * their first use. Does nothing otherwise (run as `node …/skill-up.cjs`, Node loaded the file itself).
 */
export function adoptExtraCaCerts(): void {
  const file = process.env.SKILL_UP_EXTRA_CA_CERTS;
  if (file === undefined) return;
  delete process.env.SKILL_UP_EXTRA_CA_CERTS;
  // The launcher moves a set variable, never copies it: with NODE_EXTRA_CA_CERTS still there (run
  // as `node …/skill-up.cjs`), Node has loaded that one, and the user's environment is as it is.
  if (file === '' || process.env.NODE_EXTRA_CA_CERTS !== undefined) return;
  process.env.NODE_EXTRA_CA_CERTS = file;
  let installed = false;
  const install = () => {
    if (installed) return;
    installed = true;
    // Not through the hook below: that one is why we are here.
    trustExtraCaCerts(createRequire(__filename)('node:tls') as typeof Tls, file);
  };
  installNow = install;
  const load = loader._load;
  loader._load = function loadWatchingTls(this: unknown, request: string, parent: unknown, isMain: boolean) {
    const exports = load.call(this, request, parent, isMain);
    if (TLS_MODULES.has(request)) {
      // Once in, the hook has nothing left to do; taken out unless someone wrapped it since.
      if (loader._load === loadWatchingTls) loader._load = load;
      install();
    }
    return exports;
  };
  // Node's fetch loads its undici, and undici `node:tls`, through Node's internal loader, which no hook sees.
  const fetch = globalThis.fetch;
  if (typeof fetch === 'function') {
    const watched = function fetchWatchingTls(this: unknown, ...args: Parameters<typeof fetch>) {
      install();
      if (globalThis.fetch === watched) globalThis.fetch = fetch;
      return fetch.apply(this, args);
    };
    globalThis.fetch = watched;
  }
}

/**
 * Installs the trust arranged by {@link adoptExtraCaCerts} now (a no-op when it arranged none):
 * for the ES module entry, whose `import`s of `node:https` no CommonJS hook sees.
 */
export function trustExtraCaCertsNow(): void {
  installNow?.();
}

/**
 * Wraps `tls.createSecureContext` so that a context made without a `ca` option trusts Node's
 * roots plus the certificates of the PEM file `file` (any number of them), as Node does with
 * `NODE_EXTRA_CA_CERTS`; one with a `ca` is left alone. The file is read once, at the first
 * context; when it cannot be read or a certificate in it is malformed ({@link pemCertificates}),
 * Node's own warning is printed once to stderr and the default roots (with the certificates
 * before a malformed one) are used. Contexts made from no option that shapes one (a plain
 * `tls.connect`, `https.request`, `fetch`) are one shared context: adding the file's
 * certificates parses them (31 ms for the 140 of a system bundle, each time), which a
 * connection must not pay.
 */
export function trustExtraCaCerts(tls: typeof Tls, file: string): void {
  const create = tls.createSecureContext;
  let pem: Buffer | null | undefined;
  let shared: { defaults: string; context: Tls.SecureContext } | undefined;
  tls.createSecureContext = function createSecureContext(options?: Tls.SecureContextOptions) {
    // Node's own test (`if (ca)`): an explicit `ca` replaces the roots and the extra certificates alike.
    if (options?.ca) return create(options);
    if (pem === undefined) {
      let problem: string | undefined;
      try {
        const found = pemCertificates(readFileSync(file, 'latin1'));
        problem = found.problem;
        // Node keeps the certificates before a bad one (its AddCertsFromFile stops there); so does this.
        pem = found.pem.length > 0 ? Buffer.from(found.pem.join('\n'), 'latin1') : null;
      } catch (e) {
        pem = null;
        problem = (e as Error).message;
      }
      if (problem !== undefined) process.stderr.write(`Warning: Ignoring extra certs from \`${file}\`, load failed: ${problem}\n`);
    }
    if (pem === null) return create(options);
    // The defaults Node fills in for absent options; a change to any of them makes a new shared context.
    const defaults = plain(tls, options) ? [tls.DEFAULT_CIPHERS, tls.DEFAULT_ECDH_CURVE, tls.DEFAULT_MIN_VERSION, tls.DEFAULT_MAX_VERSION].join('\0') : undefined;
    if (defaults !== undefined && shared?.defaults === defaults) return shared.context;
    const context = create(options);
    // Adds every certificate of the PEM text to a copy of the root store (Node's SecureContext::AddCACert).
    (context.context as { addCACert(pem: Buffer): void }).addCACert(pem);
    if (defaults !== undefined) shared = { defaults, context };
    return context;
  };
}

/** Whether `options` set none of the context's options (`tls.connect` always passes `ciphers: tls.DEFAULT_CIPHERS`). */
function plain(tls: typeof Tls, options: Tls.SecureContextOptions | undefined): boolean {
  if (!options) return true;
  const o = options as Record<string, unknown>;
  return CONTEXT_KEYS.every((k) => o[k] == null || (k === 'ciphers' && o[k] === tls.DEFAULT_CIPHERS));
}

const BEGIN = /^-----BEGIN (?:TRUSTED )?CERTIFICATE-----$/;
const END = /^-----END (?:TRUSTED )?CERTIFICATE-----$/;

/**
 * The PEM certificate blocks of a file's text, in order, up to the first malformed one, with
 * the reason it is malformed (`problem`; also when the text holds no certificate at all). What
 * is checked is the PEM frame and its base64, line by line (linear in the text): a block that
 * OpenSSL would reject for its DER content still passes here and is then left out by it.
 */
export function pemCertificates(text: string): { pem: string[]; problem?: string } {
  const pem: string[] = [];
  let block: string[] | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (block === undefined) {
      if (BEGIN.test(line)) block = [line];
      continue;
    }
    block.push(line);
    if (END.test(line)) {
      pem.push(block.join('\n'));
      block = undefined;
    } else if (line !== '' && !/^[A-Za-z0-9+/]+={0,2}$/.test(line)) {
      return { pem, problem: 'bad base64 decode' };
    }
  }
  if (block !== undefined) return { pem, problem: 'a certificate without its END line' };
  return pem.length > 0 ? { pem } : { pem, problem: 'no certificate found' };
}
