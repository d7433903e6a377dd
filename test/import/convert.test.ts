import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError } from '../../src/config/diagnostics.js';
import { loadSuite } from '../../src/config/load.js';
import { convertEvals } from '../../src/import/convert.js';
import { readEvalsJson } from '../../src/import/evals-json.js';
import { ImportConflict, writeImported } from '../../src/import/write.js';
import { EVALS, PNG, writeSkillWithEvals } from './helpers.js';

describe('convertEvals + writeImported', () => {
  it('writes eval.yaml and one case per eval that loadSuite loads, with the mapping of every field', async () => {
    const dir = writeSkillWithEvals();
    const c = convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'files' });
    const written = await writeImported(c);
    expect(written).toEqual([join(dir, 'evals/eval.yaml'), join(dir, 'evals/cases/eval-1.yaml'), join(dir, 'evals/cases/eval-2.yaml'), join(dir, 'evals/cases/eval-3.yaml')]);
    const { suite, warnings } = await loadSuite(dir, { cwd: dir });
    expect(warnings).toEqual([]);
    expect(suite.skillDir).toBe(dir);
    expect(suite.engine.name).toBe('claude_code');
    expect(suite.benchmark.enabled).toBe(true);
    expect(suite.trials).toBe(3);
    expect(suite.report.formats).toEqual(['json', 'junit', 'markdown', 'benchmark', 'html']);
    const [one, two, three] = suite.cases;
    expect(one).toMatchObject({
      id: 'eval-1',
      title: 'Summarise evals/files/data.csv into report.md.',
      description: 'A report.md with the column totals',
      turns: [{ content: EVALS.evals[0]!.prompt }],
      context: { files: { 'evals/files/data.csv': 'a,b\n1,2\n' } },
      judges: [{ type: 'agent_judge', criteria: [{ id: 'c1', text: 'report.md exists' }, { id: 'c2', text: 'The totals are correct' }] }],
      expect: { exitCode: 0 },
    });
    expect(two!.judges).toMatchObject([{ type: 'agent_judge', criteria: [{ id: 'c1', text: 'The answer greets the user' }] }]);
    expect(three!.judges).toEqual([]);
    expect(c.notes).toEqual(['eval-3: no expectations in evals.json; only the exit code is checked']);
  });

  it('says in eval.yaml and in each case that a grader agent on the job\'s engine and model grades the criteria', async () => {
    const dir = writeSkillWithEvals();
    await writeImported(convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'files' }));
    const evalYaml = readFileSync(join(dir, 'evals/eval.yaml'), 'utf8');
    expect(evalYaml).toMatch(/^# Converted from evals\/evals\.json \(Anthropic skill-creator format\) by `skill-up import`\./);
    expect(evalYaml).toContain("# turns, a grader agent checks them on a copy of the finished workspace, on the same engine\n# and model as the job (Claude Code here;");
    expect(evalYaml).toContain('name: claude_code # skill-creator runs its evals in Claude Code');
    const case1 = readFileSync(join(dir, 'evals/cases/eval-1.yaml'), 'utf8');
    expect(case1).toMatch(/^# eval 1 of evals\.json \(skill csv-summary\)\n# input files are placed in the workspace at the paths evals\.json gives: evals\/files\/data\.csv\n# the criteria below are graded by an agent_judge: a grader agent on the job's engine and model/);
    expect(parse(case1)).toEqual({
      title: 'Summarise evals/files/data.csv into report.md.',
      description: 'A report.md with the column totals',
      input: { prompt: 'Summarise evals/files/data.csv into report.md.\nKeep it short.' },
      context: { files: { 'evals/files/data.csv': 'a,b\n1,2\n' } },
      judge: { type: 'agent_judge', criteria: ['report.md exists', 'The totals are correct'] },
    });
    expect(readFileSync(join(dir, 'evals/cases/eval-3.yaml'), 'utf8')).toContain('# evals.json gave no expectations: only the exit code is checked');
  });

  it('copies the input files of an eval into a fixture folder when one is binary', async () => {
    const evals = { evals: [{ id: 5, prompt: 'Describe the picture', files: ['evals/files/pic.png', 'evals/files/data.csv'], expectations: ['mentions colours'] }] };
    const dir = writeSkillWithEvals(evals, { 'evals/files/pic.png': PNG });
    const c = convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'files' });
    expect(c.notes).toEqual(['eval-5: `evals/files/pic.png` is not a UTF-8 text file; its input files are copied to evals/fixtures/eval-5/']);
    await writeImported(c);
    expect(readFileSync(join(dir, 'evals/fixtures/eval-5/evals/files/pic.png'))).toEqual(PNG);
    expect(readFileSync(join(dir, 'evals/fixtures/eval-5/evals/files/data.csv'), 'utf8')).toBe('a,b\n1,2\n');
    const { suite } = await loadSuite(dir, { cwd: dir });
    expect(suite.cases[0]!.context).toEqual({ files: {}, repoFixture: join(dir, 'evals/fixtures/eval-5') });
  });

  it('writes into another folder with the skill referenced by a relative path', async () => {
    const dir = writeSkillWithEvals();
    const out = join(dir, '..', 'elsewhere', 'evals');
    const c = convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'files', outDir: out });
    await writeImported(c);
    expect(parse(readFileSync(join(out, 'eval.yaml'), 'utf8')).skills).toEqual([{ source: 'local_path', path: '../csv-summary' }]);
    const { suite } = await loadSuite(join(out, 'eval.yaml'), { cwd: out });
    expect(suite.skills[0]!.path).toBe(dir);
    expect(suite.cases).toHaveLength(3);
  });

  it('never overwrites an existing suite unless forced', async () => {
    const dir = writeSkillWithEvals(EVALS, { 'evals/eval.yaml': 'schema_version: v1alpha1\n' });
    const c = convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'files' });
    await expect(writeImported(c)).rejects.toThrow(ImportConflict);
    await expect(writeImported(c)).rejects.toThrow(/would overwrite .*evals\/eval\.yaml; pass --force/);
    expect(readFileSync(join(dir, 'evals/eval.yaml'), 'utf8')).toBe('schema_version: v1alpha1\n');
    expect(existsSync(join(dir, 'evals/cases'))).toBe(false);
    await writeImported(c, { force: true });
    expect(readFileSync(join(dir, 'evals/eval.yaml'), 'utf8')).toContain('claude_code');
  });

  it('reports a missing input file at its place in evals.json', () => {
    const dir = writeSkillWithEvals({ evals: [{ prompt: 'p', files: ['evals/files/missing.txt'] }] });
    try {
      convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'files' });
      throw new Error('accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const [d] = (e as ConfigError).diagnostics;
      expect(d).toMatchObject({ file: join(dir, 'evals/evals.json'), line: 6, path: 'evals[0].files[0]' });
      expect(d!.message).toMatch(/^input file `evals\/files\/missing\.txt` not found \(looked for .*; paths in evals\.json are relative to the skill root\)$/);
    }
  });

  it('in memory, keeps cases inline and refuses binary input files with a pointer to import', () => {
    const dir = writeSkillWithEvals();
    const mem = convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'memory' });
    expect(mem.cases).toEqual([]);
    expect(mem.copies).toEqual([]);
    expect((mem.evalData.cases as { inline: { id: string }[] }).inline.map((c) => c.id)).toEqual(['eval-1', 'eval-2', 'eval-3']);
    writeFileSync(join(dir, 'evals/files/data.csv'), PNG);
    expect(() => convertEvals(readEvalsJson(join(dir, 'evals/evals.json')), { mode: 'memory' })).toThrow(/can only put text files into the workspace; convert the evals with `skill-up import`/);
  });
});
