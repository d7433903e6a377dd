/**
 * Issue 15: the HTML report's case table with five engines (17 columns with the baseline) at a
 * 1280 px wide window. The table is wider than the window, so the page scrolls sideways; the
 * case column must still show its header ("Case") and the case ids whole, never shrink to
 * "C.", and stay in view (sticky at the left edge) while the page is scrolled to the right.
 *
 * Chromium is required, as in html.browser.test.ts (`/usr/bin/chromium` or SKILL_UP_CHROMIUM).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { syntheticRun } from './fixtures/synthetic-run.js';

const CHROMIUM = process.env.SKILL_UP_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ENGINES = ['claude_code', 'codex', 'opencode', 'gemini_cli', 'qwen_code'];

/** The case column's header button and first case id: text width against the box showing it, and the box's place in the window. */
function caseColumn(page: Page) {
  return page.evaluate(() => {
    const measure = (el: HTMLElement | null) => {
      if (!el) return undefined;
      const r = el.getBoundingClientRect();
      return { text: el.textContent?.trim() ?? '', scrollWidth: el.scrollWidth, clientWidth: el.clientWidth, left: r.left, right: r.right, width: r.width };
    };
    const th = document.querySelector<HTMLElement>('#cases thead th.c-case');
    return {
      header: measure(th?.querySelector<HTMLElement>('button.sort') ?? null),
      headerCell: measure(th ?? null),
      firstId: measure(document.querySelector<HTMLElement>('#rows tr.case .cid')),
      firstIdCell: measure(document.querySelector<HTMLElement>('#rows tr.case .c-case')),
      viewport: window.innerWidth,
      pageWidth: document.documentElement.scrollWidth,
    };
  });
}

describe('HTML report: five engines at 1280 px', () => {
  let browser: Browser | undefined;
  let home: string;
  let dir: string;
  const run = syntheticRun({ cases: 6, engines: ENGINES, trials: 2, seed: 5 });

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`Chromium is required for the HTML report browser tests and was not found at ${CHROMIUM}: install it with \`apt-get install chromium\`, or set SKILL_UP_CHROMIUM to its path`);
    home = mkdtempSync(join(tmpdir(), 'skill-up-chromium-home-'));
    const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, env: { ...inherited, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache') } });
    dir = mkdtempSync(join(tmpdir(), 'skill-up-html-wide-'));
    writeFileSync(join(dir, 'report.html'), renderHtmlReport(run.doc, { transcripts: run.transcripts }));
  });
  afterAll(async () => {
    await browser?.close();
    for (const d of [home, dir]) if (d) rmSync(d, { recursive: true, force: true });
  });

  it('the case column keeps its header and ids whole, and stays in view when the page scrolls sideways', async () => {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(pathToFileURL(join(dir, 'report.html')).href);
    await page.waitForSelector('html[data-ready="1"]', { timeout: 15_000 });
    expect(await page.locator('#cases thead th.eng-h').count()).toBe(5);

    const at0 = await caseColumn(page);
    // The header says "Case", all of it: its text fits its button, and the button fits its cell.
    expect(at0.header!.text).toBe('Case');
    expect(at0.header!.scrollWidth, JSON.stringify(at0.header)).toBeLessThanOrEqual(at0.header!.clientWidth);
    expect(at0.header!.right).toBeLessThanOrEqual(at0.headerCell!.right + 0.5);
    expect(at0.header!.left).toBeGreaterThanOrEqual(0);
    // A case id is shown whole too (the synthetic ids are about 20 characters).
    expect(at0.firstId!.scrollWidth, JSON.stringify(at0.firstId)).toBeLessThanOrEqual(at0.firstId!.clientWidth);
    expect(at0.firstIdCell!.width).toBeGreaterThan(100);

    // Scrolled fully to the right, the case column is still at the left edge, whole.
    await page.evaluate(() => window.scrollTo(document.documentElement.scrollWidth, 0));
    const scrolled = await caseColumn(page);
    expect(scrolled.pageWidth).toBeGreaterThan(scrolled.viewport); // 17 columns do not fit: the sticky column is what is tried
    {
      expect(scrolled.headerCell!.left).toBeGreaterThanOrEqual(-0.5);
      expect(scrolled.firstIdCell!.left).toBeGreaterThanOrEqual(-0.5);
      expect(scrolled.header!.scrollWidth).toBeLessThanOrEqual(scrolled.header!.clientWidth);
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});
