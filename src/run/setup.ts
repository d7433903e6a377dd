/**
 * What a run settles before it plans: the suite to run (`--auto` included) with its
 * environment expanded, the run's engines (`--engine`, `--model`), the skill's name and the
 * output root. Each takes plain values (parsed by src/cli/run.ts) and never changes the suite.
 */
import { basename, resolve } from 'node:path';
import { canonicalEngineName, unknownEngineMessage } from '../config/engines.js';
import { loadSuite, type LoadResult } from '../config/load.js';
import type { EngineConfig, Suite } from '../config/types.js';
import { prepareSuiteEnv, SuiteEnvError } from '../engine/env.js';
import { prepareProcesses } from '../engine/proc.js';
import { lintSkill } from '../skill/lint.js';
import { UsageError } from '../util/args.js';
import { defaultOutputRoot } from './output.js';

/**
 * Loads the suite to run: `loadSuite` as usual; with `auto`, a skill that has no eval.yaml but
 * an Anthropic `evals/evals.json` runs that file, converted in memory (said through `notice`).
 * Then expands `environment.env`: every value the suite hands to processes becomes a secret
 * to redact. The warnings are the caller's to print.
 * @throws ConfigError for a suite with errors; UsageError for an environment variable that is required and unset.
 */
export async function loadRunSuite(target: string | undefined, auto: boolean, notice: (line: string) => void): Promise<Pick<LoadResult, 'suite' | 'warnings'>> {
  const loaded = await loadForRun(target, auto, notice);
  try {
    prepareSuiteEnv(loaded.suite);
  } catch (e) {
    if (e instanceof SuiteEnvError) throw new UsageError(e.message);
    throw e;
  }
  return loaded;
}

/**
 * Gets engine spawning ready for a run of about `jobs` engine processes, as soon as the plan is
 * known (src/engine/proc.ts prepareProcesses): a small run spawns in process, a large one starts
 * the spawn helper now, so it boots while the run prepares.
 */
export function prepareSpawning(jobs: number): void {
  prepareProcesses(jobs);
}

async function loadForRun(target: string | undefined, auto: boolean, notice: (line: string) => void): Promise<Pick<LoadResult, 'suite' | 'warnings'>> {
  if (!auto) return loadSuite(target, { cwd: process.cwd() });
  const { resolveAutoTarget, loadEvalsJsonSuite } = await import('../import/auto.js');
  const found = resolveAutoTarget(target, process.cwd());
  if (found.kind === 'yaml') return loadSuite(found.target, { cwd: process.cwd() });
  const loaded = await loadEvalsJsonSuite(found.file);
  const judged = loaded.suite.cases.filter((c) => c.judges.some((j) => j.type === 'agent_judge')).length;
  notice(
    `--auto: no eval.yaml; running ${found.file} (Anthropic evals.json, converted in memory: ${loaded.suite.cases.length} case(s)` +
      `${judged ? `, ${judged} with agent_judge criteria, graded by a grader agent on each job's engine and model` : ''}; \`skill-up import\` writes it as eval.yaml)`,
  );
  return loaded;
}

/**
 * The run's engines, in the order given, without changing `suite`: `names` (`--engine a,b`;
 * undefined when not given: the suite's engines) must be among the suite's, or the suite's
 * base engine renamed (another engine keeps the model settings, not the version pin); `model`
 * (`--model`) replaces every engine's `model.name` in copies.
 * @throws UsageError for an empty list, an unknown engine, another engine beside a custom one, or an empty model name.
 */
export function runEngines(suite: Suite, names: string[] | undefined, model: string | undefined): EngineConfig[] {
  const engines = selectEngines(suite, names);
  if (model === undefined) return engines;
  const name = model.trim();
  if (!name) throw new UsageError('--model needs a model name (e.g. --model claude-sonnet-4-5)');
  return engines.map((e) => ({ ...e, model: { ...e.model, name } }));
}

function selectEngines(suite: Suite, names: string[] | undefined): EngineConfig[] {
  if (names === undefined) return suite.engines;
  if (names.length === 0) throw new UsageError('--engine needs at least one engine name (e.g. --engine claude_code,codex)');
  const known = new Map(suite.engines.map((e) => [e.name, e]));
  known.set(suite.engine.displayName, suite.engine);
  const seen = new Set<string>();
  return names.flatMap((n) => {
    const canonical = canonicalEngineName(n) ?? n;
    if (seen.has(canonical)) return [];
    seen.add(canonical);
    const found = known.get(n) ?? known.get(canonical);
    if (found) return [found];
    if (!canonicalEngineName(n)) throw new UsageError(`--engine ${n}: ${unknownEngineMessage(n)}`);
    if (suite.engine.name === 'custom') throw new UsageError(`--engine ${n}: this suite defines a custom engine \`${suite.engine.displayName}\`; other engines need their own engine block`);
    // Another engine keeps the model settings but not the pin, which names the suite engine's version.
    return [{ ...suite.engine, name: canonical, displayName: canonical, version: undefined, custom: undefined }];
  });
}

/** The skill's name (its SKILL.md `name`, else its folder's) and the output root (`outputDir` resolved, else `<name>-workspace` beside the skill). */
export async function runLocation(suite: Suite, outputDir: string | undefined): Promise<{ skillName: string; outputRoot: string }> {
  const skillName = (await lintSkill(suite.skillDir)).name ?? basename(suite.skillDir);
  return { skillName, outputRoot: outputDir ? resolve(outputDir) : defaultOutputRoot(suite.skillDir, skillName) };
}
