import { describe, expect, it } from 'vitest';
import { intFlag, numberFlag, parse, UsageError } from '../../src/util/args.js';
import { maxCostFlag } from '../../src/cli/run-extras.js';

describe('number flags take decimal numbers as people write them', () => {
  it('refuses hex, Infinity, blanks and fractions where an integer is due', () => {
    for (const v of ['0x3', '3.0', ' ', '', '1e1', 'Infinity']) expect(() => intFlag('trials', v, 1, 1000)).toThrow(UsageError);
    expect(intFlag('trials', '12', 1, 1000)).toBe(12);
    for (const v of ['0x1', 'Infinity', '', '1,5']) expect(() => numberFlag('min-pass-rate', v, 0, 1, 'a rate', true)).toThrow(UsageError);
    expect(numberFlag('min-pass-rate', '80%', 0, 1, 'a rate', true)).toBeCloseTo(0.8, 12);
    expect(numberFlag('min-pass-rate', '.75', 0, 1, 'a rate', true)).toBe(0.75);
    expect(() => maxCostFlag('0x10')).toThrow(UsageError);
    expect(maxCostFlag('$2.50')).toBe(2.5);
  });
  it('reads a negative value after a string option as its value', () => {
    const { values } = parse(['--min-uplift', '-10', 'path'], { 'min-uplift': { type: 'string' } } as const);
    expect(values['min-uplift']).toBe('-10');
  });
});
