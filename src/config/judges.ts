/**
 * `judge` / `judges` of eval.yaml and of a case → `JudgeSpec[]`, with the rules of
 * `rule_based` judges checked (regexes compile, turns exist, paths stay in the workspace).
 */
import path from 'node:path';
import type { AgentJudgeContext, AgentJudgeCriterion, AgentJudgeSpec, EngineConfig, JudgeSpec, Rule } from './types.js';
import { checkFolderSpecialFiles, checkFolderSymlinks, checkWorkspacePath, fileKind, skillPath } from './paths.js';
import { buildEngine, canonicalEngineName } from './engines.js';
import { nearest } from './schema-errors.js';
import { DiagnosticBag } from './diagnostics.js';
import { Field as FieldClass } from './yaml-source.js';
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
  agent_judge: ['id', 'type', 'model', 'criteria', 'pass_threshold', 'timeout_seconds', 'skills', 'context', 'engine', 'repeats'],
};

export const SCRIPT_TIMEOUT_DEFAULT = 30;
export const PASS_THRESHOLD_DEFAULT = 0.7;
/** Bytes each text material of an agent_judge's context keeps by default (alibaba/skill-up: 64 KiB). */
export const CONTEXT_MAX_BYTES_DEFAULT = 64 * 1024;
/** Most `repeats` of an agent_judge (independent grader runs per job). */
export const MAX_JUDGE_REPEATS = 25;
/** The criterion id form (alibaba/skill-up's judge id form). */
const CRITERION_ID = /^[a-z][a-z0-9_-]{0,63}$/;

export interface JudgeContext {
  skillDir: string;
  /** Where the judges are declared. */
  scope: 'eval' | 'case';
  /** Number of turns of the case, to check turn rules; undefined when unknown (eval level, broken input). */
  turnCount?: number;
  /** For a case: the names of the MCP servers it offers, to check the MCP rules' `server`; undefined at eval level (cases differ). */
  mcpServers?: readonly string[];
  /**
   * For a case: the eval-level `judge`. A case `agent_judge` that leaves `model`,
   * `pass_threshold` or `timeout_seconds` unset takes them from it when it is an
   * `agent_judge` too (alibaba/skill-up behaviour). Undefined for eval-level judges, whose
   * `agent_judge` may also leave `criteria` to the cases.
   */
  evalJudge?: Field;
  /** The suite's engines (`engine` + `engines`), which an agent_judge's `engine: <name>` names. */
  engines?: EngineConfig[];
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
    default:
      return withId(buildAgentJudge(field, ctx));
  }
}

/**
 * An `agent_judge` → AgentJudgeSpec. A case's agent_judge takes each field it leaves unset
 * (all but `criteria`) from the eval-level `judge` when that is an agent_judge too
 * (alibaba/skill-up behaviour); an inherited value is read quietly, since it was checked
 * (and its problems reported) where it is written.
 */
function buildAgentJudge(field: Field, ctx: JudgeContext): AgentJudgeSpec {
  if (ctx.scope === 'case' && !field.has('criteria')) {
    field.get('type').error('an `agent_judge` needs `criteria`: the statements the grader checks, e.g. `criteria: ["explains the bug"]`');
  }
  const base = ctx.evalJudge?.get('type').str() === 'agent_judge' ? ctx.evalJudge : undefined;
  const quiet = new DiagnosticBag();
  // Own fields report their problems; inherited ones are read through a bag nobody reads.
  const pick = (key: string): Field => (field.has(key) || !base?.has(key) ? field.get(key) : new FieldClass(base.src, quiet, [...base.segments, key], base.get(key).value));
  const timeout = pick('timeout_seconds');
  const spec: AgentJudgeSpec = {
    type: 'agent_judge',
    criteria: buildCriteria(field.get('criteria')),
    passThreshold: passThreshold(pick('pass_threshold')),
    timeoutSeconds: Math.max(0, checkTimeoutSeconds(timeout) ?? 0),
    repeats: buildRepeats(pick('repeats')),
    skills: buildGraderSkills(pick('skills'), ctx.skillDir),
    context: buildContext(pick('context'), ctx.skillDir),
  };
  const model = pick('model').str();
  if (model !== undefined) spec.model = model;
  const engineField = pick('engine');
  if (!engineField.missing) {
    const engine = graderEngine(engineField, ctx);
    if (engine) {
      spec.engine = engine;
      spec.engineFrom = typeof engineField.value === 'string' ? 'suite' : 'inline';
      const version = engineField.get('version');
      if (spec.engineFrom === 'inline' && engine.version !== undefined && !version.missing) {
        spec.engineVersionAt = { file: version.src.file, ...version.position(), path: version.path };
      }
    }
    // One scripted model server serves a run, with one script (src/run/model.ts).
    const other = (ctx.engines ?? []).find((e) => e.model.provider === 'scripted' && e.model.script !== undefined);
    if (engine?.model.provider === 'scripted' && other && engine.model.script !== other.model.script) {
      engineField.error(
        `the grader's scripted model uses another script than engine \`${other.displayName}\`; one scripted model server serves a run, so use the same \`model.script\` (its rules can tell the grader's requests apart)`,
      );
    }
  }
  return spec;
}

/** `pass_threshold` (the schema checks 0..1); 0 is accepted with a warning: every job passes, whatever the grader finds. */
function passThreshold(field: Field): number {
  const t = field.num();
  if (t === 0) field.warn('`pass_threshold: 0` passes every job whatever the grader finds (0 of N criteria is ≥ 0), so this judge cannot fail; use a fraction above 0 (default 0.7)');
  return t ?? PASS_THRESHOLD_DEFAULT;
}

/**
 * `criteria`: strings (ids `c1`, `c2`, … by position) or `{id, text}` maps; ids unique. Two
 * criteria with the same text (whitespace and case aside) are a warning: the grader checks the
 * same statement twice, which weighs it double against `pass_threshold`.
 */
function buildCriteria(field: Field): AgentJudgeCriterion[] {
  const out: AgentJudgeCriterion[] = [];
  const seen = new Map<string, Field>();
  const texts = new Map<string, { id: string; at: Field }>();
  for (const [i, item] of field.items().entries()) {
    let c: AgentJudgeCriterion | undefined;
    if (typeof item.value === 'string') c = { id: `c${i + 1}`, text: item.value };
    else if (item.isMap()) {
      const id = item.get('id').str();
      const text = item.get('text').str();
      // A bad id is the schema's to report (`pattern`); such a criterion is left out here.
      if (id !== undefined && text !== undefined && CRITERION_ID.test(id)) c = { id, text };
    }
    if (!c) continue; // the schema reports the shape
    const first = seen.get(c.id);
    if (first) {
      (item.isMap() ? item.get('id') : item).error(`duplicate criterion id \`${c.id}\`; also used at line ${first.position().line}${item.isMap() ? '' : ' (a plain criterion at position N gets the id `cN`)'}`);
      continue;
    }
    seen.set(c.id, item.isMap() ? item.get('id') : item);
    const key = c.text.trim().replace(/\s+/g, ' ').toLowerCase();
    const same = texts.get(key);
    if (same) {
      (item.isMap() ? item.get('text') : item).warn(
        `criterion \`${c.id}\` has the same text as criterion \`${same.id}\` (line ${same.at.position().line}): the grader checks it twice and it counts double against pass_threshold; remove one or make them differ`,
      );
    } else texts.set(key, { id: c.id, at: item.isMap() ? item.get('text') : item });
    out.push(c);
  }
  return out;
}

/** `repeats` (the schema checks 1..MAX_JUDGE_REPEATS): independent grader runs per job. */
function buildRepeats(field: Field): number {
  const n = field.int();
  return n !== undefined && n >= 1 && n <= MAX_JUDGE_REPEATS ? n : 1;
}

/** `skills`: skill folders (relative to the skill root, inside it) holding a SKILL.md, installed for the grader only. */
function buildGraderSkills(field: Field, skillDir: string): string[] {
  const out: string[] = [];
  for (const item of field.items()) {
    const abs = skillPath(item, skillDir, 'folder', 'grader skill');
    if (!abs) continue;
    if (fileKind(path.join(abs, 'SKILL.md')) !== 'file') {
      item.error(`grader skill \`${item.str()}\` has no SKILL.md; name a skill folder (the one holding SKILL.md), relative to the skill root`);
      continue;
    }
    if (!checkFolderSymlinks(item, abs, skillDir, 'grader skill') || !checkFolderSpecialFiles(item, abs, 'grader skill')) continue;
    out.push(abs);
  }
  return out;
}

/** The materials a profile gives unless a boolean says otherwise. */
const PROFILES: Record<AgentJudgeContext['profile'], Pick<AgentJudgeContext, 'finalMessage' | 'transcript' | 'workspaceDiff' | 'generatedFiles' | 'skillSource'>> = {
  standard: { finalMessage: true, transcript: true, workspaceDiff: true, generatedFiles: true, skillSource: true },
  minimal: { finalMessage: true, transcript: false, workspaceDiff: false, generatedFiles: true, skillSource: false },
};

/** `context` (alibaba/skill-up's shape; the schema checks types and ranges). */
function buildContext(field: Field, skillDir: string): AgentJudgeContext {
  const profile = field.get('profile').str() === 'minimal' ? 'minimal' : 'standard';
  const d = PROFILES[profile];
  const flag = (key: string, dflt: boolean) => field.get(key).bool() ?? dflt;
  const limits = field.get('limits');
  const ctx: AgentJudgeContext = {
    profile,
    finalMessage: flag('final_message', d.finalMessage),
    transcript: flag('transcript', d.transcript),
    workspaceDiff: flag('workspace_diff', d.workspaceDiff),
    generatedFiles: flag('generated_files', d.generatedFiles),
    skillSource: flag('skill_source', d.skillSource),
    limits: { maxBytes: limits.get('max_bytes').int() ?? CONTEXT_MAX_BYTES_DEFAULT },
    attachments: [],
  };
  const turns = limits.get('transcript_max_turns').int();
  const lines = limits.get('workspace_diff_max_lines').int();
  if (turns !== undefined) ctx.limits.transcriptMaxTurns = turns;
  if (lines !== undefined) ctx.limits.workspaceDiffMaxLines = lines;
  const labels = new Map<string, Field>();
  for (const item of field.get('attachments').items()) {
    const p = item.get('path');
    const rel = p.str();
    if (rel === undefined) continue;
    const found = fileKind(path.resolve(skillDir, rel));
    const abs = skillPath(p, skillDir, found === 'folder' ? 'folder' : 'file', 'attachment');
    if (!abs) continue;
    if (found === 'folder' && (!checkFolderSymlinks(p, abs, skillDir, 'attachment') || !checkFolderSpecialFiles(p, abs, 'attachment'))) continue;
    // Each attachment is copied to `attachments/<its base name>`: two with one name would collide.
    const name = path.basename(abs);
    const first = labels.get(name);
    if (first) {
      p.error(`attachment \`${rel}\` would be copied to \`attachments/${name}\`, as the attachment at line ${first.position().line} is; give the files different names`);
      continue;
    }
    labels.set(name, p);
    const label = item.get('label').str();
    ctx.attachments.push({ path: abs, ...(label !== undefined ? { label } : {}) });
  }
  return ctx;
}

/**
 * `engine` of an agent_judge: the name of one of the suite's engines (its whole config is
 * reused: version, model, custom settings), or an inline engine map of the same shape as an
 * `engines[]` item. Undefined (with the problem reported) when it names no engine.
 */
function graderEngine(field: Field, ctx: JudgeContext): EngineConfig | undefined {
  if (typeof field.value === 'string') {
    const name = field.value;
    const engines = ctx.engines ?? [];
    const canonical = canonicalEngineName(name);
    const found = engines.find((e) => e.displayName === name) ?? engines.find((e) => canonical !== undefined && e.name === canonical);
    if (found) return found;
    const names = engines.map((e) => e.displayName);
    const guess = nearest(name, names);
    const listed = names.length ? `the suite's engines are ${names.map((n) => `\`${n}\``).join(', ')}` : 'the suite defines no engine';
    field.error(
      `\`engine: ${name}\` names no engine of the suite${guess ? `; did you mean \`${guess}\`?` : ''} (${listed}); name one of them, or write the grader's engine as a map (e.g. \`engine: {name: ${canonical ?? 'claude_code'}, version: …, model: {…}}\`)`,
    );
    return undefined;
  }
  return buildEngine(field, ctx.skillDir);
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
  return parseRule(field, { turnCount: ctx.turnCount, ...(ctx.mcpServers ? { mcpServers: ctx.mcpServers } : {}), checkRegex, checkWorkspacePath: (p) => checkWorkspacePath(p, 'path') });
}
