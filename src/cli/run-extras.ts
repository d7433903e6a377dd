/**
 * The flags of `skill-up run` about cost and report formats (issue 9: `--max-cost`;
 * alibaba/skill-up's `--format`), read into options here; what they do is in
 * src/run/extras.ts (the budget, the cost lines) and src/run/suite.ts.
 */
import type { ReportFormat } from '../config/types.js';
import { DECIMAL, UsageError } from '../util/args.js';
import { parseFormats } from './report.js';

/** `--format a,b …`: alibaba/skill-up's spellings (json, junit, html), skill-up's (markdown, benchmark), md and xml. @throws UsageError */
export function formatsFlag(values: string[] | undefined): ReportFormat[] | undefined {
  if (values === undefined) return undefined;
  const f = parseFormats(values);
  if (!f.length) throw new UsageError('--format needs a format: json, junit, markdown, benchmark or html (repeatable or comma-separated)');
  return f;
}

/** `--max-cost USD` (`5`, `0.50`, `$5`). @throws UsageError */
export function maxCostFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim().replace(/^\$/, '');
  const n = DECIMAL.test(text) ? Number(text) : NaN;
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0 || n > 1e6) throw new UsageError(`--max-cost must be an amount in USD above 0 (e.g. 5 or 0.50), got \`${value}\``);
  return n;
}

