/**
 * Engine resolution (override → pinned cache → PATH → newest cached), the CLI helpers
 * (`listEngines`, `checkEngine`, `installEngine`) and `skill-up engines …`. Executables are
 * small shell scripts standing in for engines; real npm installs are in cache.test.ts.
 */
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { cachedBinPath, sanitisePackage } from '../../src/engine/cache.js';
import { parseEngineSpec, runEnginesCommand } from '../../src/engine/engines-command.js';
import { KNOWN_ENGINES, binOverrideVar, findKnownEngine, findKnownEngineByPackage } from '../../src/engine/known.js';
import { checkEngine, findOnPath, installEngine, listEngines, probeVersion, resolveEngineBinary } from '../../src/engine/resolve.js';
import { EngineUnavailable } from '../../src/engine/types.js';

const PKG = '@anthropic-ai/claude-code';
let root: string;

async function fakeExe(path: string, version = '9.9.9'): Promise<string> {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, `#!/bin/sh\necho "${version} (Fake Engine)"\n`);
  await chmod(path, 0o755);
  return path;
}

async function fakeCached(cache: string, version: string): Promise<string> {
  return fakeExe(cachedBinPath(cache, PKG, version, 'claude'), version);
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'skill-up-resolve-test-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let n = 0;
/** A fresh, empty world: its own cache dir, a PATH dir, and env. */
async function world(extra: Record<string, string> = {}) {
  const dir = join(root, `w${++n}`);
  const cache = join(dir, 'cache');
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  const env: Record<string, string | undefined> = { PATH: bin, SKILL_UP_CACHE_DIR: cache, HOME: dir, ...extra };
  return { dir, cache, bin, env };
}

describe('known engines', () => {
  it('has the five npm engines with their executables', () => {
    expect(KNOWN_ENGINES.map((e) => [e.name, e.npmPackage, e.bin])).toEqual([
      ['claude_code', '@anthropic-ai/claude-code', 'claude'],
      ['codex', '@openai/codex', 'codex'],
      ['opencode', 'opencode-ai', 'opencode'],
      ['gemini_cli', '@google/gemini-cli', 'gemini'],
      ['qwen_code', '@qwen-code/qwen-code', 'qwen'],
    ]);
    expect(findKnownEngine('codex')?.bin).toBe('codex');
    expect(findKnownEngineByPackage('opencode-ai')?.name).toBe('opencode');
    expect(binOverrideVar('claude_code')).toBe('SKILL_UP_CLAUDE_CODE_BIN');
    expect(binOverrideVar('gemini-cli')).toBe('SKILL_UP_GEMINI_CLI_BIN');
  });
});

describe('resolveEngineBinary', () => {
  it('SKILL_UP_<ENGINE>_BIN wins over a pin, PATH and the cache', async () => {
    const w = await world();
    const exe = await fakeExe(join(w.dir, 'custom', 'my-claude'));
    await fakeExe(join(w.bin, 'claude'));
    await fakeCached(w.cache, '1.0.0');
    w.env.SKILL_UP_CLAUDE_CODE_BIN = exe;
    await expect(resolveEngineBinary({ npmPackage: PKG, bin: 'claude', version: '1.0.0', env: w.env })).resolves.toEqual({ path: exe, source: 'env' });
  });

  it('an override naming a command is looked up on PATH; one pointing at nothing throws', async () => {
    const w = await world();
    const exe = await fakeExe(join(w.bin, 'claude-nightly'));
    w.env.SKILL_UP_CLAUDE_CODE_BIN = 'claude-nightly';
    expect((await resolveEngineBinary({ npmPackage: PKG, bin: 'claude', env: w.env })).path).toBe(exe);
    w.env.SKILL_UP_CLAUDE_CODE_BIN = join(w.dir, 'nope');
    await expect(resolveEngineBinary({ npmPackage: PKG, bin: 'claude', env: w.env })).rejects.toThrow(EngineUnavailable);
    await expect(resolveEngineBinary({ npmPackage: PKG, bin: 'claude', env: w.env })).rejects.toThrow(/SKILL_UP_CLAUDE_CODE_BIN=.*no such executable/);
  });

  it('the override variable follows the engine name (explicit or from the package)', async () => {
    const w = await world();
    const exe = await fakeExe(join(w.dir, 'x', 'codex'));
    w.env.SKILL_UP_CODEX_BIN = exe;
    expect((await resolveEngineBinary({ npmPackage: '@openai/codex', bin: 'codex', env: w.env })).source).toBe('env');
    w.env.SKILL_UP_MY_AGENT_BIN = exe;
    expect((await resolveEngineBinary({ npmPackage: 'unknown-pkg', bin: 'agent', engine: 'my-agent', env: w.env })).path).toBe(exe);
  });

  it('a pinned version already cached is used without npm and without progress', async () => {
    const w = await world();
    const exe = await fakeCached(w.cache, '2.0.0');
    await fakeExe(join(w.bin, 'claude')); // PATH is ignored when pinned
    const lines: string[] = [];
    const r = await resolveEngineBinary({ npmPackage: PKG, bin: 'claude', version: '2.0.0', env: w.env, onProgress: (l) => lines.push(l) });
    expect(r).toEqual({ path: exe, version: '2.0.0', source: 'cache' });
    expect(lines).toEqual([]);
    expect(exe).toBe(join(w.cache, 'engines', 'anthropic-ai+claude-code@2.0.0', 'node_modules', '.bin', 'claude'));
  });

  it('without a pin: PATH first', async () => {
    const w = await world();
    const exe = await fakeExe(join(w.bin, 'claude'));
    await fakeCached(w.cache, '3.0.0');
    expect(await resolveEngineBinary({ npmPackage: PKG, bin: 'claude', env: w.env })).toEqual({ path: exe, source: 'path' });
  });

  it('without a pin and not on PATH: the newest cached version', async () => {
    const w = await world();
    await fakeCached(w.cache, '1.9.0');
    const newest = await fakeCached(w.cache, '1.10.0');
    await fakeCached(w.cache, '1.10.0-beta.1');
    // A folder without the executable (an interrupted manual copy) is not a version.
    await mkdir(join(w.cache, 'engines', `${sanitisePackage(PKG)}@9.0.0`), { recursive: true });
    expect(await resolveEngineBinary({ npmPackage: PKG, bin: 'claude', env: w.env })).toEqual({ path: newest, version: '1.10.0', source: 'cache' });
  });

  it('nothing anywhere: EngineUnavailable telling how to fix it', async () => {
    const w = await world();
    const err = await resolveEngineBinary({ npmPackage: PKG, bin: 'claude', env: w.env }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(EngineUnavailable);
    expect((err as Error).message).toContain('engine.version');
    expect((err as Error).message).toContain('skill-up engines install claude_code');
    expect((err as Error).message).toContain('SKILL_UP_CLAUDE_CODE_BIN');
  });

  it('findOnPath skips empty entries and non-executables', async () => {
    const w = await world();
    await writeFile(join(w.bin, 'plain'), 'x');
    expect(await findOnPath('plain', { PATH: `::${w.bin}` })).toBeUndefined();
    const exe = await fakeExe(join(w.bin, 'tool'));
    expect(await findOnPath('tool', { PATH: `::${w.bin}` })).toBe(exe);
  });
});

describe('probeVersion', () => {
  it('extracts x.y.z from `--version`', async () => {
    const w = await world();
    expect(await probeVersion(await fakeExe(join(w.bin, 'a'), '2.1.332'))).toBe('2.1.332');
    const codexLike = join(w.bin, 'codex');
    await writeFile(codexLike, '#!/bin/sh\necho "codex-cli 0.171.0"\n');
    await chmod(codexLike, 0o755);
    expect(await probeVersion(codexLike)).toBe('0.171.0');
  });

  it('throws EngineUnavailable with the output when it fails', async () => {
    const w = await world();
    const stub = join(w.bin, 'stub');
    await writeFile(stub, '#!/bin/sh\necho "claude native binary not installed" >&2\nexit 1\n');
    await chmod(stub, 0o755);
    await expect(probeVersion(stub)).rejects.toThrow(/exit code 1.*native binary not installed/s);
  });
});

describe('listEngines / checkEngine / installEngine', () => {
  it('lists every known engine with cached versions, PATH and override', async () => {
    const w = await world();
    await fakeCached(w.cache, '1.0.0');
    await fakeCached(w.cache, '1.2.0');
    const codex = await fakeExe(join(w.bin, 'codex'));
    w.env.SKILL_UP_GEMINI_CLI_BIN = '/opt/gemini';
    const rows = await listEngines(w.env);
    expect(rows.map((r) => r.name)).toEqual(KNOWN_ENGINES.map((e) => e.name));
    expect(rows[0]).toMatchObject({ name: 'claude_code', cachedVersions: ['1.2.0', '1.0.0'], onPath: undefined });
    expect(rows[1]).toMatchObject({ name: 'codex', cachedVersions: [], onPath: codex });
    expect(rows[3]!.override).toEqual({ variable: 'SKILL_UP_GEMINI_CLI_BIN', value: '/opt/gemini' });
  });

  it('checkEngine resolves like a run and reports the version; never throws', async () => {
    const w = await world();
    const exe = await fakeExe(join(w.bin, 'claude'), '2.1.332');
    expect(await checkEngine('claude_code', undefined, { env: w.env })).toEqual({ name: 'claude_code', ok: true, path: exe, source: 'path', version: '2.1.332' });
    const missingPin = await checkEngine('claude_code', '7.7.7', { env: w.env });
    expect(missingPin.ok).toBe(false);
    expect(missingPin.message).toContain('skill-up engines install claude_code@7.7.7');
    await fakeCached(w.cache, '7.7.7');
    expect(await checkEngine('claude_code', '7.7.7', { env: w.env })).toMatchObject({ ok: true, source: 'cache', version: '7.7.7' });
    expect((await checkEngine('qwen_code', undefined, { env: w.env })).ok).toBe(false);
    expect((await checkEngine('nope', undefined, { env: w.env })).message).toMatch(/unknown engine/);
  });

  it('installEngine rejects unknown engines and reuses a cached version', async () => {
    const w = await world();
    await expect(installEngine('nope', '1.0.0', { env: w.env })).rejects.toThrow(/unknown engine "nope"/);
    const exe = await fakeCached(w.cache, '5.0.0');
    await expect(installEngine('claude_code', '5.0.0', { env: w.env })).resolves.toEqual({
      name: 'claude_code',
      npmPackage: PKG,
      version: '5.0.0',
      path: exe,
      installed: false,
    });
  });
});

describe('skill-up engines', () => {
  let saved: NodeJS.ProcessEnv;
  let out: string;
  let err: string;
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
  beforeEach(() => {
    saved = { ...process.env };
    // The global set-up points this at the real binary; these tests build their own worlds.
    delete process.env.SKILL_UP_CLAUDE_CODE_BIN;
    out = '';
    err = '';
  });
  afterEach(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  });

  it('--help shows the commands and examples', async () => {
    expect(await runEnginesCommand(['--help'], io)).toBe(0);
    expect(out).toContain('install <engine>[@version]');
    expect(out).toContain('Examples:');
    expect(out).toContain('skill-up engines install claude_code@2.1.332');
    expect(await runEnginesCommand(['install', '--help'], io)).toBe(0);
  });

  it('usage errors exit 2', async () => {
    expect(await runEnginesCommand([], io)).toBe(2);
    expect(await runEnginesCommand(['frobnicate'], io)).toBe(2);
    expect(err).toContain('unknown command "frobnicate"');
    expect(await runEnginesCommand(['install'], io)).toBe(2);
    expect(await runEnginesCommand(['install', 'nope@1'], io)).toBe(2);
    expect(await runEnginesCommand(['check', 'nope'], io)).toBe(2);
    expect(await runEnginesCommand(['list', '--bogus'], io)).toBe(2);
  });

  it('a misspelt command or engine gets a did-you-mean; an empty word gets none', async () => {
    expect(await runEnginesCommand(['chek'], io)).toBe(2);
    expect(err).toContain('unknown command "chek"; did you mean `check`?');
    err = '';
    expect(await runEnginesCommand(['check', 'claude_cod'], io)).toBe(2);
    expect(err).toContain('unknown engine "claude_cod"; did you mean `claude_code`?');
    err = '';
    expect(await runEnginesCommand(['install', 'gemni@1.0.0'], io)).toBe(2);
    expect(err).toMatch(/unknown engine "gemni"; did you mean `gemini`\?/);
    err = '';
    expect(await runEnginesCommand(['check', '@1.0.0'], io)).toBe(2);
    expect(err).toContain('unknown engine "@1.0.0" (known: ');
    expect(err).not.toContain('did you mean');
    expect(out).toBe('');
  });

  it('every alias eval.yaml accepts names its engine: `check gemini`, `install claude-code@…`', async () => {
    const w = await world();
    await fakeExe(join(w.bin, 'claude'), '2.1.332');
    Object.assign(process.env, w.env);
    expect(await runEnginesCommand(['check', 'claude-code'], io)).toBe(0);
    expect(out).toMatch(/^claude_code: ok 2\.1\.332 at .*\/bin\/claude \(path\)$/m);
    out = '';
    process.env.SKILL_UP_GEMINI_CLI_BIN = join(w.bin, 'no-such-gemini');
    expect(await runEnginesCommand(['check', 'gemini'], io)).toBe(1); // known, checked, and missing here
    expect(out).toMatch(/^gemini_cli: unavailable: /m);
    expect(err).toBe('');
    out = '';
    await fakeCached(w.cache, '2.1.332');
    expect(await runEnginesCommand(['install', 'claude-code@2.1.332'], io)).toBe(0);
    expect(out).toContain('claude_code 2.1.332 (already installed)');
  });

  it('list prints a table (and JSON with --json)', async () => {
    const w = await world();
    await fakeCached(w.cache, '2.1.332');
    Object.assign(process.env, w.env);
    expect(await runEnginesCommand(['list'], io)).toBe(0);
    expect(out).toMatch(/^ENGINE\s+PACKAGE\s+CACHED\s+ON PATH$/m);
    expect(out).toMatch(/^claude_code\s+@anthropic-ai\/claude-code\s+2\.1\.332\s+-$/m);
    expect(out).toContain('cache: ~/cache/engines'); // HOME is the world's folder here
    out = '';
    expect(await runEnginesCommand(['list', '--json'], io)).toBe(0);
    const parsed = JSON.parse(out) as { engines: { name: string; cachedVersions: string[] }[] };
    expect(parsed.engines[0]).toMatchObject({ name: 'claude_code', cachedVersions: ['2.1.332'] });
  });

  it('check: ok → 0, an engine unavailable → 1', async () => {
    const w = await world();
    await fakeExe(join(w.bin, 'claude'), '2.1.332');
    Object.assign(process.env, w.env);
    expect(await runEnginesCommand(['check', 'claude_code'], io)).toBe(0);
    expect(out).toMatch(/^claude_code: ok 2\.1\.332 at .*\/bin\/claude \(path\)$/m);
    out = '';
    expect(await runEnginesCommand(['check', 'claude_code', 'codex'], io)).toBe(1);
    expect(out).toMatch(/^codex: unavailable: /m);
    out = '';
    expect(await runEnginesCommand(['check'], io)).toBe(1); // every known engine is checked: the missing ones count
    out = '';
    expect(await runEnginesCommand(['check', '--json', 'claude_code'], io)).toBe(0);
    expect(JSON.parse(out)).toEqual([expect.objectContaining({ name: 'claude_code', ok: true, version: '2.1.332' })]);
  });

  it('install of a cached version reports it and how to pin it', async () => {
    const w = await world();
    await fakeCached(w.cache, '2.1.332');
    Object.assign(process.env, w.env);
    expect(await runEnginesCommand(['install', 'claude_code@2.1.332'], io)).toBe(0);
    expect(out).toContain('claude_code 2.1.332 (already installed)');
    expect(out).toContain('engine: { name: claude_code, version: 2.1.332 }');
  });

  it('parseEngineSpec', () => {
    expect(parseEngineSpec('codex')).toEqual({ name: 'codex' });
    expect(parseEngineSpec('codex@0.171.0')).toEqual({ name: 'codex', version: '0.171.0' });
    expect(parseEngineSpec('codex@')).toEqual({ name: 'codex', version: undefined });
  });
});
