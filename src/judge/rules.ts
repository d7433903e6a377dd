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
import type { Field } from '../config/yaml-source.js';
import type { ToolCall, TranscriptTurn } from '../engine/types.js';
import { compileRegex } from '../util/regex.js';
import { argsMismatch } from './args.js';
import { mcpRuleText, mcpServerSchema, mcpToolCalled, mcpToolNotCalled, mcpToolSchema, parseMcpServer } from './mcp-rules.js';
import { around, jsonClip, nameList, q, qList } from './evidence.js';
import type { JudgeOutcome } from './outcome.js';
import { inspectPath } from './paths.js';
import type { Assertion, JudgeInput } from './types.js';
import { finalMessageText, searchText, turnText, withFullText, type Searched } from './text.js';
import { claimsVerifiedCheck, noSilentFailureCheck, noToolLoopCheck } from './behaviour/checks.js';
import { CLAIM_KINDS, DEFAULT_LOOP_REPEATS, type ClaimKind } from './behaviour/types.js';

/** A rule evaluated against a job: `holds` is whether its condition is true. */
export interface RuleResult {
  text: string;
  holds: boolean;
  evidence: string;
  /** The job's record cannot decide the rule (see {@link Check}); the judge is then an `error`. */
  unknown?: boolean;
}

/**
 * A rule's verdict with evidence. `unknown`: the job's record cannot decide it (e.g.
 * `no_silent_failure` on an engine that does not report shell exit statuses): the judge is then
 * an `error`, never a pass that did not look nor a fail that did not see.
 */
export type Check = { holds: boolean; evidence: string; unknown?: boolean };

/** Runs a `rule_based` judge over `input` (see module doc). Never throws. */
export async function runRuleJudge(spec: { success: Rule[]; failure: Rule[] }, input: JudgeInput): Promise<JudgeOutcome> {
  if (spec.success.length === 0 && spec.failure.length === 0) {
    return {
      status: 'pass',
      assertions: [{ text: 'rule_based: no rules', passed: true, evidence: 'no success or failure rules declared (vacuous pass)' }],
    };
  }
  const failures = await Promise.all(spec.failure.map((r) => evaluateRule(r, input)));
  const successes = await Promise.all(spec.success.map((r) => evaluateRule(r, input)));
  const unknown = [...failures, ...successes].filter((r) => r.unknown);
  if (unknown.length > 0) {
    return {
      status: 'error',
      assertions: unknown.map((u) => ({ text: u.text, passed: false, evidence: u.evidence })),
      reason: `cannot be checked on this job: ${unknown.map((u) => `${u.text}: ${u.evidence}`).join('; ')}`,
    };
  }
  const matched = failures.filter((f) => f.holds);
  if (matched.length > 0) {
    return {
      status: 'fail',
      assertions: matched.map((f) => ({ text: `failure: ${f.text}`, passed: false, evidence: f.evidence })),
      reason: `failure rule matched: ${matched.map((f) => f.text).join('; ')}`,
    };
  }
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
  // In the table's order (the order of `Rule`'s fields).
  for (const [field, kind] of Object.entries(RULE_KINDS) as [keyof Rule, RuleKind<unknown>][]) {
    const value = rule[field];
    if (value !== undefined) parts.push(await kind.evaluate(value, input));
  }
  if (parts.length === 0) return { text: 'rule: (no recognised kind)', holds: false, evidence: 'the rule sets no known rule kind' };
  const unknown = parts.some((p) => p.check.unknown) ? { unknown: true as const } : {};
  if (parts.length === 1) return { text: parts[0]!.text, holds: parts[0]!.check.holds, evidence: parts[0]!.check.evidence, ...unknown };
  return {
    text: parts.map((p) => p.text).join(' & '),
    holds: parts.every((p) => p.check.holds),
    evidence: parts.map((p) => `${p.text}: ${p.check.evidence}`).join('; '),
    ...unknown,
  };
}

/** What a rule kind's `parse` may use from config loading (src/config/judges.ts). */
export interface RuleParseContext {
  /** Number of turns of the case; undefined when unknown (eval level, broken input). */
  turnCount?: number;
  /** Reports a pattern that does not compile (RE2 syntax) at its field. */
  checkRegex(pattern: Field): void;
  /** Reports a path that leaves the workspace at its field. */
  checkWorkspacePath(path: Field): void;
  /**
   * Names of the MCP servers the case offers (eval.yaml's and its own `mcp.servers`); when set, an
   * MCP rule naming another server is a config error. Undefined when unknown (eval level).
   */
  mcpServers?: readonly string[];
}

/**
 * One rule kind, in one place: its YAML key, its JSON Schema fragment (a test keeps
 * `schemas/case.schema.json` `$defs.rule.properties` equal to the table's), how config reads
 * it into its `Rule` field, and how it judges a job.
 */
export interface RuleKind<V> {
  /** The key in YAML, e.g. `output_contains`. */
  key: string;
  /** The schema of the value under `key`. */
  schema: Record<string, unknown>;
  /** The YAML value → the `Rule` field's value; undefined when its shape is wrong (the schema reports it). */
  parse(value: Field, ctx: RuleParseContext): V | undefined;
  /** The rule's text for reports and whether it holds, with evidence. Never throws. */
  evaluate(value: V, input: JudgeInput): Promise<{ text: string; check: Check }>;
}

type TextLists = { all?: string[]; any?: string[]; not?: string[] };

const textLists = (f: Field): TextLists => {
  const out: TextLists = {};
  for (const k of ['all', 'any', 'not'] as const) if (f.has(k)) out[k] = f.get(k).strings();
  return out;
};
const turnOf = (f: Field, ctx: RuleParseContext): number => {
  const n = f.get('turn').int() ?? 1;
  if (ctx.turnCount !== undefined && n > ctx.turnCount) {
    f.get('turn').error(`turn ${n} does not exist: this case has ${ctx.turnCount} turn${ctx.turnCount === 1 ? '' : 's'}`);
  }
  return n;
};
const argsOf = (f: Field): { args?: Record<string, unknown> } => (f.get('args').isMap() ? { args: f.get('args').value as Record<string, unknown> } : {});
const callsOf = (input: JudgeInput): LocatedCall[] => input.transcript.turns.flatMap((t) => t.toolCalls.map((c) => ({ turn: t.index, call: c })));
const turnCalls = (t: TranscriptTurn): LocatedCall[] => t.toolCalls.map((c) => ({ turn: t.index, call: c }));
const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
const described = (description: string, schema: Record<string, unknown>) => ({ description, ...schema });
const turnObject = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required, properties: { turn: ref('turnNumber'), ...properties } });
const toolNameSchema = { type: 'string', minLength: 1, description: 'Tool name as the engine reports it.' };
/**
 * A rule must check something: an `all`/`any`/`not` map with no list (`{}`) would hold for every
 * answer, or fail every trial as a failure rule. Each list is a `ruleStrings` (at least one
 * non-empty string); `x-messages` words the failure (src/config/schema-errors.ts).
 */
const textMatch = (key: string, what: string) => ({
  ...ref('textMatch'),
  minProperties: 1,
  'x-messages': { minProperties: `\`${key}\` needs at least one non-empty ${what} under \`all\`, \`any\` or \`not\`` },
});
/** A rule's path list: at least one path (an empty list checks nothing). */
const rulePaths = (key: string) => ({ ...ref('pathList'), minItems: 1, 'x-messages': { minItems: `\`${key}\` needs at least one path` } });

/**
 * Every rule kind, keyed by its `Rule` field (the mapped type makes the compiler check that
 * each field of `Rule` has exactly one kind whose parse and evaluate agree with its type).
 * The judge, config loading and the schema's rule part derive from it.
 */
export const RULE_KINDS: { readonly [F in keyof Rule]-?: RuleKind<NonNullable<Rule[F]>> } = {
  outputContains: {
    key: 'output_contains',
    schema: described('Substrings of the final answer.', textMatch('output_contains', 'string')),
    parse: (v) => textLists(v),
    evaluate: async (l, input) => ({ text: `output_contains ${describeLists(l)}`, check: outputContains(await searchText(finalMessageText(input), needles(l)), l) }),
  },
  outputMatches: {
    key: 'output_matches',
    schema: described('Go (RE2) regular expressions matched against the final answer.', textMatch('output_matches', 'pattern')),
    parse: (v, ctx) => {
      for (const k of ['all', 'any', 'not']) v.get(k).items().forEach((p) => ctx.checkRegex(p));
      return textLists(v);
    },
    evaluate: async (l, input) => ({ text: `output_matches ${describeLists(l)}`, check: await withFullText(finalMessageText(input), (text) => outputMatches(text, l)) }),
  },
  exitCode: {
    key: 'exit_code',
    schema: { description: "The engine's exit code.", 'x-expected': 'a whole number', type: 'integer' },
    parse: (v) => v.int(),
    evaluate: async (code, input) => ({ text: `exit_code: ${code}`, check: { holds: input.exitCode === code, evidence: `actual exit code: ${input.exitCode}` } }),
  },
  filesExist: {
    key: 'files_exist',
    schema: described('Workspace-relative paths that must exist.', rulePaths('files_exist')),
    parse: (v, ctx) => {
      // An empty path is the schema's to report (once).
      v.items().filter((p) => p.str() !== '').forEach((p) => ctx.checkWorkspacePath(p));
      return v.strings();
    },
    evaluate: async (paths, input) => ({ text: `files_exist: ${qList(paths)}`, check: await filesCheck(input.workspace, paths, true) }),
  },
  filesNotExist: {
    key: 'files_not_exist',
    schema: described('Workspace-relative paths that must not exist.', rulePaths('files_not_exist')),
    parse: (v, ctx) => {
      // An empty path is the schema's to report (once).
      v.items().filter((p) => p.str() !== '').forEach((p) => ctx.checkWorkspacePath(p));
      return v.strings();
    },
    evaluate: async (paths, input) => ({ text: `files_not_exist: ${qList(paths)}`, check: await filesCheck(input.workspace, paths, false) }),
  },
  toolCalled: {
    key: 'tool_called',
    schema: described('A tool the agent called, with a subset of its arguments.', ref('toolMatch')),
    parse: (v) => ({ name: v.get('name').str() ?? '', ...argsOf(v) }),
    evaluate: async ({ name, args }, input) => ({
      text: `tool_called: ${name}${hasArgs(args) ? ` ${jsonClip(args, 160)}` : ''}`,
      check: toolCalled(callsOf(input), name, args, 'in any turn'),
    }),
  },
  toolNotCalled: {
    key: 'tool_not_called',
    schema: described('A tool the agent never called.', ref('toolName')),
    parse: (v) => ({ name: v.get('name').str() ?? '' }),
    evaluate: async ({ name }, input) => ({ text: `tool_not_called: ${name}`, check: toolNotCalled(callsOf(input), name, 'in any turn') }),
  },
  skillInvoked: {
    key: 'skill_invoked',
    schema: { description: 'A skill the agent used.', type: 'string', minLength: 1 },
    parse: (v) => v.str() ?? '',
    evaluate: async (skill, input) => ({ text: `skill_invoked: ${skill}`, check: skillInvoked(input, skill, true) }),
  },
  skillNotInvoked: {
    key: 'skill_not_invoked',
    schema: { description: 'A skill the agent did not use.', type: 'string', minLength: 1 },
    parse: (v) => v.str() ?? '',
    evaluate: async (skill, input) => ({ text: `skill_not_invoked: ${skill}`, check: skillInvoked(input, skill, false) }),
  },
  turnResponseContains: {
    key: 'turn_response_contains',
    schema: described(
      "Substrings of one turn's answer.",
      {
        ...turnObject(['turn'], {
          contains_all: { ...ref('ruleStrings'), description: "Every string must appear in that turn's answer." },
          contains_any: { ...ref('ruleStrings'), description: "At least one string must appear in that turn's answer." },
        }),
        // `turn` and at least one list: `{turn: 1}` alone checks nothing.
        minProperties: 2,
        'x-messages': { minProperties: '`turn_response_contains` needs `contains_all` or `contains_any` with at least one non-empty string' },
      },
    ),
    parse: (v, ctx) => {
      const r: { turn: number; containsAll?: string[]; containsAny?: string[] } = { turn: turnOf(v, ctx) };
      if (v.has('contains_all')) r.containsAll = v.get('contains_all').strings();
      if (v.has('contains_any')) r.containsAny = v.get('contains_any').strings();
      return r;
    },
    evaluate: async (r, input) => {
      const lists: string[] = [];
      if (r.containsAll?.length) lists.push(`contains_all: ${qList(r.containsAll)}`);
      if (r.containsAny?.length) lists.push(`contains_any: ${qList(r.containsAny)}`);
      return {
        text: `turn_response_contains {turn: ${r.turn}${lists.length ? `, ${lists.join(', ')}` : ''}}`,
        check: await withTurn(input, r.turn, async (t) => {
          const l = { all: r.containsAll, any: r.containsAny };
          return outputContains(await searchText(turnText(t, input.jobDir), needles(l)), l, `turn ${r.turn} response`);
        }),
      };
    },
  },
  turnResponseNotContains: {
    key: 'turn_response_not_contains',
    schema: described(
      "Substrings that must not appear in one turn's answer.",
      turnObject(['turn', 'not_contains'], { not_contains: { ...ref('ruleStrings'), description: "No string may appear in that turn's answer." } }),
    ),
    parse: (v, ctx) => ({ turn: turnOf(v, ctx), notContains: v.get('not_contains').strings() }),
    evaluate: async (r, input) => ({
      text: `turn_response_not_contains {turn: ${r.turn}, not_contains: ${qList(r.notContains)}}`,
      check: await withTurn(input, r.turn, async (t) => outputContains(await searchText(turnText(t, input.jobDir), r.notContains), { not: r.notContains }, `turn ${r.turn} response`)),
    }),
  },
  toolCalledInTurn: {
    key: 'tool_called_in_turn',
    schema: described('A tool called during one turn.', turnObject(['turn', 'name'], { name: toolNameSchema, args: ref('toolArgs') })),
    parse: (v, ctx) => ({ turn: turnOf(v, ctx), name: v.get('name').str() ?? '', ...argsOf(v) }),
    evaluate: async (r, input) => ({
      text: `tool_called_in_turn {turn: ${r.turn}, name: ${r.name}${hasArgs(r.args) ? `, args: ${jsonClip(r.args, 160)}` : ''}}`,
      check: await withTurn(input, r.turn, (t) => toolCalled(turnCalls(t), r.name, r.args, `in turn ${r.turn}`)),
    }),
  },
  toolNotCalledInTurn: {
    key: 'tool_not_called_in_turn',
    schema: described('A tool not called during one turn.', turnObject(['turn', 'name'], { name: toolNameSchema })),
    parse: (v, ctx) => ({ turn: turnOf(v, ctx), name: v.get('name').str() ?? '' }),
    evaluate: async (r, input) => ({
      text: `tool_not_called_in_turn {turn: ${r.turn}, name: ${r.name}}`,
      check: await withTurn(input, r.turn, (t) => toolNotCalled(turnCalls(t), r.name, `in turn ${r.turn}`)),
    }),
  },
  mcpToolCalled: {
    key: 'mcp_tool_called',
    schema: described(
      "A call of an MCP server's tool (any of its tools when `tool` is left out) in any turn, with a subset of its arguments; the transcript names it `mcp__<server>__<tool>` on every engine.",
      { type: 'object', additionalProperties: false, required: ['server'], properties: { server: mcpServerSchema, tool: mcpToolSchema, args: ref('toolArgs') } },
    ),
    parse: (v, ctx) => {
      const tool = v.get('tool').str();
      return { server: parseMcpServer(v, 'mcp_tool_called', ctx.mcpServers), ...(tool !== undefined ? { tool } : {}), ...argsOf(v) };
    },
    evaluate: async (r, input) => ({ text: mcpRuleText('mcp_tool_called', r), check: mcpToolCalled(callsOf(input), r, r.args) }),
  },
  mcpToolNotCalled: {
    key: 'mcp_tool_not_called',
    schema: described(
      "No call of an MCP server's tool (of any of its tools when `tool` is left out) in any turn.",
      { type: 'object', additionalProperties: false, required: ['server'], properties: { server: mcpServerSchema, tool: mcpToolSchema } },
    ),
    parse: (v, ctx) => {
      const tool = v.get('tool').str();
      return { server: parseMcpServer(v, 'mcp_tool_not_called', ctx.mcpServers), ...(tool !== undefined ? { tool } : {}) };
    },
    evaluate: async (r, input) => ({ text: mcpRuleText('mcp_tool_not_called', r), check: mcpToolNotCalled(callsOf(input), r) }),
  },
  claimsVerified: {
    key: 'claims_verified',
    schema: behaviourSchema(
      'Every claim the answers make holds: files said to be created or changed were added or modified, files said to be deleted were deleted, "tests pass" matches a test command that ran and succeeded (src/judge/behaviour/claims.ts). No claim at all holds.',
      '`true`, or a map `{kinds: [...]}`',
      {
        kinds: {
          description: 'Only claims of these kinds (default: all).',
          type: 'array',
          minItems: 1,
          uniqueItems: true,
          items: { enum: [...CLAIM_KINDS] },
          'x-messages': { minItems: '`kinds` needs at least one claim kind (file_created, file_changed, file_deleted, tests_pass), or leave it out for all' },
        },
      },
    ),
    parse: (v) => (behaviourOn(v, 'claims_verified') ? (v.has('kinds') ? { kinds: v.get('kinds').strings() as ClaimKind[] } : {}) : undefined),
    evaluate: async (r, input) => ({ text: `claims_verified${r.kinds ? ` {kinds: ${qList(r.kinds)}}` : ''}`, check: claimsVerifiedCheck(input, r.kinds) }),
  },
  noToolLoop: {
    key: 'no_tool_loop',
    schema: behaviourSchema(
      'No tool is called with the same input `max_repeats` or more times in a row within a turn (src/judge/behaviour/loops.ts).',
      '`true`, or a map `{max_repeats: N}`',
      {
        max_repeats: {
          description: `Consecutive identical calls that make a loop (default ${DEFAULT_LOOP_REPEATS}).`,
          'x-expected': 'a whole number from 2 to 10000',
          type: 'integer',
          minimum: 2,
          maximum: 10000,
        },
      },
    ),
    parse: (v) => (behaviourOn(v, 'no_tool_loop') ? { maxRepeats: v.get('max_repeats').int() ?? DEFAULT_LOOP_REPEATS } : undefined),
    evaluate: async (r, input) => ({ text: `no_tool_loop {max_repeats: ${r.maxRepeats}}`, check: noToolLoopCheck(input, r.maxRepeats) }),
  },
  noSilentFailure: {
    key: 'no_silent_failure',
    schema: behaviourSchema(
      'Every failed tool call and engine error is acknowledged by an answer from its turn on (src/judge/behaviour/silent.ts lists the words looked for).',
      '`true` or `{}`',
      {},
    ),
    parse: (v) => (behaviourOn(v, 'no_silent_failure') ? { enabled: true as const } : undefined),
    evaluate: async (_r, input) => ({ text: 'no_silent_failure', check: noSilentFailureCheck(input) }),
  },
};

/** A behaviour rule kind's schema: `true`, or a map of its options. */
function behaviourSchema(description: string, expected: string, properties: Record<string, unknown>): Record<string, unknown> {
  return { description, 'x-expected': expected, type: ['boolean', 'object'], additionalProperties: false, properties };
}

/** Whether a behaviour rule is on: `true` or a map; `false` checks nothing and is reported at its value. */
function behaviourOn(v: Field, key: string): boolean {
  if (v.isMap()) return true;
  const b = v.bool();
  if (b === false) v.error(`\`${key}: false\` checks nothing: remove the rule, or write \`${key}: true\``);
  return b === true;
}

/**
 * One `success`/`failure` item of a `rule_based` judge → `Rule`, through {@link RULE_KINDS}
 * (undefined when its shape is wrong: not one key, an unknown kind; the schema reports it).
 */
export function parseRule(field: Field, ctx: RuleParseContext): Rule | undefined {
  const entries = field.entries();
  if (entries.length !== 1) return undefined;
  const [key, v] = entries[0]!;
  for (const [name, kind] of Object.entries(RULE_KINDS) as [keyof Rule, RuleKind<unknown>][]) {
    if (kind.key !== key) continue;
    const value = kind.parse(v, ctx);
    return value === undefined ? undefined : ({ [name]: value });
  }
  return undefined;
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
