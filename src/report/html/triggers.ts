/**
 * The HTML report's "Trigger evaluation" panel (partial `templates/partials/triggers.hbs`):
 * per engine the trigger precision, recall, F1 and accuracy with their 95% intervals, the
 * TP/FP/FN/TN counts, the errors left out, and the misfired queries with their trigger rate,
 * from result.json's `triggers` (src/stats/trigger.ts). Every value is text: Handlebars escapes it.
 */
import type { ResultDoc } from '../result-json.js';
import { engineSummary, queryText } from '../triggers.js';

/** One engine's row of the panel. */
export interface TriggerView {
  engine: string;
  precision: string;
  recall: string;
  f1: string;
  accuracy: string;
  counts: string;
  queries: string;
  errors: number;
  /** The whole figure sentence, as the console prints it (a tooltip). */
  summary: string;
  missed: string[];
  falseTriggers: string[];
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/** The panel's rows; empty when the run had no trigger case (the panel is then not shown). */
export function triggersView(doc: ResultDoc, engineName: (e: string) => string = (e) => e): TriggerView[] {
  const metric = (m: { value: number | null; interval: { low: number; high: number } | null }) =>
    m.value === null || !m.interval ? 'n/a' : `${pct(m.value)} [${pct(m.interval.low)}–${pct(m.interval.high)}]`;
  return (doc.triggers?.engines ?? []).map((e) => ({
    engine: engineName(e.engine),
    precision: metric(e.precision),
    recall: metric(e.recall),
    f1: metric(e.f1),
    accuracy: metric(e.accuracy),
    counts: `${e.tp} / ${e.fp} / ${e.fn} / ${e.tn}`,
    queries: `${e.queries} (${e.should_trigger_queries} should trigger, ${e.should_not_trigger_queries} should not)`,
    errors: e.errors,
    summary: engineSummary(e),
    missed: [...e.missed.map((q) => queryText(q, 160)), ...(e.missed_more ? [`… and ${e.missed_more} more (result.json)`] : [])],
    falseTriggers: [...e.false_triggers.map((q) => queryText(q, 160)), ...(e.false_triggers_more ? [`… and ${e.false_triggers_more} more (result.json)`] : [])],
  }));
}
