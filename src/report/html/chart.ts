/**
 * The HTML report's small horizontal bar charts (pass rate with its case-clustered 95 %
 * interval, mean duration, mean tokens per engine and variant), as geometry for
 * `templates/partials/chart.hbs`.
 */
import { CLUSTERED_CI, type VariantJson } from '../decision-text.js';
import { fmtPct } from './format.js';
import type { Variant } from '../../engine/types.js';

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

/** One engine and variant of the charts. */
export type Row = { engine: string; variant: Variant; stats: VariantJson };

/**
 * Lays out one chart: a bar per row scaled to `max` (or the largest value), grouped by engine
 * when several ran; the wide chart also gets grid lines and each row's 95 % interval whisker.
 */
export function chart(id: string, title: string, desc: string, rows: Row[], multiEngine: boolean, value: (s: VariantJson) => number | null, fmt: (v: number | null) => string, max: number | null, wide: boolean): ChartView {
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
    const iv = r.stats.interval;
    bars.push({
      label,
      cls: r.variant === 'with_skill' ? 'with' : 'without',
      y: y + (ROW_H - BAR_H) / 2,
      ty: y + ROW_H / 2 + 4,
      w: round(w),
      value: val,
      ci: ci && v !== null && iv ? { x1: round(x0 + iv.low * plotW), x2: round(x0 + iv.high * plotW), y: round(y + ROW_H / 2) } : null,
      title: `${r.engine} ${r.variant}: ${val}${ci && iv ? ` (${CLUSTERED_CI} ${fmtPct(iv.low)}–${fmtPct(iv.high)})` : ''}`,
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

/** Rounds to one decimal (SVG coordinates). */
export const round = (x: number) => Math.round(x * 10) / 10;

