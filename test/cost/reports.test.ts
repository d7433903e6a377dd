/**
 * Cost totals per engine and variant in every report built from result.json: summary.md,
 * report.html, benchmark.json (skill-up's `statistics`), JUnit properties; estimated amounts
 * marked, the reason of jobs not run shown.
 */
import { describe, expect, it } from 'vitest';
import { buildSummaryMarkdown } from '../../src/report/markdown.js';
import { buildJunit } from '../../src/report/junit.js';
import { buildBenchmarks } from '../../src/report/benchmark.js';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { buildReportData } from '../../src/report/html/data.js';
import { engineOrder } from '../../src/report/html/view.js';
import { job, makeDoc } from '../report/helpers.js';

const mixed = () =>
  makeDoc([
    job('a', 'with_skill', 1, [['x', true]], { costUsd: 0.2, costEstimated: true }),
    job('a', 'with_skill', 2, [['x', true]], { costUsd: 0.3, costEstimated: true }),
    job('a', 'without_skill', 1, [['x', false]], { costUsd: 0.1 }),
    job('a', 'without_skill', 2, [['x', false]], { costUsd: 0.15 }),
  ]);

describe('cost in the reports', () => {
  it('result.json: cost_estimated per job and in totals, the cost block per arm', () => {
    const doc = mixed();
    expect(doc.jobs[0]!.cost_estimated).toBe(true);
    expect(doc.jobs[2]!.cost_estimated).toBeUndefined();
    expect(doc.totals.cost_usd).toBeCloseTo(0.75, 12);
    expect(doc.totals.cost_estimated).toBe(true);
    expect(doc.cost.by_arm).toEqual([
      { engine: 'custom', variant: 'with_skill', usd: 0.5, estimated: true, priced_jobs: 2, jobs: 2 },
      { engine: 'custom', variant: 'without_skill', usd: 0.25, estimated: false, priced_jobs: 2, jobs: 2 },
    ]);
    expect(doc.cost.estimated).toBe(true);
  });

  it('summary.md: the run total and each arm, estimated ones marked', () => {
    const md = buildSummaryMarkdown(mixed());
    expect(md).toContain(' · ~$0.75 (estimated)');
    const row = (v: string) => md.split('\n').find((l) => l.startsWith('| agent (custom) | ' + v))!;
    expect(row('with_skill')).toMatch(/\| ~\$0\.50 \(estimated\) \|$/);
    expect(row('without_skill')).toMatch(/\| \$0\.25 \|$/);
  });

  it('summary.md, HTML and JUnit say why jobs were not run and that the run is partial', () => {
    const doc = makeDoc([job('a', 'with_skill', 1, [['x', true]], { costUsd: 1 })], { notRun: 3, notRunReason: '--max-cost $1.00 reached', exitCode: 4 });
    expect(doc.not_run_reason).toBe('--max-cost $1.00 reached');
    const md = buildSummaryMarkdown(doc);
    expect(md).toContain('3 not run (--max-cost $1.00 reached)');
    expect(md).toContain('> ⚠️ Partial run: 3 job(s) not run: --max-cost $1.00 reached. The gates decide on what ran');
    expect(renderHtmlReport(doc)).toContain('⚠ partial · 3 not run: --max-cost $1.00 reached');
    const xml = buildJunit(doc);
    expect(xml).toContain('<property name="not_run" value="3"/>');
    expect(xml).toContain('<property name="not_run_reason" value="--max-cost $1.00 reached"/>');
  });

  it('HTML: the header total and each engine card’s arms, and the per-job estimate flag for the page script', () => {
    const doc = mixed();
    const html = renderHtmlReport(doc);
    expect(html).toContain('<div><dt>Cost</dt><dd>~$0.75 (estimated)</dd></div>');
    expect(html).toContain('<td class="num">~$0.50 (estimated)</td>');
    expect(html).toContain('<td class="num">$0.25</td>');
    const data = buildReportData(doc, engineOrder(doc));
    expect(data.j[0]![10]).toBe(1);
    expect(data.j[2]!.length).toBe(10);
  });

  it('JUnit: each suite (engine × variant) carries its cost and the run total', () => {
    const xml = buildJunit(mixed());
    expect(xml).toContain('<property name="cost_usd" value="0.5"/>');
    expect(xml).toContain('<property name="cost_estimated" value="true"/>');
    expect(xml).toContain('<property name="cost" value="~$0.50 (estimated)"/>');
    expect(xml).toContain('<property name="cost_usd" value="0.25"/>');
    expect(xml).toContain('<property name="cost_estimated" value="false"/>');
    expect(xml.match(/<property name="cost.total" value="~\$0.75 \(estimated\)"\/>/g)).toHaveLength(2);
  });

  it('benchmark.json: cost_usd and cost_estimated per configuration under statistics', () => {
    const [b] = buildBenchmarks(mixed());
    const c = b!.benchmark.statistics.configurations;
    expect(c.with_skill).toMatchObject({ cost_estimated: true });
    expect(c.with_skill!.cost_usd).toBeCloseTo(0.5, 12);
    expect(c.without_skill).toMatchObject({ cost_usd: 0.25, cost_estimated: false });
  });
});
