/**
 * The behaviour checks (src/judge/behaviour) as the reports write them: one job's record in
 * result.json (`jobs[].behaviour`, snake_case), the trial flags the behaviour gates read, the
 * summaries per engine × variant (result.json `behaviour.by_arm`, summary.md, the console) and
 * per case × arm (report.html, summary.md), and grading.json's `claims` (skill-creator's shape).
 *
 * Summaries count graded jobs only (pass or fail; an `error` or `skipped` job is never counted
 * either way) of cases that are not trigger cases. Token figures are estimates
 * (src/judge/behaviour/types.ts TOKEN_ESTIMATE), means over the jobs whose requests were observed.
 */
import { cutText } from '../util/cut.js';
import type { JobBehaviour } from '../judge/behaviour/types.js';
import type { TrialBehaviour } from '../stats/summarise.js';
import type { Variant } from '../engine/types.js';

/** One job's behaviour record in result.json (schema `$defs.behaviour`). */
export interface BehaviourJson {
  claims: { text: string; kind: string; path?: string; turn: number; verified: boolean; evidence: string }[];
  claims_total: number;
  claims_verified: number;
  tool_loop: { longest_run: number; tool?: string; turn?: number; input?: string; threshold: number; detected: boolean };
  silent_failure: {
    failures: number;
    recovered: number;
    unmentioned: { turn: number; tool: string; error: string }[];
    unmentioned_count: number;
    detected: boolean;
    /** Shell calls of unknown outcome on an engine that does not report shell exit statuses (Gemini CLI). */
    unobservable?: { reason: string; shell_calls: number; unacknowledged: number; examples: { turn: number; tool: string; error: string }[] };
  };
  skill_context:
    | { observed: true; method: string; listing_tokens: number; body_tokens: number; skills: { skill: string; listing_tokens: number; body_tokens: number; loaded: boolean }[] }
    | { observed: false; reason: string };
}

/** JobBehaviour → its result.json form. */
export function behaviourJson(b: JobBehaviour): BehaviourJson {
  const l = b.toolLoop;
  const s = b.silentFailure;
  const c = b.skillContext;
  return {
    claims: b.claims.map((x) => ({ text: x.text, kind: x.kind, ...(x.path !== undefined ? { path: x.path } : {}), turn: x.turn, verified: x.verified, evidence: x.evidence })),
    claims_total: b.claimsTotal,
    claims_verified: b.claimsVerified,
    tool_loop: { longest_run: l.longestRun, ...(l.tool !== undefined ? { tool: l.tool, turn: l.turn, input: l.input } : {}), threshold: l.threshold, detected: l.detected },
    silent_failure: {
      failures: s.failures, recovered: s.recovered, unmentioned: s.unmentioned.map((u) => ({ ...u })), unmentioned_count: s.unmentionedCount, detected: s.detected,
      ...(s.unobservable ? { unobservable: { reason: s.unobservable.reason, shell_calls: s.unobservable.shellCalls, unacknowledged: s.unobservable.unacknowledged, examples: s.unobservable.examples.map((u) => ({ ...u })) } } : {}),
    },
    skill_context: c.observed
      ? { observed: true, method: c.method, listing_tokens: c.listingTokens, body_tokens: c.bodyTokens, skills: c.skills.map((k) => ({ skill: k.skill, listing_tokens: k.listingTokens, body_tokens: k.bodyTokens, loaded: k.loaded })) }
      : { observed: false, reason: c.reason },
  };
}

/** The flags the behaviour gates read (TrialResult.behaviour), from either form. */
export function trialBehaviour(b: JobBehaviour | BehaviourJson | undefined): TrialBehaviour | undefined {
  if (!b) return undefined;
  if ('toolLoop' in b) return { toolLoop: b.toolLoop.detected, silentFailure: silentOrUnknown(b.silentFailure.detected, b.silentFailure.unobservable?.unacknowledged), claims: b.claimsTotal, claimsVerified: b.claimsVerified };
  return { toolLoop: b.tool_loop.detected, silentFailure: silentOrUnknown(b.silent_failure.detected, b.silent_failure.unobservable?.unacknowledged), claims: b.claims_total, claimsVerified: b.claims_verified };
}

/**
 * A silent failure (true), none (false), or null when it cannot be known: no failure was seen
 * but (Gemini CLI) shell calls of unknown outcome went unacknowledged, as `no_silent_failure`
 * decides. The gate leaves the unknown jobs out, as it leaves out errors.
 */
function silentOrUnknown(detected: boolean, unacknowledgedUnknown: number | undefined): boolean | null {
  if (detected) return true;
  return (unacknowledgedUnknown ?? 0) > 0 ? null : false;
}

/** What a summary reads of a job (JobJson fields). */
export interface BehaviourJob {
  case_id: string;
  engine: string;
  variant: Variant;
  status: string;
  trigger?: unknown;
  behaviour?: BehaviourJson;
}

/** Behaviour figures over a group of jobs (an arm, or a case × arm). Token means are null when no job's requests were observed. */
export interface BehaviourSummary {
  /** Graded jobs with a behaviour record. */
  jobs: number;
  claims: number;
  claims_verified: number;
  /** Jobs that made at least one claim, and those whose claims all held. */
  jobs_with_claims: number;
  jobs_claims_verified: number;
  /** Jobs with a tool loop / a silent failure. */
  tool_loops: number;
  silent_failures: number;
  /** Jobs whose silent failure cannot be known (unacknowledged shell calls of unknown outcome): counted neither way. */
  silent_failures_unknown: number;
  /** Jobs whose model requests were observed (the scripted model). */
  context_observed: number;
  listing_tokens_mean: number | null;
  body_tokens_mean: number | null;
}

/** One engine × variant's summary (result.json `behaviour.by_arm[]`). */
export interface BehaviourArm extends BehaviourSummary {
  engine: string;
  variant: Variant;
}

/** Whether a job counts in behaviour summaries and gates: graded (pass/fail), not a trigger case, with a record. */
export function countsForBehaviour(j: BehaviourJob): j is BehaviourJob & { behaviour: BehaviourJson } {
  return (j.status === 'pass' || j.status === 'fail') && !j.trigger && j.behaviour !== undefined;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** The summary of `jobs` (those that do not count are ignored). */
export function summariseBehaviour(jobs: readonly BehaviourJob[]): BehaviourSummary {
  const out: BehaviourSummary = { jobs: 0, claims: 0, claims_verified: 0, jobs_with_claims: 0, jobs_claims_verified: 0, tool_loops: 0, silent_failures: 0, silent_failures_unknown: 0, context_observed: 0, listing_tokens_mean: null, body_tokens_mean: null };
  let listing = 0;
  let body = 0;
  for (const j of jobs) {
    if (!countsForBehaviour(j)) continue;
    const b = j.behaviour;
    out.jobs++;
    out.claims += b.claims_total;
    out.claims_verified += b.claims_verified;
    if (b.claims_total > 0) {
      out.jobs_with_claims++;
      if (b.claims_verified === b.claims_total) out.jobs_claims_verified++;
    }
    if (b.tool_loop.detected) out.tool_loops++;
    const silent = silentOrUnknown(b.silent_failure.detected, b.silent_failure.unobservable?.unacknowledged);
    if (silent === true) out.silent_failures++;
    else if (silent === null) out.silent_failures_unknown++;
    if (b.skill_context.observed) {
      out.context_observed++;
      listing += b.skill_context.listing_tokens;
      body += b.skill_context.body_tokens;
    }
  }
  if (out.context_observed > 0) {
    out.listing_tokens_mean = round1(listing / out.context_observed);
    out.body_tokens_mean = round1(body / out.context_observed);
  }
  return out;
}

/** Summaries per engine × variant, in first-appearance order. */
export function behaviourByArm(jobs: readonly BehaviourJob[]): BehaviourArm[] {
  const arms = new Map<string, { engine: string; variant: Variant; jobs: BehaviourJob[] }>();
  for (const j of jobs) {
    const key = `${j.engine}\u0000${j.variant}`;
    const arm = arms.get(key) ?? { engine: j.engine, variant: j.variant, jobs: [] };
    arm.jobs.push(j);
    arms.set(key, arm);
  }
  return [...arms.values()].map((a) => ({ engine: a.engine, variant: a.variant, ...summariseBehaviour(a.jobs) }));
}

/** Whether any check fired (a loop, a silent failure, an unverified claim) in `s`. */
export function behaviourFired(s: BehaviourSummary): boolean {
  return s.tool_loops > 0 || s.silent_failures > 0 || s.claims_verified < s.claims;
}

/** `3/4 claims verified, 1 tool loop, 0 silent failures, skill context ≈ 31 + 520 tokens (listing + body, estimate)`. */
export function behaviourLine(s: BehaviourSummary): string {
  const ctx = s.listing_tokens_mean === null ? 'skill context unknown' : `skill context ≈ ${s.listing_tokens_mean} + ${s.body_tokens_mean} tokens (listing + body, estimate)`;
  return `${s.claims_verified}/${s.claims} claim(s) verified, ${s.tool_loops} of ${s.jobs} job(s) with a tool loop, ${s.silent_failures} with a silent failure${s.silent_failures_unknown ? ` (${s.silent_failures_unknown} that cannot be checked on this engine)` : ''}, ${ctx}`;
}

/** grading.json `claims` (skill-creator's `{claim, type, verified, evidence}`): file claims are `factual`, "tests pass" is `process`. */
export function gradingClaims(b: BehaviourJson | undefined): { claim: string; type: 'factual' | 'process'; verified: boolean; evidence: string }[] {
  return (b?.claims ?? []).map((c) => ({ claim: c.path ? `${c.kind.replace('_', ' ')}: ${c.path} (${c.text})` : c.text, type: c.kind === 'tests_pass' ? 'process' : 'factual', verified: c.verified, evidence: c.evidence }));
}

/** The inverse of {@link behaviourJson}: a result.json record back as JobBehaviour (merge rebuilds result.json from it). */
export function behaviourFromJson(b: BehaviourJson): JobBehaviour {
  const l = b.tool_loop;
  const s = b.silent_failure;
  const c = b.skill_context;
  return {
    claims: b.claims.map((x) => ({ text: x.text, kind: x.kind as JobBehaviour['claims'][number]['kind'], ...(x.path !== undefined ? { path: x.path } : {}), turn: x.turn, verified: x.verified, evidence: x.evidence })),
    claimsTotal: b.claims_total,
    claimsVerified: b.claims_verified,
    toolLoop: { longestRun: l.longest_run, ...(l.tool !== undefined ? { tool: l.tool, turn: l.turn, input: l.input } : {}), threshold: l.threshold, detected: l.detected },
    silentFailure: {
      failures: s.failures, recovered: s.recovered, unmentioned: s.unmentioned.map((u) => ({ ...u })), unmentionedCount: s.unmentioned_count, detected: s.detected,
      ...(s.unobservable ? { unobservable: { reason: s.unobservable.reason, shellCalls: s.unobservable.shell_calls, unacknowledged: s.unobservable.unacknowledged, examples: s.unobservable.examples.map((u) => ({ ...u })) } } : {}),
    },
    skillContext: c.observed
      ? { observed: true, method: c.method, listingTokens: c.listing_tokens, bodyTokens: c.body_tokens, skills: c.skills.map((k) => ({ skill: k.skill, listingTokens: k.listing_tokens, bodyTokens: k.body_tokens, loaded: k.loaded })) }
      : { observed: false, reason: c.reason },
  };
}

/**
 * The console's behaviour lines: one per engine × variant where a check fired (an unverified
 * claim, a tool loop, a silent failure), `<engine> <variant> behaviour: …`; none otherwise.
 */
export function behaviourConsoleLines(jobs: readonly BehaviourJob[], name: (engine: string) => string = (e) => e): string[] {
  return behaviourByArm(jobs)
    .filter(behaviourFired)
    .map((a) => `${name(a.engine)} ${a.variant} behaviour: ${behaviourLine(a)}`);
}

/** Markdown table cell text: one line, `|` and HTML escaped, at most `max` characters. */
function cell(s: string, max = 80): string {
  return cutText(s.replace(/[\r\n]+/g, ' '), max).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|');
}

/** Case rows summary.md shows at most (the rest: result.json). */
const MD_CASE_ROWS = 50;

/**
 * summary.md's "Behaviour checks": one row per engine × variant, then per case × engine ×
 * variant where a check fired (at most {@link MD_CASE_ROWS}). Empty when no job has a record.
 */
export function behaviourMarkdown(jobs: readonly BehaviourJob[], engineName: (e: string) => string = (e) => e): string[] {
  const arms = behaviourByArm(jobs).filter((a) => a.jobs > 0);
  if (arms.length === 0) return [];
  const tokens = (x: number | null) => (x === null ? 'unknown' : String(x));
  const line = (first: string, engine: string, variant: string, s: BehaviourSummary) =>
    `| ${first} | ${cell(engineName(engine))} | ${variant} | ${s.jobs} | ${s.claims ? `${s.claims_verified}/${s.claims}` : '—'} | ${s.tool_loops} | ${s.silent_failures} | ${tokens(s.listing_tokens_mean)} | ${tokens(s.body_tokens_mean)} |`;
  const out = [
    '### Behaviour checks',
    '',
    '| Case | Engine | Variant | Jobs | Claims verified | Tool loops | Silent failures | Skill listing tokens | Skill body tokens |',
    '|---|---|---|---|---|---|---|---|---|',
    ...arms.map((a) => line('all cases', a.engine, a.variant, a)),
  ];
  const groups = new Map<string, BehaviourJob[]>();
  for (const j of jobs) {
    const key = `${j.case_id}\u0000${j.engine}\u0000${j.variant}`;
    groups.set(key, [...(groups.get(key) ?? []), j]);
  }
  const fired: string[] = [];
  for (const [key, js] of groups) {
    const s = summariseBehaviour(js);
    if (s.jobs === 0 || !behaviourFired(s)) continue;
    const [caseId, engine, variant] = key.split('\u0000') as [string, string, string];
    fired.push(line(`\`${cell(caseId)}\``, engine, variant, s));
  }
  out.push(...fired.slice(0, MD_CASE_ROWS));
  out.push('', `_Graded jobs only (errors never counted). Cases listed where a check fired${fired.length > MD_CASE_ROWS ? ` (${fired.length - MD_CASE_ROWS} more in result.json)` : ''}. Skill context tokens: mean estimate (UTF-8 bytes / 4) from the requests the engine sent the scripted model; unknown with a real model._`, '');
  return out;
}
