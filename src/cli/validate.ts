/** `skill-up validate [path]` and `skill-up list-cases [path]`. */
import { existsSync } from 'node:fs';
import type { Diagnostic } from '../config/diagnostics.js';
import { ConfigError, DiagnosticBag, strictErrors, throwIfStrict } from '../config/diagnostics.js';
import { loadSuite, type LoadResult } from '../config/load.js';
import type { Suite } from '../config/types.js';
import { positionOf, readYamlSource, type Segment } from '../config/yaml-source.js';
import { loadScripts } from '../run/model.js';
import { parse, UsageError } from '../util/args.js';
import { printWarnings } from './diagnostics.js';

export const VALIDATE_HELP = `Usage: skill-up validate [path] [--strict]

Checks eval.yaml, every case file and SKILL.md (agentskills.io rules) and reports every
problem as file:line:col: field: message. Exit code 0 when valid, 2 otherwise.

SKILL.md fields that an engine documents beyond the agentskills.io spec (Claude Code's
model, context, agent, allowed-tools, …) are accepted with a note naming the engine; a
field nobody documents is a warning.

Options:
  --strict       unknown SKILL.md fields are errors (exit 2), not warnings
  -h, --help     show this help

Examples:
  skill-up validate                         # the skill around the current folder
  skill-up validate path/to/my-skill
  skill-up validate path/to/my-skill/evals/eval.yaml
  skill-up validate --strict                # as a CI gate: no field outside the spec and Claude Code's
`;

export const LIST_HELP = `Usage: skill-up list-cases [path] [--tag <tag>]

Lists the suite's cases: id, tags, turns, trials and the first prompt line.

Examples:
  skill-up list-cases
  skill-up list-cases examples/greeting-files --tag smoke
`;

/** Runs `validate`; returns the exit code. */
export async function validateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { help: { type: 'boolean', short: 'h' }, strict: { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(VALIDATE_HELP);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError('validate takes one path');
  const strict = Boolean(values.strict);
  let loaded: LoadResult;
  try {
    loaded = await loadSuite(positionals[0], { cwd: process.cwd(), validateAllCases: true });
  } catch (e) {
    // Under --strict an unknown SKILL.md field is listed with the errors, as one.
    if (strict && e instanceof ConfigError) throw new ConfigError(strictErrors(e.diagnostics));
    throw e;
  }
  const { suite, warnings, notes = [] } = loaded;
  if (strict) throwIfStrict(warnings);
  // Notes among the warnings, in file and line order.
  const advice = [...notes, ...warnings].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col);
  printWarnings([...advice, ...runFlagWarnings(suite)]);
  await loadScripts(suite);
  process.stdout.write(`✓ ${suite.evalFile} is valid (${suite.cases.length} case(s), engine ${suite.engines.map((e) => e.displayName).join(', ')})\n`);
  return 0;
}

/**
 * What `skill-up run` would refuse before its first job unless a flag changes it: `gates.min_uplift`
 * without the without_skill arm (`--baseline` adds it) and a `gates.no_regression.baseline` that
 * does not exist (`--no-regression` replaces it); and a trigger gate (`gates.min_trigger_precision`
 * / `min_trigger_recall`) on a suite without trigger cases, which no run can decide. Warnings,
 * since the flags (or a later trigger set) can make them right.
 */
export function runFlagWarnings(suite: Suite): Diagnostic[] {
  const out: Diagnostic[] = [];
  const g = suite.gates;
  const noBaseline = g.minUplift !== undefined && !suite.benchmark.enabled;
  const missingPrevious = g.noRegression !== undefined && !existsSync(g.noRegression.baseline);
  // A trigger gate needs trigger cases: without one every run lists it INCONCLUSIVE (exit 4).
  const noTriggers = !suite.cases.some((c) => c.shouldTrigger !== undefined);
  const triggerGates = noTriggers ? (['min_trigger_precision', 'min_trigger_recall'] as const).filter((k) => g[k === 'min_trigger_precision' ? 'minTriggerPrecision' : 'minTriggerRecall'] !== undefined) : [];
  if (!noBaseline && !missingPrevious && triggerGates.length === 0) return out;
  const src = readYamlSource(suite.evalFile, new DiagnosticBag());
  const at = (segments: Segment[], path: string, message: string) => {
    const { line, col } = positionOf(src, segments, 'key');
    out.push({ file: suite.evalFile, line, col, path, message, severity: 'warning' });
  };
  if (noBaseline) {
    at(['gates', 'min_uplift'], 'gates.min_uplift', 'needs the without_skill arm: `skill-up run` stops here unless it is given `--baseline`; set `benchmark.enabled: true` to always run it');
  }
  if (missingPrevious) {
    at(['gates', 'no_regression', 'baseline'], 'gates.no_regression.baseline', `${g.noRegression!.baseline} does not exist: \`skill-up run\` stops here unless \`--no-regression\` names another run (or the file exists by then)`);
  }
  for (const k of triggerGates) {
    at(['gates', k], `gates.${k}`, 'the suite has no trigger case (no case sets `should_trigger` and there is no `triggers.file`): every run lists this gate INCONCLUSIVE (exit 4)');
  }
  return out;
}

/** Runs `list-cases`; returns the exit code. */
export async function listCasesCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { help: { type: 'boolean', short: 'h' }, tag: { type: 'string', multiple: true } });
  if (values.help) {
    process.stdout.write(LIST_HELP);
    return 0;
  }
  const { suite } = await loadSuite(positionals[0], { cwd: process.cwd() });
  const tags = new Set((values.tag) ?? []);
  const cases = suite.cases.filter((c) => tags.size === 0 || c.tags.some((t) => tags.has(t)));
  const rows = cases.map((c) => [c.id, c.tags.join(',') || '-', String(c.turns.length), String(c.trials), (c.turns[0]?.content ?? '').split('\n')[0]!.slice(0, 60)]);
  const head = ['ID', 'TAGS', 'TURNS', 'TRIALS', 'PROMPT'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows]) process.stdout.write(r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('  ') + '\n');
  return 0;
}
