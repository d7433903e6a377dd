/**
 * One case (a case file, or an item of `cases.inline`) → `CaseSpec`, with `cases.defaults`
 * and the eval-level judges applied. Problems are reported at their place; the spec is built
 * anyway so every problem of a suite is found in one pass.
 */
import path from 'node:path';
import type { CaseContext, CaseSpec, EngineConfig, ExpectSpec, JudgeSpec, PostCondition, TurnSpec } from './types.js';
import { canonicalEngineName, unknownEngineMessage } from './engines.js';
import { buildExpect, mergeExpect, unique } from './expect.js';
import { buildJudges } from './judges.js';
import { checkArtifactGlob, checkFolderSpecialFiles, checkFolderSymlinks, checkWorkspaceFileNames, skillPath } from './paths.js';
import { checkCapturePattern } from './patterns.js';
import { checkTimeoutSeconds, reservedCaseIdProblem } from './limits.js';
import { literalBracesHint, turnVariables } from './turn-template.js';
import { buildMcpServers, declaredMcpServerNames, mergeMcpServers, type McpServerSpec } from './mcp.js';
import type { Field } from './yaml-source.js';

export const DEFAULT_TIMEOUT_SECONDS = 300;
export const DEFAULT_MAX_TURNS = 10;

/** What every case inherits from eval.yaml. */
export interface CaseDefaults {
  skillDir: string;
  /** `cases.defaults.timeout_seconds` (0 = unset). */
  timeoutSeconds: number;
  /** `cases.defaults.max_turns` (0 = unset). */
  maxTurns: number;
  collectArtifacts: string[];
  expect: ExpectSpec;
  /** `cases.defaults.trials` ?? eval-level `trials` ?? 1. */
  trials: number;
  judges: JudgeSpec[];
  /** The eval-level `judge` (singular), whose agent_judge settings a case agent_judge inherits. */
  evalJudge?: Field;
  /** Names of the suite's custom engines as written (a case may name them in `engines`). */
  customEngineNames: ReadonlySet<string>;
  /** The suite's engines, which an agent_judge's `engine: <name>` names (src/config/judges.ts). */
  engines?: EngineConfig[];
  /** eval.yaml `user_simulator` when set: `respond` turns and a case's scenario need it. */
  userSimulator?: Field;
  /** eval.yaml `mcp.servers` (a case's own merge in by name). */
  mcpServers?: McpServerSpec[];
  /** The server names eval.yaml declares, those with a problem included (src/config/mcp.ts declaredMcpServerNames). */
  mcpDeclared?: string[];
  /** Why no job of this suite can be offered MCP servers (`environment.type: docker`): a case's `mcp` is an error. */
  mcpRefusal?: string;
}

/** Builds the case at `field`; `file` is where it was read from, `fallbackId` its file name. */
export function buildCase(field: Field, file: string, fallbackId: string | undefined, d: CaseDefaults): CaseSpec {
  const idField = field.get('id');
  let id = idField.str();
  if (id === undefined && !field.has('id')) {
    if (fallbackId === undefined) {
      field.error('an inline case needs an `id`', field.segments.length > 0 ? 'value' : 'key');
    } else if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(fallbackId)) {
      field.error(`the case id defaults to the file name \`${fallbackId}\`, which is not a valid id (letters, digits, \`_\`, \`-\` and \`.\`); rename the file or set \`id\``);
    }
    id = fallbackId;
  }
  const reserved = id !== undefined ? reservedCaseIdProblem(id) : undefined;
  if (reserved) {
    if (field.has('id')) idField.error(reserved);
    else field.error(`${reserved}; the id is taken from the file name: rename the file or set \`id\``, field.segments.length > 0 ? 'value' : 'key');
  }

  const input = field.get('input');
  const turns = buildTurns(input, d.userSimulator);
  const userSimulator = caseSimulator(field, input, d.userSimulator);
  const constraints = field.get('constraints');
  const maxTurns = pickPositive(constraints.get('max_turns').int(), d.maxTurns, DEFAULT_MAX_TURNS);
  // Turn numbers in rules are only checked against a well-formed input; an autonomous case may run up to max_turns.
  const turnCount = input.has('prompt') !== input.has('turns') ? (userSimulator?.autonomous ? maxTurns : turns.length) : undefined;
  const own = buildExpect(field.get('expect'), d.skillDir);
  const artifacts = field.get('collect_artifacts');
  artifacts.items().forEach((a) => checkArtifactGlob(a));

  const trigger = triggerOf(field);
  // Before the judges: an MCP rule naming a server this case does not offer is an error at its line.
  const ownMcp = buildMcpServers(field, d.skillDir);
  if (ownMcp.length && d.mcpRefusal) field.get('mcp').error(d.mcpRefusal, 'key');
  const mcp = mergeMcpServers(d.mcpServers ?? [], ownMcp);
  const spec: CaseSpec = {
    id: id ?? '',
    file,
    // A case file is the case (line 1); an inline case starts at its `cases.inline` item.
    line: field.segments.length === 0 ? 1 : field.position('value').line,
    tags: unique([...(field.get('tag').str() ? [field.get('tag').str()!] : []), ...field.get('tags').strings()]),
    turns,
    context: buildContext(field.get('context'), d.skillDir),
    timeoutSeconds: pickTimeout(checkTimeoutSeconds(constraints.get('timeout_seconds'), true), d.timeoutSeconds),
    maxTurns,
    trials: field.get('trials').int() ?? d.trials,
    // A trigger case is graded on activation alone: it inherits neither `cases.defaults.expect` nor the eval-level judges.
    expect: trigger !== undefined ? own : mergeExpect(d.expect, own),
    judges: trigger !== undefined ? [] : (buildJudges(field, { skillDir: d.skillDir, scope: 'case', mcpServers: [...new Set([...(d.mcpDeclared ?? []), ...declaredMcpServerNames(field)])], ...(turnCount ? { turnCount } : {}), ...(d.evalJudge ? { evalJudge: d.evalJudge } : {}), ...(d.engines ? { engines: d.engines } : {}) }) ?? d.judges),
    collectArtifacts: unique([...d.collectArtifacts, ...artifacts.strings()]),
  };
  const title = field.get('title').str();
  const description = field.get('description').str();
  if (title !== undefined) spec.title = title;
  if (description !== undefined) spec.description = description;
  if (field.has('engines')) spec.engines = caseEngines(field.get('engines'), d.customEngineNames);
  if (trigger !== undefined) spec.shouldTrigger = trigger;
  if (userSimulator) spec.userSimulator = userSimulator;
  if (mcp.length) spec.mcpServers = mcp;
  return spec;
}

/** Where a simulator is missing: eval.yaml `user_simulator` is the model connection `respond` turns and scenarios use. */
const NO_SIMULATOR = 'needs a user simulator: set eval.yaml `user_simulator: { provider, protocol, model }` (`provider: scripted` answers from the suite\'s model script)';

/**
 * The case's `user_simulator: { scenario }` → CaseSpec.userSimulator, refused at its key
 * without an eval.yaml `user_simulator`. With `input.prompt` the case is autonomous.
 */
function caseSimulator(field: Field, input: Field, evalSimulator: Field | undefined): CaseSpec['userSimulator'] {
  const f = field.get('user_simulator');
  if (!f.isMap() || !f.has('scenario')) return undefined;
  if (!evalSimulator) {
    f.get('scenario').error(`a scenario ${NO_SIMULATOR}`, 'key');
    return undefined;
  }
  const scenario = f.get('scenario').str() ?? '';
  return { scenario, autonomous: input.isMap() && input.has('prompt') && !input.has('turns') };
}

/** What a trigger case may not have: it judges only whether the skill was activated. */
const NOT_IN_TRIGGER_CASE = ['expect', 'judge', 'judges'] as const;

/**
 * `should_trigger` of a case (the schema checks it is a boolean), refusing at its key each
 * field that would grade something else: a trigger case passes iff the skill's activation
 * equals `should_trigger`, so an `expect` or a judge there would be accepted and never acted on.
 */
function triggerOf(field: Field): boolean | undefined {
  const value = field.get('should_trigger').bool();
  if (value === undefined) return undefined;
  for (const key of NOT_IN_TRIGGER_CASE) {
    if (field.has(key)) {
      field.get(key).error(
        `a trigger case (\`should_trigger: ${value}\`) is graded only on whether the skill was activated, so \`${key}\` would never be checked; remove \`${key}\`, or remove \`should_trigger\` to grade the answer`,
        'key',
      );
    }
  }
  return value;
}

/** Timeout rule: a set value wins; `0` means "use the default"; `-1` means no deadline. */
function pickTimeout(own: number | undefined, defaults: number): number {
  if (own !== undefined && own !== 0) return own;
  if (defaults !== 0) return defaults;
  return DEFAULT_TIMEOUT_SECONDS;
}

function pickPositive(own: number | undefined, defaults: number, fallback: number): number {
  if (own !== undefined && own > 0) return own;
  return defaults > 0 ? defaults : fallback;
}

/** `input.prompt` or `input.turns` → turns, checking the XOR and each turn. */
function buildTurns(input: Field, evalSimulator: Field | undefined): TurnSpec[] {
  if (!input.isMap()) return [];
  const hasPrompt = input.has('prompt');
  const hasTurns = input.has('turns');
  if (hasPrompt && hasTurns) {
    input.get('turns').error(
      `\`input.prompt\` (line ${input.get('prompt').position('key').line}) and \`input.turns\` are both set; use \`prompt\` for a single message or \`turns\` for a conversation, not both`,
      'key',
    );
  } else if (!hasPrompt && !hasTurns) {
    input.error('`input` needs `prompt` (one message) or `turns` (a conversation)', 'key');
  }
  if (hasPrompt || !hasTurns) {
    const prompt = input.get('prompt').str();
    // A single message has no earlier turn: any `{{name}}` in it would make every job an error.
    for (const ref of prompt !== undefined && !hasTurns ? turnVariables(prompt) : []) {
      input.get('prompt').error(
        `\`{{${ref.name}}}\` is not captured by an earlier turn: \`input.prompt\` is a single message, so nothing can fill it in; ${literalBracesHint(ref)}`,
      );
    }
    return prompt !== undefined ? [{ content: prompt, capture: [] }] : [];
  }
  const captured = new Set<string>();
  const turns: TurnSpec[] = [];
  for (const t of input.get('turns').items()) {
    if (!t.isMap()) continue;
    const respond = t.get('respond');
    if (t.has('respond') && t.has('content')) {
      respond.error(`a turn takes \`content\` (line ${t.get('content').position('key').line}, the message as written) or \`respond\` (the simulator writes it), not both`, 'key');
    } else if (respond.value === false) {
      respond.error('`respond: false` sends nothing: write the message in `content`, or give the simulator an instruction (`respond: <text>` or `respond: true`)');
    } else if (t.has('respond') && !evalSimulator) {
      respond.error(`a \`respond\` turn ${NO_SIMULATOR}`, 'key');
    } else if (!t.has('respond') && !t.has('content')) {
      t.error('a turn needs `content` (the user message) or `respond` (an instruction to the user simulator)', 'value');
    }
    const content = t.get('content').str() ?? '';
    // `respond: <instruction>` or `respond: true` (the scenario alone); the schema refuses anything else.
    const instruction = typeof respond.value === 'string' ? respond.value : respond.value === true ? '' : undefined;
    const templated = instruction !== undefined && !t.has('content') ? respond : t.get('content');
    for (const ref of turnVariables(templated.str() ?? '')) {
      if (!captured.has(ref.name)) {
        templated.error(
          `\`{{${ref.name}}}\` is not captured by an earlier turn (\`capture: [{variable: ${ref.name}, pattern: …}]\`), so it cannot be filled in; ${literalBracesHint(ref)}`,
        );
      }
    }
    const turn: TurnSpec = { content, capture: [] };
    if (instruction !== undefined && !t.has('content')) turn.respond = instruction;
    for (const c of t.get('capture').items()) {
      const variable = c.get('variable').str();
      const hasPattern = c.has('pattern');
      const hasJsonpath = c.has('jsonpath');
      if (hasPattern && hasJsonpath) c.get('jsonpath').error('a capture takes `pattern` or `jsonpath`, not both', 'key');
      else if (!hasPattern && !hasJsonpath && c.isMap()) c.error('a capture needs `pattern` (a regular expression) or `jsonpath`', 'value');
      if (hasPattern) checkCapturePattern(c.get('pattern'));
      if (variable === undefined) continue;
      captured.add(variable);
      const capture: TurnSpec['capture'][number] = { variable };
      const pattern = c.get('pattern').str();
      const jsonpath = c.get('jsonpath').str();
      if (pattern !== undefined) capture.pattern = pattern;
      if (jsonpath !== undefined) capture.jsonpath = jsonpath;
      turn.capture.push(capture);
    }
    const pc = t.get('post_condition');
    if (pc.isMap()) turn.postCondition = buildPostCondition(pc);
    const timeout = checkTimeoutSeconds(t.get('timeout_seconds'));
    if (timeout !== undefined) turn.timeoutSeconds = timeout;
    turns.push(turn);
  }
  return turns;
}

function buildPostCondition(f: Field): PostCondition {
  return {
    mustContainAll: f.get('must_contain_all').strings(),
    mustContainAny: f.get('must_contain_any').strings(),
    mustNotContain: f.get('must_not_contain').strings(),
    onFail: f.get('on_fail').str() === 'skip_remaining' ? 'skip_remaining' : 'fail',
  };
}

function buildContext(f: Field, skillDir: string): CaseContext {
  const context: CaseContext = { files: {} };
  if (!f.isMap()) return context;
  if (!f.get('repo_fixture').missing) {
    const fixture = skillPath(f.get('repo_fixture'), skillDir, 'folder', 'repo fixture');
    // Its files are copied into every workspace: a link out of the skill folder would hand the agent that file.
    if (fixture && checkFolderSymlinks(f.get('repo_fixture'), fixture, skillDir, 'repo fixture') && checkFolderSpecialFiles(f.get('repo_fixture'), fixture, 'repo fixture')) {
      context.repoFixture = fixture;
    }
  }
  checkWorkspaceFileNames(f.get('files'));
  for (const [name, content] of f.get('files').entries()) {
    if (typeof content.value === 'string') context.files[name] = content.value;
  }
  const git = f.get('git');
  if (git.isMap()) {
    context.git = {
      init: git.get('init').bool() ?? false,
      remotes: git
        .get('remotes')
        .items()
        .map((r) => ({ name: r.get('name').str() ?? '', url: r.get('url').str() ?? '' })),
    };
    const checkout = git.get('checkout').str();
    if (checkout !== undefined) context.git.checkout = checkout;
    if (!git.get('apply_diff').missing) {
      const diff = skillPath(git.get('apply_diff'), skillDir, 'file', 'patch');
      if (diff) context.git.applyDiff = diff;
    }
  }
  return context;
}

/** `engines` of a case → canonical names (`custom` for the suite's custom engine). */
function caseEngines(f: Field, customNames: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const item of f.items()) {
    const name = item.str();
    if (name === undefined) continue;
    const canonical = canonicalEngineName(name) ?? (customNames.has(name) || name === 'custom' ? 'custom' : undefined);
    if (!canonical) {
      item.error(unknownEngineMessage(name));
      continue;
    }
    out.push(canonical);
  }
  return unique(out);
}

/** The case id a file gets when it sets none: its name without `.yaml`/`.yml`. */
export function idFromFileName(file: string): string {
  return path.basename(file).replace(/\.ya?ml$/i, '');
}
