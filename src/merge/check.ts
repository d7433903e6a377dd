/**
 * The checks of `skill-up merge`: are these result.json documents the shards of one sharded
 * run (`skill-up run --shard i/n`), each once, all of them? Pure: documents in, a plan of the
 * merge or one MergeError out. Nothing is read or written here.
 *
 * Refused, in this order (the first problem found is the message):
 * - a document that is not a shard (no `shard` block) or is itself a merged run;
 * - the same result.json given twice;
 * - a shard without `suite_hash`, or shards whose `suite_hash` differ (the skill folder changed);
 * - shards of different splits (`n` of `i/n` differs) or of different plans (the cases selected
 *   by --case / --exclude-case / --tag differ);
 * - shards run with different plan options: trials, baseline, the engines (names, pinned and
 *   resolved versions, models) or the gate settings (`decision.config`);
 * - the same shard index twice, a case in two shards, a job of a case outside its shard;
 * - a missing shard or an interrupted one, unless `allowPartial` (then they are listed).
 */
import type { JobJson, ResultDoc } from '../report/result-json.js';
import { isAbsolute } from 'node:path';
import type { ShardRecord } from '../plan/shard.js';

/** The inputs cannot be merged. The message is for the user as is (one line). */
export class MergeError extends Error {}

/** One loaded input: its document, how to name it (a path as the user gave it), and the absolute path of its result.json. */
export interface ShardInput {
  doc: ResultDoc;
  source: string;
  file: string;
}

/** A shard that passed the checks. */
export interface CheckedShard extends ShardInput {
  shard: ShardRecord;
}

/** What to merge. */
export interface MergePlan {
  /** n of `i/n`. */
  count: number;
  /** The given shards by index. */
  shards: CheckedShard[];
  /** Every case of the plan, in suite order. */
  planCases: string[];
  missingShards: number[];
  /** Cases of the plan in no given shard, in suite order. */
  missingCases: string[];
  /** Given shards that did not run all their jobs (interrupted, or stopped by --max-cost). */
  interrupted: CheckedShard[];
  /** Remarks that do not stop the merge (e.g. shards written by different skill-up versions). */
  notes: string[];
}

/** `a, b, c` with at most `max` items shown. */
export function listSome(items: readonly (string | number)[], max = 10): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} and ${items.length - max} more` : shown;
}

/** A job folder from result.json must stay inside its run folder (the file may have been edited). */
export function safeJobDir(rel: string): boolean {
  return rel !== '' && !isAbsolute(rel) && !/^[A-Za-z]:/.test(rel) && !rel.split(/[\\/]/).includes('..');
}

const label = (s: CheckedShard) => `${s.source} (shard ${s.shard.index}/${s.shard.count})`;

/** The plan options every shard must share, as [name, value] pairs (values compared as JSON). */
function planOptions(doc: ResultDoc): [string, unknown][] {
  const o = doc.options;
  return [
    ['trials (--trials)', o.trials ?? null],
    ['baseline (--baseline / benchmark.enabled)', o.baseline ?? null],
    [
      'engines',
      doc.engines.map((e) => ({ name: e.name, display_name: e.display_name, version: e.version ?? null, resolved_version: e.resolved_version ?? null, model: e.model })),
    ],
    ['gate settings (decision.config)', doc.decision.config],
  ];
}

/** A short readable form of an option value for a message. */
function show(v: unknown): string {
  const text = JSON.stringify(v);
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

/** The first option in which `b` differs from `a`, as `name: A in X, B in Y`; undefined when none does. */
function optionDifference(a: CheckedShard, b: CheckedShard): string | undefined {
  const bo = new Map(planOptions(b.doc));
  for (const [name, value] of planOptions(a.doc)) {
    const other = bo.get(name);
    if (JSON.stringify(value) === JSON.stringify(other)) continue;
    if (name === 'engines') {
      const ae = value as { name: string }[];
      const be = other as { name: string }[];
      const pairs = ae.map((e, i) => [e, be[i]] as const).find(([x, y]) => JSON.stringify(x) !== JSON.stringify(y));
      if (pairs && pairs[1] && pairs[0].name === pairs[1].name) return `engine ${pairs[0].name}: ${show(pairs[0])} in ${a.source}, ${show(pairs[1])} in ${b.source}`;
      return `engines: ${ae.map((e) => e.name).join(', ')} in ${a.source}, ${be.map((e) => e.name).join(', ')} in ${b.source}`;
    }
    if (name.startsWith('gate')) {
      const ac = value as Record<string, unknown>;
      const bc = other as Record<string, unknown>;
      const key = [...new Set([...Object.keys(ac), ...Object.keys(bc)])].find((k) => JSON.stringify(ac[k]) !== JSON.stringify(bc[k]));
      if (key) return `gate setting ${key}: ${show(ac[key] ?? null)} in ${a.source}, ${show(bc[key] ?? null)} in ${b.source}`;
    }
    return `${name}: ${show(value)} in ${a.source}, ${show(other)} in ${b.source}`;
  }
  return undefined;
}

/** Checks `inputs` and says what to merge. @throws MergeError with one message naming the folders. */
export function checkShards(inputs: readonly ShardInput[], opts: { allowPartial?: boolean } = {}): MergePlan {
  if (inputs.length === 0) throw new MergeError('merge needs the folders of the shards to merge (iteration folders of `skill-up run --shard i/n`)');
  const seenFiles = new Map<string, ShardInput>();
  for (const x of inputs) {
    const before = seenFiles.get(x.file);
    if (before) throw new MergeError(`${x.source} is given twice${before.source !== x.source ? ` (also as ${before.source})` : ''}: give each shard once`);
    seenFiles.set(x.file, x);
  }
  const shards: CheckedShard[] = inputs.map((x) => {
    if (x.doc.merge) throw new MergeError(`${x.source} is already a merged run (of ${x.doc.merge.shards.length} shard(s)); merge the shards themselves`);
    if (!x.doc.shard) throw new MergeError(`${x.source} is not a shard: its result.json has no \`shard\` (written by \`skill-up run --shard i/n\`); merge takes the shards of one sharded run`);
    return { ...x, shard: x.doc.shard };
  });
  const first = shards[0]!;
  for (const s of shards) {
    if (!s.doc.suite_hash) throw new MergeError(`${s.source} records no suite_hash (written by an older skill-up), so it cannot be shown to be the same suite as the others; run it again`);
  }
  for (const s of shards.slice(1)) {
    if (s.doc.suite_hash !== first.doc.suite_hash) {
      throw new MergeError(
        `${first.source} and ${s.source} are shards of different suites (suite_hash ${first.doc.suite_hash!.slice(0, 19)}… vs ${s.doc.suite_hash!.slice(0, 19)}…: the skill folder changed between the runs); run every shard on the same suite`,
      );
    }
    if (s.shard.count !== first.shard.count) {
      throw new MergeError(`${label(first)} and ${label(s)} belong to different splits (n = ${first.shard.count} vs ${s.shard.count}); every shard of one run uses the same --shard i/n`);
    }
    if (JSON.stringify(s.shard.plan_cases) !== JSON.stringify(first.shard.plan_cases)) {
      const a = new Set(first.shard.plan_cases);
      const b = new Set(s.shard.plan_cases);
      const onlyA = first.shard.plan_cases.filter((c) => !b.has(c));
      const onlyB = s.shard.plan_cases.filter((c) => !a.has(c));
      const what = onlyA.length ? `case(s) ${listSome(onlyA, 5)} only in ${first.source}'s plan` : onlyB.length ? `case(s) ${listSome(onlyB, 5)} only in ${s.source}'s plan` : 'the cases are in another order';
      throw new MergeError(`${first.source} and ${s.source} split different plans (${what}); run every shard with the same --case / --exclude-case / --tag`);
    }
    const diff = optionDifference(first, s);
    if (diff) throw new MergeError(`${first.source} and ${s.source} were run with different options (${diff}); shards must share trials, baseline, engines and their versions, and the gate settings`);
  }
  const byIndex = new Map<number, CheckedShard>();
  const caseOwner = new Map<string, CheckedShard>();
  const planned = new Set(first.shard.plan_cases);
  for (const s of shards) {
    const twin = byIndex.get(s.shard.index);
    if (twin) throw new MergeError(`${twin.source} and ${s.source} are both shard ${s.shard.index}/${s.shard.count}: give each shard once`);
    byIndex.set(s.shard.index, s);
    for (const c of s.shard.cases) {
      if (!planned.has(c)) throw new MergeError(`${label(s)} holds case ${c}, which is not in the plan it records (its result.json was edited?)`);
      const owner = caseOwner.get(c);
      if (owner) throw new MergeError(`${label(owner)} and ${label(s)} both hold case ${c}: shards of one run never share a case (their result.json was edited?)`);
      caseOwner.set(c, s);
    }
    const own = new Set(s.shard.cases);
    const stray = s.doc.jobs.find((j: JobJson) => !own.has(j.case_id));
    if (stray) throw new MergeError(`${label(s)} has job ${stray.id} of case ${stray.case_id}, which is not one of its shard's cases (its result.json was edited?)`);
    const outside = s.doc.jobs.find((j: JobJson) => !safeJobDir(j.output_dir));
    if (outside) throw new MergeError(`${label(s)}: job ${outside.id} has its folder \`${outside.output_dir}\` outside the run folder (its result.json was edited?)`);
  }
  const count = first.shard.count;
  const ordered = [...byIndex.keys()].sort((a, b) => a - b).map((i) => byIndex.get(i)!);
  const missingShards = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  const missingCases = first.shard.plan_cases.filter((c) => !caseOwner.has(c));
  const interrupted = ordered.filter((s) => s.doc.interrupted || s.doc.not_run > 0);
  if (!opts.allowPartial) {
    if (missingShards.length) {
      throw new MergeError(
        `shard(s) ${listSome(missingShards.map((i) => `${i}/${count}`))} missing (case(s) ${listSome(missingCases)} not in any given folder; given: ${listSome(ordered.map(label), 5)}); ` +
          'give every shard, or --allow-partial to merge these',
      );
    }
    if (interrupted.length) {
      const s = interrupted[0]!;
      const why = s.doc.interrupted ? 'was interrupted' : `stopped early${s.doc.not_run_reason ? ` (${s.doc.not_run_reason})` : ''}`;
      throw new MergeError(`${label(s)} ${why}: ${s.doc.not_run} job(s) not run; run that shard again, or --allow-partial to merge what finished`);
    }
  }
  const notes: string[] = [];
  const versions = [...new Set(ordered.map((s) => s.doc.tool.version))];
  if (versions.length > 1) notes.push(`the shards were written by different skill-up versions (${versions.join(', ')})`);
  return { count, shards: ordered, planCases: first.shard.plan_cases, missingShards, missingCases, interrupted, notes };
}
