import { describe, expect, it } from 'vitest';
import { calibrate, renderCalibrationMarkdown, renderCalibrationText } from '../../src/calibrate/index.js';
import { noiseAssumption, renderPowerTable } from '../../src/report/power-table.js';
import { ASSUMED_NOISE, powerTable, type NoiseModel, type PowerRow } from '../../src/stats/power.js';
import type { TrialResult } from '../../src/stats/index.js';

const ROWS: PowerRow[] = [
  { uplift: 0.1, casesNeeded: { 1: 412, 3: 160, 5: 110, 10: null } },
  { uplift: 0.2, casesNeeded: { 1: 104, 3: 40, 5: 28, 10: 19 } },
];
const OBSERVED: NoiseModel = { trialVariance: 0.12, caseVariance: 0.01, source: 'observed' };

describe('renderPowerTable', () => {
  it('text: caption, aligned rows, >10,000 for null, one assumption line', () => {
    const text = renderPowerTable(ROWS, { noise: OBSERVED, alpha: 0.05, format: 'text' });
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toBe('Cases needed to detect an uplift (80% power, α = 0.05, paired permutation test over cases), by trials per case and arm:');
    expect(lines[1]).toBe('  uplift      1 trial  3 trials  5 trials  10 trials');
    expect(lines[2]).toBe('  +10 points      412       160       110    >10,000');
    expect(lines[3]).toBe('  +20 points      104        40        28         19');
    expect(lines[4]).toBe(noiseAssumption(OBSERVED));
    expect(lines[4]).toContain('observed: per-trial variance 0.12');
    expect(lines[4]).toContain('SD 10 points');
    expect(text.endsWith('\n')).toBe(true);
  });

  it('markdown: a table with right-aligned counts and the assumption in italics', () => {
    const md = renderPowerTable(ROWS, { noise: ASSUMED_NOISE, alpha: 0.01, power: 0.9, format: 'markdown' });
    expect(md).toContain('(90% power, α = 0.01,');
    expect(md).toContain('| uplift | 1 trial | 3 trials | 5 trials | 10 trials |\n|:---|---:|---:|---:|---:|\n| +10 points | 412 | 160 | 110 | >10,000 |');
    const last = md.trimEnd().split('\n').at(-1)!;
    expect(last).toMatch(/^_Assumes no data yet: every trial a coin flip \(per-trial variance 0\.5, both arms\).*SD 20 points.*skill-up calibrate.*_$/);
  });

  it('renders the real power table of the assumed noise', () => {
    const text = renderPowerTable(powerTable(ASSUMED_NOISE), { noise: ASSUMED_NOISE, alpha: 0.05, format: 'text' });
    expect(text).toMatch(/\+10 points +\d+ +\d+ +\d+ +\d+\n/);
    expect(text).toContain('+30 points');
  });
});

describe('calibration rendering', () => {
  const trials: TrialResult[] = [];
  for (let c = 0; c < 8; c++) {
    for (let t = 1; t <= 4; t++) {
      const status = c === 0 ? (t === 2 ? 'error' : 'pass') : c < 4 ? (t % 2 ? 'pass' : 'fail') : 'pass';
      trials.push({ caseId: `case-${c}`, engine: 'demo', variant: 'with_skill', trial: t, status, durationMs: 1, tokens: 1 });
    }
  }
  const cal = calibrate(trials, { half: 2, splits: 100 });

  it('console: title, case table (flaky first), findings, power table', () => {
    const text = renderCalibrationText(cal);
    expect(text).toContain('A/A calibration of demo (with_skill): 8 case(s) × 4 trial(s); halves: trials 1–2 and 3–4');
    expect(text).toMatch(/case +passed +rate +flaky +p\(1−p\) +halves A; B +not graded/);
    const rows = text.split('\n').filter((l) => /^ {2}case-\d/.test(l));
    expect(rows[0]).toMatch(/^ {2}case-1 +2\/4 +50% +flaky +0\.25 +1\/2; 1\/2$/);
    expect(rows.find((r) => r.includes('case-0'))).toContain('1 error(s)');
    expect(text).toContain('Flakiness: 3 of 8 graded case(s) flaky');
    expect(text).toMatch(/False differences: \d+ of 100 A\/A re-splits called a difference/);
    expect(text).toMatch(/Noise floor: \|uplift\| ≤ \d+ points in 95% of A\/A re-splits/);
    expect(text).toContain('Fixed split (trials 1–2 vs 3–4): +0 points over 8 case(s)');
    expect(text).toContain('Smallest detectable uplift (8 case(s) × 2 trial(s), 80% power):');
    expect(text).toContain('Cases needed to detect an uplift');
    expect(text).toContain('Assumes the flakiness observed');
  });

  it('console lists at most 20 cases; calibration.md lists all', () => {
    const many: TrialResult[] = Array.from({ length: 25 * 2 }, (_, i) => ({ caseId: `c${Math.floor(i / 2)}`, engine: 'e', variant: 'with_skill', trial: (i % 2) + 1, status: 'pass', durationMs: 1, tokens: 1 }));
    const c = calibrate(many, { half: 1, splits: 10 });
    expect(renderCalibrationText(c)).toContain('… 5 more case(s) in calibration.md');
    expect(renderCalibrationText(c)).toContain('Smallest detectable uplift (25 case(s) × 1 trial(s), 80% power)');
    expect(renderCalibrationMarkdown(c).match(/^\| c\d+ /gm)).toHaveLength(25);
  });

  it('markdown: heading, findings as a list, escaped table, power table', () => {
    const md = renderCalibrationMarkdown(cal);
    expect(md.startsWith('# A/A calibration\n\n100 seeded re-splits')).toBe(true);
    expect(md).toContain('## demo (with_skill): 8 case(s) × 4 trial(s)');
    expect(md).toContain('- Noise floor: \\|uplift\\|');
    expect(md).toContain('| case | passed | rate | flaky | p(1−p) | halves A; B | not graded |\n|:---|---:|---:|:---|---:|:---|:---|');
    expect(md).toContain('| uplift | 1 trial | 3 trials | 5 trials | 10 trials |');
  });

  it('explains why nothing is detectable below the minimum size', () => {
    const small = calibrate(trials.filter((t) => ['case-1', 'case-2'].includes(t.caseId)), { half: 2, splits: 10 });
    expect(renderCalibrationText(small)).toContain('Smallest detectable uplift (2 case(s) × 2 trial(s)): none; at α = 0.05 at least 6 cases must differ');
  });
});
