#!/usr/bin/env node
// Build step (package.json `build`, after tsc): bundles skill-up's own compiled modules
// (dist/src, dist/engines) from the CLI's start (dist/src/cli/entry.js) into one CommonJS file,
// dist/src/cli/skill-up.bundle.cjs, which the executable loads with a V8 code cache
// (src/cli/bundle-loader.cts). The packages every run loads before its first engine starts
// (yaml, picomatch, re2js, fastest-levenshtein) are bundled too, so the
// code cache covers them (measured: yaml alone took 28 ms to resolve, compile and run outside
// it); so are the ES-only p-limit and yocto-queue, which CommonJS cannot require on every Node 20.
// In skill-up's modules `requireCjs('<one of those>')` (src/util/cjs.ts) becomes a plain
// `require`, which esbuild follows; a bundled CommonJS package still runs only at its first require.
// Other packages stay outside, loaded as before: those a run loads only for some work (handlebars's
// compiler, ajv, dockerode, execa). The two a run loads while its first engine works, for the
// reports (junit-report-builder and handlebars/runtime), go into a second file,
// dist/src/cli/skill-up.vendor.cjs, with the HTML report's precompiled templates, which the loader
// runs at their first use with a code cache of its own (src/cli/bundle-loader.cts vendorLoader):
// `requireCjs('<one of them>')` or `require('<one of them>')` becomes `__skillUpVendor('<it, as
// the bundle's folder requires it>')`.
// Each module's `import.meta.url` becomes the URL of its own dist file, so every path a module
// finds beside itself (the generated validators, the precompiled templates, the package root)
// is the same in the bundle as outside it. Dynamic imports stay lazy: esbuild runs a module's
// body only when its import() is first reached. A dynamic import() of a package (execa is
// ES-only) becomes `__skillUpImport(…)`, which the loader passes in: code run by vm.Script can
// only import() through an experimental hook that prints a warning.
//
//   node scripts/bundle.mjs
import { readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outfile = join(root, 'dist/src/cli/skill-up.bundle.cjs');
const bundled = new Set(['p-limit', 'yocto-queue', 'yaml', 'picomatch', 're2js', 'fastest-levenshtein', 'fast-deep-equal']);
/**
 * The ajv runtime helpers the generated validators require (every run validates its suite
 * before its first engine starts: resolving and compiling them outside the bundle took 2-3 ms);
 * ajv's compiler stays outside, loaded only when a validator must be compiled.
 */
const bundledPaths = /^ajv\/dist\/runtime\//;
/** A package's name from an import specifier (`@scope/name/sub` → `@scope/name`). */
const packageName = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
/**
 * What the vendor bundle holds (see the top of this file): each module as skill-up's modules
 * require it (a package, or a generated file by its name beside the requiring module) → as the
 * bundle's folder, dist/src/cli, requires it (the vendor bundle's entry, and the loader's
 * fallback when the vendor bundle cannot be read).
 */
const VENDORED = new Map([
  ['junit-report-builder', 'junit-report-builder'],
  ['handlebars/runtime', 'handlebars/runtime'],
  // The HTML report's precompiled templates (src/report/html/render.ts): their functions run at
  // the first report, and from node_modules' plain require each was compiled then.
  ['./templates.precompiled.cjs', '../report/html/templates.precompiled.cjs'],
]);
const vendorFile = join(root, 'dist/src/cli/skill-up.vendor.cjs');
/** The vendored modules some module of skill-up's requires (each must be, or the vendor bundle is dead weight). */
const vendoredCalls = new Set();
/** Packages the bundle may import() at run time. */
const DYNAMIC_PACKAGES = new Set(['execa']);

/** Replaces `import.meta.url` in each of skill-up's modules by its own file's URL, found from the bundle's place at run time. */
const ownUrls = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /[\\/]dist[\\/](src|engines)[\\/].*\.js$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      const rel = relative(dirname(outfile), args.path).split('\\').join('/');
      let contents = text
        .replaceAll('import.meta.url', `__skillUpUrl(${JSON.stringify(rel)})`)
        .replace(/\b(requireCjs|require)\((["'])([^"']+)\2\)/g, (call, fn, _q, spec) => {
          if (VENDORED.has(spec)) {
            vendoredCalls.add(spec);
            return `__skillUpVendor(${JSON.stringify(VENDORED.get(spec))})`;
          }
          return fn === 'requireCjs' && bundled.has(packageName(spec)) ? `require(${JSON.stringify(spec)})` : call;
        });
      // The generated validators join the bundle (src/config/schema.ts bundledValidators), so the code cache covers them.
      if (/[\\/]dist[\\/]src[\\/]config[\\/]schema\.js$/.test(args.path)) {
        const line = 'const bundledValidators = undefined;';
        if (!contents.includes(line)) throw new Error(`${args.path}: \`${line}\` not found (src/config/schema.ts changed?)`);
        // An import, not a require: schema.ts's own `require` (createRequire) would shadow a bundled one.
        contents = `import * as __bundledValidators from './validators.generated.cjs';\n${contents.replace(line, 'const bundledValidators = () => __bundledValidators;')}`;
      }
      return { contents, loader: 'js' };
    });
  },
};

/** Every bare package import stays a runtime require/import, but for {@link bundled}. */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      return bundled.has(packageName(args.path)) || bundledPaths.test(args.path) ? undefined : { path: args.path, external: true };
    });
  },
};

/**
 * Node built-ins that many commands never use but that would load when the bundle starts (a
 * module's imports are required when the module is first initialised): measured on Node 20 on
 * these machines, node:https 7 ms, node:child_process (with net and dgram) 5 ms, node:http 4 ms,
 * node:zlib 2 ms, node:readline 1 ms. In the bundle each `require("node:…")` of these becomes a
 * proxy that requires the module at its first use (a named import is read as a property at
 * each call, so it stays lazy; a namespace or default import copies the properties and loads
 * it at once, which is still correct). The spawn helper's program text (src/engine/spawner.ts)
 * uses single-quoted requires, which this leaves alone.
 */
const LAZY_BUILTINS = ['node:child_process', 'node:http', 'node:https', 'node:zlib', 'node:readline'];
const LAZY_BUILTIN = `const __skillUpLazy = (id) => {
  let m;
  const get = () => (m ??= require(id));
  return new Proxy({}, {
    get: (_, k) => get()[k],
    has: (_, k) => k in get(),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_, k) => { const d = Reflect.getOwnPropertyDescriptor(get(), k); return d && { ...d, configurable: true }; },
  });
};`;

const result = await build({
  entryPoints: [join(root, 'dist/src/cli/entry.js')],
  outfile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // The spawn helper's program is a function's source text (src/engine/spawner.ts): no renaming, no helpers injected.
  minify: false,
  keepNames: false,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  banner: { js: `const __skillUpUrl = (rel) => require('node:url').pathToFileURL(require('node:path').join(__dirname, rel)).href;\n${LAZY_BUILTIN}` },
  plugins: [externalPackages, ownUrls],
  metafile: true,
  write: false,
});
const imported = new Set();
// esbuild resolves every relative import() into the bundle, so one left in the text is inside a
// bundled package's comment (re2js's JSDoc types): only bare specifiers are rewritten.
let lazied = 0;
const text = result.outputFiles[0].text
  .replace(/\bimport\((["'])([^"'./][^"']*)\1\)/g, (_, _q, spec) => {
    imported.add(spec);
    return `__skillUpImport(${JSON.stringify(spec)})`;
  })
  .replace(/\brequire\("(node:[a-z_/]+)"\)/g, (call, id) => (LAZY_BUILTINS.includes(id) ? (lazied++, `__skillUpLazy(${JSON.stringify(id)})`) : call));
// Only packages are imported at run time; anything else here would be a surprise worth a stop.
const unexpected = [...imported].filter((s) => !DYNAMIC_PACKAGES.has(s));
if (unexpected.length > 0) throw new Error(`unexpected dynamic import() in the bundle: ${unexpected.join(', ')}; add it to DYNAMIC_PACKAGES in scripts/bundle.mjs if it is a package`);
// esbuild escapes every non-ASCII character of strings, templates and regexes (charset: ascii),
// but copies comments as they are: the few that hold one (`…`, `→`) are escaped too, so the
// bundle is pure ASCII and the loader reads it as a one-byte string (src/cli/bundle-loader.cts:
// a UTF-8 decode of the 2.6 MB bundle took 21 ms, a Latin-1 one 3 ms). Inside a comment the
// escape is only text.
let escaped = 0;
/** `text` with every non-ASCII character written as a `\\uXXXX` escape (counted in `escaped`). */
const toAscii = (text) =>
  text.replace(/[^\p{ASCII}]/gu, (c) => {
    escaped++;
    let out = '';
    for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return out;
  });
const ascii = toAscii(text);
const tmp = `${outfile}.tmp-${process.pid}`;
await writeFile(tmp, ascii);
await rename(tmp, outfile);
const inputs = Object.keys(result.metafile.inputs).length;
console.log(`bundled ${inputs} modules into ${outfile} (${ascii.length} bytes, ASCII, ${escaped} characters of comments escaped; imported at run time: ${[...imported].join(', ') || 'none'}; ${lazied} built-in requires made lazy)`);

// The vendor bundle: a table of the vendored packages, each made at its first call.
const missing = [...VENDORED.keys()].filter((p) => !vendoredCalls.has(p));
if (missing.length > 0) throw new Error(`no module of skill-up's requires ${missing.join(', ')} any more: drop it from VENDORED in scripts/bundle.mjs`);
const vendor = await build({
  stdin: { contents: `module.exports = {\n${[...VENDORED.values()].map((p) => `  ${JSON.stringify(p)}: () => require(${JSON.stringify(p)}),`).join('\n')}\n};\n`, resolveDir: dirname(outfile), loader: 'js' },
  outfile: vendorFile,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  write: false,
});
const vendorText = toAscii(vendor.outputFiles[0].text);
await writeFile(`${vendorFile}.tmp-${process.pid}`, vendorText);
await rename(`${vendorFile}.tmp-${process.pid}`, vendorFile);
console.log(`bundled ${[...VENDORED.keys()].join(', ')} (${Object.keys(vendor.metafile.inputs).length} modules) into ${vendorFile} (${vendorText.length} bytes, ASCII)`);

