/**
 * The HTML report: one self-contained file (inline CSS and JS, no network, no web fonts)
 * rendered with Handlebars from the templates in `src/report/html/templates/` and the assets in
 * `src/report/html/assets/`, read from skill-up's package root so the same files serve the
 * sources (vitest) and the build (`dist/`).
 *
 * Safety: the run data is embedded as JSON in `<script type="application/json" id="data">`
 * with `<`, `>`, `&`, U+2028 and U+2029 escaped, the page's script inserts every datum with
 * `textContent` (never `innerHTML`), and a Content-Security-Policy allows only the page's own
 * inline script and style (by SHA-256 hash) and no network request at all.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { packageRoot } from '../../util/package-root.js';
import type { ResultDoc } from '../result-json.js';
import { buildReportData, scriptSafeJson } from './data.js';
import { buildView, engineOrder, runStats, type ReportView } from './view.js';

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

interface Compiled {
  template: Handlebars.TemplateDelegate<TemplateContext>;
  css: string;
  js: string;
  csp: string;
}

let compiled: Compiled | undefined;

/** Folder holding `templates/` and `assets/`. */
export function htmlReportDir(): string {
  return join(packageRoot(), 'src', 'report', 'html');
}

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/** Reads and compiles the templates and assets once per process. */
function load(): Compiled {
  if (compiled) return compiled;
  const dir = htmlReportDir();
  const hb = Handlebars.create();
  const partials = join(dir, 'templates', 'partials');
  for (const f of readdirSync(partials)) {
    if (f.endsWith('.hbs')) hb.registerPartial(f.slice(0, -4), readFileSync(join(partials, f), 'utf8'));
  }
  hb.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  const template = hb.compile<TemplateContext>(readFileSync(join(dir, 'templates', 'report.hbs'), 'utf8'), { strict: true });
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
  return (compiled = { template, css, js, csp });
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
  const { template, css, js, csp } = load();
  const engines = engineOrder(doc);
  const view = buildView(doc, engines, runStats(doc));
  const data = scriptSafeJson(buildReportData(doc, engines, opts.transcripts));
  return template({ ...view, css, js, data, csp });
}
