import { afterEach, describe, expect, it } from 'vitest';
import { createProgress, firstProblem } from '../../src/run/progress.js';
import type { Job } from '../../src/plan/plan.js';
import type { JobResult } from '../../src/run/types.js';

describe('progress lines', () => {
  afterEach(() => {
    delete process.env.SKILL_UP_TEST_API_KEY;
  });
  it('never print a secret value that an engine quoted in its error', () => {
    process.env.SKILL_UP_TEST_API_KEY = 'sk-canary-0123456789abcdef';
    let text = '';
    const out = { isTTY: false, columns: 200, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WriteStream;
    const p = createProgress(1, out);
    const job = { id: 'case/with_skill/run-1' } as Job;
    p.jobStarted(job);
    p.jobFinished(job, { status: 'error', durationMs: 10, assertions: [], reason: 'engine exited: bad key sk-canary-0123456789abcdef' } as unknown as JobResult);
    p.stop();
    expect(text).toContain('bad key [REDACTED]');
    expect(text).not.toContain('sk-canary');
  });
});

/** A stream that collects what is written; `isTTY` as given. */
function sink(isTTY: boolean) {
  const out = { text: '', isTTY, columns: 200, write: (s: string) => ((out.text += s), true) };
  return out as typeof out & NodeJS.WriteStream;
}
const job = (id: string) => ({ id }) as Job;
const result = (over: Partial<JobResult>) => ({ status: 'pass', durationMs: 1234, assertions: [], ...over }) as JobResult;

describe('progress display', () => {
  afterEach(() => {
    if (savedCI === undefined) delete process.env.CI;
    else process.env.CI = savedCI;
  });
  const savedCI = process.env.CI;

  it('off a TTY: one plain line per finished job, numbered, with the first problem of a job that did not pass', () => {
    const out = sink(false);
    const p = createProgress(3, out);
    p.jobStarted(job('a/with_skill/run-1'));
    p.jobFinished(job('a/with_skill/run-1'), result({}));
    p.jobFinished(job('b/with_skill/run-1'), result({ status: 'fail', assertions: [{ text: 'must_contain: "hi"', passed: false, evidence: 'not\nfound' }] }));
    p.jobFinished(job('c/with_skill/run-1'), result({ status: 'error', reason: 'engine error in turn 1: boom' }));
    p.stop();
    expect(out.text.split('\n')).toEqual([
      '[1/3] PASS  a/with_skill/run-1 (1.2s)',
      '[2/3] FAIL  b/with_skill/run-1 (1.2s) — must_contain: "hi": not found',
      '[3/3] ERROR c/with_skill/run-1 (1.2s) — engine error in turn 1: boom',
      '',
    ]);
    expect(out.text).not.toContain('\x1b');
  });

  it('on a TTY: a live status line with the counts and the running jobs; non-passing jobs printed above it', () => {
    delete process.env.CI;
    const out = sink(true);
    const p = createProgress(2, out);
    p.jobStarted(job('a/with_skill/run-1'));
    p.jobStarted(job('b/with_skill/run-1'));
    expect(out.text).toContain('[0/2] 0 pass · 0 fail · 0 error');
    expect(out.text).toContain('running: a/with_skill/run-1, b/with_skill/run-1');
    p.jobFinished(job('a/with_skill/run-1'), result({}));
    p.jobFinished(job('b/with_skill/run-1'), result({ status: 'error', reason: 'timed out' }));
    expect(out.text).toContain('\r\x1b[2KERROR b/with_skill/run-1 (1.2s) — timed out\n');
    expect(out.text).not.toContain('PASS  a/with_skill/run-1');
    expect(out.text).toContain('[2/2] 1 pass · 0 fail · 1 error');
    p.stop();
    expect(out.text.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('with CI set, a TTY gets the plain lines', () => {
    process.env.CI = 'true';
    const out = sink(true);
    const p = createProgress(1, out);
    p.jobFinished(job('a'), result({}));
    p.stop();
    expect(out.text).toBe('[1/1] PASS  a (1.2s)\n');
  });

  it('firstProblem keeps one line of at most 160 characters, a cut ending in … and never inside a surrogate pair', () => {
    const cut = firstProblem(result({ reason: `x\n${'y'.repeat(300)}` }));
    expect(cut).toHaveLength(160);
    expect(cut.endsWith('y…')).toBe(true);
    expect(firstProblem(result({ reason: 'a\n\tb' }))).toBe('a b');
    expect(firstProblem(result({ reason: 'x'.repeat(160) }))).toBe('x'.repeat(160));
    // An emoji straddling the cut is dropped whole.
    const emoji = firstProblem(result({ reason: `${'x'.repeat(158)}😀😀` }));
    expect(emoji).toBe(`${'x'.repeat(158)}…`);
  });

  it('a cut crash reason keeps its stderr reference whole, after 160 characters of the rest', () => {
    const ref = ' (stderr: outputs/turn-1.stderr.txt in the job folder)';
    const shown = firstProblem(result({ status: 'error', reason: `engine error in turn 1: exited with code 1: Error: ${'z'.repeat(200)}${ref}` }));
    expect(shown).toHaveLength(160 + ref.length);
    expect(shown.endsWith(`z…${ref}`)).toBe(true);
    // A short one is shown as it is.
    expect(firstProblem(result({ status: 'error', reason: `exited with code 1: Error: x${ref}` }))).toBe(`exited with code 1: Error: x${ref}`);
    expect(shown.startsWith('engine error in turn 1: exited with code 1: Error: zzz')).toBe(true);
  });

  it('off a TTY and on one, a long reason is cut with …; a secret is redacted before the cut, never shown in part', () => {
    process.env.SKILL_UP_TEST_API_KEY = 'sk-canary-0123456789abcdef';
    try {
      for (const tty of [false, true]) {
        if (tty) delete process.env.CI;
        const out = sink(tty);
        const p = createProgress(1, out);
        // The secret straddles the 160-character cut.
        p.jobFinished(job('a/with_skill/run-1'), result({ status: 'fail', reason: `${'r'.repeat(140)} sk-canary-0123456789abcdef and more` }));
        p.stop();
        expect(out.text).not.toContain('sk-canary');
        expect(out.text).toContain(`— ${'r'.repeat(140)} [REDACTED] and more`);
        const narrow = sink(tty);
        (narrow as { columns: number }).columns = 60;
        const q = createProgress(1, narrow);
        q.jobFinished(job('a/with_skill/run-1'), result({ status: 'error', reason: 'q'.repeat(100) }));
        q.stop();
        if (tty) expect(narrow.text).toContain(`\r\x1b[2K${'ERROR a/with_skill/run-1 (1.2s) — '.padEnd(58, 'q')}…\n`);
        else expect(narrow.text).toContain(`— ${'q'.repeat(100)}\n`);
      }
    } finally {
      delete process.env.SKILL_UP_TEST_API_KEY;
    }
  });

  it("an error's reason comes before a failed assertion, a failure's first failed assertion before its reason", () => {
    const failed = [{ text: '[behaviour] claims_verified', passed: false, evidence: '1 of 3 verified' }];
    expect(firstProblem(result({ status: 'error', reason: 'grader run 1 answered unusably twice', assertions: failed }))).toBe('grader run 1 answered unusably twice');
    expect(firstProblem(result({ status: 'fail', reason: 'judge failed', assertions: failed }))).toBe('[behaviour] claims_verified: 1 of 3 verified');
  });
});
