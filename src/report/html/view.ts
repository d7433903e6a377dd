/**
 * The view model of the HTML report's server-rendered parts (header, gates, summary, charts,
 * table head): plain, pre-formatted values the Handlebars templates only lay out. Statistics
 * and gates come from `stats.ts` (result.json's `summary` and `gates`, or computed from its
 * jobs); the wording of intervals, verdicts and gates is the one of every report
 * (`../decision-text.ts`).
 */
import { CLUSTERED_CI, gateCells, upliftText, type UpliftJson } from '../decision-text.js';
import { triggersView, type TriggerView } from './triggers.js';
import { behaviourView, type BehaviourView } from './behaviour.js';
import { verdictOf } from '../markdown.js';
import type { ResultDoc } from '../result-json.js';
import { chart, round, type ChartView, type Row } from './chart.js';
import { fmtDate, fmtInt, fmtMs, fmtP, fmtPct, fmtPts, fmtTokens, fmtUsd } from './format.js';
import type { Stats } from './stats.js';
import { armCost, costByArm, costTotal, formatCost } from '../../cost/totals.js';
import { judgeCostText, judgeSpendLines } from '../judge-spend.js';
import { armDifferences, type ArmDifference } from './arms.js';
import { mcpOffers, type McpOffers } from '../mcp-servers.js';
import type { Variant } from '../../engine/types.js';

export { runStats, type Stats } from './stats.js';
export { type ChartView } from './chart.js';

const VARIANTS: Variant[] = ['with_skill', 'without_skill'];

/** Engine names in display order: result.json's `engines`, then any engine only seen in `jobs`. */
export function engineOrder(doc: ResultDoc): string[] {
  const names = doc.engines.map((e) => e.name);
  for (const j of doc.jobs) if (!names.includes(j.engine)) names.push(j.engine);
  return names;
}

/** One variant's line in an engine's summary. */
export interface VariantLine {
  variant: Variant;
  cls: 'with' | 'without';
  passRate: string;
  /** `62%–95%`: the 95 % interval clustered by case, or `—`. */
  ci: string;
  /** How the interval was made (cases, trials, effective trials, design effect), for a tooltip. */
  ciTitle: string;
  /** The arm's errors (not graded), next to its rate. */
  errors: number;
  /** `4/6` (passed / graded trials), with skips when there are any. */
  counts: string;
  duration: string;
  tokens: string;
  cost: string;
  /** Geometry of the inline pass-rate bar (0–100 user units wide): estimate, CI start and CI width. */
  bar: { w: number; lo: number; ciW: number };
}

/** One engine's with/without comparison, ready to print. */
export interface UpliftView {
  delta: string;
  /** `[−44, +100] pts`, or `—` when there is no interval. */
  ci: string;
  /** `up`, `down` or `flat`: how the delta is coloured. */
  trend: 'up' | 'down' | 'flat';
  verdict: string;
  verdictCls: string;
  /** The stats stage's one-sentence reason for the verdict. */
  reason: string;
  compared: number;
  /** `p = 0.031 (exact paired permutation test over 6 cases; Holm-adjusted …), α = 0.05`. */
  p: string;
  /** with_skill and without_skill rates over the compared cases. */
  rates: string;
  errors: string;
  wins: number;
  ties: number;
  losses: number;
  signTestP: string;
  dropped: { caseId: string; reason: string }[];
  tokens: string;
  duration: string;
}

/** One engine's block in the summary. */
export interface EngineSummary {
  name: string;
  displayName: string;
  version: string | null;
  model: string | null;
  lines: VariantLine[];
  uplift: UpliftView | null;
}

/** One row of the gates panel. */
export interface GateRow {
  name: string;
  engine: string;
  threshold: string;
  figure: string;
  interval: string;
  state: string;
  /** `pass`, `fail` or `inconclusive`: the CSS class of the state. */
  stateCls: string;
  reason: string;
}

/** Everything the Handlebars templates render. */
export interface ReportView {
  title: string;
  skill: { name: string; description: string | null; path: string };
  tool: string;
  evalFile: string;
  iteration: number;
  started: string;
  startedIso: string;
  wallTime: string;
  interrupted: boolean;
  notRun: number;
  /** Why jobs were not run when it was not an interrupt (`--max-cost $5.00 reached`), else null. */
  notRunReason: string | null;
  exitCode: number;
  /** What the exit code means, naming the gates that failed or could not decide. */
  outcome: { title: string; meaning: string };
  gates: GateRow[];
  totals: { jobs: string; pass: number; fail: number; error: number; skipped: number; tokens: string; tokensTitle: string; cost: string; judges: string | null; judgesTitle: string };
  engines: EngineSummary[];
  /** Distinct models of the engines (`name (provider)`). */
  models: string[];
  charts: ChartView[];
  /** Table head: engines with the variants run. */
  table: { engines: string[]; baseline: boolean; colspan: number };
  statsSource: string;
  /** Cases whose two arms were offered different tools or permission modes (skill tools aside; ./arms.ts). */
  armDifferences: ArmDifference[];
  /**
   * The MCP servers offered per arm (../mcp-servers.ts): rows of cases offered the same, and the
   * cases whose two arms were offered different servers (flagged); null when no job had servers.
   */
  mcp: (McpOffers & { differences: (McpOffers['differences'][number] & { engineName: string })[]; moreRows: number }) | null;
  /** The trigger evaluation panel, one row per engine; empty without trigger cases (./triggers.ts). */
  triggers: TriggerView[];
  /** The behaviour checks panel, per arm and per case × arm; empty without behaviour records (./behaviour.ts). */
  behaviour: BehaviourView;
}

const VERDICT: Record<UpliftJson['verdict'], [string, string]> = {
  improves: ['skill improves results', 'good'],
  regresses: ['skill makes results worse', 'bad'],
  inconclusive: ['inconclusive', 'neutral'],
};

const ptsRange = (i: { low: number; high: number }) => `[${fmtPts(i.low).replace(' pts', '')}, ${fmtPts(i.high).replace(' pts', '')}] pts`;

/** One variant's row: mean case pass rate, its case-clustered interval (with how it was made, for a tooltip), errors, counts. */
function variantLine(variant: Variant, s: Row['stats']): VariantLine {
  const graded = s.passed + s.failed;
  const i = s.interval;
  return {
    variant,
    cls: variant === 'with_skill' ? 'with' : 'without',
    passRate: fmtPct(s.pass_rate),
    ci: i ? `${fmtPct(i.low)}–${fmtPct(i.high)}` : '—',
    ciTitle: i
      ? `${CLUSTERED_CI} (case-clustered Wilson): ${i.cases} case(s), ${i.trials} graded trial(s), ${i.effective_trials.toFixed(1)} effective, design effect ${i.design_effect.toFixed(2)}`
      : 'no graded trial',
    errors: s.errors,
    counts: `${s.passed}/${graded}${s.skipped ? ` · ${s.skipped} skipped` : ''}`,
    duration: fmtMs(s.mean_duration_ms),
    tokens: fmtTokens(s.mean_tokens),
    cost: fmtUsd(s.cost_usd),
    bar: { w: round((s.pass_rate ?? 0) * 100), lo: round((i?.low ?? 0) * 100), ciW: round(i ? (i.high - i.low) * 100 : 0) },
  };
}

/** One engine's uplift in the shared wording (decision-text.ts); `engines` compared in the run, for the Holm note. */
function upliftView(u: UpliftJson, engines: number): UpliftView {
  const x = upliftText(u, engines);
  return {
    delta: fmtPts(u.pass_rate_delta),
    ci: u.interval ? ptsRange(u.interval) : '—',
    trend: u.pass_rate_delta === null || Math.abs(u.pass_rate_delta) < 0.005 ? 'flat' : u.pass_rate_delta > 0 ? 'up' : 'down',
    verdict: VERDICT[u.verdict][0],
    verdictCls: VERDICT[u.verdict][1],
    reason: x.reason,
    compared: u.compared_cases,
    p: x.p,
    rates: x.rates,
    errors: x.errors,
    wins: u.wins,
    ties: u.ties,
    losses: u.losses,
    signTestP: fmtP(u.sign_test_p),
    dropped: x.dropped,
    tokens: u.tokens_delta === null ? '—' : `${u.tokens_delta > 0 ? '+' : ''}${fmtTokens(u.tokens_delta)}`,
    duration: u.duration_ms_delta === null ? '—' : `${u.duration_ms_delta > 0 ? '+' : ''}${fmtMs(u.duration_ms_delta)}`,
  };
}

/** Builds the view model of a result.json document. */
export function buildView(doc: ResultDoc, engines: string[], stats: Stats): ReportView {
  const multi = engines.length > 1;
  const rows: Row[] = [];
  for (const e of engines) {
    for (const v of VARIANTS) {
      const st = stats.variants.find((x) => x.engine === e && x.variant === v);
      if (st) rows.push({ engine: e, variant: v, stats: st });
    }
  }
  // The same rule as the embedded data's variant columns (data.ts), so head and rows agree.
  const baseline = doc.jobs.some((j) => j.variant === 'without_skill');
  // Cost per arm from the jobs, marked "(estimated)" when any part was estimated (src/cost/).
  const arms = costByArm(doc.jobs);
  const armLine = (name: string, l: VariantLine): VariantLine => {
    const a = armCost(arms, name, l.variant);
    return a.usd === null ? l : { ...l, cost: formatCost(a, { coverage: true }) };
  };
  const engineSummaries: EngineSummary[] = engines.map((name) => {
    const cfg = doc.engines.find((e) => e.name === name);
    const version = cfg ? (cfg.resolved_version ?? cfg.version ?? null) : null;
    const model = !cfg ? null : cfg.model.name ? `${cfg.model.name}${cfg.model.provider ? ` (${cfg.model.provider})` : ''}` : cfg.model.provider;
    const u = stats.uplift.find((x) => x.engine === name);
    return {
      name,
      displayName: cfg?.display_name && cfg.display_name !== name ? cfg.display_name : name,
      version,
      model,
      lines: rows.filter((r) => r.engine === name).map((r) => armLine(name, variantLine(r.variant, r.stats))),
      uplift: u ? upliftView(u, stats.uplift.length) : null,
    };
  });
  const outcome = verdictOf(doc.exit_code, doc.not_run, stats.gates);
  const t = doc.totals;
  const tk = t.tokens;
  return {
    title: `${doc.skill.name} · skill-up report`,
    skill: { name: doc.skill.name, description: doc.skill.description ?? null, path: doc.skill.path },
    tool: `${doc.tool.name} ${doc.tool.version}`,
    evalFile: doc.eval_file,
    iteration: doc.iteration,
    started: fmtDate(doc.started_at),
    startedIso: doc.started_at,
    wallTime: fmtMs(doc.duration_ms),
    interrupted: doc.interrupted,
    notRun: doc.not_run,
    notRunReason: doc.not_run && doc.not_run_reason ? doc.not_run_reason : null,
    exitCode: doc.exit_code,
    outcome: { title: outcome.title, meaning: `${outcome.meaning[0]!.toUpperCase()}${outcome.meaning.slice(1)}.` },
    gates: stats.gates.map((g) => ({ ...gateCells(g), stateCls: g.state })),
    totals: {
      jobs: fmtInt(t.jobs),
      pass: t.pass,
      fail: t.fail,
      error: t.error,
      skipped: t.skipped,
      tokens: fmtTokens(tk.total),
      tokensTitle: `input ${fmtInt(tk.input)} · output ${fmtInt(tk.output)} · cache read ${fmtInt(tk.cache_read)} · cache write ${fmtInt(tk.cache_write)}`,
      cost: costTotal(doc.jobs).usd !== null ? formatCost(costTotal(doc.jobs), { coverage: true }) : t.cost_usd === undefined ? '—' : fmtUsd(t.cost_usd),
      // The agent_judge graders, apart from the agents' tokens and cost (src/report/judge-spend.ts).
      judges: t.judge ? `${fmtTokens(t.judge.tokens.total)} tokens · ${fmtMs(t.judge.duration_ms)} · ${judgeCostText({ costUsd: t.judge.cost_usd, costEstimated: !!t.judge.cost_estimated })}` : null,
      // Engines by their display names, as the console and summary.md name them (a custom engine's own name, not `custom`).
      judgesTitle: t.judge ? `${t.judge.runs} grader run(s); ${judgeSpendLines(doc.jobs, (n) => doc.engines.find((e) => e.name === n)?.display_name ?? n).join('\n')}` : '',
    },
    engines: engineSummaries,
    models: [...new Set(engineSummaries.map((e) => e.model).filter((m): m is string => !!m))],
    charts: rows.length
      ? [
          chart('c-pass', `Pass rate · ${CLUSTERED_CI}`, `Mean per-case pass rate per engine and variant, with its 95% interval clustered by case (case-clustered Wilson).`, rows, multi, (s) => s.pass_rate, fmtPct, 1, true),
          chart('c-dur', 'Mean duration per job', 'Mean wall time of graded jobs per engine and variant.', rows, multi, (s) => s.mean_duration_ms, fmtMs, null, false),
          chart('c-tok', 'Mean tokens per job', 'Mean tokens (input, output and cache) of graded jobs per engine and variant.', rows, multi, (s) => s.mean_tokens, fmtTokens, null, false),
        ]
      : [],
    table: { engines, baseline, colspan: 1 + engines.length * (baseline ? 3 : 1) + 2 },
    statsSource: stats.source === 'summary' ? 'from result.json summary' : 'computed from the jobs',
    armDifferences: armDifferences(doc),
    mcp: mcpView(doc, (n) => engineSummaries.find((e) => e.name === n)?.displayName ?? n),
    triggers: triggersView(doc, (n) => engineSummaries.find((e) => e.name === n)?.displayName ?? n),
    behaviour: behaviourView(doc, (n) => engineSummaries.find((e) => e.name === n)?.displayName ?? n),
  };
}

/** Rows of the MCP listing shown, at most (every difference is listed above it regardless). */
const MAX_MCP_ROWS = 200;

/** {@link ReportView.mcp}: the MCP listing (its first {@link MAX_MCP_ROWS} rows) with the engines' display names on its differences. */
function mcpView(doc: ResultDoc, engineName: (e: string) => string): ReportView['mcp'] {
  const m = mcpOffers(doc.jobs);
  if (!m) return null;
  return { ...m, rows: m.rows.slice(0, MAX_MCP_ROWS), moreRows: Math.max(0, m.rows.length - MAX_MCP_ROWS), differences: m.differences.map((d) => ({ ...d, engineName: engineName(d.engine) })) };
}
