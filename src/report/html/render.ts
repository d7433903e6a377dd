/**
 * The HTML report: one self-contained file (inline CSS and JS, no network, no web fonts)
 * rendered with Handlebars from the templates in `src/report/html/templates/` and the assets in
 * `src/report/html/assets/`, read from skill-up's package root so the same files serve the
 * sources (vitest) and the build (`dist/`).
 *
 * Templates: the build precompiles them (scripts/precompile-templates.mjs, precompile.ts) into
 * `templates.precompiled.cjs` beside this module, which is then rendered with the runtime-only
 * `handlebars/runtime`. That module is used only while the hash it carries matches the
 * templates found at run time (templates.ts `templatesHash`); when it is absent (vitest runs
 * src/) or stale, the templates are compiled here with the full Handlebars, as the build does,
 * into the same bytes (test/report/html-precompiled.test.ts).
 *
 * Safety: the run data is embedded as JSON in `<script type="application/json" id="data">`
 * with `<`, `>`, `&`, U+2028 and U+2029 escaped, the page's script inserts every datum with
 * `textContent` (never `innerHTML`), and a Content-Security-Policy allows only the page's own
 * inline script and style (by SHA-256 hash) and no network request at all.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type Handlebars from 'handlebars';
import { packageRoot } from '../../util/package-root.js';
import type { ResultDoc } from '../result-json.js';
import { buildReportData, reportDataPieces, scriptSafeJson } from './data.js';
import { buildView, engineOrder, runStats, type ReportView } from './view.js';
import { readTemplateSources, TEMPLATE_OPTIONS, templatesHash } from './templates.js';

// Handlebars is CommonJS and loaded on demand: the runtime only, unless templates must be compiled.
const require = createRequire(import.meta.url);

/** Options of {@link renderHtmlReport}. */
export interface HtmlReportOptions {
  /**
   * transcript.json values (the normalised `Transcript`, camelCase) keyed by job id
   * (`result.jobs[].id`, e.g. `hello/with_skill/run-1`) or job folder (`output_dir`). Optional:
   * result.json's turns already hold the tool calls; a transcript adds each call's output and a
   * turn's engine error.
   */
  transcripts?: Record<string, unknown>;
}

/** What the main template receives. */
interface TemplateContext extends ReportView {
  css: string;
  js: string;
  data: string;
  csp: string;
}

/** The templates ready to render, with the page's assets. @internal exported for tests. */
export interface Compiled {
  template: Handlebars.TemplateDelegate<TemplateContext>;
  /** Where the template came from: the build's precompiled module, or compiled in this process. */
  source: 'precompiled' | 'compiled';
  css: string;
  js: string;
  csp: string;
}

/** The module scripts/precompile-templates.mjs writes (src/report/html/precompile.ts). */
interface PrecompiledModule {
  hash: string;
  main: Parameters<typeof Handlebars.template>[0];
  partials: Record<string, Parameters<typeof Handlebars.template>[0]>;
}

let compiled: Compiled | undefined;

/** Folder holding `templates/` and `assets/`. */
export function htmlReportDir(): string {
  return join(packageRoot(), 'src', 'report', 'html');
}

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/**
 * The precompiled module at `file` (undefined: the build's, beside this module); undefined when
 * there is none (null: do not look). The build's is required by its literal name, which the
 * executable's bundle takes from its vendor bundle, under that bundle's code cache (scripts/bundle.mjs).
 */
function readPrecompiled(file: string | null | undefined): PrecompiledModule | undefined {
  if (file === null) return undefined;
  try {
    return (file === undefined ? require('./templates.precompiled.cjs') : require(file)) as PrecompiledModule;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw e;
  }
}

/** Reads and compiles the templates and assets once per process. */
function load(): Compiled {
  return (compiled ??= loadTemplates());
}

/** Reads and makes the templates now (once per process), ahead of the first {@link renderHtmlReport}. @throws as {@link loadTemplates}. */
export function prepareHtmlReport(): void {
  load();
}

/**
 * Reads the templates and assets, and makes the template: from the precompiled module at
 * `precompiledFile` (default: the build's, `templates.precompiled.cjs` beside this module) when it exists and its hash
 * matches the templates, else by compiling them with the full Handlebars.
 * @internal exported for tests (render.ts caches the default once per process).
 * @throws Error when a template or asset cannot be read or parsed, or an asset holds its closing tag.
 */
export function loadTemplates(precompiledFile?: string | null): Compiled {
  const dir = htmlReportDir();
  const sources = readTemplateSources(dir);
  const runtime = require('handlebars/runtime') as typeof Handlebars;
  const pre = readPrecompiled(precompiledFile);
  const eq = (a: unknown, b: unknown) => a === b;
  let template: Handlebars.TemplateDelegate<TemplateContext>;
  let source: Compiled['source'];
  if (pre && pre.hash === templatesHash(sources, runtime.VERSION)) {
    const hb = runtime.create();
    for (const [name, spec] of Object.entries(pre.partials)) hb.registerPartial(name, hb.template(spec));
    hb.registerHelper('eq', eq);
    template = hb.template<TemplateContext>(pre.main);
    source = 'precompiled';
  } else {
    const hb = (require('handlebars') as typeof Handlebars).create();
    for (const [name, text] of sources.partials) hb.registerPartial(name, text);
    hb.registerHelper('eq', eq);
    template = hb.compile<TemplateContext>(sources.main, { ...TEMPLATE_OPTIONS });
    source = 'compiled';
  }
  const css = readFileSync(join(dir, 'assets', 'report.css'), 'utf8');
  const js = readFileSync(join(dir, 'assets', 'report.client.js'), 'utf8');
  for (const [name, text, tag] of [['report.css', css, '</style'], ['report.client.js', js, '</script']] as const) {
    if (text.toLowerCase().includes(tag)) throw new Error(`${name} must not contain "${tag}"`);
  }
  // The policy: nothing may load or connect; only this inline script and style may apply.
  const csp = [
    "default-src 'none'",
    `script-src ${sha256(js)}`,
    `style-src ${sha256(css)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  return { template, source, css, js, csp };
}

/**
 * Renders a result.json document as one self-contained HTML page.
 *
 * The page shows the run header (skill, engines and versions, model, date, wall time, tokens,
 * cost, the exit code and what it means), the gates panel (every gate with threshold, figure,
 * interval, state and reason), per engine and variant the mean case pass rate with its 95%
 * interval clustered by case and the variant's errors, the with/without uplift (points with its
 * clustered interval, verdict and reason, p, wins/ties/losses, per-arm rates over the compared
 * cases and errors, dropped cases), small SVG charts (pass rate, mean duration, mean tokens per variant), and a case table
 * (per engine and variant one cell per trial) with status filter and case-id search. A case's
 * details (prompt or turns, final answers, assertions with evidence, transcripts with tool calls
 * and skill activations, with_skill and without_skill side by side) are built only when it is
 * opened, and the table holds 200 matching cases at a time, adding more as the reader scrolls.
 * Size: about 1 KB per job of typical content (10,000 jobs ≈ 10 MB, see test/report/html.test.ts).
 *
 * @param doc the result.json document (`buildResultJson`'s output, or a parsed result.json).
 * @returns the HTML text (UTF-8).
 */
export function renderHtmlReport(doc: ResultDoc, opts: HtmlReportOptions = {}): string {
  return renderWith(load(), doc, opts);
}

/**
 * {@link renderHtmlReport}'s text in pieces (the same bytes joined), for writing a large run's
 * page without holding it whole: the page is rendered around a placeholder for the embedded
 * data, which then comes row by row ({@link reportDataPieces}). Rendered whole, as
 * {@link renderHtmlReport} does, should the placeholder not occur exactly once in the page.
 */
export function* renderHtmlPieces(doc: ResultDoc, opts: HtmlReportOptions = {}): Generator<string> {
  const { template, css, js, csp } = load();
  const engines = engineOrder(doc);
  const view = buildView(doc, engines, runStats(doc));
  // A random token: no run data can contain it by chance.
  const mark = `\u0000skill-up-data-${randomBytes(12).toString('hex')}\u0000`;
  const page = template({ ...view, css, js, data: mark, csp });
  const at = page.indexOf(mark);
  if (at < 0 || page.indexOf(mark, at + 1) >= 0) {
    yield renderWith(load(), doc, opts);
    return;
  }
  yield page.slice(0, at);
  yield* reportDataPieces(doc, engines, opts.transcripts);
  yield page.slice(at + mark.length);
}

/** {@link renderHtmlReport} with the given templates. @internal exported for tests. */
export function renderWith(templates: Compiled, doc: ResultDoc, opts: HtmlReportOptions = {}): string {
  const { template, css, js, csp } = templates;
  const engines = engineOrder(doc);
  const view = buildView(doc, engines, runStats(doc));
  const data = scriptSafeJson(buildReportData(doc, engines, opts.transcripts));
  return template({ ...view, css, js, data, csp });
}
