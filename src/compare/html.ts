/**
 * The comparison as one self-contained HTML page: the verdict, the sources, a table per group
 * (pass rate old → new, change with its 95 % interval, counts, the paired test, the gate),
 * every gate's reason and a table of every case (changed ones first).
 *
 * Safety, as the main report (src/report/html/render.ts): no script at all, inline CSS only,
 * and a Content-Security-Policy that allows just that stylesheet (by its SHA-256 hash) and no
 * network request. Every text from a run is HTML-escaped (`&`, `<`, `>`, `"`, `'`).
 */
import { createHash } from 'node:crypto';
import { formatP } from '../stats/summarise.js';
import type { Comparison } from './compare.js';
import { CHANGE_TEXT, modeText, pct, pts, sideText, verdictText } from './format.js';

/** `s` with the five HTML specials replaced by entities: safe in element content and in quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}

const CSS = `:root{--fg:#1f2328;--bg:#fff;--muted:#59636e;--border:#d1d9e0;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--head:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9198a1;--border:#3d444d;--pass:#3fb950;--fail:#f85149;--warn:#d29922;--head:#151b23}}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0;padding:24px}
main{max-width:1200px;margin:0 auto}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.muted{color:var(--muted)}code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
table{border-collapse:collapse;width:100%;margin:8px 0}th,td{border:1px solid var(--border);padding:4px 8px;text-align:left;vertical-align:top}
th{background:var(--head)}td.num{text-align:right;font-variant-numeric:tabular-nums}td.id{word-break:break-all}
.regressed,.fail{color:var(--fail);font-weight:600}.improved,.pass{color:var(--pass);font-weight:600}.inconclusive,.not_graded{color:var(--warn);font-weight:600}
.new,.removed{color:var(--muted);font-style:italic}ul.gates{padding-left:20px}ul.gates li{margin:4px 0}`;

const sha256 = (s: string) => `'sha256-${createHash('sha256').update(s, 'utf8').digest('base64')}'`;

/** The page's policy: nothing may load, connect or run; only the inline stylesheet applies. */
export const COMPARE_CSP = ["default-src 'none'", `style-src ${sha256(CSS)}`, "img-src 'none'", "base-uri 'none'", "form-action 'none'"].join('; ');

/** Renders the page. Pure. @returns the HTML text (UTF-8). */
export function comparisonHtml(c: Comparison): string {
  const e = escapeHtml;
  const v = verdictText(c);
  const side = (a: Comparison['old']) => `<code>${e(a.source)}</code> <span class="muted">(${e(a.skill)}, iteration ${a.iteration}, ${a.trials} trial(s))</span>`;
  const groupRows = c.groups
    .map((g) => {
      const gate = c.gates.find((x) => x.name === 'no_regression' && x.engine === g.name);
      const ci = g.interval ? ` [${pts(g.interval.low)}, ${pts(g.interval.high)}]` : '';
      const k = g.counts;
      const cells = [g.pairedCases, `${pct(g.oldRate)} → ${pct(g.newRate)}`, `${pts(g.delta)}${ci}`, k.regressed, k.improved, k.unchanged, k.new, k.removed, k.not_graded, g.pAdjusted === null ? '—' : formatP(g.pAdjusted)];
      return `<tr><td class="id">${e(g.name)}</td>${cells.map((x) => `<td class="num">${e(String(x))}</td>`).join('')}<td class="${gate ? gate.state : ''}">${gate ? e(gate.state) : '—'}</td></tr>`;
    })
    .join('\n');
  const gates = c.gates.map((g) => `<li><span class="${g.state}">${e(g.state.toUpperCase())}</span> <strong>${e(g.name)}</strong>${g.engine ? ` · ${e(g.engine)}` : ''}: ${e(g.reason)}</li>`).join('\n');
  const caseRows = c.cases
    .map((x) => `<tr><td class="id">${e(x.engine)}</td><td class="id"><code>${e(x.caseId)}</code></td><td class="${x.change}">${e(CHANGE_TEXT[x.change])}</td><td>${e(sideText(x.before))}</td><td>${e(sideText(x.after))}</td><td class="num">${x.delta === null ? '—' : e(pts(x.delta))}</td></tr>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${e(COMPARE_CSP)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${e(`skill-up compare: ${v.title}`)}</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<main>
<h1>${e(`${v.icon} skill-up compare: ${v.title}`)}</h1>
<p>${e(`${v.meaning[0]!.toUpperCase()}${v.meaning.slice(1)}.`)}</p>
<p>Compares the ${e(modeText(c))}.<br><strong>old</strong> ${side(c.old)}<br><strong>new</strong> ${side(c.new)}</p>
<h2>Engines</h2>
<table>
<thead><tr><th>Engine</th><th>Paired cases</th><th>Pass rate old → new</th><th>Change, points [95% CI by case]</th><th>Regressed</th><th>Improved</th><th>Unchanged</th><th>New</th><th>Removed</th><th>Not graded</th><th>Paired test p</th><th>Gate</th></tr></thead>
<tbody>
${groupRows}
</tbody>
</table>
${c.excluded.map((x) => `<p class="muted">${e(x.engine)}: not compared: ${e(x.reason)}.</p>`).join('\n')}
<h2>Gates</h2>
<ul class="gates">
${gates}
</ul>
<h2>Cases</h2>
<table>
<thead><tr><th>Engine</th><th>Case</th><th>Change</th><th>Old</th><th>New</th><th>Points</th></tr></thead>
<tbody>
${caseRows}
</tbody>
</table>
<p class="muted">Pass rates count graded trials only (errors and skips are neither passes nor fails). The change interval is a 95% case-clustered interval of the mean change; the paired test is an exact two-sided sign-flip permutation test over the paired cases; the gate is skill-up's no_regression gate (exact stratified one-sided test, margin ${e(String(Math.round(c.options.margin * 100)))} points, α = ${e(String(c.options.alpha))}).</p>
</main>
</body>
</html>
`;
}
