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

  it('states the outcome from the exit code and its gates, a row per engine and variant, and the uplift', () => {
    const md = buildSummaryMarkdown(makeDoc(results, { exitCode: 3 }));
    expect(md.split('\n')[0]).toBe('## ❌ skill-up: my-skill too many errors');
    expect(md).toContain(
      '\nErrors above the allowed rate (exit code 3): 1 of 5 trial(s) errored; worst arm custom with\\_skill: 1 of 3 (33%), above the allowed 0% per arm; an error is the harness or an engine breaking, never counted as a failure.\n',
    );
    expect(md).toContain('5 job(s) · 1 passed · 3 failed · 1 error(s) · iteration 1 · 60.0 s · 665 tokens');
    // The pass rate is the mean case rate with its case-clustered interval, labelled so, with the arm's errors next to it.
    expect(md).toContain('| Engine | Variant | Pass rate [95% CI, clustered by case] | Errors | Cases | Passed / graded | Trials | Skipped | Mean duration | Mean tokens |');
    expect(md).toContain('| agent (custom) | with_skill | 50% \\[0%–100%\\] | 1 | 1/2 | 1/2 | 3 | 0 | 2.0 s | 165 |');
    expect(md).toContain('| agent (custom) | without_skill | 0% \\[0%–66%\\] | 0 | 2/2 | 0/2 | 2 | 0 | 1.0 s | 110 |');
    expect(md).toContain('95% CI clustered by case: a Wilson interval at the effective number of trials');
    expect(md).not.toMatch(/wilson/);
  });

  it('shows the uplift with its interval, verdict and reason, p, votes, per-arm rates and errors, and the dropped cases', () => {
    const md = buildSummaryMarkdown(makeDoc(results, { exitCode: 3 }));
    const at = md.indexOf('**Uplift (agent (custom))**');
    expect(md.slice(at).split('\n').slice(0, 8)).toEqual([
      '**Uplift (agent (custom))**: +50 points \\[-44, +100\\] (95% CI, clustered by case) over 1 compared case · verdict: **inconclusive**',
      '',
      '- Why: 1 of 3 with\\_skill trials errored (33%), above the allowed error rate of 0%: errors are neither passes nor fails, so the comparison is withheld (rerun, raise --max-error-rate, or use --errors-as-failures)',
      '- with\\_skill 50% \\[0%–100%\\] vs without\\_skill 0% \\[0%–79%\\] over the compared cases',
      '- p = 1 (exact paired permutation test over 1 case), α = 0.05',
      '- Cases: 1 better, 0 same, 0 worse (secondary: sign test p = 1)',
      '- Errors: with\\_skill 1 error in 3 trials, without\\_skill 0 errors in 2 trials',
      '- Left out of the comparison (1): **beta** (with\\_skill has no graded trial (1 error(s)))',
    ]);
  });

  it('names at most 10 dropped cases and counts the rest', () => {
    const many = Array.from({ length: 12 }, (_, i) => [
      job(`d${i}`, 'with_skill', 1, [], { status: 'error', reason: 'boom', assertions: [] }),
      job(`d${i}`, 'without_skill', 1, [['x', true]]),
    ]).flat();
    const md = buildSummaryMarkdown(makeDoc([job('a', 'with_skill', 1, [['x', true]]), job('a', 'without_skill', 1, [['x', false]]), ...many]));
    const line = md.split('\n').find((l) => l.startsWith('- Left out of the comparison'))!;
    expect(line).toMatch(/^- Left out of the comparison \(12\): \*\*d0\*\* \(with\\_skill has no graded trial \(1 error\(s\)\)\); /);
    expect(line).toContain('**d9**');
    expect(line).not.toContain('**d10**');
    expect(line.endsWith('; … and 2 more (see result.json)')).toBe(true);
  });

  it('notes the Holm adjustment when several engines are compared', () => {
    const engines = ['claude_code', 'codex'].map((name) => ({ name, displayName: name, model: {}, kwargs: {} }));
    const two = engines.flatMap(({ name: engine }) => [job('a', 'with_skill', 1, [['x', true]], { engine }), job('a', 'without_skill', 1, [['x', false]], { engine })]);
    const md = buildSummaryMarkdown(makeDoc(two, { engines }));
    expect(md.match(/\n- p = 1 \(exact paired permutation test over 1 case; Holm-adjusted over 2 engines, unadjusted 1\), α = 0\.05\n/g)).toHaveLength(2);
  });

  it('shows the gates in their own table, separate from the verdict', () => {
    const md = buildSummaryMarkdown(makeDoc(results, { exitCode: 3 }));
    expect(md).toContain(
      [
        '### Gates',
        '',
        '| Gate | Engine | Threshold | Figure | 95% interval | State | Reason |',
        '|---|---|---|---|---|---|---|',
        '| `max_error_rate` | — | ≤ 0% | 33% | — | ❌ FAIL | 1 of 5 trial(s) errored; worst arm custom with\\_skill: 1 of 3 (33%), above the allowed 0% per arm |',
        '| `all_trials_passed` | — | every trial passes | 50% | — | ❌ FAIL | 1 of 2 graded with\\_skill trial(s) passed (the default gate: every with\\_skill trial must pass; set a gate such as --min-pass-rate to decide on intervals) |',
      ].join('\n'),
    );
    expect(md.indexOf('### Gates')).toBeLessThan(md.indexOf('| Engine | Variant |'));
  });

  it('formats interval gates by their kind and escapes what a gate reason carries', () => {
    const doc = makeDoc(results, { exitCode: 4 });
    doc.gates = [
      { name: 'min_pass_rate', engine: 'custom', threshold: 0.8, figure: 0.5, interval: { low: 0.1, high: 0.9 }, state: 'inconclusive', reason: 'may or may not reach 80%' },
      { name: 'min_uplift', engine: 'custom', threshold: 0.1, figure: 0.5, interval: { low: -0.44, high: 1 }, state: 'inconclusive', reason: 'uplift may or may not reach +10 points' },
      { name: 'no_regression', engine: 'custom', threshold: -0.1, figure: -0.2, interval: { low: -0.5, high: 0.05 }, state: 'fail', reason: 'regressed (<b>case|x</b> 100%→0%)' },
    ];
    const md = buildSummaryMarkdown(doc);
    expect(md).toContain('| `min_pass_rate` | agent (custom) | ≥ 80% | 50% | \\[10%–90%\\] | ❔ INCONCLUSIVE | may or may not reach 80% |');
    expect(md).toContain('| `min_uplift` | agent (custom) | ≥ +10 points | +50 points | \\[-44, +100\\] points | ❔ INCONCLUSIVE |');
    expect(md).toContain('| `no_regression` | agent (custom) | ≥ -10 points | -20 points | \\[-50, +5\\] points | ❌ FAIL | regressed (\\<b\\>case\\|x\\</b\\> 100%→0%) |');
    expect(md.split('\n')[0]).toBe('## ❔ skill-up: my-skill inconclusive');
    expect(md).toContain('\nA gate is inconclusive: the data cannot decide it (exit code 4): min\\_pass\\_rate (agent (custom)), min\\_uplift (agent (custom)).\n');
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

  it('says what each exit code means, in terms of gates, naming those that failed or could not decide', () => {
    const gates = [
      { name: 'max_error_rate' as const, engine: null, state: 'pass' as const, reason: '0 of 4 trial(s) errored (0%), within the allowed 0%' },
      { name: 'min_pass_rate' as const, engine: 'claude_code', state: 'fail' as const, reason: 'below' },
      { name: 'min_uplift' as const, engine: 'claude_code', state: 'inconclusive' as const, reason: 'may or may not' },
    ];
    expect(verdictOf(0)).toEqual({ icon: '✅', title: 'passed', meaning: 'every gate passed (exit code 0)' });
    expect(verdictOf(1).meaning).toBe('a gate failed (exit code 1)');
    expect(verdictOf(1, 0, gates).meaning).toBe('a gate failed (exit code 1): min_pass_rate (claude_code)');
    expect(verdictOf(3, 0, [{ name: 'max_error_rate', engine: null, state: 'fail', reason: '2 of 4 trial(s) errored (50%), above the allowed 0%' }]).meaning).toBe(
      'errors above the allowed rate (exit code 3): 2 of 4 trial(s) errored (50%), above the allowed 0%; an error is the harness or an engine breaking, never counted as a failure',
    );
    expect(verdictOf(4, 0, gates.filter((g) => g.state !== 'fail'))).toEqual({ icon: '❔', title: 'inconclusive', meaning: 'a gate is inconclusive: the data cannot decide it (exit code 4): min_uplift (claude_code)' });
    // --on-inconclusive maps an inconclusive gate to 0 or 1: the meaning says so.
    expect(verdictOf(0, 0, gates.filter((g) => g.state !== 'fail')).meaning).toBe('no gate failed (exit code 0); inconclusive gates count as passed (--on-inconclusive pass): min_uplift (claude_code)');
    expect(verdictOf(1, 0, gates.filter((g) => g.state !== 'fail')).meaning).toBe('a gate was inconclusive and inconclusive gates count as failed (--on-inconclusive fail; exit code 1): min_uplift (claude_code)');
    expect(verdictOf(2).title).toBe('usage error');
    expect(verdictOf(130, 4).meaning).toBe('the run was interrupted (exit code 130: SIGINT); 4 job(s) not run');
    expect(verdictOf(143).title).toBe('interrupted');
    const ok = buildSummaryMarkdown(makeDoc([job('a', 'with_skill', 1, [['x', true]])]));
    expect(ok.split('\n')[0]).toBe('## ✅ skill-up: my-skill passed');
    expect(ok).toContain('\nEvery gate passed (exit code 0).\n');
    expect(ok).toContain('| `all_trials_passed` | — | every trial passes | 100% | — | ✅ PASS |');
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
    expect(small).toContain('## ❌ skill-up: my-skill too many errors');
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
