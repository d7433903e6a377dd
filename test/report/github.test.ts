/**
 * src/report/github.ts: the pure builders (annotations, outputs, escaping) on synthetic
 * result documents, and the writer on temporary files. The CLI end to end is in
 * test/cli/github.test.ts.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/gate/index.js';
import {
  annotationPath,
  escapeData,
  escapeProperty,
  formatOutputs,
  gateState,
  githubAnnotations,
  githubEnabled,
  githubOutputs,
  publishToGithub,
  workflowCommand,
} from '../../src/report/github.js';
import { trialsOf, type ResultDoc } from '../../src/report/result-json.js';
import type { JobResult } from '../../src/run/types.js';
import { job, makeDoc } from './helpers.js';

const ENGINES = [
  { name: 'claude_code', displayName: 'claude_code', model: {}, kwargs: {} },
  { name: 'custom', displayName: 'my-agent', model: {}, kwargs: {} },
];

/** A doc over `results` with their real decision (gates and stats). */
function docOf(results: JobResult[], over: Parameters<typeof makeDoc>[1] = {}): ResultDoc {
  const decision = decide(trialsOf(results), { maxErrorRate: 0, alpha: 0.05, errorsAsFailures: false });
  return makeDoc(results, { decision, exitCode: decision.exitCode, ...over });
}

const always = () => true;

describe('workflow-command escaping', () => {
  it('escapes %, CR and LF in messages, and also : and , in properties', () => {
    expect(escapeData('50% done\r\nnext: a, b')).toBe('50%25 done%0D%0Anext: a, b');
    expect(escapeProperty('50% done\r\nnext: a, b')).toBe('50%25 done%0D%0Anext%3A a%2C b');
    // Already-escaped text is escaped again, not passed through.
    expect(escapeData('%0A')).toBe('%250A');
  });

  it('a hostile title or file cannot end the properties or start a new command', () => {
    const line = workflowCommand('error', { file: 'a,b:c.yaml', line: 3, title: 'x::warning file=z,line=1::pwned\n::error::again' }, 'bad\n::set-output name=x::y');
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toBe('::error file=a%2Cb%3Ac.yaml,line=3,title=x%3A%3Awarning file=z%2Cline=1%3A%3Apwned%0A%3A%3Aerror%3A%3Aagain::bad%0A::set-output name=x::y');
    // Exactly one `::` separates the properties from the message.
    expect(line.slice(2).indexOf('::')).toBe(line.slice(2).lastIndexOf('::', line.indexOf('bad') - 2));
  });

  it('leaves out empty properties', () => {
    expect(workflowCommand('warning', { file: undefined, line: undefined, title: 't' }, 'm')).toBe('::warning title=t::m');
    expect(workflowCommand('notice', {}, 'm')).toBe('::notice::m');
  });
});

describe('githubAnnotations', () => {
  const results = [
    job('ok', 'with_skill', 1, [['a', true]]),
    job('ok', 'without_skill', 1, [['a', false]]),
    job('bad', 'with_skill', 1, [['files_exist: out.txt', false]]),
    job('bad', 'with_skill', 2, [['files_exist: out.txt', true]]),
    job('bad', 'with_skill', 3, [['files_exist: out.txt', false]]),
    job('err', 'with_skill', 1, [], { status: 'error', reason: 'engine crashed:\nsegfault' }),
    job('err', 'without_skill', 1, [], { status: 'error', reason: 'engine crashed:\nsegfault' }),
    job('base-only', 'without_skill', 1, [['x', false]]),
    job('base-only', 'with_skill', 1, [['x', true]]),
  ];
  const cases = [
    { id: 'ok', file: '/repo/skill/evals/cases/ok.yaml', line: 1 },
    { id: 'bad', file: '/repo/skill/evals/cases/bad.yaml', line: 1 },
    { id: 'err', file: '/repo/skill/evals/eval.yaml', line: 42 },
    { id: 'base-only', file: '/repo/skill/evals/cases/base-only.yaml' },
  ];

  it('one ::error per case with a failed with_skill trial or any errored trial, at its file and line', () => {
    const lines = githubAnnotations(docOf(results), { cases, root: '/repo' }, always).filter((l) => l.includes(' file='));
    expect(lines).toEqual([
      '::error file=skill/evals/cases/bad.yaml,line=1,title=bad::failed 2 of 3 with_skill trial(s) on agent (#1, #3): files_exist: out.txt: missing: files_exist: out.txt',
      '::error file=skill/evals/eval.yaml,line=42,title=err::errored in 1 with_skill trial(s) on agent (#1): engine crashed: segfault%0Aerrored in 1 without_skill trial(s) on agent (#1): engine crashed: segfault',
    ]);
  });

  it('failed gates are ::error, inconclusive ones ::warning, passed ones nothing', () => {
    const doc = docOf(results);
    doc.gates = [
      { ...doc.gates[0]!, name: 'min_uplift', engine: 'custom', state: 'inconclusive', reason: 'only 2 case(s): 50% at most' },
      { ...doc.gates[0]!, name: 'min_pass_rate', engine: null, state: 'fail', reason: 'below, by far' },
      { ...doc.gates[0]!, name: 'max_error_rate', engine: null, state: 'pass', reason: 'fine' },
    ];
    const lines = githubAnnotations(doc, { cases, root: '/repo' }, always).filter((l) => !l.includes(' file='));
    expect(lines).toEqual(['::warning title=skill-up gate min_uplift (agent) inconclusive::only 2 case(s): 50%25 at most', '::error title=skill-up gate min_pass_rate failed::below, by far']);
  });

  it('a hostile case id (an edited result.json) stays inside its property', () => {
    const doc = docOf([job('x', 'with_skill', 1, [['t', false]])]);
    doc.jobs[0]!.case_id = 'x,line=9::oops\n::error::y';
    const [line] = githubAnnotations(doc, { cases: [], root: '/' }, always).filter((l) => l.includes('title=x'));
    expect(line).toBe('::error title=x%2Cline=9%3A%3Aoops%0A%3A%3Aerror%3A%3Ay::failed 1 of 1 with_skill trial(s) on agent (#1): t: missing: t');
  });

  it('one annotation per case across engines, naming each engine; no file for a case not on disk', () => {
    const multi = [
      job('c', 'with_skill', 1, [['t', false]], { engine: 'claude_code' }),
      job('c', 'with_skill', 1, [['t', false]], { engine: 'custom' }),
      job('c', 'with_skill', 2, [['t', true]], { engine: 'custom' }),
    ];
    const doc = docOf(multi, { engines: ENGINES });
    const lines = githubAnnotations(doc, { cases: [{ id: 'c', file: '/gone/c.yaml', line: 1 }], root: '/' }, () => false).filter((l) => l.includes('title=c'));
    expect(lines).toEqual(['::error title=c::failed 1 of 1 with_skill trial(s) on claude_code (#1): t: missing: t%0Afailed 1 of 2 with_skill trial(s) on my-agent (#1): t: missing: t']);
  });

  it('long reasons are cut to one line', () => {
    const doc = docOf([job('c', 'with_skill', 1, [], { status: 'error', reason: `${'x'.repeat(2000)}\n\n` })]);
    const [line] = githubAnnotations(doc, { cases: [], root: '/' }, always).filter((l) => l.includes('title=c'));
    expect(line!.length).toBeLessThan(520);
    expect(line).toMatch(/x…$/);
  });

  it('paths: relative to the root with `/` when inside it, else absolute', () => {
    expect(annotationPath('/repo/a/b.yaml', '/repo')).toBe('a/b.yaml');
    expect(annotationPath('/elsewhere/b.yaml', '/repo')).toBe('/elsewhere/b.yaml');
    expect(annotationPath('/repo', '/repo')).toBe('/repo');
  });
});

describe('githubOutputs and formatOutputs', () => {
  const dir = '/runs/iteration-3';
  const results = [
    ...[1, 2, 3].map((t) => job('a', 'with_skill', t, [['x', true]], { engine: 'claude_code' })),
    ...[1, 2, 3].map((t) => job('a', 'without_skill', t, [['x', t === 1]], { engine: 'claude_code' })),
    ...[1, 2, 3].map((t) => job('b', 'with_skill', t, [['x', t !== 2]], { engine: 'claude_code' })),
    ...[1, 2, 3].map((t) => job('b', 'without_skill', t, [['x', false]], { engine: 'claude_code' })),
    ...[1, 2].map((t) => job('a', 'with_skill', t, [['x', false]])),
  ];

  it('the first engine gives verdict, pass-rate (a fraction) and uplift (points); every engine is in `engines`', () => {
    const doc = docOf(results, { engines: ENGINES });
    const out = Object.fromEntries(githubOutputs(doc, { dir, written: [`${dir}/result.json`, `${dir}/summary.md`] }));
    const u = doc.summary.uplift.find((x) => x.engine === 'claude_code')!;
    expect(out).toMatchObject({ gate: 'fail', 'exit-code': String(doc.exit_code), verdict: u.verdict, 'pass-rate': '0.8333', uplift: String(Number((u.pass_rate_delta! * 100).toFixed(2))) });
    expect(out.uplift).toBe('66.67');
    expect(JSON.parse(out.engines!)).toEqual({ claude_code: { verdict: u.verdict, pass_rate: 0.8333, uplift: 66.67 }, 'my-agent': { verdict: null, pass_rate: 0, uplift: null } });
    expect(out).toMatchObject({ result: `${dir}/result.json`, summary: `${dir}/summary.md`, report: '', 'run-dir': dir });
    expect(out.gates!.split('\n')).toHaveLength(doc.gates.length);
  });

  it('gate: fail over inconclusive over pass', () => {
    const g = (state: 'pass' | 'fail' | 'inconclusive') => ({ state }) as ResultDoc['gates'][number];
    expect(gateState({ exit_code: 0, gates: [g('pass'), g('pass')] })).toBe('pass');
    expect(gateState({ exit_code: 0, gates: [g('pass'), g('inconclusive')] })).toBe('inconclusive');
    expect(gateState({ exit_code: 1, gates: [g('inconclusive'), g('fail')] })).toBe('fail');
    expect(gateState({ exit_code: 4, gates: [] })).toBe('inconclusive');
  });

  it('single-line values as name=value, multi-line ones in the heredoc form', () => {
    const text = formatOutputs(
      [
        ['a', 'x=y'],
        ['b', 'line 1\nline 2\r\n'],
        ['c', ''],
      ],
      'EOF_1',
    );
    expect(text).toBe('a=x=y\nb<<EOF_1\nline 1\nline 2\r\n\nEOF_1\nc=\n');
    expect(() => formatOutputs([['b', 'x\nEOF_1\n']], 'EOF_1')).toThrow(/delimiter/);
    expect(formatOutputs([['b', 'x\ny']])).toMatch(/^b<<ghadelimiter_[0-9a-f-]{36}\nx\ny\nghadelimiter_[0-9a-f-]{36}\n$/);
  });
});

describe('publishToGithub', () => {
  const doc = () => docOf([job('c', 'with_skill', 1, [['t', false]], { status: 'error', reason: 'token ghp_secretvalue123 leaked' })]);

  it('appends to the files GitHub names, redacts secrets, and reports (never throws) a file it cannot write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'su-gh-'));
    const summary = join(dir, 'summary.md');
    const output = join(dir, 'output.txt');
    writeFileSync(summary, 'first\n');
    let printed = '';
    const env = { GITHUB_STEP_SUMMARY: summary, GITHUB_OUTPUT: output, GH_TOKEN: 'ghp_secretvalue123' };
    const r = await publishToGithub(doc(), { cases: [], dir, written: [], root: dir }, env, { write: (s: string) => (printed += s) });
    expect(r).toMatchObject({ annotations: 3, summaryFile: summary, outputFile: output, problems: [] });
    expect(printed).toContain('token [REDACTED] leaked');
    expect(printed).not.toContain('ghp_secretvalue123');
    expect(readFileSync(summary, 'utf8')).toMatch(/^first\n## ❌ skill-up/);
    expect(readFileSync(output, 'utf8')).toMatch(/^gate=fail\nexit-code=3\n/);

    const bad = await publishToGithub(doc(), { cases: [], dir, written: [] }, { GITHUB_STEP_SUMMARY: join(dir, 'no/such/dir/s.md') }, { write: () => true });
    expect(bad.problems).toEqual([expect.stringMatching(/^cannot append the step summary to .*s\.md: /)]);
  });

  it('is enabled by --github or GITHUB_ACTIONS=true only', () => {
    expect(githubEnabled(true, {})).toBe(true);
    expect(githubEnabled(undefined, { GITHUB_ACTIONS: 'true' })).toBe(true);
    expect(githubEnabled(false, { GITHUB_ACTIONS: 'false', CI: 'true' })).toBe(false);
    expect(githubEnabled(undefined, {})).toBe(false);
  });
});
