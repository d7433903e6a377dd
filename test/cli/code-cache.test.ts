/**
 * The executable's bundle and its V8 code cache (src/cli/bundle-loader.cts, scripts/bundle.mjs;
 * issue 13): a command writes its cache once, reuses it untouched, recovers from a corrupt or
 * unwritable one, writes nothing when turned off, and prints exactly what the unbundled ES module
 * entry prints. The report packages come from the vendor bundle, with a cache of their own.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from './helpers.js';

const ESM_ENTRY = fileURLToPath(new URL('../../dist/src/cli/bin.js', import.meta.url));
const BUNDLE = fileURLToPath(new URL('../../dist/src/cli/skill-up.bundle.cjs', import.meta.url));
const VENDOR = fileURLToPath(new URL('../../dist/src/cli/skill-up.vendor.cjs', import.meta.url));
const LOADER = fileURLToPath(new URL('../../dist/src/cli/bundle-loader.cjs', import.meta.url));

function skill(): string {
  return writeSkill({
    'evals/eval.yaml':
      'schema_version: v1alpha1\nengine:\n  name: instant\n  custom:\n    transport: local\n    response_format: text\n    local: { command: "echo", args: ["done"] }\ncases:\n  files: [evals/cases/*.yaml]\n',
    'evals/cases/a.yaml': 'input:\n  prompt: "say done"\nexpect:\n  must_contain: [done]\n',
  });
}

/** The cache files of `root`'s code-cache folder. */
function caches(root: string): string[] {
  const dir = join(root, 'code-cache');
  return existsSync(dir) ? readdirSync(dir).map((n) => join(dir, n)) : [];
}

describe('the executable runs from its bundle with a code cache', () => {
  it('the build wrote the bundle, holding the generated validators (so the code cache covers them)', () => {
    expect(existsSync(BUNDLE), `${BUNDLE} is missing: run \`npm run build\` (scripts/bundle.mjs)`).toBe(true);
    const text = readFileSync(BUNDLE, 'utf8');
    expect(text).toMatch(/var require_validators_generated = __commonJS\(/);
    expect(text).toContain('bundledValidators = () => __bundledValidators;');
    expect(text).not.toContain('const bundledValidators = undefined;');
  });

  it('the bundle is pure ASCII, so the loader\'s Latin-1 read gives exactly its text; strings that hold other characters are escapes', () => {
    const bytes = readFileSync(BUNDLE);
    expect(bytes.findIndex((b) => b > 0x7f)).toBe(-1);
    // A message with non-ASCII characters (an ellipsis) survives as an escape, printed as the character.
    expect(bytes.toString('latin1')).toContain('\\u2026');
  });

  it('writes one cache per command, then reuses it without rewriting it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const dir = skill();
    const first = await runCli(['validate', dir], { env: { SKILL_UP_CACHE_DIR: root } });
    expect(first.code, first.stderr).toBe(0);
    const [file, ...more] = caches(root);
    expect(more).toEqual([]);
    expect(file).toMatch(/\/skill-up\.validate\.v\d+\.\d+\.\d+-[a-z0-9]+-[0-9a-f]{8}-\d+-\d+\.bin$/);
    expect(statSync(file!).size).toBeGreaterThan(10_000);
    expect(statSync(file!).mode & 0o777).toBe(0o600);
    const before = statSync(file!);
    const second = await runCli(['validate', dir], { env: { SKILL_UP_CACHE_DIR: root } });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const after = statSync(file!);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    // Another command gets its own cache beside it.
    expect((await runCli(['run', dir, '--dry-run'], { env: { SKILL_UP_CACHE_DIR: root } })).code).toBe(0);
    expect(caches(root).map((f) => f.split('/').pop()!.split('.').slice(0, 2).join('.')).sort()).toEqual(['skill-up.run+dry', 'skill-up.validate']);
  });

  it('a command that ends at a config error (exit 2) writes no cache: the next one that runs further does', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const bad = writeSkill({ 'evals/eval.yaml': 'schema_version: v1alpha1\ntrails: 3\n' });
    const r = await runCli(['validate', bad], { env: { SKILL_UP_CACHE_DIR: root } });
    expect(r.code, r.stderr).toBe(2);
    expect(caches(root)).toEqual([]);
    expect((await runCli(['validate', skill()], { env: { SKILL_UP_CACHE_DIR: root } })).code).toBe(0);
    expect(caches(root)).toHaveLength(1);
  });

  it('a corrupt cache is rejected by V8, the command still runs, and the cache is written anew', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const dir = skill();
    expect((await runCli(['validate', dir], { env: { SKILL_UP_CACHE_DIR: root } })).code).toBe(0);
    const [file] = caches(root);
    writeFileSync(file!, Buffer.alloc(4096, 0x5a));
    const r = await runCli(['validate', dir], { env: { SKILL_UP_CACHE_DIR: root } });
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(file!).equals(Buffer.alloc(4096, 0x5a))).toBe(false);
  });

  it('a cache damaged past its header (which V8 does not check: Node 20 aborted or crashed on it) is ignored and rewritten, the command\'s and the vendor bundle\'s', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const dir = skill();
    const run = (out: string) => runCli(['run', dir, '--output-dir', join(root, out), '--format', 'json,junit,html'], { env: { SKILL_UP_CACHE_DIR: root } });
    expect((await run('a')).code).toBe(0);
    const files = caches(root).filter((f) => /skill-up\.(run|@vendor)\./.test(f));
    expect(files).toHaveLength(2);
    for (const file of files) {
      const bytes = readFileSync(file);
      // Flip 16 bytes well inside the V8 data, as a bad disk or a torn copy would.
      for (const at of [64, 100, Math.floor(bytes.length / 2)]) for (let i = 0; i < 16; i++) bytes[at + i]! ^= 0xa5;
      writeFileSync(file, bytes);
    }
    const damaged = new Map(files.map((f) => [f, readFileSync(f)]));
    const r = await run('b');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Fatal error|unreachable|internal error/);
    expect(readFileSync(join(root, 'b', 'iteration-1', 'report.xml'), 'utf8')).toContain('<testsuites');
    for (const file of files) expect(readFileSync(file).equals(damaged.get(file)!), file).toBe(false);
    // And the rewritten caches serve the next run.
    expect((await run('c')).code).toBe(0);
  });

  it('SKILL_UP_CODE_CACHE=0 writes nothing; an unwritable cache costs only speed', async () => {
    const off = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const dir = skill();
    const r = await runCli(['validate', dir], { env: { SKILL_UP_CACHE_DIR: off, SKILL_UP_CODE_CACHE: '0' } });
    expect(r.code, r.stderr).toBe(0);
    expect(caches(off)).toEqual([]);
    // The cache root is a file: nothing can be created under it.
    const blocked = join(mkdtempSync(join(tmpdir(), 'skill-up-code-cache-')), 'a-file');
    writeFileSync(blocked, 'not a folder');
    const b = await runCli(['validate', dir], { env: { SKILL_UP_CACHE_DIR: blocked } });
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).not.toMatch(/internal error|ENOTDIR/);
  });

  it('prints exactly what the ES module entry prints: a run with a script judge (execa, imported by the bundle)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const dir = writeSkill({
      'evals/eval.yaml':
        'schema_version: v1alpha1\nengine:\n  name: instant\n  custom:\n    transport: local\n    response_format: text\n    local: { command: "echo", args: ["done"] }\ncases:\n  files: [evals/cases/*.yaml]\n',
      'evals/cases/a.yaml': 'input:\n  prompt: "say done"\nexpect:\n  must_contain: [done]\njudges:\n  - type: script\n    id: ok\n    script_path: evals/judges/ok.sh\n',
      'evals/judges/ok.sh': '#!/bin/sh\necho \'{"passed": true, "score": 1}\'\n',
    });
    const bundled = await runCli(['run', dir, '--output-dir', join(root, 'a'), '--format', 'json'], { env: { SKILL_UP_CACHE_DIR: root } });
    const esm = await runCli(['run', dir, '--output-dir', join(root, 'b'), '--format', 'json'], { bin: ESM_ENTRY, env: { SKILL_UP_CACHE_DIR: root } });
    expect(bundled.code, bundled.stderr).toBe(0);
    expect(esm.code, esm.stderr).toBe(0);
    const shape = (s: string) => s.replace(/\d+(\.\d+)?(ms|s)\b/g, 'T').replace(new RegExp(root, 'g'), 'ROOT').replace(/\/(a|b)\//g, '/X/');
    expect(shape(bundled.stderr)).toBe(shape(esm.stderr));
  });

  it('the build wrote the vendor bundle: junit-report-builder, handlebars/runtime and the precompiled templates, pure ASCII, and the bundle takes them from it', () => {
    expect(existsSync(VENDOR), `${VENDOR} is missing: run \`npm run build\` (scripts/bundle.mjs)`).toBe(true);
    const bytes = readFileSync(VENDOR);
    expect(bytes.findIndex((b) => b > 0x7f)).toBe(-1);
    const text = bytes.toString('latin1');
    expect(text).toMatch(/"junit-report-builder": \(\) => require_/);
    expect(text).toMatch(/"handlebars\/runtime": \(\) => require_/);
    expect(text).toMatch(/"..\/report\/html\/templates.precompiled.cjs": \(\) => require_/);
    const bundle = readFileSync(BUNDLE, 'latin1');
    expect(bundle).toContain('__skillUpVendor("junit-report-builder")');
    expect(bundle).toContain('__skillUpVendor("handlebars/runtime")');
    expect(bundle).toContain('__skillUpVendor("../report/html/templates.precompiled.cjs")');
    expect(bundle).not.toMatch(/requireCjs\("junit-report-builder"\)|require\("handlebars\/runtime"\)/);
  });

  it('a run writing junit and html loads the vendor bundle with its own cache, written once and reused; the reports are the ES module entry\'s', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const dir = skill();
    const run = (out: string, bin?: string) => runCli(['run', dir, '--output-dir', join(root, out), '--format', 'json,junit,html'], { ...(bin ? { bin } : {}), env: { SKILL_UP_CACHE_DIR: root } });
    const first = await run('a');
    expect(first.code, first.stderr).toBe(0);
    const vendor = caches(root).filter((f) => /\/skill-up\.@vendor\.v\d+\.\d+\.\d+-[a-z0-9]+-[0-9a-f]{8}-\d+-\d+\.bin$/.test(f));
    expect(vendor).toHaveLength(1);
    expect(statSync(vendor[0]!).size).toBeGreaterThan(10_000);
    const before = statSync(vendor[0]!);
    const second = await run('b');
    expect(second.code, second.stderr).toBe(0);
    expect([statSync(vendor[0]!).ino, statSync(vendor[0]!).mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    const esm = await run('c', ESM_ENTRY);
    expect(esm.code, esm.stderr).toBe(0);
    // Times and durations differ from run to run: every number is compared as a number.
    const report = (out: string, file: string) =>
      readFileSync(join(root, out, 'iteration-1', file), 'utf8')
        .replace(new RegExp(`${root}/[abc]/`, 'g'), 'OUT/')
        .replace(/\d+/g, '0');
    for (const file of ['report.xml', 'report.html']) {
      expect(report('b', file), file).toBe(report('c', file));
      expect(report('a', file), file).toBe(report('b', file));
    }
  });

  it('a run writing only result.json never loads the vendor bundle', async () => {
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    const r = await runCli(['run', skill(), '--output-dir', join(root, 'out'), '--format', 'json'], { env: { SKILL_UP_CACHE_DIR: root } });
    expect(r.code, r.stderr).toBe(0);
    expect(caches(root).filter((f) => f.includes('@vendor'))).toEqual([]);
    expect(caches(root).filter((f) => f.includes('skill-up.run.'))).toHaveLength(1);
  });

  it('the vendor loader takes a package from the vendor bundle, and from node_modules when the vendor bundle is missing or unreadable', () => {
    const require = createRequire(BUNDLE);
    const { vendorLoader } = require(LOADER) as { vendorLoader(file: string, r: NodeJS.Require): (s: string) => unknown };
    const root = mkdtempSync(join(tmpdir(), 'skill-up-code-cache-'));
    // No cache file from this test process (it would be written when the worker exits).
    process.env.SKILL_UP_CODE_CACHE = '0';
    try {
      const fromVendor = vendorLoader(VENDOR, require)('junit-report-builder') as { newBuilder(): unknown };
      const fromModules = require('junit-report-builder') as object;
      // The vendor bundle's own copy: a working builder, not node_modules' instance.
      expect(typeof fromVendor.newBuilder).toBe('function');
      expect(fromVendor).not.toBe(fromModules);
      // Missing, or not JavaScript: node_modules' copy, and the bundle-relative templates resolve too.
      const broken = join(root, 'skill-up.vendor.cjs');
      writeFileSync(broken, '}{ not javascript');
      for (const file of [join(root, 'missing.cjs'), broken]) {
        const load = vendorLoader(file, require);
        expect(load('junit-report-builder')).toBe(fromModules);
        expect((load('../report/html/templates.precompiled.cjs') as { hash: string }).hash).toMatch(/^[0-9a-f]{64}$/);
      }
      // Something the vendor bundle does not hold comes from node_modules as well.
      expect(vendorLoader(VENDOR, require)('yaml')).toBe(require('yaml'));
    } finally {
      delete process.env.SKILL_UP_CODE_CACHE;
    }
  });

  it('the CRC-32 computed where Node 20 has no zlib.crc32 (before 20.15) is zlib\'s', async () => {
    const { crc32Here } = createRequire(BUNDLE)(LOADER) as { crc32Here(b: Buffer): number };
    const { crc32 } = await import('node:zlib');
    expect(crc32Here(Buffer.from('123456789'))).toBe(0xcbf43926);
    const data = Buffer.alloc(100_003);
    for (let i = 0; i < data.length; i++) data[i] = (i * 2654435761) >>> 24;
    expect(crc32Here(data)).toBe(crc32(data));
    expect(crc32Here(Buffer.alloc(0))).toBe(0);
  });
});
