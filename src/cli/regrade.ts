/**
 * `skill-up regrade <iteration folder> [--suite <path>] [--model-script <file>] …`: the judges
 * of the suite as it is now grade a saved run again, without running the agents (src/regrade/).
 * This file parses, loads, prints.
 */
import { isAbsolute, resolve } from 'node:path';
import type { EngineConfig, Suite } from '../config/types.js';
import type { ResultDoc } from '../report/result-json.js';
import { intFlag, parse, UsageError } from '../util/args.js';
import { VERSION } from '../util/version.js';

export const REGRADE_HELP = `Usage: skill-up regrade <iteration folder> [options]

Grades a saved run again without running the agents: every job's workspace is rebuilt as the
run prepared it (fixture, inline files, git set-up, setup steps, the skill in with_skill), the
files the agent changed (kept in <job>/outputs/changes/) are applied on top, and the expect gate
and judges of the suite AS IT IS NOW grade it, agent_judge graders included. So a changed rubric
(criteria, rules, thresholds, a script judge) is tried on the same agent output. The behaviour
checks are recomputed; the gates are decided anew with the saved run's gate settings. The result
is a new iteration-N folder beside the saved one, with every report.

Kept as graded (copied, not regraded; listed in result.json \`regrade.kept\`): jobs the
conversation decided (an engine error, a post_condition with on_fail: fail), skipped jobs, and
jobs whose case is no longer in the suite. Engines are not run, except an agent_judge's grader.

Options:
  --suite <path>           the suite to grade with (eval.yaml, or the skill folder); default:
                           the eval file the saved run recorded
  --model-script <file>    every grader talks to skill-up's scripted model with this rule file
                           (the job's engine, a named suite engine, an inline engine map; as
                           \`run --model-script\`); needed when the saved run used --model-script
  --output-dir <dir>       root of the new iteration folder (default: beside the saved one)
  --parallel <n>           jobs graded at once (default 4)
  --keep-workspaces        keep the rebuilt workspaces (their paths are in result.json)
  --no-regression <run>    where the no_regression baseline is, when the recorded path does not
                           resolve from the current folder
  -h, --help               show this help

Exit codes: 2 usage or config error; otherwise the regraded run's gates, as for \`skill-up run\`:
3 errors above the allowed rate; 1 a gate failed; 4 a gate inconclusive; 0 every gate passed.

Examples:
  skill-up regrade my-skill-workspace/iteration-3
  skill-up regrade out/iteration-1 --suite my-skill/evals/eval.yaml --model-script my-skill/evals/model.yaml
`;

const OPTIONS = {
  suite: { type: 'string' },
  'model-script': { type: 'string' },
  'output-dir': { type: 'string' },
  parallel: { type: 'string' },
  'keep-workspaces': { type: 'boolean' },
  'no-regression': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs the command; returns the exit code. UsageError / ConfigError propagate to main (exit 2). */
export async function regradeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, OPTIONS);
  if (values.help) {
    process.stdout.write(REGRADE_HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('regrade needs one saved run: its iteration folder or result.json (e.g. skill-up regrade my-skill-workspace/iteration-1)');
  for (const k of ['suite', 'model-script', 'output-dir', 'no-regression'] as const) {
    if (values[k] !== undefined && values[k].trim() === '') throw new UsageError(`--${k} needs a value, got an empty one`);
  }
  const parallelism = intFlag('parallel', values.parallel, 1, 256) ?? 4;
  const { loadResultDoc, ResultFileError } = await import('../report/load.js');
  let loaded;
  try {
    loaded = await loadResultDoc(positionals[0]!);
  } catch (e) {
    if (e instanceof ResultFileError) throw new UsageError(e.message);
    throw e;
  }
  const { doc, file } = loaded;
  const { loadRunSuite } = await import('../run/setup.js');
  const notice = (l: string) => process.stderr.write(`${l}\n`);
  const target = values.suite ?? doc.eval_file;
  const auto = /\.json$/i.test(target);
  const { suite: loadedSuite, warnings } = await loadRunSuite(auto ? resolve(target, '..', '..') : target, auto, notice);
  (await import('./diagnostics.js')).printWarnings(warnings);
  const engines = savedEngines(doc, loadedSuite, values['model-script']);
  // An agent_judge's engine as the saved run configured it: a suite engine the run had is the
  // run's (its model), any other gets --model-script, as \`run\` does (src/cli/run.ts).
  const script = values['model-script'] !== undefined ? resolve(values['model-script']) : undefined;
  const scripted = (e: EngineConfig): EngineConfig => (script ? { ...e, model: { ...e.model, provider: 'scripted', script } } : e);
  const [{ configureJudgeEngines }, { GraderEngineUnavailable }] = await Promise.all([import('../run/grader-engines.js'), import('../run/grader.js')]);
  const suite = configureJudgeEngines(loadedSuite, {
    suite: (e) => engines.find((x) => x.name === e.name && x.displayName === e.displayName) ?? scripted(e),
    inline: scripted,
  });

  const abort = new AbortController();
  const onSignal = () => {
    process.stderr.write('\nstopping the graders; the jobs not yet graded are kept as they were\n');
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const { regradeRun } = await import('../regrade/index.js');
  const { firstProblem } = await import('../run/progress.js');
  let n = 0;
  process.stderr.write(`skill-up ${VERSION}: regrading ${doc.jobs.length} job(s) of ${file} with ${suite.evalFile}\n`);
  let out;
  try {
    out = await regradeRun({
      doc,
      file,
      suite,
      engines,
      ...(values['output-dir'] ? { outputRoot: resolve(values['output-dir']) } : {}),
      parallelism,
      keepWorkspaces: Boolean(values['keep-workspaces']),
      ...(values['no-regression'] ? { noRegression: resolve(values['no-regression']) } : {}),
      signal: abort.signal,
      notice,
      progress: (r, regraded) => {
        const why = r.status === 'pass' ? '' : firstProblem(r);
        process.stderr.write(`[${++n}/${doc.jobs.length}] ${r.status.toUpperCase().padEnd(5)} ${r.id}${regraded ? '' : ' (kept as graded)'}${why ? ` — ${why}` : ''}\n`);
      },
    });
  } catch (e) {
    if (!(e instanceof GraderEngineUnavailable)) throw e;
    process.stderr.write(`error: ${e.message}\n`);
    return 3;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  const names = new Map(out.doc.engines.map((e) => [e.name, e.display_name]));
  const { printSummary } = await import('./run-print.js');
  const { behaviourConsoleLines } = await import('../report/behaviour.js');
  const { judgeSpendLines } = await import('../report/judge-spend.js');
  const name = (e: string) => names.get(e) ?? e;
  printSummary(out.decision, out.results.length, out.results.length, names, out.decision.exitCode, {
    behaviourLines: behaviourConsoleLines(out.doc.jobs, name),
    judgeLines: judgeSpendLines(out.doc.jobs, name),
  });
  process.stdout.write(`regraded ${out.record.regraded} job(s); kept ${out.record.kept.length} as graded${out.record.kept.length ? ` (${out.record.kept.slice(0, 3).map((k) => `${k.id}: ${k.reason}`).join('; ')}${out.record.kept.length > 3 ? '; …' : ''})` : ''}\n`);
  for (const w of out.written) process.stdout.write(`wrote ${w}\n`);
  for (const s of out.skipped) process.stderr.write(`warning: report format \`${s.format}\` not written: ${s.reason}\n`);
  return abort.signal.aborted ? 130 : out.decision.exitCode;
}

/**
 * The saved run's engines as configs of the current suite: each recorded engine by name (the
 * suite's entry, or its base engine renamed, as `run --engine` does), with the model name the
 * run recorded; `--model-script` makes them scripted. A run that used the scripted model needs
 * a script: the suite's, or `--model-script`. @throws UsageError
 */
function savedEngines(doc: ResultDoc, suite: Suite, modelScript: string | undefined): EngineConfig[] {
  const script = modelScript !== undefined ? (isAbsolute(modelScript) ? modelScript : resolve(modelScript)) : undefined;
  return doc.engines.map((saved) => {
    const own = suite.engines.find((e) => e.name === saved.name) ?? { ...suite.engine, name: saved.name, displayName: saved.display_name };
    let e: EngineConfig = { ...own, model: { ...own.model, ...(saved.model.name ? { name: saved.model.name } : {}) } };
    if (script) e = { ...e, model: { ...e.model, provider: 'scripted', script } };
    if (saved.model.provider === 'scripted' && e.model.provider !== 'scripted') {
      throw new UsageError(`the saved run's engine \`${saved.name}\` used skill-up's scripted model, and the suite's does not: give its rule file with --model-script <file>`);
    }
    return e;
  });
}
