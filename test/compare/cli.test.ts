import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { jobs, uniform, writeRun } from './helpers.js';

let out = '';
let err = '';
beforeEach(() => {
  out = '';
  err = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((out += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((err += String(s)), true));
});
afterEach(() => vi.restoreAllMocks());

const HOSTILE = '<script>alert(1)</script>|x';
const tmp = () => mkdtempSync(join(tmpdir(), 'su-compare-cli-'));

/** One usage error: exit 2, nothing on stdout, exactly one line on stderr. */
async function usage(argv: string[]): Promise<string> {
  const code = await main(argv);
  expect(code, err).toBe(2);
  expect(out).toBe('');
  expect(err.trimEnd().split('\n')).toHaveLength(1);
  expect(err).not.toMatch(/\n\s+at /);
  return err;
}

describe('skill-up compare', () => {
  it('exits 1 and names the regressed case; writes Markdown, HTML and JSON that escape it', async () => {
    const old = writeRun(jobs({ ...uniform(5, 'PPP'), [HOSTILE]: 'PPP' }), 1);
    const now = writeRun(jobs({ ...uniform(5, 'PPP'), [HOSTILE]: 'FFF' }), 2);
    const dir = tmp();
    const code = await main(['compare', old, join(now, 'result.json'), '--markdown', join(dir, 'md/comment.md'), '--html', join(dir, 'diff.html'), '--json', join(dir, 'c.json')]);
    expect(code, err).toBe(1);
    expect(err).toBe('');
    expect(out).toMatch(/^❌ compare \(with_skill pass rates of two runs\): regression/);
    expect(out).toContain(`  regressed    ${HOSTILE}: 3/3 (100%) → 0/3 (0%)\n`);
    expect(out).toMatch(/✗ no_regression custom: FAIL: .*one-sided p = 0\.05 ≤ 0\.05: regressed \(<script>alert\(1\)<\/script>\|x 100%→0%\)/);
    for (const f of ['md/comment.md', 'diff.html', 'c.json']) expect(out).toContain(`wrote ${join(dir, f)}\n`);
    const md = readFileSync(join(dir, 'md/comment.md'), 'utf8');
    expect(md).toContain('| custom | \\<script\\>alert(1)\\</script\\>\\|x | regressed (-100 points) |');
    const html = readFileSync(join(dir, 'diff.html'), 'utf8');
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;|x');
    const json = JSON.parse(readFileSync(join(dir, 'c.json'), 'utf8'));
    expect(json).toMatchObject({ kind: 'skill-up.compare', mode: 'runs', exit_code: 1, new: { iteration: 2 }, old: { iteration: 1 } });
  });

  it('an unchanged deterministic 20 × 3 suite passes (exit 0); the same file twice is fine', async () => {
    const a = writeRun(jobs(uniform(20, 'PPP')), 1);
    const b = writeRun(jobs(uniform(20, 'PPP')), 2);
    expect(await main(['compare', a, b])).toBe(0);
    expect(out).toMatch(/^✅ compare .*: no regression: every gate passed/);
    expect(out).toContain('✓ no_regression custom: PASS');
    out = '';
    expect(await main(['compare', a, a])).toBe(0);
    expect(err).toBe('');
  });

  it('identical flaky runs do not fail; --on-inconclusive maps the exit code', async () => {
    const a = writeRun(jobs({ a: 'PPF', b: 'PFF', c: 'FPP', d: 'PFP', e: 'PPP', f: 'FFP' }));
    const code = await main(['compare', a, a]);
    expect(code).not.toBe(1);
    expect([0, 4]).toContain(code);
    expect(await main(['compare', a, a, '--on-inconclusive', 'fail', '--margin', '0'])).toBe(1);
    expect(await main(['compare', a, a, '--on-inconclusive', 'pass', '--margin', '0'])).toBe(0);
    expect(await main(['compare', a, a, '--margin', '100'])).toBe(0);
  });

  it('lists new and removed cases; errors in the new run above --max-error-rate exit 3', async () => {
    const a = writeRun(jobs({ kept: 'PPP', gone: 'PPP' }));
    const b = writeRun(jobs({ kept: 'PPP', added: 'PPP', flaky: 'PEE' }));
    expect(await main(['compare', a, b])).toBe(3);
    expect(out).toContain('  new case     added: — → 3/3 (100%)\n');
    expect(out).toContain('  new case     flaky: — → 1/1 (100%), 2 error(s)\n');
    expect(out).toContain('  removed case gone: 3/3 (100%) → —\n');
    expect(out).toContain('✗ max_error_rate: FAIL: 2 of 9 trial(s) errored; worst arm custom with_skill: 2 of 9 (22%), above the allowed 0% per arm');
    expect(await main(['compare', a, b, '--max-error-rate', '25%'])).not.toBe(3);
  });

  it('--engines and --variants compare inside one run', async () => {
    const run = writeRun([
      ...jobs({ ...uniform(5, 'PPP'), hard: 'PPP' }, 'with_skill', 'alpha'),
      ...jobs({ ...uniform(5, 'PPP'), hard: 'FFF' }, 'with_skill', 'beta'),
      ...jobs({ ...uniform(5, 'FFF'), hard: 'FFF' }, 'without_skill', 'alpha'),
    ]);
    expect(await main(['compare', run, '--engines', 'alpha,beta'])).toBe(1);
    expect(out).toContain('alpha → beta: 100% → 83%');
    expect(out).toContain('  regressed    hard: 3/3 (100%) → 0/3 (0%)\n');
    out = '';
    const file = join(tmp(), 'v.json');
    expect(await main(['compare', run, '--variants', '--json', file])).toBe(0);
    expect(out).toContain('alpha: 0% → 100% (+100 points');
    expect(out).toContain('beta: not compared: no without_skill job (this engine ran without a baseline)\n');
    expect(out).toContain('✓ no_regression alpha: PASS');
    expect(out).not.toContain('no_regression beta');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ mode: 'variants', excluded: [{ engine: 'beta' }], new: { trials: 18 } });
  });

  it('bad input gives one clear message and exit 2', async () => {
    const good = writeRun(jobs(uniform(2, 'PPP')));
    const dir = tmp();
    expect(await usage(['compare', join(dir, 'missing.json'), good])).toMatch(/^skill-up compare: .*missing\.json: not found; expected a skill-up result\.json/);
    err = '';
    writeFileSync(join(dir, 'pkg.json'), JSON.stringify({ name: 'pkg', version: '1.0.0' }));
    expect(await usage(['compare', good, join(dir, 'pkg.json')])).toContain('pkg.json: is a JSON object with `name`, `version`, not a skill-up result.json');
    err = '';
    mkdirSync(join(dir, 'empty'));
    expect(await usage(['compare', join(dir, 'empty'), good])).toContain('empty: is a folder without result.json');
    err = '';
    expect(await usage(['compare', good])).toContain('compare needs the old and the new run');
    err = '';
    expect(await usage(['compare', good, good, good])).toContain('compare takes two runs, got 3');
    err = '';
    expect(await usage(['compare', good, good, '--engines', 'a,b'])).toContain('--engines compares inside one run: give one result.json, got 2');
    err = '';
    expect(await usage(['compare', good, '--engines', 'a'])).toContain('--engines needs exactly two engines');
    err = '';
    expect(await usage(['compare', good, '--engines', 'custom,nope'])).toContain('engine `nope` has no with_skill job in');
    err = '';
    expect(await usage(['compare', good, '--variants'])).toContain('has no without_skill job: the run had no baseline');
    err = '';
    expect(await usage(['compare', good, '--variants', '--engines', 'a,b'])).toContain('give one');
    err = '';
    expect(await usage(['compare', good, good, '--margin', 'ten'])).toContain('--margin must be a number of points from 0 to 100');
    err = '';
    expect(await usage(['compare', good, good, '--alpha', '2'])).toContain('--alpha must be a significance level');
    err = '';
    expect(await usage(['compare', good, good, '--on-inconclusive', 'maybe'])).toContain('--on-inconclusive must be `pass` or `fail`');
    err = '';
    expect(await usage(['compare', good, good, '--marign', '5'])).toContain('did you mean `--margin`?');
    err = '';
    writeFileSync(join(dir, 'file'), 'x');
    const msg = await usage(['compare', good, good, '--json', join(dir, 'file', 'c.json')]);
    expect(msg).toMatch(/--json .*c\.json: cannot write: (ENOTDIR|EEXIST)/);
    expect(existsSync(join(dir, 'file', 'c.json'))).toBe(false);
  });

  it('has help with examples, and is listed in skill-up --help', async () => {
    expect(await main(['compare', '--help'])).toBe(0);
    expect(out).toMatch(/^Usage: skill-up compare <old> <new> \[options\]/);
    expect(out).toContain('Examples:');
    out = '';
    await main(['--help']);
    expect(out).toContain('  compare <old> <new>');
  });
});

describe('skill-up compare: outputs never overwrite inputs; empty runs decide nothing', () => {
  it('refuses an output path that is an input run, or one path for two outputs', async () => {
    const a = writeRun(jobs(uniform(3, 'PPP')), 1);
    const before = readFileSync(join(a, 'result.json'), 'utf8');
    expect(await usage(['compare', a, a, '--json', join(a, 'result.json')])).toMatch(/--json .* would overwrite the input run/);
    expect(readFileSync(join(a, 'result.json'), 'utf8')).toBe(before);
    const dir = tmp();
    err = '';
    expect(await usage(['compare', a, a, '--json', join(dir, 'x'), '--html', join(dir, 'x')])).toMatch(/--(json|html) .* would overwrite --(json|html)/);
    err = '';
    expect(await usage(['compare', a, a, '--markdown', ''])).toMatch(/--markdown needs a file name/);
  });
  it('two runs with no job are inconclusive (exit 4), not "no regression"', async () => {
    const empty = writeRun([], 1);
    expect(await main(['compare', empty, empty])).toBe(4);
    expect(out).toContain('nothing to compare');
  });
});
