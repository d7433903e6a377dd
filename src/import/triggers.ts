/**
 * `skill-up import <trigger-eval.json>`: converts a skill-creator trigger eval set (a JSON array
 * of `{"query", "should_trigger"}`, src/config/triggers.ts) into trigger case files,
 * `<dir>/cases/<id>.yaml` (`input.prompt` = the query, `should_trigger`, tag `trigger`), plus an
 * eval.yaml listing them when `<dir>` has none. The ids are those eval.yaml `triggers.file`
 * gives the same items, so either way of running a set pairs in `compare`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { ConfigError, DiagnosticBag } from '../config/diagnostics.js';
import { skillRootOf } from '../config/discover.js';
import { readTriggerItems } from '../config/triggers.js';
import { skillRootOfEvalsJson } from './evals-json.js';
import { ImportConflict } from './write.js';

/** Whether `file` holds a JSON array (a trigger eval set) rather than an evals.json object. */
export function isTriggerEvalSet(file: string): boolean {
  try {
    const head = readFileSync(file, 'utf8').slice(0, 4096).replace(/^\uFEFF/, '').trimStart();
    return head.startsWith('[');
  } catch {
    return false;
  }
}

/** What {@link importTriggerSet} wrote. */
export interface TriggerImport {
  /** Absolute paths written. */
  written: string[];
  /** eval.yaml of the suite: written here, or the one that was already there. */
  evalFile: string;
  /** eval.yaml existed and was left as it is. */
  evalKept: boolean;
  cases: number;
  notes: string[];
}

/**
 * Reads `source` (every bad item reported at its line, all at once) and writes the case files
 * into `outDir/cases/`, and `outDir/eval.yaml` when none exists.
 * When `outDir` is outside the set's skill (the parent of its `evals/` folder, else its own
 * folder), a new eval.yaml lists that skill in `skills:` (as the evals.json import does).
 * @throws ConfigError for a bad trigger eval set; ImportConflict (before anything is written)
 * when a case file exists and `force` is off, or when neither the set's folder nor the new
 * suite's root holds a SKILL.md.
 */
export async function importTriggerSet(source: string, outDir: string, opts: { force?: boolean } = {}): Promise<TriggerImport> {
  const bag = new DiagnosticBag();
  const items = readTriggerItems(source, bag);
  if (bag.hasErrors) throw new ConfigError(bag.sorted());
  const casesDir = path.join(outDir, 'cases');
  const cases = items.map((item) => {
    const doc = { title: item.query.split('\n')[0]!.trim().slice(0, 80), tags: ['trigger'], input: { prompt: item.query.replace(/\{\{/g, '\\{{') }, should_trigger: item.shouldTrigger };
    const header = `# yaml-language-server: $schema=https://skill-up.dev/schemas/case.schema.json\n# Trigger case imported from ${path.basename(source)}:${item.at.position().line} by \`skill-up import\`: passes iff the skill is activated ${item.shouldTrigger ? '' : 'NOT '}by this query.\n`;
    return { file: path.join(casesDir, `${item.id}.yaml`), text: `${header}${stringify(doc, { lineWidth: 0 })}` };
  });
  const evalFile = [path.join(outDir, 'eval.yaml'), path.join(outDir, 'eval.yml')].find((f) => existsSync(f));
  const existing = cases.map((c) => c.file).filter((f) => existsSync(f));
  if (existing.length && !opts.force) {
    const list = existing.slice(0, 5).map((e) => path.relative(process.cwd(), e) || e).join(', ');
    throw new ImportConflict(`would overwrite ${list}${existing.length > 5 ? ` and ${existing.length - 5} more` : ''}; pass --force to replace, or --output another folder`);
  }
  // As the evals.json import does (src/import/convert.ts): a suite written outside the set's
  // skill names that skill in `skills:`, so the cases judge its activation and the suite loads.
  // Decided before anything is written: with no skill either side, refuse with one message.
  const target = evalFile ?? path.join(outDir, 'eval.yaml');
  const skillDir = skillRootOfEvalsJson(source);
  const root = skillRootOf(target);
  const hasSkill = (d: string) => existsSync(path.join(d, 'SKILL.md'));
  const named = !evalFile && path.resolve(root) !== path.resolve(skillDir) && hasSkill(skillDir);
  if (!evalFile && !named && !hasSkill(root)) {
    const rel = (p: string) => path.relative(process.cwd(), p) || p;
    throw new ImportConflict(`neither ${rel(skillDir)} (the set's folder) nor ${rel(root)} (the new suite's root) holds a SKILL.md, so the trigger cases would have no skill to judge; put the set in the skill folder (or its evals/), or --output into <skill>/evals`);
  }
  const skills = named ? { skills: [{ source: 'local_path', path: path.relative(root, skillDir).split(path.sep).join('/') || '.' }] } : {};
  await mkdir(casesDir, { recursive: true });
  const written: string[] = [];
  for (const c of cases) {
    await writeFile(c.file, c.text);
    written.push(c.file);
  }
  const notes: string[] = [];
  const glob = `${path.relative(skillRootOf(target), casesDir).split(path.sep).join('/') || '.'}/*.yaml`;
  if (!evalFile) {
    const text =
      `# Trigger evaluation imported from ${path.basename(source)} by \`skill-up import\`: each case passes iff the\n` +
      `# skill is activated exactly when its \`should_trigger\` says. Run: skill-up run --trigger-only\n` +
      `# yaml-language-server: $schema=https://skill-up.dev/schemas/eval.schema.json\n` +
      stringify({ schema_version: 'v1alpha1', ...skills, engine: { name: 'claude_code' }, cases: { files: [glob] }, trials: 3 }, { lineWidth: 0 });
    await writeFile(target, text);
    written.push(target);
    notes.push('skill-creator runs trigger queries in Claude Code, 3 times each; pin `engine.version:` (an exact npm version) for repeatable runs');
    if (named) notes.push(`${path.relative(process.cwd(), target) || target} is outside the skill: its \`skills:\` names ${path.relative(process.cwd(), skillDir) || skillDir}, the skill whose activation the cases judge`);
  } else {
    notes.push(`${path.relative(process.cwd(), evalFile) || evalFile} exists and was left as it is: its \`cases.files\` must list \`${glob}\` for these cases to run (or list the set directly: \`triggers: {file: …}\`)`);
  }
  return { written, evalFile: target, evalKept: evalFile !== undefined, cases: cases.length, notes };
}
