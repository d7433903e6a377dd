/**
 * src/util/did-you-mean.ts: the one did-you-mean of skill-up, and the argument parser's use of
 * it (src/util/args.ts) for a flag with no name (`--=3`).
 */
import { describe, expect, it } from 'vitest';
import { didYouMean, nearest } from '../../src/util/did-you-mean.js';
import { parse, UsageError } from '../../src/util/args.js';

describe('nearest', () => {
  it('finds the typo: loose folding first, then the closest within the limit', () => {
    expect(nearest('allowed_tools', ['allowed-tools', 'id'])).toBe('allowed-tools');
    expect(nearest('promt', ['prompt', 'id'])).toBe('prompt');
    expect(nearest('zzzzzz', ['prompt', 'id'])).toBeUndefined();
  });

  it('suggests nothing for a word with no letter or digit (empty, blanks, a bare `--`)', () => {
    // An edit distance from nothing is the shortest candidate's length: `""` would be "`id`".
    for (const word of ['', ' ', '\t\n', '--', '-', '_']) {
      expect(nearest(word, ['id', 'tag', '--tag']), JSON.stringify(word)).toBeUndefined();
      expect(didYouMean(word, ['id', 'tag'])).toBe('');
    }
    expect(nearest('i', ['id'])).toBe('id');
  });
});

describe('the argument parser on a flag without a name', () => {
  const flags = { tag: { type: 'string' as const }, quiet: { type: 'boolean' as const } };
  const problem = (argv: string[]): string => {
    try {
      parse(argv, flags);
    } catch (e) {
      if (e instanceof UsageError) return e.message;
      throw e;
    }
    return '';
  };

  it('`--=3` is an unknown option with no suggestion; `--tga=3` still suggests `--tag`', () => {
    expect(problem(['--=3'])).toMatch(/^unknown option `--=3`/);
    expect(problem(['--=3'])).not.toContain('did you mean');
    expect(problem(['--tga=3'])).toContain('did you mean `--tag`?');
  });
});
