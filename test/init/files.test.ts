/**
 * src/init/files.ts and src/init/write.ts: the starter suite `skill-up init` writes loads as a
 * valid suite on every engine, quotes any description safely, and is never written over an
 * existing file without `force`.
 */
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { loadSuite } from '../../src/config/load.js';
import { CASE_IDS, findInitEngine, initEngineNames, initFiles, initPaths, type InitEngine } from '../../src/init/files.js';
import { existingFiles, InitConflict, writeInitFiles } from '../../src/init/write.js';
import { loadModelScript, parseModelScript } from '../../src/model/script.js';
import { lintSkill } from '../../src/skill/lint.js';
import { PINNED } from '../setup/engines.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'skills', 'frontend-design');

/** A copy of the real frontend-design skill (SKILL.md and its LICENSE.txt) in a fresh folder. */
function copySkill(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'su-init-')), 'frontend-design');
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

async function facts(dir: string) {
  const r = await lintSkill(dir);
  return { name: r.name!, description: r.description!, body: r.body! };
}

const engine = (name: string): InitEngine => findInitEngine(name)!;

describe('initFiles: a starter suite that loads, on every engine', () => {
  it('knows the five CLI engines and custom; aliases work; an unknown name does not', () => {
    expect(initEngineNames()).toEqual([...Object.keys(PINNED), 'custom']);
    expect(findInitEngine('claude-code')).toEqual(findInitEngine('claude_code'));
    expect(findInitEngine('nope')).toBeUndefined();
  });

  it.each(initEngineNames())('%s: eval.yaml, two cases and the model (or agent) load with validateAllCases', async (name) => {
    const dir = copySkill();
    const e = engine(name);
    const files = initFiles(await facts(dir), e);
    expect(files.map((f) => f.path)).toEqual(initPaths(e));
    await writeInitFiles(dir, files);
    const { suite } = await loadSuite(dir, { cwd: dir, validateAllCases: true });
    expect(suite.cases.map((c) => c.id).sort()).toEqual([...CASE_IDS].sort());
    expect(suite.benchmark.enabled).toBe(true);
    expect(suite.cases.every((c) => c.trials === 3)).toBe(true);
    const written = suite.engines[0]!;
    if (name === 'custom') {
      expect(written.displayName).toBe('frontend-design-agent');
      expect(statSync(join(dir, 'evals/agent.mjs')).mode & 0o777).toBe(0o755);
    } else {
      expect(written.name).toBe(name);
      // Pinned to the version the tests run (engines/<name>/index.ts testedVersion).
      expect(written.version).toBe(PINNED[name]);
      expect(written.model.provider).toBe('scripted');
      const script = await loadModelScript(join(dir, 'evals/model.yaml'));
      expect(script.rules.length).toBe(5);
    }
  });

  it('the prompts come from the description; the checks name the skill', async () => {
    const dir = copySkill();
    const files = initFiles(await facts(dir), engine('claude_code'));
    const when = parseYaml(files[1]!.text) as { input: { prompt: string }; expect: Record<string, unknown> };
    const main = parseYaml(files[2]!.text) as { input: { prompt: string }; expect: Record<string, unknown> };
    expect(when.input.prompt).toContain('guidance for distinctive, intentional visual design');
    expect(when.expect).toEqual({ skill_invoked: 'frontend-design', must_contain: ['frontend-design skill'] });
    expect(main.input.prompt).toContain('"Guidance for distinctive, intentional visual design when building new UI or reshaping an existing one"');
    expect(main.expect.files_exist).toEqual(['result.md']);
    expect(main.expect.file_contains).toEqual([{ path: 'result.md', content: 'Written with the frontend-design skill.' }]);
  });

  it('a description with quotes, colons, #, backslashes, braces, line separators and emoji reads back as written (blanks collapsed, braces spaced)', async () => {
    const description = 'Turns "x: y" # notes into \\d+ tables {{now}} \u2028 🚀. Use when a note says: "tabulate".';
    const skill = { name: 'odd-skill', description, body: '# Odd: "title" \u2028 x\n' };
    for (const name of ['claude_code', 'custom']) {
      const files = initFiles(skill, engine(name));
      const main = parseYaml(files[2]!.text) as { input: { prompt: string } };
      expect(main.input.prompt).toContain('"Turns "x: y" # notes into \\d+ tables { {now} } 🚀"');
      const when = parseYaml(files[1]!.text) as { input: { prompt: string } };
      expect(when.input.prompt).toBe('I have a task of this kind: a note says: "tabulate". How should I go about it?');
      if (name === 'claude_code') {
        const script = parseModelScript(files[3]!.text, 'model.yaml');
        expect(JSON.stringify(script.rules[1])).toContain('# Odd: \\"title\\" \u2028 x');
      }
    }
    // And the whole suite loads from disk.
    const root = mkdtempSync(join(tmpdir(), 'su-init-odd-'));
    const dir = join(root, 'odd-skill');
    mkdirSync(dir);
    writeFileSync(join(dir, 'SKILL.md'), `---\nname: odd-skill\ndescription: ${JSON.stringify(description)}\n---\n\n# Odd: "title"\n`);
    await writeInitFiles(dir, initFiles(await facts(dir), engine('claude_code')));
    const { suite } = await loadSuite(dir, { cwd: dir, validateAllCases: true });
    expect(suite.cases).toHaveLength(2);
  });
});

describe('writeInitFiles: never over an existing file without force', () => {
  it('refuses when one exists, names it, and writes nothing', async () => {
    const dir = copySkill();
    mkdirSync(join(dir, 'evals/cases'), { recursive: true });
    writeFileSync(join(dir, 'evals/cases/main-promise.yaml'), 'mine\n');
    const files = initFiles(await facts(dir), engine('claude_code'));
    const err = await writeInitFiles(dir, files).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InitConflict);
    expect((err as InitConflict).existing).toEqual([join(dir, 'evals/cases/main-promise.yaml')]);
    expect(existsSync(join(dir, 'evals/eval.yaml'))).toBe(false);
    expect(readFileSync(join(dir, 'evals/cases/main-promise.yaml'), 'utf8')).toBe('mine\n');
  });

  it('an existing evals/eval.yml and a dangling link count as existing', async () => {
    const dir = copySkill();
    mkdirSync(join(dir, 'evals'));
    writeFileSync(join(dir, 'evals/eval.yml'), 'schema_version: v1alpha1\n');
    symlinkSync(join(dir, 'nowhere.yaml'), join(dir, 'evals/model.yaml'));
    const files = initFiles(await facts(dir), engine('claude_code'));
    expect(existingFiles(dir, files)).toEqual([join(dir, 'evals/model.yaml'), join(dir, 'evals/eval.yml')]);
  });

  it('with force, replaces files and links (never writing through a link)', async () => {
    const dir = copySkill();
    const outside = join(dir, '..', 'outside.yaml');
    writeFileSync(outside, 'keep\n');
    mkdirSync(join(dir, 'evals'));
    symlinkSync(outside, join(dir, 'evals/model.yaml'));
    writeFileSync(join(dir, 'evals/eval.yaml'), 'old\n');
    const files = initFiles(await facts(dir), engine('claude_code'));
    const written = await writeInitFiles(dir, files, { force: true });
    expect(written).toEqual(files.map((f) => join(dir, f.path)));
    expect(readFileSync(outside, 'utf8')).toBe('keep\n');
    expect(lstatSync(join(dir, 'evals/model.yaml')).isSymbolicLink()).toBe(false);
    expect(readFileSync(join(dir, 'evals/eval.yaml'), 'utf8')).toBe(files[0]!.text);
  });
});
