import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseResultDoc } from '../../src/report/load.js';
import { parseFormats } from '../../src/cli/report.js';
import { REPORT_FORMATS, writeDocReports, writeReports } from '../../src/report/write.js';
import { buildBenchmarks } from '../../src/report/benchmark.js';
import { renderHtmlPieces, renderHtmlReport } from '../../src/report/html/index.js';
import { jsonText } from '../../src/util/out.js';
import { redactor } from '../../src/util/redact.js';
import { syntheticRun } from './fixtures/synthetic-run.js';
import { job, makeDoc, makeMeta, makeResult } from './helpers.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'su-write-'));
const read = (p: string) => readFileSync(p, 'utf8');

describe('writeReports / writeDocReports', () => {
  const saved = process.env.SU_TEST_API_KEY;
  afterEach(() => {
    if (saved === undefined) delete process.env.SU_TEST_API_KEY;
    else process.env.SU_TEST_API_KEY = saved;
  });

  const results = [job('a', 'with_skill', 1, [['x', true]]), job('a', 'without_skill', 1, [['x', false]])];

  it('always writes result.json, then each requested format', async () => {
    const dir = tmp();
    const { written, skipped, doc } = await writeReports(dir, makeMeta(results), results, ['junit', 'markdown', 'benchmark', 'html']);
    expect(skipped).toEqual([]);
    expect(written.map((w) => w.slice(dir.length + 1))).toEqual(['result.json', 'report.xml', 'summary.md', 'benchmark.json', 'benchmark.md', 'report.html']);
    expect(read(join(dir, 'report.html'))).toMatch(/^<!doctype html>/i);
    expect(parseResultDoc(read(join(dir, 'result.json')), 'result.json')).toEqual(JSON.parse(JSON.stringify(doc)));
    expect(readdirSync(join(dir, 'a'))).toEqual(['eval_metadata.json', 'with_skill', 'without_skill']);
    expect(JSON.parse(read(join(dir, 'a/with_skill/run-1/grading.json'))).summary).toEqual({ passed: 1, failed: 0, total: 1, pass_rate: 1 });
    expect(existsSync(join(dir, 'a/without_skill/eval_metadata.json'))).toBe(true);
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
  });

  it('writes only what is asked, from a document alone (as `skill-up report` does)', async () => {
    const dir = tmp();
    const doc = JSON.parse(JSON.stringify(makeDoc(results)));
    const { written } = await writeDocReports(join(dir, 'new', 'folder'), doc, ['markdown']);
    expect(written).toEqual([join(dir, 'new/folder/summary.md')]);
    expect(read(written[0]!)).toMatch(/^## ✅ skill-up: my-skill passed/);
  });

  it('keeps secrets out of every file, per-run files included', async () => {
    process.env.SU_TEST_API_KEY = 'sk-very-secret-value-123';
    const leaky = [
      makeResult({
        status: 'fail',
        reason: 'got sk-very-secret-value-123',
        finalMessage: 'my key is sk-very-secret-value-123',
        assertions: [{ text: 'no key', passed: false, evidence: 'found sk-very-secret-value-123' }],
      }),
    ];
    const dir = tmp();
    await writeReports(dir, makeMeta(leaky), leaky, ['junit', 'markdown', 'benchmark', 'html']);
    for (const f of ['result.json', 'report.xml', 'summary.md', 'benchmark.json', 'benchmark.md', 'report.html', 'c/with_skill/run-1/grading.json']) {
      const t = read(join(dir, f));
      expect(t, f).not.toContain('sk-very-secret-value-123');
    }
    expect(read(join(dir, 'c/with_skill/run-1/grading.json'))).toContain('[REDACTED]');
  });

  it('streams report.html and benchmark.json piece by piece into exactly the bytes of their whole texts, secrets redacted', async () => {
    process.env.SU_TEST_API_KEY = 'sk-very-secret-value-123';
    const { doc } = syntheticRun({ cases: 30, engines: ['claude_code', 'codex'], trials: 2, seed: 3 });
    doc.jobs[5]!.final_message = 'my key is sk-very-secret-value-123 </script> & \u2028';
    doc.jobs[40]!.assertions.push({ text: 'no key', passed: false, evidence: 'found sk-very-secret-value-123' });
    const dir = tmp();
    const { skipped } = await writeDocReports(dir, doc, ['benchmark', 'html']);
    expect(skipped).toEqual([]);
    const html = read(join(dir, 'report.html'));
    expect(html).toBe(redactor().redact(renderHtmlReport(doc)));
    expect(html).not.toContain('sk-very-secret-value-123');
    expect([...renderHtmlPieces(doc)].length).toBeGreaterThan(3);
    const texts = buildBenchmarks(doc).map((b) => {
      const text = read(join(dir, b.root, 'benchmark.json'));
      expect(text).toBe(jsonText(b.benchmark, 2, true));
      return text;
    });
    expect(texts).toHaveLength(2);
    expect(texts.join('')).toContain('[REDACTED]');
    expect(texts.join('')).not.toContain('sk-very-secret-value-123');
  });

  it('refuses job folders that leave the report folder, and still writes the other formats', async () => {
    const dir = tmp();
    const doc = JSON.parse(JSON.stringify(makeDoc([makeResult({ outputDir: '../../escape/with_skill/run-1' })])));
    const { written, skipped } = await writeDocReports(join(dir, 'out'), doc, ['benchmark', 'markdown']);
    expect(skipped).toEqual([{ format: 'benchmark', reason: 'could not be written: job folder `../..` is outside the report folder' }]);
    expect(written).toEqual([join(dir, 'out/summary.md')]);
    expect(existsSync(join(dir, 'escape'))).toBe(false);
  });
});

describe('parseFormats (skill-up report --format)', () => {
  it('knows exactly the formats writeDocReports writes, accepts aliases and commas, and drops repeats', () => {
    expect(parseFormats(['json,junit', 'markdown', 'benchmark', 'html'])).toEqual([...REPORT_FORMATS]);
    expect(parseFormats(['md', 'XML', 'markdown'])).toEqual(['markdown', 'junit']);
    expect(() => parseFormats(['pdf'])).toThrow('unknown format `pdf` (formats: json, junit, markdown, benchmark, html)');
  });

  it('rewrites the per-run files of an existing folder to exactly what a fresh folder gets, whatever they held', async () => {
    const first = [job('a', 'with_skill', 1, [['x', true]]), job('a', 'without_skill', 1, [['x', false]]), job('b', 'with_skill', 1, [['y', true]])];
    const second = [job('a', 'with_skill', 1, [['x', false], ['a much longer assertion text than before', true]]), job('a', 'without_skill', 1, [['x', true]]), job('b', 'with_skill', 1, [['y', true]])];
    const existing = tmp();
    const fresh = tmp();
    await writeDocReports(existing, JSON.parse(JSON.stringify(makeDoc(first))), ['benchmark']);
    await writeDocReports(existing, JSON.parse(JSON.stringify(makeDoc(second))), ['benchmark']);
    await writeDocReports(fresh, JSON.parse(JSON.stringify(makeDoc(second))), ['benchmark']);
    const files = ['a/with_skill/run-1/grading.json', 'a/without_skill/run-1/grading.json', 'b/with_skill/run-1/grading.json', 'a/eval_metadata.json', 'a/with_skill/eval_metadata.json', 'b/eval_metadata.json', 'benchmark.json'];
    for (const f of files) expect(read(join(existing, f)), f).toBe(read(join(fresh, f)));
    expect(JSON.parse(read(join(existing, 'a/with_skill/run-1/grading.json'))).summary.total).toBe(2);
  });
});
