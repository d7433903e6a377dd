/**
 * `NODE_EXTRA_CA_CERTS` in skill-up's own process (src/cli/extra-ca.cts): the `skill-up`
 * launcher keeps the variable from Node's start (Node 20 parses the file at every start) and
 * the executable puts it back, then trusts the file's certificates for its own TLS connections
 * from their first use, as Node documents: added to the well-known roots, unused when a `ca`
 * is given. Each case runs in a fresh Node process (the built module, dist/src/cli/extra-ca.cjs)
 * against an HTTPS server whose certificate only the test CA (test/fixtures/tls/) vouches for;
 * then whole runs through the launcher, whose HTTPS engine and simulator use that server.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAUNCHER, TLS_FIXTURES, runCli, serveHttps, writeSkill } from './helpers.js';

const EXTRA_CA = fileURLToPath(new URL('../../dist/src/cli/extra-ca.cjs', import.meta.url));
const CA = join(TLS_FIXTURES, 'ca.pem');
/** The error Node gives for a server certificate whose issuer it does not trust. */
const UNTRUSTED = 'UNABLE_TO_VERIFY_LEAF_SIGNATURE';

/** Functions every child program may use: requests that resolve to a status or an error code. */
const PRELUDE = `
const https = () => require('node:https');
const get = (url, options = {}) => new Promise((res) => https().get(url, { agent: false, ...options }, (r) => { r.resume(); r.on('end', () => res(r.statusCode)); }).on('error', (e) => res(e.code)));
const fetched = (url) => fetch(url).then((r) => r.text().then(() => r.status), (e) => e.cause?.code ?? String(e));
const connect = (url, options = {}) => new Promise((res) => { const u = new URL(url); const s = require('node:tls').connect({ host: u.hostname, port: Number(u.port), servername: '', ...options }, () => { res(s.authorized ? 'authorized' : 'not authorized'); s.end(); }); s.on('error', (e) => res(e.code)); });
const extra = require(${JSON.stringify(EXTRA_CA)});
/** Calls adoptExtraCaCerts(); whether it hooked CommonJS's loader and wrapped fetch. */
const adopt = () => { const Module = require('node:module'); const load = Module._load; const fetch0 = globalThis.fetch; extra.adoptExtraCaCerts(); return { hooked: Module._load !== load, fetchWrapped: globalThis.fetch !== fetch0 }; };
`;

/**
 * Runs `body` (the inside of an async function, which returns what the test checks) in a fresh
 * Node process with only PATH and `env` in its environment; resolves to its result and stderr.
 */
function child(body: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<{ result: Record<string, unknown>; stderr: string }> {
  const program = `${PRELUDE}\n(async () => {\n${body}\n})().then((r) => process.stdout.write(JSON.stringify(r)), (e) => { console.error(e); process.exit(1); });`;
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, [...nodeArgs, '-e', program], { env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('close', (code) => {
      if (code !== 0) rej(new Error(`child exited with ${code}: ${stderr}`));
      else res({ result: JSON.parse(stdout) as Record<string, unknown>, stderr });
    });
  });
}

describe('NODE_EXTRA_CA_CERTS at first use (src/cli/extra-ca.cts)', () => {
  let server: Awaited<ReturnType<typeof serveHttps>>;
  let url: string;
  beforeAll(async () => {
    server = await serveHttps((_req, res) => res.end('ok'));
    url = server.url;
  });
  afterAll(() => server.close());

  it('puts the variable back for child processes and the environment, and loads nothing TLS at start', async () => {
    const { result } = await child(
      `const { hooked, fetchWrapped } = adopt();
       const seen = require('node:child_process').execFileSync('sh', ['-c', 'printf "%s|%s" "$NODE_EXTRA_CA_CERTS" "\${SKILL_UP_EXTRA_CA_CERTS-unset}"'], { encoding: 'utf8' });
       return { env: [process.env.NODE_EXTRA_CA_CERTS, process.env.SKILL_UP_EXTRA_CA_CERTS ?? 'unset'], seen, tls: process.moduleLoadList.includes('NativeModule tls'), hooked, fetchWrapped };`,
      { SKILL_UP_EXTRA_CA_CERTS: CA },
    );
    expect(result).toEqual({ env: [CA, 'unset'], seen: `${CA}|unset`, tls: false, hooked: true, fetchWrapped: true });
  });

  it('without SKILL_UP_EXTRA_CA_CERTS it changes nothing: the server is untrusted', async () => {
    const { result } = await child(
      `const { hooked, fetchWrapped } = adopt();
       return { env: process.env.NODE_EXTRA_CA_CERTS ?? 'unset', same: !hooked && !fetchWrapped, https: await get(${JSON.stringify(url)}), fetch: await fetched(${JSON.stringify(url)}) };`,
    );
    expect(result).toEqual({ env: 'unset', same: true, https: UNTRUSTED, fetch: UNTRUSTED });
  });

  it('https.request and tls.connect trust the file once node:https is required; the file is read once, plain connections share one context', async () => {
    const { result } = await child(
      `const fs = require('node:fs');
       const readFileSync = fs.readFileSync;
       let reads = 0;
       fs.readFileSync = function (p, ...rest) { if (p === ${JSON.stringify(CA)}) reads++; return readFileSync.call(this, p, ...rest); };
       const Module = require('node:module');
       const load = Module._load;
       extra.adoptExtraCaCerts();
       const before = process.moduleLoadList.includes('NativeModule tls');
       https();
       const tls = require('node:tls');
       const statuses = [await get(${JSON.stringify(url)}), await get(${JSON.stringify(url)})];
       const shared = tls.createSecureContext();
       return {
         before, unhooked: Module._load === load, statuses,
         shared: shared === tls.createSecureContext({ ciphers: tls.DEFAULT_CIPHERS, servername: 'x', port: 1 }),
         ownOptions: tls.createSecureContext({ minVersion: 'TLSv1.2' }) !== shared,
         connect: await connect(${JSON.stringify(url)}),
         connectOwnOptions: await connect(${JSON.stringify(url)}, { minVersion: 'TLSv1.2', ecdhCurve: 'auto' }),
         explicitCa: await get(${JSON.stringify(url)}, { ca: [tls.rootCertificates[0]] }),
         explicitTestCa: await get(${JSON.stringify(url)}, { ca: readFileSync(${JSON.stringify(CA)}) }),
         reads,
       };`,
      { SKILL_UP_EXTRA_CA_CERTS: CA },
    );
    expect(result).toEqual({
      before: false,
      unhooked: true,
      statuses: [200, 200],
      shared: true,
      ownOptions: true,
      connect: 'authorized',
      connectOwnOptions: 'authorized',
      // Node's rule: an explicit `ca` replaces the roots and the extra certificates alike.
      explicitCa: UNTRUSTED,
      explicitTestCa: 200,
      reads: 1,
    });
  });

  it("fetch (the simulator's client) trusts the file too, and its first call alone installs the trust", async () => {
    const { result } = await child(
      `const fetch0 = globalThis.fetch;
       extra.adoptExtraCaCerts();
       const statuses = [await fetched(${JSON.stringify(url)}), await fetched(${JSON.stringify(url)})];
       return { statuses, restored: globalThis.fetch === fetch0 };`,
      { SKILL_UP_EXTRA_CA_CERTS: CA },
    );
    expect(result).toEqual({ statuses: [200, 200], restored: true });
  });

  it('trusts every certificate of a PEM bundle, not only the first', async () => {
    const bundle = join(mkdtempSync(join(tmpdir(), 'su-extra-ca-')), 'bundle.pem');
    writeFileSync(bundle, `${rootCertificates[0]}\n${rootCertificates[1]}\n${readFileSync(CA, 'utf8')}`);
    const { result } = await child(`extra.adoptExtraCaCerts(); return { https: await get(${JSON.stringify(url)}), fetch: await fetched(${JSON.stringify(url)}) };`, { SKILL_UP_EXTRA_CA_CERTS: bundle });
    expect(result).toEqual({ https: 200, fetch: 200 });
  });

  it("an unreadable file: Node's warning once, at first use, and the default roots", async () => {
    const missing = join(TLS_FIXTURES, 'no-such-ca.pem');
    const { result, stderr } = await child(
      `extra.adoptExtraCaCerts();
       require('node:tls');
       const quiet = process.stderr.bytesWritten === 0;
       return { quiet, env: process.env.NODE_EXTRA_CA_CERTS, results: [await fetched(${JSON.stringify(url)}), await get(${JSON.stringify(url)}), await connect(${JSON.stringify(url)})], ca: await get(${JSON.stringify(url)}, { ca: require('node:fs').readFileSync(${JSON.stringify(CA)}) }) };`,
      { SKILL_UP_EXTRA_CA_CERTS: missing },
    );
    expect(result).toEqual({ quiet: true, env: missing, results: [UNTRUSTED, UNTRUSTED, UNTRUSTED], ca: 200 });
    expect(stderr).toBe(`Warning: Ignoring extra certs from \`${missing}\`, load failed: ENOENT: no such file or directory, open '${missing}'\n`);
  });

  it("a malformed certificate: Node's warning once, and the certificates before it are still trusted; a file without any: the warning and the default roots", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-extra-ca-'));
    const broken = join(dir, 'broken.pem');
    writeFileSync(broken, `${readFileSync(CA, 'utf8')}\n-----BEGIN CERTIFICATE-----\nnot*base64\n-----END CERTIFICATE-----\n`);
    const none = join(dir, 'none.pem');
    writeFileSync(none, 'plain text, no certificate\n');
    const program = `extra.adoptExtraCaCerts(); return { results: [await get(${JSON.stringify(url)}), await fetched(${JSON.stringify(url)})] };`;
    const first = await child(program, { SKILL_UP_EXTRA_CA_CERTS: broken });
    expect(first.result).toEqual({ results: [200, 200] });
    expect(first.stderr).toBe(`Warning: Ignoring extra certs from \`${broken}\`, load failed: bad base64 decode\n`);
    const second = await child(program, { SKILL_UP_EXTRA_CA_CERTS: none });
    expect(second.result).toEqual({ results: [UNTRUSTED, UNTRUSTED] });
    expect(second.stderr).toBe(`Warning: Ignoring extra certs from \`${none}\`, load failed: no certificate found\n`);
  });

  it('pemCertificates: every block of a bundle, in order; the reason at the first malformed one; linear on hostile text', () => {
    const { pemCertificates } = createRequire(import.meta.url)(EXTRA_CA) as { pemCertificates(text: string): { pem: string[]; problem?: string } };
    const ca = readFileSync(CA, 'utf8').trim();
    const bundle = `# a comment\n${rootCertificates[0]}\n\n${ca}\r\n`;
    expect(pemCertificates(bundle)).toEqual({ pem: [rootCertificates[0]!.trim(), ca] });
    expect(pemCertificates(`${ca}\n-----BEGIN CERTIFICATE-----\nMIIB\n`)).toEqual({ pem: [ca], problem: 'a certificate without its END line' });
    expect(pemCertificates('-----BEGIN CERTIFICATE-----\n<html>\n-----END CERTIFICATE-----\n')).toEqual({ pem: [], problem: 'bad base64 decode' });
    expect(pemCertificates('')).toEqual({ pem: [], problem: 'no certificate found' });
    // 200,000 BEGIN lines and no END: one pass, no backtracking.
    const hostile = '-----BEGIN CERTIFICATE-----\n'.repeat(200_000);
    expect(pemCertificates(hostile)).toEqual({ pem: [], problem: 'bad base64 decode' });
  });

  it('a NODE_EXTRA_CA_CERTS still there (run as node …/skill-up.cjs) wins: SKILL_UP_EXTRA_CA_CERTS is dropped, nothing is wrapped', async () => {
    const { result } = await child(
      `const { hooked } = adopt();
       return { env: [process.env.NODE_EXTRA_CA_CERTS, process.env.SKILL_UP_EXTRA_CA_CERTS ?? 'unset'], same: !hooked };`,
      { SKILL_UP_EXTRA_CA_CERTS: CA, NODE_EXTRA_CA_CERTS: '' },
    );
    expect(result).toEqual({ env: ['', 'unset'], same: true });
  });

  it('trustExtraCaCertsNow installs it at once (for the ES module entry, whose imports no hook sees)', async () => {
    const { result } = await child(
      `extra.adoptExtraCaCerts();
       extra.trustExtraCaCertsNow();
       const https = await import('node:https');
       const status = await new Promise((res) => https.get(${JSON.stringify(url)}, { agent: false }, (r) => { r.resume(); res(r.statusCode); }).on('error', (e) => res(e.code)));
       return { tls: process.moduleLoadList.includes('NativeModule tls'), status };`,
      { SKILL_UP_EXTRA_CA_CERTS: CA },
    );
    expect(result).toEqual({ tls: true, status: 200 });
  });

  it("names every option of Node's tls.createSecureContext that shapes a context", async () => {
    // Node's own sources (--expose-internals): the options its two functions destructure.
    const { result } = await child(
      `const src = require('_tls_common').createSecureContext.toString() + require('internal/tls/secure-context').configSecureContext.toString();
       const names = new Set();
       for (const [, list] of src.matchAll(/const\\s*\\{([^}]*)\\}\\s*=\\s*options/g)) for (const item of list.split(',')) { const name = item.trim().split(/\\s|=/)[0]; if (name) names.add(name); }
       for (const [, name] of src.matchAll(/let\\s*\\{\\s*(\\w+)\\s*\\}\\s*=\\s*options/g)) names.add(name);
       return { node: [...names].sort(), ours: [...extra.CONTEXT_KEYS].sort() };`,
      {},
      ['--expose-internals'],
    );
    expect((result.node as string[]).length).toBeGreaterThan(15);
    expect(result.ours).toEqual(result.node);
  });
});

describe('through the launcher: skill-up run with NODE_EXTRA_CA_CERTS naming the test CA', () => {
  let server: Awaited<ReturnType<typeof serveHttps>>;
  const paths: string[] = [];
  beforeAll(async () => {
    server = await serveHttps((req, res) => {
      paths.push(req.url ?? '');
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        // The custom engine's SessionResult, or the simulator's model deciding to stop.
        if (req.url === '/run') res.end(JSON.stringify({ exit_code: 0, final_message: 'served over https' }));
        else res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: '{"action":"stop","reason":"asked to stop"}' } }] }));
      });
    });
  });
  afterAll(() => server.close());

  /** Runs `skill-up run` on `skill` through the launcher; its exit code, output and first job. */
  async function runSuite(skill: string, env: Record<string, string | undefined>) {
    const out = join(skill, '..', `out-${paths.length}`);
    const r = await runCli(['run', skill, '--output-dir', out], { bin: LAUNCHER, env: { SIM_KEY: 'test-key', ...env } });
    const job = (JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')) as { jobs: { status: string; reason?: string; turns: { source?: string; stop_reason?: string }[] }[] }).jobs[0]!;
    return { ...r, job };
  }

  it('a custom HTTP engine on an https URL works with the variable, and fails on the certificate without it', async () => {
    const skill = writeSkill({
      'evals/eval.yaml': `schema_version: v1alpha1\nengine:\n  name: https-agent\n  custom:\n    transport: http\n    http: { url: "${server.url}run" }\ncases:\n  files: [evals/cases/*.yaml]\n`,
      'evals/cases/a.yaml': 'input: { prompt: hello }\nexpect: { must_contain: ["served over https"] }\n',
    });
    const trusted = await runSuite(skill, { NODE_EXTRA_CA_CERTS: CA });
    expect(trusted.code, trusted.stderr + trusted.stdout).toBe(0);
    expect(trusted.job.status).toBe('pass');
    expect(trusted.stderr).not.toContain('Warning');
    const untrusted = await runSuite(skill, { NODE_EXTRA_CA_CERTS: undefined });
    expect(untrusted.code).toBe(3);
    expect(untrusted.job.reason).toContain(`POST ${server.url}run failed: unable to verify the first certificate`);
  });

  it("the user simulator's fetch trusts it too", async () => {
    const skill = writeSkill({
      'evals/eval.yaml': `schema_version: v1alpha1\nengine:\n  name: echo-agent\n  custom:\n    transport: local\n    response_format: text\n    conversation_mode: stateful\n    local: { command: echo, args: ["agent answered"] }\nuser_simulator: { provider: openai, protocol: openai, model: sim, base_url: "${server.url}v1", api_key_env: SIM_KEY }\ncases:\n  files: [evals/cases/*.yaml]\n`,
      'evals/cases/trip.yaml': 'input: { prompt: Plan a trip. }\nuser_simulator: { scenario: Stop at once. }\nexpect: { must_contain: ["agent answered"] }\n',
    });
    const before = paths.length;
    const trusted = await runSuite(skill, { NODE_EXTRA_CA_CERTS: CA });
    expect(trusted.code, trusted.stderr + trusted.stdout).toBe(0);
    expect(trusted.job.turns.map((t) => [t.source, t.stop_reason])).toEqual([['case', 'simulator_stop: asked to stop']]);
    expect(paths.slice(before)).toEqual(['/v1/chat/completions']);
    const untrusted = await runSuite(skill, { NODE_EXTRA_CA_CERTS: undefined });
    expect(untrusted.code).toBe(3);
    expect(untrusted.job.reason).toContain(`request to ${server.url}v1/chat/completions failed: fetch failed`);
  });

  it('an unreadable file: the warning once, and the run goes on with the default roots', async () => {
    const skill = writeSkill({
      'evals/eval.yaml': `schema_version: v1alpha1\nengine:\n  name: https-agent\n  custom:\n    transport: http\n    http: { url: "${server.url}run" }\ncases:\n  files: [evals/cases/*.yaml]\n  parallelism: 1\ntrials: 2\n`,
      'evals/cases/a.yaml': 'input: { prompt: hello }\nexpect: { must_contain: ["served over https"] }\n',
    });
    const missing = join(TLS_FIXTURES, 'no-such-ca.pem');
    const r = await runSuite(skill, { NODE_EXTRA_CA_CERTS: missing });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain('2 of 2 trial(s) errored');
    expect(r.job.reason).toContain('unable to verify the first certificate');
    expect(r.stderr.split('\n').filter((l) => l.startsWith('Warning:'))).toEqual([`Warning: Ignoring extra certs from \`${missing}\`, load failed: ENOENT: no such file or directory, open '${missing}'`]);
  });
});
