import { describe, expect, it } from 'vitest';
import { buildSummaryMarkdown, codeSpan, mdText, verdictOf } from '../../src/report/markdown.js';
import { job, makeDoc, makeResult } from './helpers.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('buildSummaryMarkdown', () => {
  const results = [
    job('alpha', 'with_skill', 1, [['x', true], ['y', true]]),
    job('alpha', 'with_skill', 2, [['x', true], ['files_exist: out.md', false], ['z', false]]),
    job('alpha', 'without_skill', 1, [['x', true], ['y', false]]),
    job('beta', 'with_skill', 1, [], { status: 'error', reason: 'engine error in turn 1: exited with code 2', assertions: [] }),
    job('beta', 'without_skill', 1, [['y', false]]),
  ];

  it('states the verdict from the exit code, a row per engine and variant, and the uplift', () => {
    const md = buildSummaryMarkdown(makeDoc(results, { exitCode: 3 }));
    expect(md.split('\n')[0]).toBe('## ❌ skill-up: my-skill error');
    expect(md).toContain('An engine or the harness broke (exit code 3); errors are not counted as failures.');
    expect(md).toContain('5 job(s) · 1 passed · 3 failed · 1 error(s) · iteration 1 · 60.0 s · 665 tokens');
    expect(md).toContain('| agent (custom) | with_skill | 50% [9%–91%] | 1/2 | 3 | 1 | 0 | 2.0 s | 165 |');
    expect(md).toContain('| agent (custom) | without_skill | 0% [0%–66%] | 0/2 | 2 | 0 | 0 | 1.0 s | 110 |');
    expect(md).toMatch(/\*\*Uplift \(agent \(custom\)\)\*\*: \+50 points \(with_skill 50% vs without_skill 0%\) · 1 win\(s\), 0 tie\(s\), 0 loss\(es\) over cases · sign test p = 1\.000 · \*\*underpowered\*\*/);
  });

  it('lists failed with_skill cases with their first failed assertion and evidence, and errors with their reason', () => {
    const md = buildSummaryMarkdown(makeDoc(results, { exitCode: 3 }));
    expect(md).toContain('### Failed cases (with_skill)');
    expect(md).toContain('- **alpha** (agent (custom); trial #2 failed) — `files_exist: out.md`: missing: files\\_exist: out.md');
    expect(md).not.toMatch(/with_skill\)\n\n[^#]*`z`/);
    expect(md).toContain('### Errors');
    expect(md).toContain('- **beta** with_skill (agent (custom); trial #1) — engine error in turn 1: exited with code 2');
    // baseline failures are folded away
    expect(md).toMatch(/<details><summary>Failed cases without the skill \(baseline\)<\/summary>\n\n- \*\*alpha\*\*/);
  });

  it('says what each exit code means', () => {
    expect(verdictOf(0)).toMatchObject({ icon: '✅', title: 'passed' });
    expect(verdictOf(1).meaning).toBe('some with_skill jobs failed (exit code 1)');
    expect(verdictOf(130, 4).meaning).toBe('the run was interrupted (exit code 130: SIGINT); 4 job(s) not run');
    expect(verdictOf(143).title).toBe('interrupted');
    const ok = buildSummaryMarkdown(makeDoc([job('a', 'with_skill', 1, [['x', true]])]));
    expect(ok.split('\n')[0]).toBe('## ✅ skill-up: my-skill passed');
    expect(ok).not.toContain('### Failed');
    expect(ok).not.toContain('Uplift');
  });

  it('shows cost when an engine reported it', () => {
    const md = buildSummaryMarkdown(makeDoc([makeResult({ costUsd: 0.125 }), makeResult({ id: 'c/with_skill/run-2', trial: 2, costUsd: 0.5 })]));
    expect(md).toContain('| Cost |');
    expect(md).toContain('| $0.63 |');
    expect(md).toContain(' · $0.63');
  });

  it('cuts long evidence and escapes Markdown and HTML from engines and judges', () => {
    const evil = `<script>alert(1)</script> | **bold** ${'x'.repeat(1000)}`;
    const md = buildSummaryMarkdown(
      makeDoc([makeResult({ status: 'fail', assertions: [{ text: 'a `tick` check', passed: false, evidence: evil }] })], { exitCode: 1 }),
    );
    const line = md.split('\n').find((l) => l.startsWith('- **c**'))!;
    expect(line).toContain("`a 'tick' check`");
    expect(line).toContain('\\<script\\>alert(1)\\</script\\> \\| \\*\\*bold\\*\\*');
    expect(line).not.toContain('<script>');
    expect(line.length).toBeLessThan(500);
    expect(line.endsWith('…')).toBe(true);
  });

  it('stays under the byte limit, however many failures, with a note on what was left out', () => {
    const many = Array.from({ length: 1500 }, (_, i) =>
      makeResult({
        id: `case-${i}/with_skill/run-1`,
        outputDir: `case-${i}/with_skill/run-1`,
        caseId: `case-${i}-${'ü'.repeat(40)}`,
        status: i % 3 === 0 ? 'error' : 'fail',
        reason: `reason ${'é'.repeat(400)}`,
        assertions: [{ text: `check ${i}`, passed: false, evidence: '✗'.repeat(400) }],
      }),
    );
    const md = buildSummaryMarkdown(makeDoc(many, { exitCode: 3 }));
    expect(bytes(md)).toBeLessThanOrEqual(60_000);
    expect(md).toMatch(/- _… and \d+ more failed case\(s\) not shown \(size limit; see result\.json\)\._/);
    expect(md).toContain('error group(s) not shown');
    expect(md.endsWith('_Full details: result.json, report.xml and benchmark.md in the run folder._\n')).toBe(true);
    const small = buildSummaryMarkdown(makeDoc(many, { exitCode: 3 }), { maxBytes: 4000 });
    expect(bytes(small)).toBeLessThanOrEqual(4000);
    expect(small).toContain('## ❌ skill-up: my-skill error');
  });

  it('cuts even the header when the limit is tiny', () => {
    const engines = Array.from({ length: 300 }, (_, i) => ({ name: `engine-${i}`, displayName: `engine-${i}`, model: {}, kwargs: {} }));
    const res = engines.map((e) => makeResult({ id: `${e.name}/c/with_skill/run-1`, outputDir: `${e.name}/c/with_skill/run-1`, engine: e.name }));
    const md = buildSummaryMarkdown(makeDoc(res, { engines }), { maxBytes: 3000 });
    expect(bytes(md)).toBeLessThanOrEqual(3000);
    expect(md).toContain('_… summary truncated to stay under the size limit._');
  });
});

describe('mdText and codeSpan', () => {
  it('put text on one line, cut it, and escape what Markdown would interpret', () => {
    expect(mdText('a\n\nb   c')).toBe('a b c');
    expect(mdText('x'.repeat(20), 10)).toBe(`${'x'.repeat(9)}…`);
    expect(mdText('[link](http://x) & <b>')).toBe('\\[link\\](http://x) \\& \\<b\\>');
    expect(codeSpan('say `hi`\nnow')).toBe("`say 'hi' now`");
  });
});
