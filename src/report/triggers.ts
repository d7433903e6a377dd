/**
 * The trigger evaluation in every report (console, `skill-up report`, summary.md, JUnit
 * properties, report.html), from result.json's `triggers` section (src/stats/trigger.ts with
 * snake_case keys), so a saved run re-renders exactly what the run printed.
 */
import { oneLine } from '../util/cut.js';
import type { TriggerStats } from '../stats/trigger.js';
import type { ResultTriggers } from './result-json.js';

type EngineTriggers = ResultTriggers['engines'][number];
type Metric = EngineTriggers['precision'];
type Query = EngineTriggers['missed'][number];

/** Misfired queries shown per list in the console and summary.md (result.json keeps up to 100). */
const SHOWN = 10;

/** src/stats/trigger.ts `TriggerStats` → result.json's `triggers` (snake_case keys; the stats hold no user keys). */
export function triggersJson(t: TriggerStats): ResultTriggers {
  const snake = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(snake);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(x)]));
    return v;
  };
  return snake(t) as ResultTriggers;
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`;

/** `80% [95% CI 49%–94%]`, or `n/a (why)`. */
export function metricText(m: Metric, undefinedWhy: string): string {
  if (m.value === null || !m.interval) return `n/a (${undefinedWhy})`;
  return `${pct(m.value)} [95% CI ${pct(m.interval.low)}–${pct(m.interval.high)}]`;
}

/** One line of figures of an engine: precision, recall, F1, accuracy with intervals, the counts and the errors left out. */
export function engineSummary(e: EngineTriggers): string {
  return (
    `precision ${metricText(e.precision, 'never activated')}, recall ${metricText(e.recall, 'no should-trigger query graded')}, ` +
    `F1 ${metricText(e.f1, 'no should-trigger query graded')}, accuracy ${metricText(e.accuracy, 'nothing graded')} ` +
    `over ${e.graded} graded trial(s) of ${e.queries} quer${e.queries === 1 ? 'y' : 'ies'} (${e.should_trigger_queries} should trigger, ${e.should_not_trigger_queries} should not): ` +
    `TP ${e.tp}, FP ${e.fp}, FN ${e.fn}, TN ${e.tn}; ${e.errors} error(s) left out${e.skipped ? `, ${e.skipped} skipped` : ''}`
  );
}

/** `trigger-x 1/3 (33%): "query…"`: a misfired query with its trigger rate over graded trials. */
export function queryText(q: Query, max = 80): string {
  const shown = oneLine(q.query, max);
  const rate = q.trigger_rate === null ? 'n/a' : pct(q.trigger_rate);
  return `${q.case_id} triggered ${q.triggered}/${q.graded} (${rate})${q.errors ? `, ${q.errors} error(s)` : ''}: "${shown}"`;
}

/** The console lines (run summary and `skill-up report`); empty without trigger cases. */
export function triggerLines(t: TriggerStats | ResultTriggers | null | undefined, name: (engine: string) => string = (e) => e): string[] {
  if (!t) return [];
  const doc = isJson(t) ? t : triggersJson(t);
  const out: string[] = [];
  for (const e of doc.engines) {
    out.push(`${name(e.engine)} triggers: ${engineSummary(e)}`);
    out.push(...misfireLines(e, '  '));
  }
  return out;
}

function misfireLines(e: EngineTriggers, indent: string): string[] {
  const out: string[] = [];
  const list = (label: string, qs: Query[], more: number) => {
    if (!qs.length) return;
    out.push(`${indent}${label} (${qs.length + more}):`);
    for (const q of qs.slice(0, SHOWN)) out.push(`${indent}  ${queryText(q)}`);
    const rest = qs.length - Math.min(qs.length, SHOWN) + more;
    if (rest) out.push(`${indent}  … and ${rest} more (result.json \`triggers\`)`);
  };
  list('missed: should trigger, did not', e.missed, e.missed_more);
  list('false triggers: should not trigger, did', e.false_triggers, e.false_triggers_more);
  return out;
}

function isJson(t: TriggerStats | ResultTriggers): t is ResultTriggers {
  return t.engines.length === 0 || 'should_trigger_queries' in t.engines[0]!;
}

/** Markdown-escapes table/inline text (`|`, backticks, `<`, new lines). */
function md(s: string, max = 200): string {
  return oneLine(s, max).replace(/[\\`*_[\]<>|]/g, (c) => `\\${c}`);
}

/** summary.md's "Trigger evaluation" section: a table per engine and the misfired queries; empty without trigger cases. */
export function triggerMarkdown(t: ResultTriggers | undefined, engineName: (n: string) => string = (e) => e): string[] {
  if (!t || t.engines.length === 0) return [];
  const cell = (m: Metric) => (m.value === null || !m.interval ? 'n/a' : `${pct(m.value)} [${pct(m.interval.low)}, ${pct(m.interval.high)}]`);
  const out = [
    '### Trigger evaluation',
    '',
    '| Engine | Precision | Recall | F1 | Accuracy | TP / FP / FN / TN | Queries | Errors (left out) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const e of t.engines) {
    out.push(`| ${md(engineName(e.engine), 80)} | ${cell(e.precision)} | ${cell(e.recall)} | ${cell(e.f1)} | ${cell(e.accuracy)} | ${e.tp} / ${e.fp} / ${e.fn} / ${e.tn} | ${e.queries} (${e.should_trigger_queries} should trigger) | ${e.errors} |`);
  }
  out.push('', '_Over graded trigger trials; 95% Wilson intervals (F1: the Bonferroni combination of the precision and recall intervals). Trigger cases run with the skill only and are not in the pass rates or the uplift._', '');
  for (const e of t.engines) {
    const lines = misfireLines(e, '');
    if (!lines.length) continue;
    out.push(`Misfired queries on ${md(engineName(e.engine), 80)}:`, '');
    for (const l of lines) out.push(l.startsWith('  ') ? `  - ${md(l.trim(), 300)}` : `- ${md(l, 300)}`);
    out.push('');
  }
  return out;
}

/** JUnit properties of the suite of `engine`'s with_skill trials: the figures, counts and misfire counts. */
export function triggerProperties(t: ResultTriggers | undefined, engine: string): [string, string][] {
  const e = t?.engines.find((x) => x.engine === engine);
  if (!e) return [];
  const out: [string, string][] = [];
  for (const k of ['precision', 'recall', 'f1', 'accuracy'] as const) {
    const m = e[k];
    out.push([`trigger.${k}`, m.value === null ? 'n/a' : m.value.toFixed(4)]);
    if (m.interval) out.push([`trigger.${k}.interval`, `${m.interval.low.toFixed(4)}-${m.interval.high.toFixed(4)}`]);
  }
  out.push(['trigger.counts', `TP ${e.tp}, FP ${e.fp}, FN ${e.fn}, TN ${e.tn}`], ['trigger.errors', String(e.errors)]);
  out.push(['trigger.missed', String(e.missed.length + e.missed_more)], ['trigger.false_triggers', String(e.false_triggers.length + e.false_triggers_more)]);
  return out;
}
