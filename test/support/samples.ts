/**
 * An engine's captured output samples (`engines/<name>/samples/`, real output of the engine's
 * binary copied into the repository) for its parser tests.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The samples beside a parser test: the folder, a reader, and the output samples `keep` selects (sorted). */
export interface EngineSamples {
  /** Absolute path of `samples/` beside the test file. */
  dir: string;
  /** Each selected file name, sorted. */
  outputs: string[];
  /**
   * The text of sample `name`.
   * @throws Error naming the missing file.
   */
  read(name: string): string;
}

/** The samples folder beside the test at `testFileUrl` (its `import.meta.url`). */
export function engineSamples(testFileUrl: string, keep: (file: string) => boolean): EngineSamples {
  const dir = resolve(dirname(fileURLToPath(testFileUrl)), 'samples');
  return {
    dir,
    outputs: existsSync(dir) ? readdirSync(dir).filter(keep).sort() : [],
    read(name) {
      const file = join(dir, name);
      if (!existsSync(file)) throw new Error(`sample ${file} is missing: copied from the engine's real output into ${dir}`);
      return readFileSync(file, 'utf8');
    },
  };
}
