import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { armsFromRuns, compareArms, comparisonHtml, comparisonJson, comparisonMarkdown, comparisonText, COMPARE_CSP, escapeHtml } from '../../src/compare/index.js';
import { doc, jobs, uniform } from './helpers.js';

const HOSTILE = '<script>alert(1)</script>|x';
const OPTS = { alpha: 0.05, margin: 0.1, maxErrorRate: 0 };

function hostile() {
  const before = { ...uniform(5, 'PPP'), [HOSTILE]: 'PPP', gone: 'PPF' };
  const after = { ...uniform(5, 'PPP'), [HOSTILE]: 'FFF', added: 'PFP' };
  return compareArms(armsFromRuns(doc(jobs(before, 'with_skill', 'eng<b>|y'), 'old/result.json'), doc(jobs(after, 'with_skill', 'eng<b>|y'), 'new/result.json', 2)), OPTS);
}

describe('the comparison renderings', () => {
  it('the console summary names the verdict, the changed cases and every gate', () => {
    const text = comparisonText(hostile());
    expect(text).toMatch(/^❌ compare \(with_skill pass rates of two runs\): regression: the new run is significantly worse; exit code 1\n/);
    expect(text).toContain(`  regressed    ${HOSTILE}: 3/3 (100%) → 0/3 (0%)\n`);
    expect(text).toContain('  new case     added: — → 2/3 (67%)\n');
    expect(text).toContain('  removed case gone: 2/3 (67%) → —\n');
    expect(text).toMatch(/✗ no_regression eng<b>\|y: FAIL: .*regressed \(/);
    expect(text).not.toMatch(/unchanged +case-1/);
    const ansi = comparisonText(compareArms(armsFromRuns(doc(jobs({ 'a\u001b[2Jb': 'PPP' })), doc(jobs({ 'a\u001b[2Jb': 'FFF' }))), OPTS));
    expect(ansi).not.toContain('\u001b');
  });

  it('Markdown escapes a hostile case id and engine name: no raw HTML, no broken table', () => {
    const md = comparisonMarkdown(hostile());
    expect(md).toMatch(/^## ❌ skill-up compare: regression\n/);
    // Every `<` outside the details block's own tags is escaped.
    expect(md.replace(/<\/?(details|summary)>/g, '')).not.toMatch(/(^|[^\\])</m);
    expect(md).toContain('\\<script\\>alert(1)\\</script\\>\\|x');
    const row = md.split('\n').find((l) => l.includes('alert(1)') && l.startsWith('| '))!;
    // 5 columns: 6 unescaped pipes.
    expect(row.replace(/\\\|/g, '').split('|')).toHaveLength(7);
    expect(row).toContain('regressed (-100 points)');
    expect(md).toContain('<details><summary>5 unchanged case(s)</summary>');
    expect(md.trimEnd().endsWith('</details>')).toBe(true);
  });

  it('Markdown stays under the size cap, counting the rows it left out', () => {
    const n = 1200;
    const before = uniform(n, 'PPP', 'a-rather-long-case-identifier-to-fill-the-comment');
    const after = Object.fromEntries(Object.keys(before).map((k, i) => [k, i % 3 === 0 ? 'FFF' : 'PPP']));
    const c = compareArms(armsFromRuns(doc(jobs(before)), doc(jobs(after))), OPTS);
    for (const maxBytes of [60_000, 8_000]) {
      const md = comparisonMarkdown(c, { maxBytes });
      expect(Buffer.byteLength(md, 'utf8')).toBeLessThanOrEqual(maxBytes);
      const left = Number(/_(\d+) case row\(s\) left out to stay under/.exec(md)?.[1]);
      const shown = md.split('\n').filter((l) => l.startsWith('| custom | a-rather')).length;
      expect(shown + left).toBe(n);
      expect(md).toContain('### Gates');
    }
    expect(Buffer.byteLength(comparisonMarkdown(hostile()), 'utf8')).toBeLessThan(60_000);
  });

  it('HTML is self-contained and escapes every datum', () => {
    const html = comparisonHtml(hostile());
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;|x');
    expect(html).toContain('eng&lt;b&gt;|y');
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="${escapeHtml(COMPARE_CSP)}">`);
    expect(COMPARE_CSP).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src 'none'; base-uri 'none'; form-action 'none'$/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(html.match(/<style>/g)).toHaveLength(1);
    const css = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    expect(COMPARE_CSP).toContain(`'sha256-${createHash('sha256').update(css, 'utf8').digest('base64')}'`);
    expect(escapeHtml(`a&b"c'd`)).toBe('a&amp;b&quot;c&#39;d');
  });

  it('JSON has snake_case keys and every case', () => {
    const j = comparisonJson(hostile()) as Record<string, any>;
    expect(j.kind).toBe('skill-up.compare');
    expect(j.version).toBe(1);
    expect(j.exit_code).toBe(1);
    expect(j.verdict).toBe('regression');
    expect(j.cases).toHaveLength(8);
    expect(j.cases[0]).toMatchObject({ engine: 'eng<b>|y', case_id: HOSTILE, change: 'regressed', before: { pass_rate: 1 }, after: { pass_rate: 0 } });
    expect(j.groups[0]).toMatchObject({ paired_cases: 6, old_engine: 'eng<b>|y', counts: { not_graded: 0 } });
    expect(j.gates[1]).toMatchObject({ name: 'no_regression', state: 'fail', regressions: [{ case_id: HOSTILE }] });
    expect(j.options).toEqual({ alpha: 0.05, margin: 0.1, max_error_rate: 0, errors_as_failures: false, on_inconclusive: null });
    expect(JSON.stringify(j)).not.toMatch(/"[a-z]+[A-Z]/);
  });
});
