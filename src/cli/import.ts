/**
 * `skill-up import <evals.json> [--output DIR] [--force]`: converts Anthropic skill-creator
 * evals into a skill-up suite (eval.yaml + one case file per eval), then loads the result
 * with `loadSuite` to prove it is valid.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config/diagnostics.js';
import { loadSuite } from '../config/load.js';
import { convertEvals } from '../import/convert.js';
import { readEvalsJson } from '../import/evals-json.js';
import { ImportConflict, writeImported } from '../import/write.js';
import { parse, UsageError } from '../util/args.js';
import { printWarnings } from './diagnostics.js';

export const IMPORT_HELP = `Usage: skill-up import <evals.json> [--output <dir>] [--force]

Converts Anthropic skill-creator evals (evals/evals.json) into a skill-up suite:
<dir>/eval.yaml and <dir>/cases/eval-<id>.yaml, which \`skill-up run\` loads.
<evals.json> may also be the skill folder holding evals/evals.json.

  prompt            → input.prompt (its first line is the title)
  expected_output   → description
  files             → context.files (text, at the same paths); binary files, large
                      files and folders are copied to <dir>/fixtures/eval-<id>/ instead
  expectations      → an agent_judge with those statements as criteria (also read
  (or assertions)     from \`assertions\`). This version has no model-backed judge: such
                      cases are graded \`error\` until one is available; add \`expect\` or
                      a rule_based judge for what can be checked mechanically.

The suite runs on Claude Code, with and without the skill, 3 trials per case.
To run evals.json without writing anything, use \`skill-up run --auto\`.

Options:
  --output <dir>   folder for eval.yaml and cases/ (default: the folder of evals.json,
                   normally <skill>/evals)
  --force          overwrite an existing eval.yaml, case files and fixture folders
  -h, --help       show this help

Exit codes: 0 converted, 2 a problem in evals.json (every one listed as file:line:col)
or a file that would be overwritten.

Examples:
  skill-up import my-skill/evals/evals.json
  skill-up import my-skill                       # finds my-skill/evals/evals.json
  skill-up import evals.json --output /tmp/converted/evals --force
`;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the command; returns the exit code. ConfigError and UsageError propagate to main. */
export async function importCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(IMPORT_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('import needs an evals.json (e.g. my-skill/evals/evals.json)');
  if (positionals.length > 1) throw new UsageError(`import takes one evals.json, got ${positionals.length}: ${positionals.join(' ')}`);
  const source = findEvalsJson(positionals[0]!);
  const evals = readEvalsJson(source);
  printWarnings(evals.bag.items.filter((d) => d.severity === 'warning'));
  const outDir = values.output ? path.resolve(values.output) : path.dirname(evals.file);
  const converted = convertEvals(evals, { mode: 'files', outDir });
  let written: string[];
  try {
    written = await writeImported(converted, { force: values.force });
  } catch (e) {
    if (e instanceof ImportConflict) throw new UsageError(e.message);
    throw e;
  }
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  for (const n of converted.notes) process.stdout.write(`note: ${n}\n`);
  // Prove the result loads; a failure here is skill-up's bug, reported as such.
  try {
    const { suite } = await loadSuite(converted.evalFile, { cwd: process.cwd() });
    const judged = suite.cases.filter((c) => c.judges.some((j) => j.type === 'agent_judge')).length;
    process.stdout.write(`✓ ${suite.cases.length} case(s) converted and valid${judged ? `; ${judged} use an agent_judge, graded \`error\` by this version until a model-backed judge is available` : ''}\n`);
    process.stdout.write(`  next: skill-up validate ${path.relative(process.cwd(), converted.evalFile) || converted.evalFile} && skill-up run ${path.relative(process.cwd(), suite.skillDir) || '.'}\n`);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write('skill-up import: the converted suite does not load (a skill-up bug; please report it with your evals.json):\n');
    throw e;
  }
  return 0;
}

/** The evals.json a target means: the file itself, or `evals/evals.json` / `evals.json` in a folder. */
function findEvalsJson(target: string): string {
  const abs = path.resolve(target);
  let isDir: boolean;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    return abs; // readEvalsJson reports "not found"
  }
  if (!isDir) return abs;
  for (const c of [path.join(abs, 'evals', 'evals.json'), path.join(abs, 'evals.json')]) if (existsSync(c)) return c;
  throw new UsageError(`no evals.json in ${target}: looked for evals/evals.json and evals.json`);
}
