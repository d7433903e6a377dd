/**
 * `skill-up import <evals.json> [--output DIR] [--force]`: converts Anthropic skill-creator
 * evals into a skill-up suite (eval.yaml + one case file per eval), then loads the result
 * with `loadSuite` to prove it is valid.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config/diagnostics.js';
import { loadSuite } from '../config/load.js';
import type { AgentJudgeSpec, Suite } from '../config/types.js';
import { convertEvals } from '../import/convert.js';
import { readEvalsJson } from '../import/evals-json.js';
import { ImportConflict, writeImported } from '../import/write.js';
import { importTriggerSet, isTriggerEvalSet } from '../import/triggers.js';
import { credentialsLine } from '../import/credentials.js';
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
  (or assertions)     from \`assertions\`): a grader agent on the job's engine and model
                      checks them on a copy of the finished workspace, with evidence per
                      criterion; add \`expect\` or a rule_based judge for what can be
                      checked mechanically.

The suite runs on Claude Code, with and without the skill, 3 trials per case.
To run evals.json without writing anything, use \`skill-up run --auto\`.

Options:
  --output <dir>   folder for eval.yaml and cases/ (default: the folder of evals.json,
                   normally <skill>/evals)
  --force          overwrite an existing eval.yaml, case files and fixture folders
  -h, --help       show this help

A trigger eval set (skill-creator's description optimiser: a JSON array of
{"query": "…", "should_trigger": true|false}) becomes one trigger case per item,
<dir>/cases/trigger-<words>-<hash>.yaml, plus <dir>/eval.yaml when there is none;
run them with \`skill-up run --trigger-only\` (or list the file in eval.yaml
\`triggers: {file: …}\` instead of importing it).

Exit codes: 0 converted, 2 a problem in evals.json (or the trigger eval set) (every one listed as file:line:col)
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
  // A JSON array is a trigger eval set ([{"query", "should_trigger"}], src/import/triggers.ts).
  if (isTriggerEvalSet(source)) return importTriggers(source, values.output, values.force);
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
    process.stdout.write(`✓ ${suite.cases.length} case(s) converted and valid${judged ? `; ${judged} use an agent_judge, graded by a grader agent on ${graderEngine(suite)}` : ''}\n`);
    const skillArg = path.relative(process.cwd(), suite.skillDir) || '.';
    // The engine written needs a login (a real model): say so now, not at the first job's error.
    const login = credentialsLine(suite.engine, skillArg);
    if (login) process.stdout.write(`${login}\n`);
    process.stdout.write(`  next: skill-up validate ${path.relative(process.cwd(), converted.evalFile) || converted.evalFile} && skill-up run ${skillArg}\n`);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write('skill-up import: the converted suite does not load (a skill-up bug; please report it with your evals.json):\n');
    throw e;
  }
  return 0;
}

/**
 * Which engine and model grade the suite's agent_judge criteria, for the import message: the
 * judges' own `engine` / `model` when every one names the same, else the suite's engine and
 * model (a grader runs on its job's engine and model unless its judge says otherwise).
 */
function graderEngine(suite: Suite): string {
  const judges = suite.cases.flatMap((c) => c.judges).filter((j): j is AgentJudgeSpec => j.type === 'agent_judge');
  const engine = judges[0]?.engine ?? suite.engine;
  const model = judges[0]?.model ?? engine.model.name;
  const same = judges.every((j) => j.engine?.name === judges[0]?.engine?.name && j.model === judges[0]?.model);
  if (!same) return "each case's grader engine (see its judge)";
  const own = judges[0]?.engine === undefined && judges[0]?.model === undefined;
  return `${engine.displayName} with ${model ? `model ${model}` : 'its default model'}${own ? " (the job's own engine and model; `skill-up run --model` / `--model-script` change both)" : ''}`;
}

/** `import` of a trigger eval set: the case files (and an eval.yaml when there is none), then proof that the suite loads. */
async function importTriggers(source: string, output: string | undefined, force: boolean | undefined): Promise<number> {
  const outDir = output ? path.resolve(output) : path.dirname(source);
  let done;
  try {
    done = await importTriggerSet(source, outDir, { force });
  } catch (e) {
    if (e instanceof ImportConflict) throw new UsageError(e.message);
    throw e;
  }
  process.stdout.write(`wrote ${done.cases} trigger case(s) in ${path.join(outDir, 'cases')}${done.evalKept ? '' : ` and ${done.evalFile}`}\n`);
  for (const n of done.notes) process.stdout.write(`note: ${n}\n`);
  const { suite } = await loadSuite(done.evalFile, { cwd: process.cwd() });
  const triggers = suite.cases.filter((c) => c.shouldTrigger !== undefined).length;
  process.stdout.write(`✓ the suite loads: ${triggers} trigger case(s) of ${suite.cases.length}\n`);
  const login = credentialsLine(suite.engine, path.relative(process.cwd(), suite.skillDir) || '.');
  if (login) process.stdout.write(`${login}\n`);
  process.stdout.write(`  next: skill-up run ${path.relative(process.cwd(), suite.skillDir) || '.'} --trigger-only\n`);
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
