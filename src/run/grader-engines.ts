/**
 * How a run configures the engines of its agent_judges (the pure part of src/run/grader.ts):
 * apart from the grader runner so that planning a run (`run --dry-run`) does not load the
 * runner's modules (workspaces, baselines, the judges).
 */
import type { AgentJudgeSpec, EngineConfig, JudgeSpec, Suite } from '../config/types.js';

/**
 * The grader's engine: `judge.engine` (else the job's), with `judge.model` applied: `provider/name`
 * sets `model.provider` and `model.name`, a bare name only `model.name`; a scripted engine stays
 * scripted (the model name is then only a label).
 */
export function graderEngine(spec: Pick<AgentJudgeSpec, 'engine' | 'model'>, jobEngine: EngineConfig): EngineConfig {
  const engine = spec.engine ?? jobEngine;
  const model = spec.model;
  if (!model) return engine;
  const slash = model.indexOf('/');
  const name = slash > 0 ? model.slice(slash + 1) : model;
  if (engine.model.provider === 'scripted' || slash <= 0) return { ...engine, model: { ...engine.model, name } };
  return { ...engine, model: { ...engine.model, provider: model.slice(0, slash), name } };
}

/** The engine configs of every agent_judge of the suite that names its own engine (for the run's checks and scripted model). */
export function graderEngines(suite: Pick<Suite, 'cases'>): EngineConfig[] {
  const out = new Set<EngineConfig>();
  for (const c of suite.cases) for (const j of c.judges) if (j.type === 'agent_judge' && j.engine) out.add(j.engine);
  return [...out];
}

/** How a run configures engines: `suite` for an engine of the suite (`--model`, `--model-script`), `inline` for a judge's own engine map. */
export interface JudgeEngineConfigure {
  suite: (e: EngineConfig) => EngineConfig;
  inline: (e: EngineConfig) => EngineConfig;
}

/**
 * A view of `suite` whose agent_judges' engines are as THIS run configures them: an engine
 * named from the suite's engines gets `configure.suite` (what the run does to its own engines:
 * `--model`, `--model-script`), an inline one `configure.inline` (`--model-script` only). Each
 * engine is configured once, so judges naming the same engine share one config (one check).
 * The view's cases are new objects; plan it (src/run/suite.ts planRun) so the jobs carry them.
 */
export function configureJudgeEngines(suite: Suite, configure: JudgeEngineConfigure): Suite {
  const done = new Map<EngineConfig, EngineConfig>();
  const of = (spec: AgentJudgeSpec, e: EngineConfig): EngineConfig => {
    let c = done.get(e);
    if (!c) done.set(e, (c = spec.engineFrom === 'inline' ? configure.inline(e) : configure.suite(e)));
    return c;
  };
  const judges = (list: JudgeSpec[]): JudgeSpec[] => list.map((j) => (j.type === 'agent_judge' && j.engine ? { ...j, engine: of(j, j.engine) } : j));
  if (!suite.cases.some((c) => c.judges.some((j) => j.type === 'agent_judge' && j.engine))) return suite;
  return { ...suite, cases: suite.cases.map((c) => ({ ...c, judges: judges(c.judges) })) };
}
