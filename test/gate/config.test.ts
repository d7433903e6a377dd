import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveGates } from '../../src/gate/index.js';
import { UsageError } from '../../src/util/args.js';

const suite = (gates = {}) => ({ gates, evalFile: resolve('skill/evals/eval.yaml') });
const opts = { baseline: true, engineNames: { claude_code: 'claude' } };

describe('resolveGates: eval.yaml gates under the command line', () => {
  it('takes each flag over its eval.yaml field, and the defaults for neither', () => {
    const { config, previous } = resolveGates({ errorsAsFailures: false, alpha: 0.01, minUplift: 20 }, suite({ alpha: 0.1, minPassRate: 0.8, minUplift: 5, onInconclusive: 'fail' }), opts);
    expect(config).toEqual({ alpha: 0.01, errorsAsFailures: false, maxErrorRate: 0, minPassRate: 0.8, minUplift: 0.2, onInconclusive: 'fail', engineNames: { claude_code: 'claude' } });
    expect(previous).toBeUndefined();
  });

  it('names the no_regression baseline, absolute, with its margin as a fraction (default 10 points)', () => {
    expect(resolveGates({ errorsAsFailures: false, noRegression: 'old/result.json' }, suite(), opts).previous).toEqual({ file: resolve('old/result.json'), from: '--no-regression', margin: 0.1 });
    const fromYaml = resolveGates({ errorsAsFailures: true, margin: 5 }, suite({ noRegression: { baseline: '/runs/1', margin: 20 } }), opts);
    expect(fromYaml.previous).toEqual({ file: '/runs/1', from: 'gates.no_regression.baseline of skill/evals/eval.yaml', margin: 0.05 });
    expect(fromYaml.config.errorsAsFailures).toBe(true);
  });

  it('refuses a min_uplift gate without the without_skill arm, naming where it came from', () => {
    const noArm = { ...opts, baseline: false };
    expect(() => resolveGates({ errorsAsFailures: false, minUplift: 10 }, suite(), noArm)).toThrow(/^--min-uplift needs the without_skill arm/);
    expect(() => resolveGates({ errorsAsFailures: false }, suite({ minUplift: 10 }), noArm)).toThrow(/^gates\.min_uplift of skill\/evals\/eval\.yaml needs the without_skill arm/);
  });

  it('refuses --margin without a baseline to compare with, and an empty --no-regression', () => {
    expect(() => resolveGates({ errorsAsFailures: false, margin: 5 }, suite(), opts)).toThrow(UsageError);
    expect(() => resolveGates({ errorsAsFailures: false, noRegression: ' ' }, suite(), opts)).toThrow(/got an empty value/);
  });
});
