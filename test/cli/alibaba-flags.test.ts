/** alibaba/skill-up's run flags read before skill-up's parser (src/cli/alibaba-flags.ts). */
import { describe, expect, it } from 'vitest';
import { readAlibabaFlags, UNSUPPORTED_RUN_FLAGS } from '../../src/cli/alibaba-flags.js';
import { UsageError } from '../../src/util/args.js';

describe('readAlibabaFlags', () => {
  it('reads -v, -vv, --verbose, --verbose=N and --verbose=false, and takes them out', () => {
    expect(readAlibabaFlags(['x', '-v'])).toEqual({ argv: ['x'], verbose: 1 });
    expect(readAlibabaFlags(['-vv', 'x'])).toEqual({ argv: ['x'], verbose: 2 });
    expect(readAlibabaFlags(['--verbose', '--verbose'])).toEqual({ argv: [], verbose: 2 });
    expect(readAlibabaFlags(['--verbose=2']).verbose).toBe(2);
    expect(readAlibabaFlags(['-vv', '--verbose=false']).verbose).toBe(0);
    expect(readAlibabaFlags(['-vvvv']).verbose).toBe(2);
    expect(() => readAlibabaFlags(['--verbose=loud'])).toThrow(/--verbose takes a level/);
  });

  it('renames --include-case-name / --exclude-case-name to --case / --exclude-case', () => {
    expect(readAlibabaFlags(['--include-case-name', 'a*', '--exclude-case-name=b']).argv).toEqual(['--case', 'a*', '--exclude-case=b']);
  });

  it('refuses each unsupported flag by name, with or without a value, and leaves what follows -- alone', () => {
    for (const flag of Object.keys(UNSUPPORTED_RUN_FLAGS)) {
      for (const argv of [[flag, 'v'], [`${flag}=v`]]) {
        let err: unknown;
        try {
          readAlibabaFlags(['skill', ...argv]);
        } catch (e) {
          err = e;
        }
        expect(err, flag).toBeInstanceOf(UsageError);
        expect((err as Error).message.startsWith(`${flag} (an alibaba/skill-up run flag) is not supported by skill-up: `), (err as Error).message).toBe(true);
      }
    }
    expect(readAlibabaFlags(['--', '--rk', '-v'])).toEqual({ argv: ['--', '--rk', '-v'], verbose: 0 });
  });
});
