/**
 * The HTML report in a real browser (headless Chromium through playwright-core): no console or
 * page errors, no network request but the file itself, run output shown as text and never as
 * markup, status filter, case-id search, a case's with_skill and without_skill side by side,
 * and a large run staying usable. Screenshots go to test-artifacts/ (report.png, report-dark.png).
 *
 * Chromium is required, never skipped: without it these tests fail and say how to install it.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { packageRoot } from '../../src/util/package-root.js';
import { syntheticRun } from './fixtures/synthetic-run.js';

const CHROMIUM = process.env.SKILL_UP_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const INJECT = '</script><img src=x onerror=alert(1)>';
const ARTIFACTS = join(packageRoot(), 'test-artifacts');

/** What a page did besides rendering: console errors, uncaught errors, requests, dialogs. */
interface Watch {
  errors: string[];
  requests: string[];
  dialogs: string[];
}

function watch(page: Page): Watch {
  const w: Watch = { errors: [], requests: [], dialogs: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') w.errors.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => w.errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => w.requests.push(r.url()));
  page.on('dialog', (d) => {
    w.dialogs.push(d.message());
    void d.dismiss();
  });
  return w;
}

/** A Chromium launched by {@link launchChromium}, with the temporary HOME it was given. */
interface IsolatedBrowser {
  browser: Browser;
  /** The temporary HOME (and XDG_* folders under it) the browser process sees. */
  home: string;
  /** Closes the browser and removes `home`. */
  close(): Promise<void>;
}

/**
 * Launches Chromium with HOME, XDG_CONFIG_HOME, XDG_CACHE_HOME and XDG_DATA_HOME in a fresh
 * temporary folder: it writes crash-report settings (`~/.config/chromium/Crash Reports`) and
 * caches there, never in the HOME the tests run with.
 */
async function launchChromium(): Promise<IsolatedBrowser> {
  const home = mkdtempSync(join(tmpdir(), 'skill-up-chromium-home-'));
  const inherited = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
  const env = { ...inherited, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache'), XDG_DATA_HOME: join(home, '.local', 'share') };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS, env });
  return {
    browser,
    home,
    close: async () => {
      await browser.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Visible case rows' ids. */
const visibleIds = (page: Page) => page.$$eval('#rows tr.case:not([hidden]) .cid', (els) => els.map((e) => e.textContent ?? ''));

describe('HTML report in Chromium', () => {
  let isolated: IsolatedBrowser | undefined;
  let browser: Browser;
  let context: BrowserContext;
  let dir: string;
  let file: string;
  const run = syntheticRun({ cases: 8, engines: ['claude_code', 'codex'], trials: 3, inject: INJECT, seed: 11 });
  const caseIds = [...new Set(run.doc.jobs.map((j) => j.case_id))];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`Chromium is required for the HTML report browser tests and was not found at ${CHROMIUM}: install it with \`apt-get install chromium\` (Debian/Ubuntu; CI does), or set SKILL_UP_CHROMIUM to its path`);
    }
    isolated = await launchChromium();
    browser = isolated.browser;
    context = await browser.newContext({ viewport: { width: 1440, height: 1000 }, colorScheme: 'light' });
    dir = mkdtempSync(join(tmpdir(), 'skill-up-html-'));
    file = join(dir, 'report.html');
    writeFileSync(file, renderHtmlReport(run.doc, { transcripts: run.transcripts }));
    mkdirSync(ARTIFACTS, { recursive: true });
  });
  afterAll(async () => {
    await isolated?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Opens the report in a fresh page and waits for its script to finish. */
  async function open(ctx = context, url = pathToFileURL(file).href): Promise<{ page: Page; w: Watch }> {
    const page = await ctx.newPage();
    const w = watch(page);
    await page.goto(url);
    await page.waitForSelector('html[data-ready="1"]', { timeout: 15_000 });
    return { page, w };
  }

  it('writes nothing into the HOME the tests run with: Chromium gets its own, removed afterwards', async () => {
    const testHome = mkdtempSync(join(tmpdir(), 'skill-up-test-home-'));
    const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, XDG_CACHE_HOME: process.env.XDG_CACHE_HOME, XDG_DATA_HOME: process.env.XDG_DATA_HOME };
    Object.assign(process.env, { HOME: testHome, XDG_CONFIG_HOME: join(testHome, '.config'), XDG_CACHE_HOME: join(testHome, '.cache'), XDG_DATA_HOME: join(testHome, '.local', 'share') });
    try {
      const own = await launchChromium();
      const page = await own.browser.newPage();
      await page.goto(pathToFileURL(file).href);
      await page.waitForSelector('html[data-ready="1"]', { timeout: 15_000 });
      await page.close();
      // Chromium did write its profile files: into the HOME it was given.
      expect(existsSync(join(own.home, '.config', 'chromium'))).toBe(true);
      await own.close();
      expect(existsSync(own.home)).toBe(false);
      expect(readdirSync(testHome)).toEqual([]);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(testHome, { recursive: true, force: true });
    }
  });

  it('loads without console errors, page errors or any network request but the file', async () => {
    const { page, w } = await open();
    // Use the page: open a case with the planted string and expand every tool call.
    await page.click(`#rows tr.case:nth-child(1) .case-btn`);
    await page.$$eval('details.tool', (ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
    await page.waitForTimeout(50);
    expect(w.errors).toEqual([]);
    expect(w.dialogs).toEqual([]);
    expect(w.requests).toEqual([pathToFileURL(file).href]);
    await page.close();
  });

  it('shows injected HTML from run output as text, never as an element', async () => {
    const { page, w } = await open();
    const injectedCase = caseIds[1]!;
    const row = page.locator('#rows tr.case', { has: page.locator('.cid', { hasText: injectedCase }) });
    await row.locator('.case-btn').click();
    const detail = page.locator('#rows tr.detail:not([hidden])');
    await detail.locator('details.tool').first().waitFor();
    await detail.locator('details.tool').evaluateAll((ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
    await page.waitForTimeout(50);
    expect(await page.locator('img').count()).toBe(0);
    // As text: in the prompt, the final answer, a tool input, a tool output and an assertion's evidence or reason.
    const texts = await detail.evaluate((el) => el.textContent ?? '');
    expect(texts.split(INJECT).length - 1).toBeGreaterThanOrEqual(3);
    await expect.poll(() => page.getByText(INJECT, { exact: false }).count()).toBeGreaterThan(0);
    expect(w.dialogs).toEqual([]);
    expect(w.errors).toEqual([]);
    await page.close();
  });

  it('shows the gates panel and the engine summaries, which the charts do not cover', async () => {
    const { page, w } = await open();
    expect(await page.locator('section.gates tbody tr').count()).toBe(run.doc.gates.length);
    expect(await page.locator('section.gates .gstate').allTextContents()).toEqual(run.doc.gates.map((g) => g.state.toUpperCase()));
    expect(await page.textContent('#h-gates .outcome')).toMatch(/\(exit code \d+\)/);
    const card = (await page.locator('.engine-card').first().boundingBox())!;
    const charts = (await page.locator('.charts').boundingBox())!;
    // Side by side or stacked, never overlapping; and each card's table fits inside its card.
    expect(card.x + card.width <= charts.x + 1 || card.y + card.height <= charts.y + 1 || charts.y + charts.height <= card.y + 1).toBe(true);
    for (const c of await page.locator('.engine-card').all()) {
      const fits = await c.evaluate((el) => (el.querySelector('table.vt') as HTMLElement).scrollWidth <= el.clientWidth);
      expect(fits).toBe(true);
    }
    expect(await page.locator('.engine-card .verdict').allTextContents()).toEqual(run.doc.summary.uplift.map((u) => (u.verdict === 'inconclusive' ? 'inconclusive' : u.verdict === 'improves' ? 'skill improves results' : 'skill makes results worse')));
    expect(w.errors).toEqual([]);
    await page.close();
  });

  it('filters cases by status and hides the others', async () => {
    const { page } = await open();
    const all = await visibleIds(page);
    expect(all).toEqual(caseIds);
    for (const status of ['fail', 'pass', 'error'] as const) {
      await page.click(`#status-filter button[data-status="${status}"]`);
      expect(await page.getAttribute(`#status-filter button[data-status="${status}"]`, 'aria-pressed')).toBe('true');
      const expected = caseIds.filter((c) => run.doc.jobs.some((j) => j.case_id === c && j.status === status));
      expect(await visibleIds(page)).toEqual(expected);
      const label = await page.textContent(`#status-filter button[data-status="${status}"] .n`);
      expect(Number(label)).toBe(expected.length);
    }
    // With a variant scope: failures of with_skill only.
    await page.click('#status-filter button[data-status="fail"]');
    await page.selectOption('#scope', '0');
    const withFails = caseIds.filter((c) => run.doc.jobs.some((j) => j.case_id === c && j.variant === 'with_skill' && j.status === 'fail'));
    expect(await visibleIds(page)).toEqual(withFails);
    expect(withFails.length).toBeLessThan(caseIds.length);
    // Pressing the selected status again shows every case.
    await page.click('#status-filter button[data-status="fail"]');
    expect(await visibleIds(page)).toEqual(caseIds);
    await page.close();
  });

  it('searches by case id', async () => {
    const { page } = await open();
    const target = caseIds[3]!;
    await page.fill('#q', target.slice(0, -1).toUpperCase());
    const shown = await visibleIds(page);
    expect(shown).toContain(target);
    expect(shown.every((id) => id.includes(target.slice(0, -1)))).toBe(true);
    await page.fill('#q', 'no-such-case');
    expect(await visibleIds(page)).toEqual([]);
    expect(await page.isVisible('#empty')).toBe(true);
    await page.fill('#q', '');
    expect(await visibleIds(page)).toHaveLength(caseIds.length);
    await page.close();
  });

  it('opens a case with with_skill and without_skill side by side, per engine, and saves a screenshot', async () => {
    const { page, w } = await open();
    const target = caseIds[0]!;
    expect(await page.locator('#rows tr.detail').count()).toBe(0); // nothing is built before a case is opened
    await page.locator('#rows tr.case', { has: page.locator('.cid', { hasText: target }) }).locator('.case-btn').click();
    const detail = page.locator('#rows tr.detail:not([hidden])');
    await expect.poll(() => detail.count()).toBe(1);
    const grids = detail.locator('.sbs');
    expect(await grids.count()).toBe(2); // one per engine
    for (let g = 0; g < 2; g++) {
      const withCol = grids.nth(g).locator('.vcol.v0');
      const withoutCol = grids.nth(g).locator('.vcol.v1');
      expect(await withCol.locator('.vname').textContent()).toBe('with_skill');
      expect(await withoutCol.locator('.vname').textContent()).toBe('without_skill');
      const a = (await withCol.boundingBox())!;
      const b = (await withoutCol.boundingBox())!;
      expect(Math.abs(a.y - b.y)).toBeLessThan(2); // same row
      expect(a.x + a.width).toBeLessThanOrEqual(b.x); // with_skill left of without_skill, no overlap
      expect(a.width).toBeGreaterThan(400);
    }
    // A trial tab switches the trial shown; the assertions and the transcript are there.
    const firstCol = grids.first().locator('.vcol.v0');
    await firstCol.locator('.tab').nth(1).click();
    expect(await firstCol.locator('.tab').nth(1).getAttribute('aria-selected')).toBe('true');
    expect(await firstCol.locator('.asserts li').count()).toBeGreaterThan(0);
    // Open a skill call in the with_skill column for the screenshot.
    const skillCall = firstCol.locator('details.tool.skill-call').first();
    if (await skillCall.count()) await skillCall.locator('summary').click();
    const write = firstCol.locator('details.tool', { hasText: 'Write' }).first();
    await write.locator('summary').click();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    expect(w.errors).toEqual([]);
    await page.close();
  });

  it('follows prefers-color-scheme: dark', async () => {
    const dark = await browser.newContext({ viewport: { width: 1440, height: 1000 }, colorScheme: 'dark' });
    const { page, w } = await open(dark, `${pathToFileURL(file).href}#case=${encodeURIComponent(caseIds[2]!)}`);
    expect(await page.locator('#rows tr.detail:not([hidden])').count()).toBe(1); // the link opened the case
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(13, 17, 23)');
    await page.screenshot({ path: join(ARTIFACTS, 'report-dark.png'), fullPage: false });
    expect(w.errors).toEqual([]);
    await dark.close();
  });

  it('renders a run without baseline, and a run with no job, without errors', async () => {
    const withOnly = { ...run.doc, jobs: run.doc.jobs.filter((j) => j.variant === 'with_skill'), summary: {} as typeof run.doc.summary };
    const empty = { ...run.doc, jobs: [], summary: {} as typeof run.doc.summary, interrupted: true, not_run: 48 };
    for (const [name, doc] of [['with-only', withOnly], ['empty', empty]] as const) {
      const f = join(dir, `${name}.html`);
      writeFileSync(f, renderHtmlReport(doc));
      const { page, w } = await open(context, pathToFileURL(f).href);
      const rows = await page.locator('#rows tr.case').count();
      expect(rows).toBe(name === 'empty' ? 0 : caseIds.length);
      if (name === 'with-only') {
        expect(await page.locator('#cases thead .v-h.without').count()).toBe(0);
        expect(await page.locator('#rows tr.case').first().locator('td').count()).toBe(2 + 2); // one cell per engine, duration, tokens (the case is a th)
        await page.locator('#rows tr.case .case-btn').first().click();
        expect(await page.locator('#rows tr.detail .vcol').count()).toBe(2);
      } else {
        expect(await page.isVisible('#empty')).toBe(true);
        expect(await page.textContent('.pill.warn')).toContain('interrupted');
      }
      expect(w.errors).toEqual([]);
      await page.close();
    }
  });

  // How fast it loads, filters and opens is measured by `npm run bench` (html page), not asserted here.
  it('stays usable with 10,000 jobs: loads, pages, filters and opens a case', async () => {
    const big = syntheticRun({ cases: 1250, engines: ['claude_code', 'codex'], trials: 2, seed: 7 });
    const bigFile = join(dir, 'big.html');
    writeFileSync(bigFile, renderHtmlReport(big.doc, { transcripts: big.transcripts }));
    const page = await context.newPage();
    const w = watch(page);
    await page.goto(pathToFileURL(bigFile).href);
    await page.waitForSelector('html[data-ready="1"]', { timeout: 30_000 });
    // The table holds the first 200 cases; scrolling to its end brings the next ones.
    expect(await page.locator('#rows tr.case').count()).toBe(200);
    expect(await page.textContent('#case-count')).toBe('1250');
    await page.locator('#more').scrollIntoViewIfNeeded();
    await expect.poll(() => page.locator('#rows tr.case').count()).toBe(400);
    await page.click('#status-filter button[data-status="error"]');
    const errorCases = new Set(big.doc.jobs.filter((j) => j.status === 'error').map((j) => j.case_id)).size;
    expect(await page.textContent('#case-count')).toBe(`${errorCases} of 1250`);
    await page.click('#status-filter button[data-status="error"]');
    await page.fill('#q', 'log-parser-1');
    expect((await visibleIds(page)).every((id) => id.startsWith('log-parser-1'))).toBe(true);
    await page.fill('#q', '');
    await page.click('#rows tr.case:nth-child(151) .case-btn');
    expect(await page.locator('#rows tr.detail .vcol.v1').count()).toBe(2);
    expect(w.errors).toEqual([]);
    await page.close();
  });
});
