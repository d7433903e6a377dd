/**
 * Bounds on values of the format that would otherwise break a run late: timeouts too large
 * for a timer, and case ids that would collide with the files of a run folder.
 */
import type { Field } from './yaml-source.js';

/**
 * The largest `timeout_seconds` anywhere in a suite: 24 hours. Node timers hold at most
 * 2^31 - 1 ms (24.8 days) and fire at once above it, so a larger deadline would be no deadline
 * at all; a day is far beyond any agent turn or judge.
 */
export const MAX_TIMEOUT_SECONDS = 86_400;

/**
 * Reports `field` (a whole number of seconds, already type-checked by the schema) when it is
 * above {@link MAX_TIMEOUT_SECONDS}. `noDeadline` says whether `-1` ("no deadline") is allowed
 * there, for the message. Returns the value when it is usable, else undefined.
 */
export function checkTimeoutSeconds(field: Field, noDeadline = false): number | undefined {
  const v = field.value;
  if (typeof v !== 'number' || !Number.isInteger(v)) return undefined;
  if (v <= MAX_TIMEOUT_SECONDS) return v;
  const days = v / 86_400;
  const human = days < 1e6 ? ` (${days.toFixed(1)} days)` : '';
  field.error(
    `a timeout of ${v} seconds${human} is above the limit of ${MAX_TIMEOUT_SECONDS} seconds (24 hours); use at most ${MAX_TIMEOUT_SECONDS}${noDeadline ? ', or -1 for no deadline' : ''}`,
  );
  return undefined;
}

/**
 * Names a run folder holds beside the case folders (src/report/write.ts, src/run/journal.ts,
 * the scripted model's log, the event log users put there). A case with one of these ids would
 * write its job folders over a report, or a report over its folder.
 */
export const RESERVED_CASE_IDS: readonly string[] = [
  'result.json',
  'journal.jsonl',
  'report.html',
  'report.xml',
  'summary.md',
  'benchmark.json',
  'benchmark.md',
  'events.jsonl',
  'model-requests.jsonl',
  'eval_metadata.json',
  'grading.json',
  'transcript.json',
];

/**
 * Why `id` cannot name a case's output folder, or undefined when it can. Compared without
 * case (macOS and Windows file systems ignore it); a report's temporary sibling
 * (`result.json.tmp-123`) counts as the report.
 */
export function reservedCaseIdProblem(id: string): string | undefined {
  const lower = id.toLowerCase();
  const hit = RESERVED_CASE_IDS.find((r) => lower === r || lower.startsWith(`${r}.tmp-`));
  if (!hit) return undefined;
  return `case id \`${id}\` is the name of a file skill-up writes into the run folder (\`${hit}\`), where every case gets a folder named after its id; rename the case (reserved: ${RESERVED_CASE_IDS.map((r) => `\`${r}\``).join(', ')})`;
}
