import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A PNG header: binary (NUL bytes, invalid UTF-8). */
export const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0xfe]);

/** The evals.json of skill-creator's documentation, with a text input file. */
export const EVALS = {
  skill_name: 'csv-summary',
  evals: [
    {
      id: 1,
      prompt: 'Summarise evals/files/data.csv into report.md.\nKeep it short.',
      expected_output: 'A report.md with the column totals',
      files: ['evals/files/data.csv'],
      expectations: ['report.md exists', 'The totals are correct'],
    },
    { id: 2, prompt: 'Say hello', assertions: ['The answer greets the user'] },
    { id: 3, prompt: 'List the files' },
  ],
};

/** Writes a skill folder (`csv-summary`) from relative path → content; returns its path. */
export function writeSkillWithEvals(evals: unknown = EVALS, files: Record<string, string | Buffer> = {}): string {
  const root = mkdtempSync(join(tmpdir(), 'su-import-'));
  const dir = join(root, 'csv-summary');
  const all: Record<string, string | Buffer> = {
    'SKILL.md': '---\nname: csv-summary\ndescription: Summarises CSV files into Markdown reports.\n---\n\n# CSV summary\n',
    'evals/evals.json': typeof evals === 'string' ? evals : JSON.stringify(evals, null, 2),
    'evals/files/data.csv': 'a,b\n1,2\n',
    ...files,
  };
  for (const [rel, content] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), content);
  }
  return dir;
}
