/**
 * Start-up cost (issue 13): `run --dry-run`, `validate` and `--help` of the built CLI load only
 * what they use. A loader hook (test/fixtures/load-recorder/) records every module loaded; the
 * heavy packages (execa, junit-report-builder, handlebars, the scripted model's HTTP server,
 * and ajv's schema compiler, since `npm run build` writes the validators as standalone code)
 * must not be among them.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill } from './helpers.js';

const REGISTER = fileURLToPath(new URL('../fixtures/load-recorder/register.mjs', import.meta.url));
const GENERATED = fileURLToPath(new URL('../../dist/src/config/validators.generated.cjs', import.meta.url));

/** Package folders (or dist modules) a start-up must not load, with why they are heavy. */
const HEAVY: [RegExp, string][] = [
  [/\/node_modules\/execa\//, 'execa (100+ modules)'],
  [/\/node_modules\/junit-report-builder\//, 'junit-report-builder (a 788 KB bundle)'],
  [/\/node_modules\/handlebars\//, 'handlebars'],
  [/\/node_modules\/ajv\/dist\/(core|ajv|2020)\.js$|\/node_modules\/ajv\/dist\/compile\//, "ajv's schema compiler"],
  [/\/dist\/src\/model\/server\.js$/, "the scripted model's HTTP server"],
  [/\/dist\/src\/run\/suite\.js$/, 'the run driver'],
];

function suite(): string {
  const cases: Record<string, string> = {};
  for (let i = 0; i < 5; i++) cases[`evals/cases/case-${i}.yaml`] = `input:\n  prompt: "job ${i}"\nexpect:\n  must_contain: [done]\n`;
  return writeSkill({
    'evals/eval.yaml':
      'schema_version: v1alpha1\nengine:\n  name: instant\n  custom:\n    transport: local\n    response_format: text\n    local: { command: "echo", args: ["done"] }\ncases:\n  files: [evals/cases/*.yaml]\n',
    ...cases,
  });
}

/** The ES module entry: skill-up's modules as separate files, so the recorder sees each one. */
const ESM_ENTRY = fileURLToPath(new URL('../../dist/src/cli/bin.js', import.meta.url));

/** Runs the CLI (`bin`: the executable by default) with the recorder; the URLs and paths of every module it loaded. */
async function loaded(args: string[], bin?: string): Promise<{ code: number | null; modules: string[]; stdout: string; stderr: string }> {
  const dir = suite();
  const out = join(dir, '..', 'loads.json');
  const r = await runCli(args.map((a) => (a === '<skill>' ? dir : a)), { bin, env: { NODE_OPTIONS: `--import="${REGISTER}"`, SKILL_UP_LOADS_OUT: out } });
  const rec = JSON.parse(readFileSync(out, 'utf8')) as { esm: string[]; cjs: string[] };
  return { ...r, modules: [...rec.esm.map((u) => (u.startsWith('file://') ? fileURLToPath(u) : u)), ...rec.cjs] };
}

describe('start-up loads only what the command uses', () => {
  it('the build wrote the standalone validators', () => {
    expect(existsSync(GENERATED), `${GENERATED} is missing: run \`npm run build\` (tsc, then scripts/build-validators.mjs)`).toBe(true);
  });

  for (const args of [['run', '<skill>', '--dry-run'], ['validate', '<skill>'], ['--help']]) {
    // The ES module entry shows each of skill-up's own modules; the bundle keeps their dynamic
    // imports lazy the same way (scripts/bundle.mjs), and the executable that loads it is
    // checked for the packages.
    it(`skill-up ${args.join(' ')} (ES module entry)`, async () => {
      const r = await loaded(args, ESM_ENTRY);
      expect(r.code, r.stderr).toBe(0);
      // The recorder works: the CLI's own entry point is among what it saw.
      expect(r.modules.some((m) => m.endsWith('/dist/src/cli/bin.js'))).toBe(true);
      if (args[0] !== '--help') {
        // yaml is CommonJS loaded from ESM: seen by the hook and in require.cache alike.
        expect(r.modules.some((m) => m.includes('/node_modules/yaml/'))).toBe(true);
        // The schemas were checked, by the generated code: ajv's runtime helpers it requires, not the compiler.
        expect(r.modules.some((m) => m.endsWith('/node_modules/ajv/dist/runtime/ucs2length.js'))).toBe(true);
      }
      const found = HEAVY.flatMap(([re, what]) => r.modules.filter((m) => re.test(m)).slice(0, 1).map((m) => `${what}: ${m}`));
      expect(found).toEqual([]);
    });

    it(`skill-up ${args.join(' ')} (the executable, from its bundle)`, async () => {
      const r = await loaded(args);
      expect(r.code, r.stderr).toBe(0);
      // It ran from the bundle: the loader is there, the separate modules are not.
      expect(r.modules.some((m) => m.endsWith('/dist/src/cli/bundle-loader.cjs'))).toBe(true);
      expect(r.modules.filter((m) => /\/dist\/(src|engines)\/.*\.js$/.test(m))).toEqual([]);
      // The packages every run needs before its first engine are inside the bundle (scripts/bundle.mjs), under its code cache.
      for (const pkg of ['yaml', 'picomatch', 're2js', 'fastest-levenshtein']) expect(r.modules.filter((m) => m.includes(`/node_modules/${pkg}/`)), pkg).toEqual([]);
      const found = HEAVY.flatMap(([re, what]) => r.modules.filter((m) => re.test(m)).slice(0, 1).map((m) => `${what}: ${m}`));
      expect(found).toEqual([]);
    });
  }
});

describe("start-up loads Node's heavy built-ins only when used (scripts/bundle.mjs LAZY_BUILTINS)", () => {
  for (const args of [['run', '<skill>', '--dry-run'], ['validate', '<skill>']]) {
    it(`skill-up ${args.join(' ')}: no node:child_process, node:http, node:https or node:zlib`, async () => {
      const dir = suite();
      const out = join(dir, '..', 'builtins.txt');
      const preload = join(dir, '..', 'record-builtins.cjs');
      writeFileSync(preload, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(out)}, process.moduleLoadList.join('\\n')));\n`);
      const r = await runCli(args.map((a) => (a === '<skill>' ? dir : a)), { env: { NODE_OPTIONS: `--require="${preload}"` } });
      expect(r.code, r.stderr).toBe(0);
      const builtins = readFileSync(out, 'utf8').split('\n');
      // The recorder works: a built-in every command loads is there.
      expect(builtins).toContain('NativeModule fs/promises');
      for (const m of ['child_process', 'http', 'https', 'zlib']) expect(builtins, m).not.toContain(`NativeModule ${m}`);
    });
  }
});
