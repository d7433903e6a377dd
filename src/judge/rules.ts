/**
 * The `rule_based` judge. Semantics follow alibaba/skill-up:
 * - `failure` rules are evaluated first; if any of them MATCHES (its condition holds) the
 *   judge fails, and only the matched failure rules are reported (text prefixed `failure: `);
 * - otherwise every `success` rule must hold (each is one assertion), and the failure rules
 *   that did not match are reported as passed assertions (text prefixed `no failure: `);
 * - a judge with no rules at all passes (one vacuous assertion says so).
 *
 * Output rules look at the final message; turn rules (1-based `turn`) at that turn's
 * answer, and fail when the turn is missing or not `completed`. Tool names compare
 * case-insensitively; tool evidence lists the calls actually made (first 20).
 */
import type { Rule } from '../config/types.js';
import type { ToolCall, TranscriptTurn } from '../engine/types.js';
import { compileRegex } from '../util/regex.js';
import { argsMismatch } from './args.js';
import { around, jsonClip, nameList, q, qList } from './evidence.js';
import type { JudgeOutcome } from './outcome.js';
import { inspectPath } from './paths.js';
import type { Assertion, JudgeInput } from './types.js';
import { finalMessageText, searchText, turnText, withFullText, type Searched } from './text.js';

/** A rule evaluated against a job: `holds` is whether its condition is true. */
export interface RuleResult {
  text: string;
  holds: boolean;
  evidence: string;
}

export type Check = { holds: boolean; evidence: string };

/** Runs a `rule_based` judge over `input` (see module doc). Never throws. */
export async function runRuleJudge(spec: { success: Rule[]; failure: Rule[] }, input: JudgeInput): Promise<JudgeOutcome> {
  if (spec.success.length === 0 && spec.failure.length === 0) {
    return {
      status: 'pass',
      assertions: [{ text: 'rule_based: no rules', passed: true, evidence: 'no success or failure rules declared (vacuous pass)' }],
    };
  }
  const failures = await Promise.all(spec.failure.map((r) => evaluateRule(r, input)));
  const matched = failures.filter((f) => f.holds);
  if (matched.length > 0) {
    return {
      status: 'fail',
      assertions: matched.map((f) => ({ text: `failure: ${f.text}`, passed: false, evidence: f.evidence })),
      reason: `failure rule matched: ${matched.map((f) => f.text).join('; ')}`,
    };
  }
  const successes = await Promise.all(spec.success.map((r) => evaluateRule(r, input)));
  const assertions: Assertion[] = [
    ...successes.map((s) => ({ text: s.text, passed: s.holds, evidence: s.evidence })),
    ...failures.map((f) => ({ text: `no failure: ${f.text}`, passed: true, evidence: `did not match: ${f.evidence}` })),
  ];
  const failed = successes.filter((s) => !s.holds);
  return failed.length === 0
    ? { status: 'pass', assertions }
    : { status: 'fail', assertions, reason: `success rule failed: ${failed.map((s) => s.text).join('; ')}` };
}

/**
 * Evaluates one rule. A rule normally sets exactly one kind; if it sets several, it holds
 * only when all of them hold. A rule with no known kind never holds.
 */
export async function evaluateRule(rule: Rule, input: JudgeInput): Promise<RuleResult> {
  const parts: { text: string; check: Check }[] = [];
  const add = (text: string, check: Check) => parts.push({ text, check });
  const allCalls = input.transcript.turns.flatMap((t) => t.toolCalls.map((c) => ({ turn: t.index, call: c })));

  // The final message as judges read it (src/judge/text.ts): a large one is streamed from its
  // file for substring rules, and loaded through the one-at-a-time gate for patterns.
  const message = finalMessageText(input);
  if (rule.outputContains) add(`output_contains ${describeLists(rule.outputContains)}`, outputContains(await searchText(message, needles(rule.outputContains)), rule.outputContains));
  if (rule.outputMatches) {
    const lists = rule.outputMatches;
    add(`output_matches ${describeLists(lists)}`, await withFullText(message, (text) => outputMatches(text, lists)));
  }
  if (rule.exitCode !== undefined) {
    add(`exit_code: ${rule.exitCode}`, { holds: input.exitCode === rule.exitCode, evidence: `actual exit code: ${input.exitCode}` });
  }
  if (rule.filesExist) add(`files_exist: ${qList(rule.filesExist)}`, await filesCheck(input.workspace, rule.filesExist, true));
  if (rule.filesNotExist) add(`files_not_exist: ${qList(rule.filesNotExist)}`, await filesCheck(input.workspace, rule.filesNotExist, false));
  if (rule.toolCalled) {
    const { name, args } = rule.toolCalled;
    add(`tool_called: ${name}${hasArgs(args) ? ` ${jsonClip(args, 160)}` : ''}`, toolCalled(allCalls, name, args, 'in any turn'));
  }
  if (rule.toolNotCalled) add(`tool_not_called: ${rule.toolNotCalled.name}`, toolNotCalled(allCalls, rule.toolNotCalled.name, 'in any turn'));
  if (rule.skillInvoked !== undefined) add(`skill_invoked: ${rule.skillInvoked}`, skillInvoked(input, rule.skillInvoked, true));
  if (rule.skillNotInvoked !== undefined) add(`skill_not_invoked: ${rule.skillNotInvoked}`, skillInvoked(input, rule.skillNotInvoked, false));
  if (rule.turnResponseContains) {
    const r = rule.turnResponseContains;
    const lists: string[] = [];
    if (r.containsAll?.length) lists.push(`contains_all: ${qList(r.containsAll)}`);
    if (r.containsAny?.length) lists.push(`contains_any: ${qList(r.containsAny)}`);
    add(
      `turn_response_contains {turn: ${r.turn}${lists.length ? `, ${lists.join(', ')}` : ''}}`,
      await withTurn(input, r.turn, async (t) => {
        const l = { all: r.containsAll, any: r.containsAny };
        return outputContains(await searchText(turnText(t, input.jobDir), needles(l)), l, `turn ${r.turn} response`);
      }),
    );
  }
  if (rule.turnResponseNotContains) {
    const r = rule.turnResponseNotContains;
    add(
      `turn_response_not_contains {turn: ${r.turn}, not_contains: ${qList(r.notContains)}}`,
      await withTurn(input, r.turn, async (t) => outputContains(await searchText(turnText(t, input.jobDir), r.notContains), { not: r.notContains }, `turn ${r.turn} response`)),
    );
  }
  if (rule.toolCalledInTurn) {
    const r = rule.toolCalledInTurn;
    add(
      `tool_called_in_turn {turn: ${r.turn}, name: ${r.name}${hasArgs(r.args) ? `, args: ${jsonClip(r.args, 160)}` : ''}}`,
      await withTurn(input, r.turn, (t) => toolCalled(t.toolCalls.map((c) => ({ turn: t.index, call: c })), r.name, r.args, `in turn ${r.turn}`)),
    );
  }
  if (rule.toolNotCalledInTurn) {
    const r = rule.toolNotCalledInTurn;
    add(
      `tool_not_called_in_turn {turn: ${r.turn}, name: ${r.name}}`,
      await withTurn(input, r.turn, (t) => toolNotCalled(t.toolCalls.map((c) => ({ turn: t.index, call: c })), r.name, `in turn ${r.turn}`)),
    );
  }

  if (parts.length === 0) return { text: 'rule: (no recognised kind)', holds: false, evidence: 'the rule sets no known rule kind' };
  if (parts.length === 1) return { text: parts[0]!.text, holds: parts[0]!.check.holds, evidence: parts[0]!.check.evidence };
  return {
    text: parts.map((p) => p.text).join(' & '),
    holds: parts.every((p) => p.check.holds),
    evidence: parts.map((p) => `${p.text}: ${p.check.evidence}`).join('; '),
  };
}

function hasArgs(args: Record<string, unknown> | undefined): args is Record<string, unknown> {
  return args !== undefined && Object.keys(args).length > 0;
}

function describeLists(l: { all?: string[]; any?: string[]; not?: string[] }): string {
  const parts: string[] = [];
  if (l.all?.length) parts.push(`all: ${qList(l.all)}`);
  if (l.any?.length) parts.push(`any: ${qList(l.any)}`);
  if (l.not?.length) parts.push(`not: ${qList(l.not)}`);
  return `{${parts.join(', ')}}`;
}

/** Every string of a contains rule's lists. */
function needles(l: { all?: string[]; any?: string[]; not?: string[] }): string[] {
  return [...(l.all ?? []), ...(l.any ?? []), ...(l.not ?? [])];
}

/**
 * all: every string present; any: at least one present (when given); not: none present.
 * `text` has been searched for every string of the lists (src/judge/text.ts `searchText`).
 */
function outputContains(text: Searched, l: { all?: string[]; any?: string[]; not?: string[] }, where = 'final message'): Check {
  const ev: string[] = [];
  let holds = true;
  let missingSomething = false;
  for (const s of l.all ?? []) {
    const at = text.find(s)?.at ?? -1;
    if (at >= 0) ev.push(`${q(s, 60)} found at offset ${at}`);
    else {
      holds = false;
      missingSomething = true;
      ev.push(`${q(s, 60)} not found`);
    }
  }
  if (l.any && l.any.length > 0) {
    const hit = l.any.map((s) => ({ s, at: text.find(s)?.at ?? -1 })).find((h) => h.at >= 0);
    if (hit) ev.push(`any: ${q(hit.s, 60)} found at offset ${hit.at}`);
    else {
      holds = false;
      missingSomething = true;
      ev.push(`any: none of ${qList(l.any, 60)} found`);
    }
  }
  for (const s of l.not ?? []) {
    const f = text.find(s);
    if (f) {
      holds = false;
      ev.push(`not: ${q(s, 60)} found at offset ${f.at}: ${f.context}`);
    } else ev.push(`not: ${q(s, 60)} absent`);
  }
  if (missingSomething) ev.push(`${where} (${text.length} chars): ${q(text.head, 200)}`);
  return { holds, evidence: ev.length ? ev.join('; ') : 'no strings given' };
}

/** Like outputContains, with RE2 (Go syntax) regular expressions, matched in linear time (see util/regex.ts). */
function outputMatches(text: string, l: { all?: string[]; any?: string[]; not?: string[] }): Check {
  const ev: string[] = [];
  let holds = true;
  let missingSomething = false;
  const find = (p: string): { at: number; len: number } | { error: string } | null => {
    let re: RegExp;
    try {
      re = compileRegex(p);
    } catch (e) {
      return { error: (e as Error).message };
    }
    const m = re.exec(text);
    return m ? { at: m.index, len: m[0].length } : null;
  };
  const show = (p: string) => `/${p.length > 60 ? `${p.slice(0, 59)}…` : p}/`;
  for (const p of l.all ?? []) {
    const r = find(p);
    if (r && 'error' in r) {
      holds = false;
      ev.push(`${show(p)} invalid pattern: ${r.error}`);
    } else if (r) ev.push(`${show(p)} matched at offset ${r.at}: ${around(text, r.at, r.len, 20)}`);
    else {
      holds = false;
      missingSomething = true;
      ev.push(`${show(p)} did not match`);
    }
  }
  if (l.any && l.any.length > 0) {
    let hit: string | undefined;
    for (const p of l.any) {
      const r = find(p);
      if (r && 'error' in r) ev.push(`any: ${show(p)} invalid pattern: ${r.error}`);
      else if (r && hit === undefined) hit = `any: ${show(p)} matched at offset ${r.at}: ${around(text, r.at, r.len, 20)}`;
    }
    if (hit) ev.push(hit);
    else {
      holds = false;
      missingSomething = true;
      ev.push(`any: none of ${l.any.map(show).join(', ')} matched`);
    }
  }
  for (const p of l.not ?? []) {
    const r = find(p);
    if (r && 'error' in r) {
      holds = false;
      ev.push(`not: ${show(p)} invalid pattern: ${r.error}`);
    } else if (r) {
      holds = false;
      ev.push(`not: ${show(p)} matched at offset ${r.at}: ${around(text, r.at, r.len, 20)}`);
    } else ev.push(`not: ${show(p)} did not match`);
  }
  if (missingSomething) ev.push(`final message (${text.length} chars): ${q(text, 200)}`);
  return { holds, evidence: ev.length ? ev.join('; ') : 'no patterns given' };
}

async function filesCheck(workspace: string, paths: string[], wantExist: boolean): Promise<Check> {
  let holds = true;
  const ev: string[] = [];
  for (const p of paths) {
    const info = await inspectPath(workspace, p);
    const ok = wantExist ? info.exists : !info.exists && !info.refused;
    if (!ok) holds = false;
    ev.push(`${p}: ${info.description}`);
  }
  return { holds, evidence: ev.length ? ev.join('; ') : 'no paths given' };
}

type LocatedCall = { turn: number; call: ToolCall };

const sameName = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
/** A rule's tool `name` may list alternatives as `Write|write_file|write`: engines name the same tool differently. */
const toolNameMatches = (actual: string, spec: string) => spec.split('|').some((n) => sameName(actual, n.trim()));

function calledList(calls: LocatedCall[]): string {
  return `tools called: ${nameList(calls.map((c) => c.call.name))}`;
}

function toolCalled(calls: LocatedCall[], name: string, args: Record<string, unknown> | undefined, scope: string): Check {
  const named = calls.filter((c) => toolNameMatches(c.call.name, name));
  if (named.length === 0) return { holds: false, evidence: `${name} was not called ${scope}; ${calledList(calls)}` };
  if (!hasArgs(args)) {
    return {
      holds: true,
      evidence: `${name} called ${named.length} time(s) ${scope} (first in turn ${named[0]!.turn}: ${jsonClip(named[0]!.call.input, 200)})`,
    };
  }
  const mismatches: string[] = [];
  for (const c of named) {
    const m = argsMismatch(args, c.call.input);
    if (m === undefined) {
      return {
        holds: true,
        evidence: `${name} called ${named.length} time(s) ${scope}; matching call in turn ${c.turn}: ${jsonClip(c.call.input, 200)}`,
      };
    }
    mismatches.push(m);
  }
  const shown = mismatches.slice(0, 3).map((m, i) => `call ${i + 1}: ${m}`);
  return {
    holds: false,
    evidence: `${name} called ${named.length} time(s) ${scope} but no call matched the arguments (${shown.join('; ')}${
      mismatches.length > 3 ? `; +${mismatches.length - 3} more` : ''
    }); ${calledList(calls)}`,
  };
}

function toolNotCalled(calls: LocatedCall[], name: string, scope: string): Check {
  const named = calls.filter((c) => toolNameMatches(c.call.name, name));
  if (named.length === 0) return { holds: true, evidence: `${name} was not called ${scope}; ${calledList(calls)}` };
  const turns = [...new Set(named.map((c) => c.turn))].join(', ');
  return {
    holds: false,
    evidence: `${name} called ${named.length} time(s) ${scope} (turn ${turns}; first: ${jsonClip(named[0]!.call.input, 200)}); ${calledList(calls)}`,
  };
}

/**
 * Whether `skill` was activated in any turn (`want` true) or never (`want` false), with the
 * activations and the skills the engine listed as evidence. Shared by `expect` and the rules.
 */
export function skillInvoked(input: JudgeInput, skill: string, want: boolean): Check {
  const acts = input.transcript.turns.flatMap((t) => t.skillActivations.map((a) => ({ turn: t.index, a })));
  const hit = acts.find((x) => sameName(x.a.skill, skill));
  const listed = [...new Set(input.transcript.turns.flatMap((t) => t.skillsListed ?? []))];
  const context = `skills activated: ${nameList([...new Set(acts.map((x) => x.a.skill))])}${
    listed.length ? `; skills listed: ${nameList(listed)}` : ''
  }`;
  if (hit) {
    return { holds: want, evidence: `${skill} activated in turn ${hit.turn} via ${hit.a.via}; ${context}` };
  }
  return { holds: !want, evidence: `${skill} was not activated; ${context}` };
}

/** The status of turn `n` (1-based): the conversation's record, else derived from the transcript. */
function turnState(input: JudgeInput, n: number): { turn?: TranscriptTurn; status?: string } {
  const turn = input.transcript.turns.find((t) => t.index === n) ?? input.transcript.turns[n - 1];
  const recorded = input.turnStatus[n - 1];
  const status = recorded ?? (turn ? (turn.error ? 'error' : 'completed') : undefined);
  return { turn, status };
}

async function withTurn(input: JudgeInput, n: number, f: (t: TranscriptTurn) => Check | Promise<Check>): Promise<Check> {
  const { turn, status } = turnState(input, n);
  if (!turn) {
    return { holds: false, evidence: `turn ${n} does not exist (the transcript has ${input.transcript.turns.length} turn(s))` };
  }
  if (status !== 'completed') return { holds: false, evidence: `turn ${n} was not completed (status: ${status})` };
  return f(turn);
}
