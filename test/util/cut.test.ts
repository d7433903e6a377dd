import { describe, expect, it } from 'vitest';
import { cutText, oneLine } from '../../src/util/cut.js';

describe('cutText', () => {
  it('keeps a text that fits, and ends a cut one with … within the limit', () => {
    expect(cutText('abc', 3)).toBe('abc');
    expect(cutText('abcd', 3)).toBe('ab…');
    expect(cutText('abcd', 1)).toBe('…');
    expect(cutText('x'.repeat(500), 160)).toHaveLength(160);
  });

  it('never cuts inside a surrogate pair', () => {
    // '😀' is two UTF-16 units: a cut after its first unit drops that unit too.
    const cut = cutText('ab😀cd', 4);
    expect(cut).toBe('ab…');
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(cutText('ab😀cd', 5)).toBe('ab😀…');
  });
});

describe('oneLine', () => {
  it('makes white space one space, trims, then cuts', () => {
    expect(oneLine('  a\n\tb  ', 10)).toBe('a b');
    expect(oneLine('a\nbcdef', 4)).toBe('a b…');
  });
});
