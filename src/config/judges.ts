/**
 * `judge` / `judges` of eval.yaml and of a case → `JudgeSpec[]`, with the rules of
 * `rule_based` judges checked (regexes compile, turns exist, paths stay in the workspace).
 */
import type { JudgeSpec, Rule } from './types.js';
import { checkWorkspacePath, skillPath } from './paths.js';
import { checkRegex } from './patterns.js';
import { checkTimeoutSeconds } from './limits.js';
import { startProblem } from './custom.js';
import { accessSync, constants } from 'node:fs';
import type { Field } from './yaml-source.js';
import { parseRule } from '../judge/rules.js';

/** Keys each judge type uses; any other key of the flat judge schema is misplaced. */
const KEYS_BY_TYPE: Readonly<Record<string, readonly string[]>> = {
  rule_based: ['id', 'type', 'success', 'failure'],
  script: ['id', 'type', 'script_path', 'timeout_seconds'],
  agent_judge: ['id', 'type', 'model', 'criteria', 'pass_threshold', 'timeout_seconds', 'skills', 'context'],
};

export const SCRIPT_TIMEOUT_DEFAULT = 30;
export const PASS_THRESHOLD_DEFAULT = 0.7;

export interface JudgeContext {
  skillDir: string;
  /** Where the judges are declared. */
  scope: 'eval' | 'case';
  /** Number of turns of the case, to check turn rules; undefined when unknown (eval level, broken input). */
  turnCount?: number;
  /**
   * For a case: the eval-level `judge`. A case `agent_judge` that leaves `model`,
   * `pass_threshold` or `timeout_seconds` unset takes them from it when it is an
   * `agent_judge` too (alibaba/skill-up behaviour). Undefined for eval-level judges, whose
   * `agent_judge` may also leave `criteria` to the cases.
   */
  evalJudge?: Field;
}

/**
 * The judges declared on `owner` (an eval root or a case): `[judge]`, the `judges` list, or
 * undefined when neither is set (the case inherits). Both set is an error.
 */
export function buildJudges(owner: Field, ctx: JudgeContext): JudgeSpec[] | undefined {
  const single = owner.get('judge');
  const list = owner.get('judges');
  if (owner.has('judge') && owner.has('judges')) {
    list.error(
      `\`judge\` and \`judges\` are both set (\`judge\` at line ${single.position('key').line}); use \`judge\` for one judge or \`judges\` for several, not both`,
      'key',
    );
  }
  if (owner.has('judge')) {
    const j = buildJudge(single, ctx);
    return j ? [j] : [];
  }
  if (!owner.has('judges')) return undefined;
  const out: JudgeSpec[] = [];
  const ids = new Map<string, Field>();
  for (const item of list.items()) {
    if (item.isMap() && !item.has('id')) {
      item.error('every judge in `judges` needs an `id` (lowercase letters, digits, `_`, `-`), e.g. `id: style`', 'value');
    }
    const id = item.get('id').str();
    if (id !== undefined) {
      const first = ids.get(id);
      if (first) item.get('id').error(`duplicate judge id \`${id}\`; also used at line ${first.position().line}`);
      else ids.set(id, item.get('id'));
    }
    const j = buildJudge(item, ctx);
    if (j) out.push(j);
  }
  return out;
}

function buildJudge(field: Field, ctx: JudgeContext): JudgeSpec | undefined {
  const type = field.get('type').str();
  const allowed = type !== undefined ? KEYS_BY_TYPE[type] : undefined;
  if (!field.isMap() || !allowed) return undefined;
  for (const [key, child] of field.entries()) {
    if (allowed.includes(key)) continue;
    const owner = Object.keys(KEYS_BY_TYPE).filter((t) => KEYS_BY_TYPE[t]!.includes(key));
    if (owner.length === 0) continue; // not a judge key at all: the schema reports it
    child.error(`\`${key}\` is not a field of a \`${type}\` judge (it belongs to ${owner.map((t) => `\`${t}\``).join(' and ')}); fields of \`${type}\`: ${allowed.filter((k) => k !== 'id' && k !== 'type').map((k) => `\`${k}\``).join(', ')}`, 'key');
  }
  const id = field.get('id').str();
  const withId = <T extends object>(spec: T): T & { id?: string } => (id !== undefined ? { id, ...spec } : spec);
  switch (type) {
    case 'rule_based': {
      const success = field.get('success').items().map((r) => buildRule(r, ctx));
      const failure = field.get('failure').items().map((r) => buildRule(r, ctx));
      if (success.length === 0 && failure.length === 0) {
        field.get('type').warn('this `rule_based` judge has no `success` or `failure` rules, so it always passes');
      }
      return withId({ type: 'rule_based' as const, success: success.filter(isRule), failure: failure.filter(isRule) });
    }
    case 'script': {
      const scriptPath = field.get('script_path').missing ? undefined : skillPath(field.get('script_path'), ctx.skillDir, 'file', 'judge script');
      if (scriptPath) checkScriptStarts(field.get('script_path'), scriptPath);
      const t = checkTimeoutSeconds(field.get('timeout_seconds'));
      return withId({ type: 'script' as const, scriptPath: scriptPath ?? '', timeoutSeconds: t && t > 0 ? t : SCRIPT_TIMEOUT_DEFAULT });
    }
    default: {
      for (const key of ['skills', 'context']) {
        if (field.has(key)) field.get(key).warn(`\`${key}\` of an agent_judge is not supported yet; ignored`, 'key');
      }
      if (ctx.scope === 'case' && !field.has('criteria')) {
        field.get('type').error('an `agent_judge` needs `criteria`: the statements the grader checks, e.g. `criteria: ["explains the bug"]`');
      }
      // Unset fields come from an eval-level agent_judge, if there is one.
      const base = ctx.evalJudge?.get('type').str() === 'agent_judge' ? ctx.evalJudge : undefined;
      const pick = (key: string) => (field.has(key) ? field.get(key) : (base?.get(key) ?? field.get(key)));
      const spec: { type: 'agent_judge'; model?: string; criteria: string[]; passThreshold: number; timeoutSeconds: number } = {
        type: 'agent_judge',
        criteria: field.get('criteria').strings(),
        passThreshold: pick('pass_threshold').num() ?? PASS_THRESHOLD_DEFAULT,
        // An inherited value was checked where it is written (the eval-level judge).
        timeoutSeconds: Math.max(0, (field.has('timeout_seconds') ? checkTimeoutSeconds(field.get('timeout_seconds')) : pick('timeout_seconds').int()) ?? 0),
      };
      const model = pick('model').str();
      if (model !== undefined) spec.model = model;
      return withId(spec);
    }
  }
}

/**
 * An executable judge script is started directly, so the kernel must recognise it (a `#!` line
 * or a binary). A script without the executable bit is run with the interpreter of its
 * extension instead (`.py` python3, `.js` node, else bash) and needs neither.
 */
function checkScriptStarts(field: Field, abs: string): void {
  try {
    accessSync(abs, constants.X_OK);
  } catch {
    return;
  }
  const problem = startProblem(abs);
  if (problem) {
    field.error(
      `judge script \`${field.str()}\` ${problem}; add an interpreter line such as \`#!/usr/bin/env bash\` (or \`#!/usr/bin/env python3\`) as its first line, or remove its executable bit to have it run by the interpreter of its extension`,
    );
  }
}

function isRule(r: Rule | undefined): r is Rule {
  return r !== undefined;
}

/** One `success`/`failure` item → Rule (undefined when its shape is wrong; the schema reports it): the rule-kind table of src/judge/rules.ts. */
function buildRule(field: Field, ctx: JudgeContext): Rule | undefined {
  return parseRule(field, { turnCount: ctx.turnCount, checkRegex, checkWorkspacePath: (p) => checkWorkspacePath(p, 'path') });
}
