/**
 * The view model of the HTML report's server-rendered parts (header, summary, charts, table
 * head): plain, pre-formatted values the Handlebars templates only lay out. Statistics come
 * from result.json's `summary` (the stats stage's output) when it is there and well formed,
 * else they are computed from `jobs` with the same stats code.
 */
import type { ResultDoc } from '../result-json.js';
import { summarise, type Uplift, type VariantStats } from '../../stats/index.js';
import { fmtDate, fmtInt, fmtMs, fmtP, fmtPct, fmtPts, fmtTokens, fmtUsd } from './format.js';

type Variant = 'with_skill' | 'without_skill';
const VARIANTS: Variant[] = ['with_skill', 'without_skill'];

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The statistics the report shows, camelCase, one source whatever the document holds. */
export interface Stats {
  variants: VariantStats[];
  uplift: Uplift[];
  /** Where they came from: result.json's `summary`, or computed here from its jobs. */
  source: 'summary' | 'computed';
}

/** Reads `summary.variants` / `summary.uplift` (snake_case) from result.json; null when not usable. */
function statsFromSummary(summary: unknown): Stats | null {
  if (!isObj(summary) || !Array.isArray(summary.variants) || !Array.isArray(summary.uplift)) return null;
  const variants: VariantStats[] = [];
  for (const v of summary.variants) {
    if (!isObj(v) || typeof v.engine !== 'string' || (v.variant !== 'with_skill' && v.variant !== 'without_skill') || !isObj(v.wilson)) return null;
    const low = num(v.wilson.low);
    const high = num(v.wilson.high);
    if (low === null || high === null) return null;
    variants.push({
      engine: v.engine,
      variant: v.variant,
      cases: num(v.cases) ?? 0,
      gradedCases: num(v.graded_cases) ?? 0,
      passRate: num(v.pass_rate),
      trials: num(v.trials) ?? 0,
      passed: num(v.passed) ?? 0,
      failed: num(v.failed) ?? 0,
      errors: num(v.errors) ?? 0,
      skipped: num(v.skipped) ?? 0,
      wilson: { low, high },
      meanDurationMs: num(v.mean_duration_ms),
      meanTokens: num(v.mean_tokens),
      costUsd: num(v.cost_usd),
    });
  }
  const uplift: Uplift[] = [];
  for (const u of summary.uplift) {
    if (!isObj(u) || typeof u.engine !== 'string') return null;
    const verdict = u.verdict;
    uplift.push({
      engine: u.engine,
      passRateDelta: num(u.pass_rate_delta),
      perCase: [],
      wins: num(u.wins) ?? 0,
      ties: num(u.ties) ?? 0,
      losses: num(u.losses) ?? 0,
      signTestP: num(u.sign_test_p) ?? 1,
      verdict: verdict === 'improves' || verdict === 'regresses' || verdict === 'no_difference' ? verdict : 'underpowered',
      tokensDelta: num(u.tokens_delta),
      durationMsDelta: num(u.duration_ms_delta),
    });
  }
  return { variants, uplift, source: 'summary' };
}

/** The statistics of a run: from its `summary` when usable, else computed from its jobs. */
export function runStats(doc: ResultDoc): Stats {
  const fromDoc = statsFromSummary(doc.summary as unknown);
  if (fromDoc && (fromDoc.variants.length > 0 || doc.jobs.length === 0)) return fromDoc;
  const s = summarise(
    doc.jobs.map((j) => ({
      caseId: j.case_id,
      engine: j.engine,
      variant: j.variant,
      trial: j.trial,
      status: j.status,
      durationMs: j.duration_ms,
      tokens: j.tokens.total,
      ...(j.cost_usd !== undefined ? { costUsd: j.cost_usd } : {}),
    })),
  );
  return { variants: s.variants, uplift: s.uplift, source: 'computed' };
}

/** Engine names in display order: result.json's `engines`, then any engine only seen in `jobs`. */
export function engineOrder(doc: ResultDoc): string[] {
  const names = doc.engines.map((e) => e.name);
  for (const j of doc.jobs) if (!names.includes(j.engine)) names.push(j.engine);
  return names;
}

/** One horizontal bar of a chart, in SVG user units (the chart is {@link CHART_W} wide). */
export interface ChartBar {
  /** Row label (variant, or engine · variant). */
  label: string;
  /** `with` or `without`: the CSS class that colours it. */
  cls: 'with' | 'without';
  y: number;
  /** Baseline of the row's texts. */
  ty: number;
  /** Bar width; the bar starts at {@link ChartView.x0}. */
  w: number;
  /** Value text, e.g. `67%`, `4.1 s`. */
  value: string;
  /** Confidence-interval whisker, x from/to; null when the chart has none. */
  ci: { x1: number; x2: number; y: number } | null;
  /** Accessible description of the row. */
  title: string;
}

/** A small horizontal bar chart, rendered as inline SVG by `templates/partials/chart.hbs`. */
export interface ChartView {
  id: string;
  /** Width in SVG user units (= CSS px at 100 %). */
  width: number;
  /** Spans the whole chart area (the pass-rate chart). */
  wide: boolean;
  title: string;
  /** One-sentence description for screen readers. */
  desc: string;
  height: number;
  x0: number;
  /** x where the (right-aligned) row labels end. */
  xLabel: number;
  plotW: number;
  /** x of the value texts. */
  xValue: number;
  /** Engine group labels (several engines only). */
  groups: { label: string; y: number }[];
  bars: ChartBar[];
  /** Vertical grid lines with their labels (pass-rate chart: 0, 50, 100 %). */
  ticks: { x: number; label: string }[];
  barH: number;
}

/** Width of a small chart in SVG user units. */
export const CHART_W = 320;
/** Width of the wide chart: two small charts side by side with their 12 px gap and the 22 px frame of one. */
export const CHART_WIDE_W = 2 * CHART_W + 12 + 22;
const LABEL_W = 104;
const VALUE_W = 62;
const ROW_H = 20;
const BAR_H = 11;

type Row = { engine: string; variant: Variant; stats: VariantStats };

function chart(id: string, title: string, desc: string, rows: Row[], multiEngine: boolean, value: (s: VariantStats) => number | null, fmt: (v: number | null) => string, max: number | null, wide: boolean): ChartView {
  const ticks = wide;
  const ci = wide;
  const width = wide ? CHART_WIDE_W : CHART_W;
  const x0 = LABEL_W;
  const plotW = width - LABEL_W - VALUE_W;
  const top = ticks ? 14 : 4;
  const scaleMax = max ?? Math.max(1e-9, ...rows.map((r) => value(r.stats) ?? 0));
  const groups: ChartView['groups'] = [];
  const bars: ChartBar[] = [];
  let y = top;
  let last = '';
  for (const r of rows) {
    if (multiEngine && r.engine !== last) {
      groups.push({ label: r.engine, y: y + 12 });
      y += ROW_H - 4;
      last = r.engine;
    }
    const v = value(r.stats);
    const w = v === null ? 0 : Math.max(v > 0 ? 1.5 : 0, (v / scaleMax) * plotW);
    const label = multiEngine ? r.variant.replace('_skill', '') : r.variant;
    const val = fmt(v);
    bars.push({
      label,
      cls: r.variant === 'with_skill' ? 'with' : 'without',
      y: y + (ROW_H - BAR_H) / 2,
      ty: y + ROW_H / 2 + 4,
      w: round(w),
      value: val,
      ci: ci && v !== null ? { x1: round(x0 + r.stats.wilson.low * plotW), x2: round(x0 + r.stats.wilson.high * plotW), y: round(y + ROW_H / 2) } : null,
      title: `${r.engine} ${r.variant}: ${val}${ci ? ` (95% CI ${fmtPct(r.stats.wilson.low)}–${fmtPct(r.stats.wilson.high)})` : ''}`,
    });
    y += ROW_H;
  }
  return {
    id,
    width,
    wide,
    title,
    desc,
    height: y + 4,
    x0,
    xLabel: x0 - 6,
    plotW,
    xValue: x0 + plotW + 6,
    groups,
    bars,
    ticks: ticks ? [0, 0.25, 0.5, 0.75, 1].map((t) => ({ x: round(x0 + t * plotW), label: `${t * 100}%` })) : [],
    barH: BAR_H,
  };
}

const round = (x: number) => Math.round(x * 10) / 10;

/** One variant's line in an engine's summary. */
export interface VariantLine {
  variant: Variant;
  cls: 'with' | 'without';
  passRate: string;
  ci: string;
  /** `4/6` (passed / graded trials), with errors and skips when there are any. */
  counts: string;
  duration: string;
  tokens: string;
  cost: string;
  /** Geometry of the inline pass-rate bar (0–100 user units wide): estimate, CI start and CI width. */
  bar: { w: number; lo: number; ciW: number };
}

/** One engine's block in the summary. */
export interface EngineSummary {
  name: string;
  displayName: string;
  version: string | null;
  model: string | null;
  lines: VariantLine[];
  uplift: {
    delta: string;
    /** `up`, `down` or `flat`: how the delta is coloured. */
    trend: 'up' | 'down' | 'flat';
    verdict: string;
    verdictCls: string;
    wins: number;
    ties: number;
    losses: number;
    p: string;
    tokens: string;
    duration: string;
  } | null;
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
  exitCode: number;
  totals: { jobs: string; pass: number; fail: number; error: number; skipped: number; tokens: string; tokensTitle: string; cost: string };
  engines: EngineSummary[];
  /** Distinct models of the engines (`name (provider)`). */
  models: string[];
  charts: ChartView[];
  /** Table head: engines with the variants run. */
  table: { engines: string[]; baseline: boolean; colspan: number };
  statsSource: string;
}

const VERDICT: Record<Uplift['verdict'], [string, string]> = {
  improves: ['skill improves results', 'good'],
  regresses: ['skill makes results worse', 'bad'],
  no_difference: ['no significant difference', 'neutral'],
  underpowered: ['too few decisive cases for a verdict', 'neutral'],
};

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
  const engineSummaries: EngineSummary[] = engines.map((name) => {
    const cfg = doc.engines.find((e) => e.name === name);
    const version = cfg ? (cfg.resolved_version ?? cfg.version ?? null) : null;
    const model = !cfg ? null : cfg.model.name ? `${cfg.model.name}${cfg.model.provider ? ` (${cfg.model.provider})` : ''}` : cfg.model.provider;
    const lines: VariantLine[] = rows
      .filter((r) => r.engine === name)
      .map(({ variant, stats: s }) => {
        const graded = s.passed + s.failed;
        const extra = [s.errors ? `${s.errors} error${s.errors > 1 ? 's' : ''}` : '', s.skipped ? `${s.skipped} skipped` : ''].filter(Boolean).join(', ');
        return {
          variant,
          cls: variant === 'with_skill' ? 'with' : 'without',
          passRate: fmtPct(s.passRate),
          ci: graded ? `${fmtPct(s.wilson.low)}–${fmtPct(s.wilson.high)}` : '—',
          counts: `${s.passed}/${graded}${extra ? ` · ${extra}` : ''}`,
          duration: fmtMs(s.meanDurationMs),
          tokens: fmtTokens(s.meanTokens),
          cost: fmtUsd(s.costUsd),
          bar: { w: round((s.passRate ?? 0) * 100), lo: round(s.wilson.low * 100), ciW: round((s.wilson.high - s.wilson.low) * 100) },
        };
      });
    const u = stats.uplift.find((x) => x.engine === name);
    return {
      name,
      displayName: cfg?.display_name && cfg.display_name !== name ? cfg.display_name : name,
      version,
      model,
      lines,
      uplift: u
        ? {
            delta: fmtPts(u.passRateDelta),
            trend: u.passRateDelta === null || Math.abs(u.passRateDelta) < 0.005 ? 'flat' : u.passRateDelta > 0 ? 'up' : 'down',
            verdict: VERDICT[u.verdict][0],
            verdictCls: VERDICT[u.verdict][1],
            wins: u.wins,
            ties: u.ties,
            losses: u.losses,
            p: fmtP(u.signTestP),
            tokens: u.tokensDelta === null ? '—' : `${u.tokensDelta > 0 ? '+' : ''}${fmtTokens(u.tokensDelta)}`,
            duration: u.durationMsDelta === null ? '—' : `${u.durationMsDelta > 0 ? '+' : ''}${fmtMs(u.durationMsDelta)}`,
          }
        : null,
    };
  });
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
    exitCode: doc.exit_code,
    totals: {
      jobs: fmtInt(t.jobs),
      pass: t.pass,
      fail: t.fail,
      error: t.error,
      skipped: t.skipped,
      tokens: fmtTokens(tk.total),
      tokensTitle: `input ${fmtInt(tk.input)} · output ${fmtInt(tk.output)} · cache read ${fmtInt(tk.cache_read)} · cache write ${fmtInt(tk.cache_write)}`,
      cost: t.cost_usd === undefined ? '—' : fmtUsd(t.cost_usd),
    },
    engines: engineSummaries,
    models: [...new Set(engineSummaries.map((e) => e.model).filter((m): m is string => !!m))],
    charts: rows.length
      ? [
          chart('c-pass', 'Pass rate · 95% CI', 'Mean per-case pass rate per engine and variant, with the Wilson 95% interval over graded trials.', rows, multi, (s) => s.passRate, fmtPct, 1, true),
          chart('c-dur', 'Mean duration per job', 'Mean wall time of graded jobs per engine and variant.', rows, multi, (s) => s.meanDurationMs, fmtMs, null, false),
          chart('c-tok', 'Mean tokens per job', 'Mean tokens (input, output and cache) of graded jobs per engine and variant.', rows, multi, (s) => s.meanTokens, fmtTokens, null, false),
        ]
      : [],
    table: { engines, baseline, colspan: 1 + engines.length * (baseline ? 3 : 1) + 2 },
    statsSource: stats.source === 'summary' ? 'from result.json summary' : 'computed from the jobs',
  };
}
