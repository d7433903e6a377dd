/**
 * `skill-up run --auto`: run a skill's Anthropic `evals/evals.json` when it has no eval.yaml,
 * converted in memory (nothing is written into the skill folder). The conversion is the one
 * `skill-up import` writes (src/import/convert.ts), with the cases inline; the document then
 * goes through the same schema check and builders as a file loaded by `loadSuite`.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { buildCase } from '../config/case.js';
import { ConfigError } from '../config/diagnostics.js';
import { buildEval } from '../config/eval.js';
import type { LoadResult } from '../config/load.js';
import { reportSchemaErrors } from '../config/schema-errors.js';
import { Field, parseYaml } from '../config/yaml-source.js';
import { lintSkill } from '../skill/lint.js';
import { convertEvals, type Converted } from './convert.js';
import { readEvalsJson } from './evals-json.js';

/** What `--auto` found: an eval.yaml route (handled by `loadSuite`) or an evals.json to convert. */
export type AutoTarget = { kind: 'yaml'; target: string | undefined } | { kind: 'evals_json'; file: string };

const YAML_NAMES = ['eval.yaml', 'eval.yml'];
const isFile = (p: string) => {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
};
const hasYaml = (dir: string) => YAML_NAMES.some((n) => isFile(path.join(dir, n)));

/**
 * Decides what `run --auto [target]` runs. eval.yaml always wins; `evals/evals.json` (or an
 * `evals.json` in the folder, or the .json file itself) is used only when there is none.
 * Without a target, walks up from `cwd` to the first folder holding SKILL.md and either file.
 * Anything else is left to `loadSuite`, whose message names the places it looked.
 */
export function resolveAutoTarget(target: string | undefined, cwd: string): AutoTarget {
  if (target === undefined || target === '') {
    let dir = path.resolve(cwd);
    for (;;) {
      if (existsSync(path.join(dir, 'SKILL.md'))) {
        if (hasYaml(path.join(dir, 'evals'))) return { kind: 'yaml', target: dir };
        if (isFile(path.join(dir, 'evals', 'evals.json'))) return { kind: 'evals_json', file: path.join(dir, 'evals', 'evals.json') };
      }
      const up = path.dirname(dir);
      if (up === dir) return { kind: 'yaml', target: undefined };
      dir = up;
    }
  }
  const abs = path.resolve(cwd, target);
  let st;
  try {
    st = statSync(abs);
  } catch {
    return { kind: 'yaml', target };
  }
  if (st.isFile()) {
    if (abs.toLowerCase().endsWith('.json')) return { kind: 'evals_json', file: abs };
    if (path.basename(abs) === 'SKILL.md') {
      const evals = path.join(path.dirname(abs), 'evals');
      if (!hasYaml(evals) && isFile(path.join(evals, 'evals.json'))) return { kind: 'evals_json', file: path.join(evals, 'evals.json') };
    }
    return { kind: 'yaml', target };
  }
  if (hasYaml(path.join(abs, 'evals')) || hasYaml(abs)) return { kind: 'yaml', target };
  for (const candidate of [path.join(abs, 'evals', 'evals.json'), path.join(abs, 'evals.json')]) {
    if (isFile(candidate)) return { kind: 'evals_json', file: candidate };
  }
  return { kind: 'yaml', target };
}

/**
 * Loads the suite of an evals.json, converted in memory. `suite.evalFile` is the evals.json.
 * @throws ConfigError for a bad evals.json, a missing or binary input file, or a bad SKILL.md.
 */
export async function loadEvalsJsonSuite(file: string): Promise<LoadResult & { converted: Converted }> {
  const evals = readEvalsJson(file);
  const bag = evals.bag;
  const converted = convertEvals(evals, { mode: 'memory' });
  // The converted document is reported under its own name: its lines are not evals.json's.
  const src = parseYaml(`${evals.file} (converted by --auto)`, stringify(converted.evalData, { lineWidth: 0 }), bag);
  const root = Field.root(src, bag);
  reportSchemaErrors('eval', root);
  if (bag.hasErrors) throw new ConfigError(bag.sorted());
  const parts = buildEval(root, evals.file, evals.skillDir);
  const cases = parts.inline.map((item) => buildCase(item, evals.file, undefined, parts.defaults));
  const { diagnostics } = await lintSkill(evals.skillDir);
  bag.items.push(...diagnostics);
  if (bag.hasErrors) throw new ConfigError(bag.sorted());
  return {
    suite: { ...parts.suite, cases },
    warnings: bag.sorted().filter((d) => d.severity === 'warning'),
    invalidCases: [],
    converted,
  };
}
