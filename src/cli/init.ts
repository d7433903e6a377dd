/**
 * `skill-up init [skill folder] [--engine <name>] [--force]`: reads the skill's SKILL.md and
 * writes a starter suite (src/init/) that `skill-up run` runs offline at once and that passes
 * with the skill; then loads it with `loadSuite` to prove it is valid.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, type Diagnostic } from '../config/diagnostics.js';
import { loadSuite } from '../config/load.js';
import { findInitEngine, initEngineNames, initFiles, RESULT_FILE } from '../init/files.js';
import { InitConflict, writeInitFiles } from '../init/write.js';
import { lintSkill } from '../skill/lint.js';
import { parse, UsageError } from '../util/args.js';
import { didYouMean } from '../util/did-you-mean.js';
import { printWarnings } from './diagnostics.js';

export const INIT_HELP = `Usage: skill-up init [skill folder] [--engine <name>] [--force]

Writes a starter eval suite next to a skill's SKILL.md, from its name and description:

  evals/eval.yaml                 the suite: the engine, trials (3), with and without the skill
  evals/cases/when-to-use.yaml    a request the skill is meant for (from the description's
                                  "use when …"): the skill must be used
  evals/cases/main-promise.yaml   the skill's main promise (the description's first sentence)
                                  done on an example, written to ${RESULT_FILE}
  evals/model.yaml                skill-up's scripted model: it loads the skill when the engine
                                  lists it and answers from it, so the suite runs offline, with
                                  no model API and no tokens, and passes with the skill
                                  (\`--engine custom\`: evals/agent.mjs, a stand-in agent, instead)

Then \`skill-up run <skill folder>\` runs it at once. Edit the cases into real requests and
checks, and the model's rules to match (or drop \`provider: scripted\` to use a real model).

Options:
  --engine <name>   the engine written into eval.yaml: ${initEngineNames().join(', ')}
                    (default claude_code, pinned to the version skill-up is tested with)
  --force           overwrite the files above when they exist
  -h, --help        show this help

Exit codes: 0 written and valid; 2 no SKILL.md (or no name or description in it), an unknown
engine, a file that would be overwritten (named; nothing is written), or a suite that does
not load (the problems are listed, e.g. a SKILL.md that \`validate\` rejects).

Examples:
  skill-up init                                # the skill in the current folder
  skill-up init path/to/my-skill && skill-up run path/to/my-skill
  skill-up init path/to/my-skill --engine codex --force
`;

const OPTIONS = {
  engine: { type: 'string', short: 'e' },
  force: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the command; returns the exit code. ConfigError and UsageError propagate to main (exit 2). */
export async function initCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(INIT_HELP);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`init takes one skill folder, got ${positionals.length}: ${positionals.join(' ')}`);
  const engineName = values.engine ?? 'claude_code';
  const engine = findInitEngine(engineName);
  if (!engine) {
    throw new UsageError(`unknown engine \`${engineName}\`${didYouMean(engineName, initEngineNames(), { maxDistance: 3 })}; --engine takes one of ${initEngineNames().join(', ')}`);
  }
  const skillDir = skillFolder(positionals[0] ?? '.');

  const lint = await lintSkill(skillDir);
  const missing = lint.diagnostics.filter((d) => d.severity === 'error' && (d.path === '' || d.path === 'name' || d.path === 'description'));
  if (!lint.name?.trim() || !lint.description?.trim()) {
    const need: Diagnostic[] = missing.length ? missing : [{ file: path.join(skillDir, 'SKILL.md'), line: 1, col: 1, path: '', message: 'init needs SKILL.md to have a `name` and a `description`', severity: 'error' }];
    throw new ConfigError(need);
  }

  const files = initFiles({ name: lint.name, description: lint.description, ...(lint.body !== undefined ? { body: lint.body } : {}) }, engine);
  let written: string[];
  try {
    written = await writeInitFiles(skillDir, files, { force: values.force });
  } catch (e) {
    if (e instanceof InitConflict) {
      throw new UsageError(`would overwrite ${e.existing.map((f) => shown(f)).join(', ')}; nothing was written: pass --force to replace ${e.existing.length > 1 ? 'them' : 'it'}`);
    }
    throw e;
  }
  for (const w of written) process.stdout.write(`wrote ${shown(w)}\n`);

  // Prove it loads. A SKILL.md that `validate` rejects fails here (the files stay written).
  try {
    const { suite, warnings } = await loadSuite(skillDir, { cwd: process.cwd(), validateAllCases: true });
    printWarnings(warnings);
    process.stdout.write(`✓ ${shown(suite.evalFile)} is valid: ${suite.cases.length} starter case(s), engine ${suite.engines.map((x) => x.displayName).join(', ')}, with and without the skill\n`);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write('skill-up init: the suite was written, but it does not load yet; fix the problems below, then `skill-up validate`:\n');
    throw e;
  }
  const target = shown(skillDir) || '.';
  process.stdout.write(`  next: skill-up run ${quoteArg(target)}\n`);
  return 0;
}

/** The skill folder `target` means: a folder holding SKILL.md, or the folder of a SKILL.md file. @throws UsageError */
function skillFolder(target: string): string {
  const abs = path.resolve(target);
  let isDir: boolean;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    throw new UsageError(`not found: ${target} (init takes a skill folder, the one holding SKILL.md)`);
  }
  if (!isDir) {
    if (path.basename(abs) === 'SKILL.md') return path.dirname(abs);
    throw new UsageError(`${target} is a file; init takes a skill folder, the one holding SKILL.md`);
  }
  return abs;
}

/** A path as the user can type it from here: relative to the current folder when inside it. */
function shown(abs: string): string {
  const rel = path.relative(process.cwd(), abs);
  return rel === '' ? '.' : rel.startsWith('..') || path.isAbsolute(rel) ? abs : rel;
}

/** A shell word for a path: quoted when it holds anything but safe characters. */
function quoteArg(p: string): string {
  return /^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replaceAll("'", `'\\''`)}'`;
}
