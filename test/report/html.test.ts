/**
 * The HTML report renderer, in Node: self-containment, safe embedding, statistics source, and
 * size and render time at 10,000 jobs. The page's behaviour in a browser is tested in
 * html.browser.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderHtmlPieces, renderHtmlReport } from '../../src/report/html/index.js';
import { buildReportData, clip, LIMITS, reportDataPieces, scriptSafeJson, type ReportData } from '../../src/report/html/data.js';
import { fmtInt, fmtMs, fmtPct, fmtPts, fmtTokens, fmtUsd } from '../../src/report/html/format.js';
import { engineOrder } from '../../src/report/html/view.js';
import { packageRoot } from '../../src/util/package-root.js';
import { syntheticRun } from './fixtures/synthetic-run.js';

const INJECT = '</script><img src=x onerror=alert(1)>';

/** Handlebars' escaping of `{{text}}`. */
const escapeHtml = (s: string) =>
  s.replace(/[&<>"'`=]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;', '`': '&#x60;', '=': '&#x3D;' })[c]!);

/** The embedded data of a rendered page, decoded. */
function embedded(html: string): ReportData {
  const m = /<script type="application\/json" id="data">([\s\S]*?)<\/script>/.exec(html);
  expect(m).not.toBeNull();
  return JSON.parse(m![1]!) as ReportData;
}

describe('renderHtmlReport', () => {
  const { doc, transcripts } = syntheticRun({ cases: 6, engines: ['claude_code', 'codex'], trials: 3, inject: INJECT });
  const html = renderHtmlReport(doc, { transcripts });

  it('is one self-contained page: inline CSS and JS, no URL to fetch', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<link[^>]+rel="stylesheet"/i);
    expect(html).not.toMatch(/<script[^>]+src=/i);
    expect(html).not.toMatch(/@import|@font-face|url\(/i);
    expect(html).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/); // the SVG namespace is the only URL
    expect(html).toContain('<style>');
    expect(html).toContain('<link rel="icon" href="data:,">'); // no favicon request either
  });

  it('forbids every network request and any script but its own by Content-Security-Policy', () => {
    const attr = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)![1]!;
    const csp = attr.replace(/&#x([0-9a-f]+);/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))).replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    expect(csp).toContain("default-src 'none'");
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = (s: string) => `'sha256-${createHash('sha256').update(s).digest('base64')}'`;
    expect(csp).toContain(`script-src ${hash(script)}`);
    expect(csp).toContain(`style-src ${hash(style)}`);
  });

  it('embeds the data so that no run output can close the script element or become markup', () => {
    // The only `</script` in the page are the two the template writes.
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).not.toContain('<img');
    const data = embedded(html);
    expect(data.s).toContain(`File created ${INJECT}`); // from the transcript's tool output
    expect(data.s.some((s) => s.includes(INJECT))).toBe(true);
  });

  it('escapes <, >, &, U+2028 and U+2029 in embedded JSON, which parses back to the same value', () => {
    const v = { a: '</script><!-- & \u2028 \u2029 -->', b: ['<', '>', '&'] };
    const text = scriptSafeJson(v);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(text).toContain('\\u003c/script\\u003e');
    expect(JSON.parse(text)).toEqual(v);
  });

  it('shows the header, the per-variant pass rates with their case-clustered intervals and errors, the uplift and the charts', () => {
    expect(html).toContain('<h1>house-style</h1>');
    expect(html).toContain('2.1.332');
    expect(html).toContain('claude-sonnet-4-5');
    expect(html).toContain('2026-03-01 09:00:00 UTC');
    expect(html).toContain('Pass rate <span class="ci-h">95% CI, clustered by case</span>');
    expect(html).not.toMatch(/Wilson 95%|95% Wilson/);
    for (const v of doc.summary.variants) {
      expect(html).toContain(`<span class="pr">${fmtPct(v.pass_rate)}</span> <span class="ci" title="95% CI, clustered by case (case-clustered Wilson): ${v.interval!.cases} case(s)`);
      expect(html).toContain(`${fmtPct(v.interval!.low)}–${fmtPct(v.interval!.high)}</span>`);
    }
    expect(html).toMatch(/<td class="num errs( st-error)?">\d+<\/td>/);
    for (const u of doc.summary.uplift) {
      expect(html).toContain(fmtPts(u.pass_rate_delta));
      expect(html).toContain(`<p class="u-reason">${escapeHtml(u.reason)}</p>`);
      expect(html).toContain(`<span class="verdict neutral">inconclusive</span>`);
    }
    // Two engines: each p-value is Holm-adjusted over both, and the report says so.
    expect(html.match(/Holm-adjusted over 2 engines/g)).toHaveLength(2);
    expect(html.match(/<figure class="chart/g)).toHaveLength(3);
    expect(html).toContain('Pass rate · 95% CI, clustered by case');
    expect(html).toContain('<th scope="colgroup" colspan="3" class="eng-h">codex</th>');
  });

  it('shows the gates in their own panel, and what the exit code means', () => {
    expect(html).toContain('<section class="gates" aria-labelledby="h-gates">');
    const panel = html.slice(html.indexOf('<section class="gates"'), html.indexOf('</section>', html.indexOf('<section class="gates"')));
    expect(panel.match(/<tr class="g-/g)).toHaveLength(doc.gates.length);
    for (const g of doc.gates) {
      expect(panel).toContain(`<th scope="row" class="mono">${g.name}</th>`);
      expect(panel).toContain(`<span class="gstate ${g.state}">${g.state.toUpperCase()}</span>`);
      expect(panel).toContain(`<td class="g-reason">${escapeHtml(g.reason)}</td>`);
    }
    expect(html).toMatch(new RegExp(`<span class="pill exit exit-${doc.exit_code}" title="[^"]+">exit ${doc.exit_code} · `));
  });

  it('computes the statistics and gates from the jobs when result.json has no usable summary', () => {
    const bare = { ...doc, summary: {} as typeof doc.summary, gates: undefined as unknown as typeof doc.gates };
    const out = renderHtmlReport(bare);
    expect(out).toContain('statistics computed from the jobs');
    const v = doc.summary.variants[0]!;
    expect(out).toContain(`${fmtPct(v.interval!.low)}–${fmtPct(v.interval!.high)}`);
    for (const g of doc.gates) expect(out).toContain(`<th scope="row" class="mono">${g.name}</th>`);
    expect(html).toContain('statistics from result.json summary');
    // A version-1 shaped summary is not read as if it were the new one.
    const old = JSON.parse(JSON.stringify(doc));
    for (const x of old.summary.variants) {
      x.wilson = x.interval;
      delete x.interval;
    }
    expect(renderHtmlReport(old)).toContain('statistics computed from the jobs');
  });

  it('lists the cases left out of an uplift, escaped', () => {
    const small = syntheticRun({ cases: 3, trials: 1, seed: 5 }).doc;
    const d = JSON.parse(JSON.stringify(small));
    d.summary.uplift[0].dropped = [{ case_id: '<b>odd</b>', reason: 'with_skill has no graded trial (1 error(s))' }];
    const out = renderHtmlReport(d);
    expect(out).toContain('<summary>1 case(s) left out of the comparison</summary>');
    expect(out).toContain('<li><code>&lt;b&gt;odd&lt;/b&gt;</code> — with_skill has no graded trial (1 error(s))</li>');
  });

  it('stores each string once, jobs as positional records, and the transcripts’ tool outputs', () => {
    const data = buildReportData(doc, engineOrder(doc), transcripts);
    expect(new Set(data.s).size).toBe(data.s.length);
    expect(data.j).toHaveLength(doc.jobs.length);
    expect(data.e).toEqual(['claude_code', 'codex']);
    const job = data.j[0]!;
    const detail = job[9];
    expect(detail[0]).toBe(doc.jobs[0]!.id); // unique to the job: inline, not in the string table
    const tool = detail[10][0]!.toolCalls[0]!;
    expect(tool[3]).toBeGreaterThanOrEqual(0); // the output came from the transcript
    const noTranscripts = buildReportData(doc, engineOrder(doc));
    expect(noTranscripts.j[0]![9][10][0]!.toolCalls[0]![3]).toBe(-1);
  });

  it('clips long texts and says how long they were', () => {
    const long = 'x'.repeat(LIMITS.toolOutput + 10);
    const c = clip(long, LIMITS.toolOutput);
    expect(c.length).toBeLessThan(long.length + 120);
    expect(c).toContain(`${(LIMITS.toolOutput + 10).toLocaleString('en-US')} characters in all`);
  });

  it('formats values for people', () => {
    expect([fmtPct(0.6667), fmtPct(null)]).toEqual(['67%', '—']);
    expect([fmtPts(1), fmtPts(-0.25), fmtPts(0)]).toEqual(['+100 pts', '−25 pts', '±0 pts']);
    expect([fmtMs(850), fmtMs(4100), fmtMs(65_000), fmtMs(3_720_000)]).toEqual(['850 ms', '4.1 s', '1m 05s', '1h 02m']);
    expect([fmtTokens(850), fmtTokens(75_234), fmtTokens(1_240_000), fmtTokens(5000)]).toEqual(['850', '75.2k', '1.24M', '5k']);
    expect([fmtUsd(1.2), fmtUsd(0.0042)]).toEqual(['$1.20', '$0.0042']);
  });

  it('groups thousands by hand as toLocaleString("en-US") does', () => {
    const values = [0, -0, 0.4, -0.4, 7, 999, 999.5, 1000, -1000, 12_345, 123_456.49, 1_234_567, -9_876_543_210, 2 ** 53, NaN, Infinity, -Infinity];
    for (let i = 0; i < 2000; i++) values.push((i % 2 ? -1 : 1) * Math.floor(10 ** ((i % 15) + Math.random())) + Math.random());
    // But for -0 (from -0.4), which toLocaleString writes as "-0".
    for (const v of values) expect(fmtInt(v), String(v)).toBe((Object.is(Math.round(v), -0) ? 0 : Math.round(v)).toLocaleString('en-US'));
    expect([fmtInt(-0), fmtInt(-0.4)]).toEqual(['0', '0']);
  });

  it('renders from the build (dist) as well as from the sources', () => {
    const dist = join(packageRoot(), 'dist', 'src', 'report', 'html', 'render.js');
    expect(existsSync(dist), `${dist} is missing: run npm run build`).toBe(true);
    const script = `import(${JSON.stringify(dist)}).then(m => { const h = m.renderHtmlReport(JSON.parse(process.argv[1])); process.stdout.write(String(h.length)); })`;
    const small = syntheticRun({ cases: 2, trials: 1 }).doc;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(small)], { encoding: 'utf8' });
    expect(Number(out)).toBeGreaterThan(10_000);
  });
});

describe('renderHtmlPieces', () => {
  it('gives the page of renderHtmlReport in pieces, the embedded data row by row', () => {
    const { doc, transcripts } = syntheticRun({ cases: 40, engines: ['claude_code', 'codex'], trials: 3, seed: 5 });
    doc.jobs[3]!.final_message = `${INJECT} \u2028 \u2029 & more`;
    const pieces = [...renderHtmlPieces(doc, { transcripts })];
    expect(pieces.join('')).toBe(renderHtmlReport(doc, { transcripts }));
    expect(pieces.length).toBeGreaterThan(3);
    expect([...reportDataPieces(doc, engineOrder(doc), transcripts)].join('')).toBe(scriptSafeJson(buildReportData(doc, engineOrder(doc), transcripts)));
    const empty = { ...doc, jobs: [] };
    expect([...reportDataPieces(empty, [])].join('')).toBe(scriptSafeJson(buildReportData(empty, [])));
  });
});

describe('renderHtmlReport at scale', () => {
  // Its render time is measured by `npm run bench` (reports), not asserted here.
  it('renders 10,000 jobs into under 20 MB', () => {
    // 1,250 cases × 2 engines × 2 variants × 2 trials = 10,000 jobs.
    const { doc, transcripts } = syntheticRun({ cases: 1250, engines: ['claude_code', 'codex'], trials: 2, seed: 7 });
    expect(doc.jobs).toHaveLength(10_000);
    const html = renderHtmlReport(doc, { transcripts });
    expect(Buffer.byteLength(html)).toBeLessThan(20 * 1024 * 1024);
  });
});
