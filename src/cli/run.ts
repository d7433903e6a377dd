/**
 * `skill-up run [path]`: load → plan → run → grade → report, with a live progress display,
 * a crash-safe journal, and Ctrl-C handling that stops the engines and still writes reports.
 */
import { basename, isAbsolute, relative, resolve } from 'node:path';
import { loadSuite } from '../config/load.js';
import { canonicalEngineName, unknownEngineMessage } from '../config/engines.js';
import type { Suite } from '../config/types.js';
import { getAdapter, unavailableAdapter } from '../engine/registry.js';
import { EngineUnavailable, type EngineAdapter } from '../engine/types.js';
import { killAllGroups } from '../engine/proc.js';
import { planJobs, type Job } from '../plan/plan.js';
import { writeReports } from '../report/write.js';
import type { ReportFormat } from '../config/types.js';
import { lintSkill } from '../skill/lint.js';
import { planSkillInstall, SkillInstallError } from '../skill/install.js';
import { ConfigError } from '../config/diagnostics.js';
import type { ResolvedSkill } from '../run/job.js';
import { Journal } from '../run/journal.js';
import { createIterationDir, defaultOutputRoot } from '../run/output.js';
import { createProgress } from '../run/progress.js';
import { executeJobs } from '../run/run.js';
import { loadScripts, startScriptedModel } from '../run/model.js';
import type { JobResult } from '../run/types.js';
import { summarise, type Uplift } from '../stats/index.js';
import { trialsOf } from '../report/result-json.js';
import { intFlag, listFlag, parse, UsageError } from './args.js';
import { printWarnings } from './diagnostics.js';
import { VERSION } from './version.js';

export const RUN_HELP = `Usage: skill-up run [path] [options]

Runs a skill's eval suite: every case, in a fresh workspace, on a real agent engine,
graded by the suite's judges. [path] is an eval.yaml, a skill folder holding
evals/eval.yaml, or omitted (walks up from the current folder to SKILL.md + evals/).

Options:
  --case <glob>            run only cases whose id matches (repeatable)
  --exclude-case <glob>    skip cases whose id matches (repeatable; wins over --case)
  --tag <tag>              run only cases with this tag (repeatable)
  --trials <n>             trials per case and variant (overrides the suite)
  --baseline               also run every case without the skill (as benchmark.enabled)
  --engine <name[,name]>   engines to run (overrides the suite's engine)
  --parallelism <n>        jobs at once, 1-256 (default: cases.parallelism)
  --output-dir <dir>       root of iteration-N folders (default: <skill>-workspace beside the skill)
  --keep-workspaces        keep each job's workspace folder for inspection
  --dry-run                print the plan and exit
  --auto                   without an eval.yaml, run the skill's Anthropic evals/evals.json,
                           converted in memory (nothing written; see skill-up import)
  -h, --help               show this help

Reports: result.json and summary.md always; report.xml and the others in report.formats;
benchmark.json, benchmark.md and per-run grading.json (Anthropic skill-creator files)
when \`benchmark\` is in report.formats or the run has both variants.

Exit codes: 0 every with_skill job passed, 1 some failed, 2 config or usage error,
3 an engine or the harness broke (error), 130 interrupted by Ctrl-C (143 by SIGTERM).

Examples:
  skill-up run                                  # the skill around the current folder
  skill-up run examples/greeting-files --trials 3 --baseline
  skill-up run path/to/evals/eval.yaml --case 'greet-*' --parallelism 4
  skill-up run --tag smoke --dry-run
  skill-up run --auto path/to/skill-with-evals-json
`;

const OPTIONS = {
  case: { type: 'string', multiple: true },
  'exclude-case': { type: 'string', multiple: true },
  tag: { type: 'string', multiple: true },
  trials: { type: 'string' },
  baseline: { type: 'boolean' },
  engine: { type: 'string', multiple: true },
  parallelism: { type: 'string' },
  'output-dir': { type: 'string' },
  'keep-workspaces': { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  auto: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the command; returns the process exit code. ConfigError and UsageError propagate to main. */
export async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(RUN_HELP);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`run takes one path, got ${positionals.length}: ${positionals.join(' ')}`);
  const trials = intFlag('trials', values.trials, 1, 1000);
  const parallelismFlag = intFlag('parallelism', values.parallelism, 1, 256);
  const { suite, warnings } = await loadForRun(positionals[0], Boolean(values.auto));
  printWarnings(warnings);
  const engineNames = listFlag(values.engine as string[] | undefined);
  applyEngineOverride(suite, engineNames, values.engine !== undefined);
  const jobs = planJobs(suite, {
    cases: values.case as string[] | undefined,
    excludeCases: values['exclude-case'] as string[] | undefined,
    tags: values.tag as string[] | undefined,
    trials,
    baseline: values.baseline,
  });
  const planned = new Set(jobs.map((j) => j.case.id));
  for (const c of suite.cases) {
    if (c.engines && !planned.has(c.id) && c.engines.every((e) => !suite.engines.some((x) => x.name === e))) {
      process.stderr.write(`note: case \`${c.id}\` runs only on ${c.engines.join(', ')}, which this run does not include\n`);
    }
  }
  const parallelism = parallelismFlag ?? suite.parallelism;
  const scripts = await loadScripts(suite);
  if (values['dry-run']) {
    printPlan(suite, jobs, parallelism);
    return 0;
  }
  const skillName = (await lintSkill(suite.skillDir)).name ?? basename(suite.skillDir);
  const outputRoot = values['output-dir'] ? resolve(values['output-dir']) : defaultOutputRoot(suite.skillDir, skillName);
  const skills = await resolveSkills(suite, outputRoot);
  const adapters = new Map<string, EngineAdapter>();
  const versions = new Map<string, string | undefined>();
  for (const e of suite.engines) {
    try {
      const adapter = await getAdapter(e, suite);
      versions.set(e.name, adapter.check ? (await adapter.check(e)).version : undefined);
      adapters.set(e.name, adapter);
    } catch (err) {
      if (!(err instanceof EngineUnavailable)) throw err;
      process.stderr.write(`error: ${err.message}\n`);
      adapters.set(e.name, unavailableAdapter(e.name, err.message));
    }
  }
  const { dir, iteration } = await createIterationDir(outputRoot);
  const startedAt = new Date();
  const journal = await Journal.create(`${dir}/journal.jsonl`, { type: 'run', startedAt: startedAt.toISOString(), evalFile: suite.evalFile, jobs: jobs.length });
  process.stderr.write(`skill-up ${VERSION}: ${jobs.length} job(s) of ${new Set(jobs.map((j) => j.case.id)).size} case(s) → ${dir}\n`);

  const abort = new AbortController();
  let interrupts = 0;
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    interrupts++;
    stoppedBy ??= sig;
    if (interrupts > 1) {
      killAllGroups();
      process.exit(sig === 'SIGTERM' ? 143 : 130);
    }
    const again = sig === 'SIGINT' ? ' (press Ctrl-C again to quit at once)' : '';
    process.stderr.write(`\n${sig}: stopping running engines and writing reports for finished jobs${again}\n`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const progress = createProgress(jobs.length);
  let results: JobResult[] = [];
  const model = await startScriptedModel(scripts, dir);
  if (model) process.stderr.write(`scripted model server on ${model.url} (exchanges logged per job)\n`);
  try {
    results = await executeJobs({
      jobs,
      parallelism,
      journal,
      progress,
      env: {
        suite,
        adapters,
        skills,
        iterationDir: dir,
        keepWorkspaces: Boolean(values['keep-workspaces']),
        baseEnv: { ...process.env },
        cleanups: [],
        modelBaseUrl: model?.url,
        signal: abort.signal,
      },
    });
  } finally {
    await model?.close();
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await journal.flush();
  }
  const interrupted = abort.signal.aborted;
  // 128 + the signal's number, as shells report it: 130 for SIGINT, 143 for SIGTERM.
  const exitCode = interrupted ? (stoppedBy === 'SIGTERM' ? 143 : 130) : exitCodeOf(results);
  const endedAt = new Date();
  const { written, skipped } = await writeReports(
    dir,
    {
      tool: { name: 'skill-up', version: VERSION },
      skill: { name: skillName, path: suite.skillDir },
      evalFile: suite.evalFile,
      iteration,
      startedAt: startedAt.toISOString(),
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - startedAt.getTime(),
      interrupted,
      notRun: jobs.length - results.length,
      engines: suite.engines.map((e) => ({ ...e, resolvedVersion: versions.get(e.name) })),
      options: { parallelism, trials: trials ?? null, baseline: Boolean(values.baseline) || suite.benchmark.enabled, argv },
      exitCode,
    },
    results,
    reportFormats(suite.report.formats, results),
  );
  printSummary(results, jobs.length, new Map(suite.engines.map((e) => [e.name, e.displayName])));
  for (const w of written) process.stdout.write(`wrote ${w}\n`);
  if (values['keep-workspaces']) process.stdout.write(`kept ${results.filter((r) => r.workspace).length} workspace(s); each job's path is \`workspace\` in result.json\n`);
  for (const s of skipped) process.stderr.write(`warning: report format \`${s.format}\` not written: ${s.reason}\n`);
  return exitCode;
}

/**
 * The suite to run: `loadSuite` as usual; with `--auto`, a skill that has no eval.yaml but an
 * Anthropic `evals/evals.json` runs that file, converted in memory.
 */
async function loadForRun(target: string | undefined, auto: boolean) {
  if (!auto) return loadSuite(target, { cwd: process.cwd() });
  const { resolveAutoTarget, loadEvalsJsonSuite } = await import('../import/auto.js');
  const found = resolveAutoTarget(target, process.cwd());
  if (found.kind === 'yaml') return loadSuite(found.target, { cwd: process.cwd() });
  const loaded = await loadEvalsJsonSuite(found.file);
  const judged = loaded.suite.cases.filter((c) => c.judges.some((j) => j.type === 'agent_judge')).length;
  process.stderr.write(
    `--auto: no eval.yaml; running ${found.file} (Anthropic evals.json, converted in memory: ${loaded.suite.cases.length} case(s)` +
      `${judged ? `, ${judged} with agent_judge criteria, graded \`error\` by this version` : ''}; \`skill-up import\` writes it as eval.yaml)\n`,
  );
  return loaded;
}

/**
 * Formats a run writes: the suite's, plus `markdown` (summary.md) always, plus `benchmark`
 * when the run has both variants (a with/without comparison is what benchmark.json is for).
 */
export function reportFormats(configured: ReportFormat[], results: JobResult[]): ReportFormat[] {
  const out = new Set<ReportFormat>(configured);
  out.add('markdown');
  const variants = new Set(results.map((r) => r.variant));
  if (variants.has('with_skill') && variants.has('without_skill')) out.add('benchmark');
  return [...out];
}

/** `--engine a,b` replaces the suite's engines; names must be among the suite's (or its base engine renamed). */
function applyEngineOverride(suite: Suite, names: string[], given: boolean): void {
  if (names.length === 0) {
    if (given) throw new UsageError('--engine needs at least one engine name (e.g. --engine claude_code,codex)');
    return;
  }
  const known = new Map(suite.engines.map((e) => [e.name, e]));
  known.set(suite.engine.displayName, suite.engine);
  const seen = new Set<string>();
  suite.engines = names.flatMap((n) => {
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
  suite.engine = suite.engines[0]!;
}

/** Names each skill and checks its file selection once for the whole run. @throws ConfigError */
async function resolveSkills(suite: Suite, outputRoot: string): Promise<ResolvedSkill[]> {
  const out: ResolvedSkill[] = [];
  for (const s of suite.skills) {
    const info = await lintSkill(s.path);
    // An output folder inside the skill must never be installed: the agent would read past gradings.
    const inside = relative(s.path, outputRoot);
    const exclude = inside && !inside.startsWith('..') && !isAbsolute(inside) ? [...s.exclude, `${inside}/**`] : s.exclude;
    try {
      const plan = await planSkillInstall({ skillDir: s.path, include: s.include, exclude });
      out.push({ name: s.target ?? info.name ?? basename(s.path), plan });
    } catch (e) {
      if (!(e instanceof SkillInstallError)) throw e;
      throw new ConfigError([{ file: s.path, line: 0, col: 0, path: 'skills', message: e.message, severity: 'error' }]);
    }
  }
  return out;
}

/** 0 when every with_skill job passed (skips ignored), 3 when any errored, else 1 when any failed. */
export function exitCodeOf(results: JobResult[]): number {
  const primary = results.filter((r) => r.variant === 'with_skill');
  if (primary.some((r) => r.status === 'error')) return 3;
  if (primary.some((r) => r.status === 'fail')) return 1;
  return 0;
}

function printPlan(suite: Suite, jobs: Job[], parallelism: number): void {
  const out = process.stdout;
  out.write(`Would run ${jobs.length} job(s) at parallelism ${parallelism} on ${suite.engines.map((e) => e.displayName).join(', ')}:\n`);
  const byCase = new Map<string, Job[]>();
  for (const j of jobs) byCase.set(j.case.id, [...(byCase.get(j.case.id) ?? []), j]);
  for (const [id, js] of byCase) {
    const variants = [...new Set(js.map((j) => j.variant))].join(' + ');
    const trials = Math.max(...js.map((j) => j.trial));
    const engines = [...new Set(js.map((j) => j.engine))].join(', ');
    out.write(`  ${id.padEnd(32)} ${variants} × ${trials} trial(s) on ${engines}  (${js.length} job(s))\n`);
  }
}

function pct(x: number): string {
  return `${(x * 100).toFixed(0)}%`;
}

const VERDICT: Record<Uplift['verdict'], string> = {
  improves: 'the skill improves results',
  regresses: 'the skill makes results worse',
  no_difference: 'no significant difference',
  underpowered: 'too few cases differ to tell (underpowered: fewer than 5)',
};

/**
 * Prints, per engine and variant, the pass rate with its Wilson 95% interval (pooled trials),
 * then per engine the uplift with the sign test's verdict over cases (stats/summarise.ts).
 */
function printSummary(results: JobResult[], planned: number, names: Map<string, string>): void {
  const out = process.stdout;
  const stats = summarise(trialsOf(results));
  out.write('\n');
  for (const v of stats.variants) {
    const graded = v.passed + v.failed;
    const rate = graded ? `${pct(v.passed / graded)} [95% CI ${pct(v.wilson.low)}–${pct(v.wilson.high)}]` : 'n/a (no graded trial)';
    const extra = [v.errors ? `${v.errors} error(s)` : '', v.skipped ? `${v.skipped} skipped` : ''].filter(Boolean).join(', ');
    out.write(`${names.get(v.engine) ?? v.engine} ${v.variant}: ${v.passed}/${graded} passed ${rate}${extra ? `, ${extra}` : ''}\n`);
  }
  for (const u of stats.uplift) {
    const name = names.get(u.engine) ?? u.engine;
    if (u.passRateDelta === null) {
      out.write(`${name} uplift: n/a (no case has graded trials in both variants)\n`);
      continue;
    }
    const d = u.passRateDelta * 100;
    out.write(
      `${name} uplift: ${d >= 0 ? '+' : ''}${d.toFixed(0)} points over ${u.perCase.length} case(s) ` +
        `(${u.wins} better, ${u.ties} same, ${u.losses} worse; sign test p=${u.signTestP.toPrecision(2)}: ${VERDICT[u.verdict]})\n`,
    );
  }
  if (results.length < planned) out.write(`${planned - results.length} job(s) not run (interrupted)\n`);
}
