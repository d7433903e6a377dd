/**
 * The eval-level part of eval.yaml → everything of `Suite` except the cases, plus what the
 * cases inherit (`cases.defaults`, eval judges) and the list of case files to read.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { DockerSettings, EngineConfig, ReportFormat, SkillRef, Suite, SuiteGates, UserSimulatorConfig } from './types.js';
import type { CaseDefaults } from './case.js';
import { expandGlob, isDirectory, isFile, isGlob } from './discover.js';
import { buildEngine, canonicalEngineName, unknownEngineMessage } from './engines.js';
import { buildExpect } from './expect.js';
import { buildJudges } from './judges.js';
import { checkArtifactGlob, checkWorkspacePath, fileKind, fileKindProblem, outsideSkillProblem, relativeToFileHint } from './paths.js';
import { checkTimeoutSeconds } from './limits.js';
import { checkSuiteEnvRefs } from './custom.js';
import { buildMcpServers, declaredMcpServerNames, type McpServerSpec } from './mcp.js';
import { imageReferenceProblem } from './image-ref.js';
import { nearest, type Phraser } from './schema-errors.js';
import type { Field } from './yaml-source.js';

/** The eval-level result of {@link buildEval}. */
export interface EvalParts {
  suite: Omit<Suite, 'cases'>;
  defaults: CaseDefaults;
  /** Case files to read, absolute, in listing order, each with the `cases.files` item naming it. */
  caseFiles: { file: string; from: Field }[];
  /** The items of `cases.inline`. */
  inline: Field[];
  /** eval.yaml `triggers` (a trigger eval set file, src/config/triggers.ts); missing when unset. */
  triggers: Field;
}

const OPENSANDBOX_ONLY = ['sandbox_template', 'use_server_proxy', 'ready_timeout_seconds', 'sandbox_timeout_seconds', 'metadata'];
const NOT_YET = ['entrypoint', 'kwargs', 'allowed_egress'];

/** Builds the eval-level settings from the root of eval.yaml. */
export function buildEval(root: Field, evalFile: string, skillDir: string): EvalParts {
  const { engine, engines } = buildEngines(root, skillDir, root.get('environment').get('type').str() === 'docker');
  const cases = root.get('cases');
  const defaults = cases.get('defaults');
  const topTrials = root.get('trials').int() ?? 1;
  defaults.get('collect_artifacts').items().forEach((a) => checkArtifactGlob(a));
  const customEngineNames = new Set(engines.filter((e) => e.name === 'custom').map((e) => e.displayName));
  // An HTTP agent runs wherever its server is: a container around it would hold nothing.
  const http = engines.find((e) => e.custom?.transport === 'http');
  if (http && root.get('environment').get('type').str() === 'docker') {
    root.get('environment').get('type').error(`\`type: docker\` runs each job's engine in a container, but \`${http.displayName}\` is an HTTP agent (engine.custom.transport: http), which runs wherever its server is; use \`type: none\` for it`);
  }

  const suite: Omit<Suite, 'cases'> = {
    evalFile,
    skillDir,
    schemaVersion: 'v1alpha1',
    environment: buildEnvironment(root.get('environment'), skillDir),
    skills: buildSkills(root, skillDir),
    engine,
    engines,
    ...userSimulatorOf(root.get('user_simulator'), engines),
    parallelism: cases.get('parallelism').int() ?? 1,
    retryPolicy: {
      maxRetries: cases.get('retry_policy').get('max_retries').int() ?? 0,
      retryOn: retryOn(cases.get('retry_policy').get('retry_on')),
    },
    benchmark: { enabled: root.get('benchmark').get('enabled').bool() ?? false },
    gates: buildGates(root.get('gates'), skillDir),
    trials: topTrials,
    report: {
      formats: root.get('report').has('formats') ? (root.get('report').get('formats').strings() as ReportFormat[]) : ['json', 'junit', 'html'],
      artifacts: root.get('report').get('artifacts').strings(),
    },
  };
  return {
    suite,
    defaults: {
      skillDir,
      timeoutSeconds: checkTimeoutSeconds(defaults.get('timeout_seconds'), true) ?? 0,
      maxTurns: defaults.get('max_turns').int() ?? 0,
      collectArtifacts: defaults.get('collect_artifacts').strings(),
      expect: buildExpect(defaults.get('expect'), skillDir),
      trials: defaults.get('trials').int() ?? topTrials,
      judges: buildJudges(root, { skillDir, scope: 'eval', engines }) ?? [],
      ...(root.get('judge').isMap() ? { evalJudge: root.get('judge') } : {}),
      customEngineNames,
      engines,
      ...(hasSimulator(root.get('user_simulator')) ? { userSimulator: root.get('user_simulator') } : {}),
      mcpServers: evalMcpServers(root, skillDir, engines),
      mcpDeclared: declaredMcpServerNames(root),
      ...(mcpRefusal(root) ? { mcpRefusal: mcpRefusal(root) } : {}),
    },
    caseFiles: caseFiles(cases, skillDir),
    inline: cases.get('inline').items(),
    triggers: root.get('triggers'),
  };
}

/** Why this suite's jobs cannot be offered MCP servers (a case's `mcp` is then an error too), or undefined. */
function mcpRefusal(root: Field): string | undefined {
  if (root.get('environment').get('type').str() === 'docker') {
    return 'MCP servers are not supported with `environment.type: docker` yet (the engine would start them inside the container); use `type: none`';
  }
  return undefined;
}

/**
 * eval.yaml `mcp.servers` (src/config/mcp.ts): refused with `environment.type: docker`, and when
 * every engine is a custom one (skill-up cannot write a custom agent's MCP configuration).
 */
function evalMcpServers(root: Field, skillDir: string, engines: EngineConfig[]): McpServerSpec[] {
  const servers = buildMcpServers(root, skillDir);
  if (!servers.length) return servers;
  const refused = mcpRefusal(root);
  if (refused) root.get('mcp').error(refused, 'key');
  else if (engines.every((e) => e.name === 'custom')) {
    root.get('mcp').error('MCP servers need an engine whose MCP configuration skill-up writes (claude_code, codex, opencode, gemini_cli, qwen_code); a custom engine gets none', 'key');
  }
  return servers;
}

/** True when eval.yaml `user_simulator` names a provider: a map without one (alibaba's `user_simulator: {}`) configures nothing. */
function hasSimulator(f: Field): boolean {
  return f.isMap() && (f.get('provider').str() ?? '') !== '';
}

/** Seconds a simulator request may take when `user_simulator.timeout_seconds` is unset. */
export const DEFAULT_SIMULATOR_TIMEOUT_SECONDS = 30;

/**
 * eval.yaml `user_simulator` → `{ userSimulator }` (empty when unset). The schema has checked
 * the types; here: `scripted` needs a scripted engine (it uses that engine's model script), a
 * real provider needs `protocol` and `model`. The API key's value is read at run time, never here.
 */
function userSimulatorOf(f: Field, engines: EngineConfig[]): { userSimulator?: UserSimulatorConfig } {
  const provider = f.get('provider').str() ?? '';
  // alibaba's defaults write `user_simulator: {}` (or blank fields): no simulator.
  if (!hasSimulator(f)) return {};
  const scripted = provider === 'scripted';
  if (scripted && !engines.some((e) => e.model.provider === 'scripted')) {
    f.get('provider').error('`provider: scripted` answers with the suite\'s model script, but no engine has `model: { provider: scripted, script: … }`; give an engine a scripted model, or name a real provider', 'value');
  }
  if (!scripted) {
    for (const key of ['protocol', 'model'] as const) {
      if (!f.has(key)) f.error(`\`user_simulator.${key}\` is needed with \`provider: ${provider}\` (only \`provider: scripted\` has a default)`, 'key');
    }
  }
  const protocol = (f.get('protocol').str() ?? 'anthropic') as UserSimulatorConfig['protocol'];
  const cfg: UserSimulatorConfig = {
    provider,
    protocol,
    model: f.get('model').str() ?? 'scripted-simulator',
    timeoutSeconds: f.get('timeout_seconds').int() ?? DEFAULT_SIMULATOR_TIMEOUT_SECONDS,
  };
  if (!scripted) {
    cfg.baseUrl = (f.get('base_url').str() ?? (protocol === 'openai' ? 'https://api.openai.com/v1' : 'https://api.anthropic.com')).replace(/\/+$/, '');
    cfg.apiKeyEnv = f.get('api_key_env').str() ?? (protocol === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY');
  }
  return { userSimulator: cfg };
}

/** `gates:` (the schema has checked every type and range). */
function buildGates(g: Field, skillDir: string): SuiteGates {
  const out: SuiteGates = {};
  const num = (k: string) => g.get(k).num();
  if (num('min_pass_rate') !== undefined) out.minPassRate = num('min_pass_rate');
  if (num('min_uplift') !== undefined) out.minUplift = num('min_uplift');
  if (num('max_error_rate') !== undefined) out.maxErrorRate = num('max_error_rate');
  if (num('alpha') !== undefined) out.alpha = num('alpha');
  const on = g.get('on_inconclusive').str();
  if (on === 'pass' || on === 'fail') out.onInconclusive = on;
  if (num('min_trigger_precision') !== undefined) out.minTriggerPrecision = num('min_trigger_precision');
  if (num('min_trigger_recall') !== undefined) out.minTriggerRecall = num('min_trigger_recall');
  if (num('max_tool_loop_rate') !== undefined) out.maxToolLoopRate = num('max_tool_loop_rate');
  if (num('max_silent_failure_rate') !== undefined) out.maxSilentFailureRate = num('max_silent_failure_rate');
  if (num('min_claims_verified_rate') !== undefined) out.minClaimsVerifiedRate = num('min_claims_verified_rate');
  const eaf = g.get('errors_as_failures').bool();
  if (eaf !== undefined) out.errorsAsFailures = eaf;
  const nr = g.get('no_regression');
  const baseline = nr.get('baseline').str();
  if (baseline) out.noRegression = { baseline: path.resolve(skillDir, baseline), ...(nr.get('margin').num() !== undefined ? { margin: nr.get('margin').num() } : {}) };
  return out;
}

function retryOn(f: Field): ('timeout' | 'error')[] {
  if (f.missing) return ['timeout', 'error'];
  return f.strings().filter((s): s is 'timeout' | 'error' => s === 'timeout' || s === 'error');
}

/** Runtimes the schema leaves out but {@link buildEnvironment} refuses with a message of its own. */
const REFUSED_RUNTIMES: ReadonlySet<unknown> = new Set(['opensandbox']);

/**
 * Rewords eval.yaml's schema problems: `environment.type: opensandbox` is not in the schema's
 * enum, so editors flag it, but {@link buildEnvironment} says why in its own message: the enum
 * error is dropped there, so the user reads one message.
 */
export const phraseEvalSchema: Phraser = (p) =>
  p.error.keyword === 'enum' && p.segments.join('.') === 'environment.type' && REFUSED_RUNTIMES.has(p.field.value) ? [] : undefined;

/** Keys that only `type: docker` uses: a warning with `type: none`. */
const DOCKER_ONLY = ['image', 'network', 'cpus', 'memory', 'pids_limit', 'user', 'mounts', 'workdir'];

function buildEnvironment(f: Field, skillDir: string): Suite['environment'] {
  const written = f.get('type').str() ?? 'none';
  if (written === 'opensandbox') {
    f.get('type').error('environment type `opensandbox` is not supported by skill-up; use `none` (a temp folder on this machine) or `docker`');
  }
  const type = written === 'docker' ? 'docker' : 'none';
  const env: Suite['environment'] = {
    type,
    env: f.get('env').scalarMap(),
    setupSteps: f
      .get('setup_steps')
      .items()
      .map((s) => s.get('run').str())
      .filter((r): r is string => r !== undefined)
      .map((run) => ({ run })),
    workspaceMount: f.get('workspace_mount').str() ?? '/workspace',
  };
  for (const [, value] of f.get('env').entries()) checkSuiteEnvRefs(value, process.env);
  const image = f.get('image').str();
  if (image !== undefined) env.image = image;
  if (type === 'docker') {
    const docker = buildDocker(f, skillDir);
    if (docker) env.docker = docker;
  } else {
    // `workspace_mount` stays silent: alibaba/skill-up's default eval.yaml writes it with `type: none`.
    for (const key of DOCKER_ONLY) {
      if (f.has(key)) f.get(key).warn(`\`${key}\` is only used with \`type: docker\`; ignored`, 'key');
    }
    if (f.has('network_policy')) f.get('network_policy').warn('`environment.network_policy` is only used with `type: docker`; ignored', 'key');
  }
  for (const key of OPENSANDBOX_ONLY) {
    if (f.has(key)) f.get(key).warn(`\`${key}\` is only used by the opensandbox runtime; ignored`, 'key');
  }
  for (const key of NOT_YET) {
    if (f.has(key)) f.get(key).warn(`\`environment.${key}\` is not supported yet; ignored`, 'key');
  }
  return env;
}

/** `type: docker`'s settings; undefined when `image` is missing (reported). */
function buildDocker(f: Field, skillDir: string): DockerSettings | undefined {
  const image = f.get('image').str();
  if (image === undefined) {
    if (!f.has('image')) f.error('`type: docker` needs `image`: the image each job\'s container is made from (e.g. `image: node:20`)', 'key');
    return undefined;
  }
  const badImage = imageReferenceProblem(image);
  if (badImage) {
    f.get('image').error(`image \`${image}\` ${badImage}; expected a reference such as \`node:20\` or \`registry.example.com/team/image:1.2\``);
    return undefined;
  }
  const policy = f.get('network_policy').str();
  if (policy === 'allow_declared') f.get('network_policy').error('`network_policy: allow_declared` (an egress allow-list) is not supported; use `network: none` or `network: host`');
  let network = f.get('network').str() ?? 'none';
  if (policy === 'deny_all') {
    if (f.has('network') && network !== 'none') f.get('network').error(`\`network: ${network}\` contradicts \`network_policy: deny_all\`; keep one`);
    network = 'none';
  }
  const workdir = f.get('workdir').str() ?? (f.has('workspace_mount') ? f.get('workspace_mount').str() : undefined);
  const out: DockerSettings = { image, network, mounts: [] };
  if (workdir !== undefined) {
    // A relative `workdir` is the schema's error; `workspace_mount` is checked here.
    if (!workdir.startsWith('/')) {
      if (!f.has('workdir')) f.get('workspace_mount').error(`\`${workdir}\` is not an absolute path; expected one such as \`/workspace\``);
    } else if (path.posix.normalize(workdir) === '/') f.get(f.has('workdir') ? 'workdir' : 'workspace_mount').error('the workspace cannot be mounted over the container\'s `/`');
    else out.workdir = path.posix.normalize(workdir).replace(/\/$/, '');
  }
  const cpus = f.get('cpus').num();
  // Docker's floor: below a hundredth of a CPU the kernel's CFS quota is refused.
  if (cpus !== undefined && cpus > 0 && cpus < 0.01) f.get('cpus').error(`cpus \`${cpus}\` is less than 0.01, the least Docker accepts`);
  else if (cpus !== undefined && cpus > 0) out.cpus = cpus;
  const memory = f.get('memory');
  if (memory.value !== undefined) {
    // What is no size at all, or a number of bytes under the minimum, is the schema's error.
    const bytes = memoryBytes(memory.value);
    if (bytes !== undefined && bytes < 6 * 1024 * 1024) {
      if (typeof memory.value === 'string') memory.error(`memory \`${memory.value}\` is less than 6 MB, the least Docker accepts; write e.g. \`512m\` or \`2g\``);
    } else if (bytes !== undefined && bytes > MAX_MEMORY_BYTES) {
      memory.error(`memory \`${String(memory.value)}\` is more than ${MAX_MEMORY_BYTES / 1024 ** 4} TiB; write e.g. \`512m\` or \`2g\``);
    } else if (bytes !== undefined) out.memoryBytes = bytes;
  }
  const pids = f.get('pids_limit').num();
  if (pids !== undefined) out.pidsLimit = pids;
  const user = f.get('user').str();
  if (user !== undefined) out.user = user;
  for (const m of f.get('mounts').items()) {
    const source = m.get('source').str();
    const target = m.get('target').str();
    if (source === undefined || target === undefined) continue;
    const abs = path.resolve(skillDir, source);
    const outside = outsideSkillProblem(skillDir, abs);
    if (outside) {
      m.get('source').error(`mount source \`${source}\` ${outside} ${skillDir}; mounts come from inside the skill root`);
      continue;
    }
    const kind = fileKind(abs);
    if (kind !== 'file' && kind !== 'folder') {
      m.get('source').error(`mount source \`${source}\` ${kind === 'missing' || kind === 'dangling' ? `not found in the skill folder ${skillDir}` : fileKindProblem(kind, 'folder')}`);
      continue;
    }
    if (!target.startsWith('/') || path.posix.normalize(target) === '/') {
      m.get('target').error(`mount target \`${target}\` must be an absolute path other than \`/\``);
      continue;
    }
    out.mounts.push({ source: abs, target: path.posix.normalize(target) });
  }
  return out;
}

/** The most `environment.memory` may be (1 TiB): Docker reads it as a 64-bit integer, and no job needs more. */
const MAX_MEMORY_BYTES = 1024 ** 4;

/** `512m`, `1.5g`, `2048k`, `100b` or a number of bytes → bytes (binary units, as Docker reads them); undefined when not a size. */
export function memoryBytes(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v > 0 ? v : undefined;
  if (typeof v !== 'string') return undefined;
  const m = /^([0-9]+(?:\.[0-9]+)?)([kmg]?)b?$/i.exec(v.trim());
  if (!m) return undefined;
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[m[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Math.floor(Number(m[1]) * unit);
}

function buildSkills(root: Field, skillDir: string): SkillRef[] {
  const listed = root.get('skills');
  if (!Array.isArray(listed.value) || listed.value.length === 0) return [{ source: 'local_path', path: skillDir, include: [], exclude: [] }];
  const out: SkillRef[] = [];
  for (const item of root.get('skills').items()) {
    if (item.get('source').str() === 'registry') {
      item.get('source').error('skill source `registry` is not supported yet; use `local_path`');
      continue;
    }
    const rel = item.get('path').str();
    if (rel === undefined) continue;
    const abs = path.resolve(skillDir, rel);
    if (!isDirectory(abs)) {
      item
        .get('path')
        .error(
          isFile(abs)
            ? `skill path \`${rel}\` is a file; expected the skill folder (the one holding SKILL.md)`
            : `skill folder \`${rel}\` not found (looked for ${abs}; paths are relative to the skill root ${skillDir})`,
        );
      continue;
    }
    const ref: SkillRef = { source: 'local_path', path: abs, include: item.get('include').strings(), exclude: item.get('exclude').strings() };
    const target = item.get('target').str();
    if (target !== undefined) {
      checkWorkspacePath(item.get('target'), 'skill target');
      // `.`, `./`, `.//`: the workspace (or the engine's skill folder) itself, not a folder of its own.
      if (path.posix.normalize(target.replace(/\\/g, '/')).replace(/\/+$/, '') === '.') item.get('target').error(`skill target \`${target}\` names no folder; give a folder name (under the engine's skill folder) or a workspace-relative path with a \`/\``);
      ref.target = target;
    }
    out.push(ref);
  }
  return out;
}

/**
 * `engine` and `engines` → the suite's engine and engine matrix (engine first, de-duplicated
 * by canonical name). A bare name in `engines` may refer to a custom engine defined in
 * `engine` or in another item.
 */
function buildEngines(root: Field, skillDir: string, inContainer: boolean): { engine: EngineConfig; engines: EngineConfig[] } {
  const items: { cfg: EngineConfig; field: Field }[] = [];
  if (root.has('engine')) {
    const cfg = buildEngine(root.get('engine'), skillDir, { inContainer });
    if (cfg) items.push({ cfg, field: root.get('engine') });
  }
  for (const f of root.get('engines').items()) {
    const cfg = buildEngine(f, skillDir, { inContainer });
    if (cfg) items.push({ cfg, field: f });
  }
  // Bare names of non-built-in engines must match a custom engine defined as a map.
  const defined = new Map(items.filter((i) => i.cfg.name === 'custom' && typeof i.field.value !== 'string').map((i) => [i.cfg.displayName, i.cfg]));
  const resolved: { cfg: EngineConfig; field: Field }[] = [];
  for (const item of items) {
    if (item.field.value === '') continue; // the schema reports the empty name
    if (typeof item.field.value === 'string' && !canonicalEngineName(item.field.value)) {
      const def = defined.get(item.field.value);
      if (!def) {
        item.field.error(unknownEngineMessage(item.field.value));
        continue;
      }
      resolved.push({ cfg: def, field: item.field });
      continue;
    }
    // A bare built-in name (`engines: [claude_code, codex]`) runs with the suite engine's model
    // and kwargs, as `--engine a,b` does; its version pin stays with the engine that set it.
    const base = items[0];
    if (typeof item.field.value === 'string' && base && base !== item && base.cfg.name !== 'custom') {
      resolved.push({ cfg: { ...item.cfg, model: { ...base.cfg.model }, kwargs: { ...base.cfg.kwargs } }, field: item.field });
      continue;
    }
    resolved.push(item);
  }
  const engines: EngineConfig[] = [];
  let custom: { cfg: EngineConfig; field: Field } | undefined;
  for (const item of resolved) {
    if (item.cfg.name === 'custom') {
      if (custom && custom.cfg.displayName !== item.cfg.displayName) {
        item.field.error(
          `a suite can hold one custom engine; \`${custom.cfg.displayName}\` (line ${custom.field.position().line}) and \`${item.cfg.displayName}\` are both custom`,
        );
        continue;
      }
      custom ??= item;
    }
    if (!engines.some((e) => e.name === item.cfg.name)) engines.push(item.cfg);
  }
  if (engines.length === 0) engines.push({ name: 'claude_code', displayName: 'claude_code', model: {}, kwargs: {} });
  return { engine: engines[0]!, engines };
}

/** `cases.files` → the case files, expanding globs and checking each entry. */
function caseFiles(cases: Field, skillDir: string): { file: string; from: Field }[] {
  const out: { file: string; from: Field }[] = [];
  // The files in `out`, for the duplicate check: a scan of `out` per file was quadratic.
  const inOut = new Set<string>();
  const add = (file: string, from: Field) => {
    if (inOut.has(file)) return;
    inOut.add(file);
    out.push({ file, from });
  };
  const listed = new Map<string, Field>();
  for (const item of cases.get('files').items()) {
    const entry = item.str();
    if (entry === undefined) continue;
    if (isGlob(entry)) {
      const same = listed.get(`glob:${entry}`);
      if (same) {
        item.error(`\`${entry}\` is listed twice in \`cases.files\` (also at line ${same.position().line}); list each file or glob once`);
        continue;
      }
      listed.set(`glob:${entry}`, item);
      const base = path.resolve(skillDir, picomatchBase(entry));
      const baseProblem = outsideSkillProblem(skillDir, base);
      if (baseProblem) {
        item.error(`glob \`${entry}\` starts in ${base}, which ${baseProblem} ${skillDir}; case files must be inside the skill folder (globs are relative to the skill root)`);
        continue;
      }
      // A glob such as `evals/*.yaml` must not pick up eval.yaml itself.
      const matched = expandGlob(skillDir, entry).filter((f) => /\.ya?ml$/i.test(f) && f !== item.src.file);
      // A symbolic link among the matches may lead out of the skill folder.
      const escaping = matched.filter((f) => outsideSkillProblem(skillDir, f) !== undefined);
      if (escaping.length > 0) {
        const shown = escaping.slice(0, 3).map((f) => `\`${path.relative(skillDir, f)}\` ${outsideSkillProblem(skillDir, f)!.replace(/, outside the skill folder$/, '')}`);
        item.error(`glob \`${entry}\` matches case files that lead outside the skill folder ${skillDir}: ${shown.join('; ')}${escaping.length > 3 ? ` and ${escaping.length - 3} more` : ''}; case files must be inside it`);
      }
      const files = matched.filter((f) => !escaping.includes(f));
      if (files.length === 0) {
        const here = path.dirname(item.src.file);
        const alt = here !== skillDir && expandGlob(here, entry).some((f) => /\.ya?ml$/i.test(f));
        const prefix = path.relative(skillDir, here).split(path.sep).join('/');
        const hint = alt
          ? `; globs are relative to the skill root, not to ${path.basename(here)}/: did you mean \`${prefix}/${entry.replace(/^\.\//, '')}\`?`
          : ` (globs are relative to the skill root ${skillDir})`;
        item.error(`glob \`${entry}\` matches no .yaml/.yml file${hint}`);
      }
      for (const file of files) add(file, item);
      continue;
    }
    const file = path.resolve(skillDir, entry);
    const outside = outsideSkillProblem(skillDir, file);
    if (outside) {
      item.error(`case file \`${entry}\` ${outside} ${skillDir}; case files must be inside it, named relative to the skill root`);
      continue;
    }
    const same = listed.get(file);
    if (same) {
      item.error(`case file \`${entry}\` is listed twice in \`cases.files\` (also at line ${same.position().line}); list each file once`);
      continue;
    }
    listed.set(file, item);
    const kind = fileKind(file);
    if (kind !== 'file') {
      item.error(
        kind === 'folder'
          ? `\`${entry}\` is a folder; list case files or a glob such as \`${entry.replace(/\/$/, '')}/*.yaml\``
          : kind !== 'missing' && kind !== 'dangling'
            ? `case file \`${entry}\` ${fileKindProblem(kind)}`
            : `case file \`${entry}\` not found in the skill folder ${skillDir}${relativeToFileHint(entry, item.src.file, skillDir)}${siblingHint(file, entry)}`,
      );
      continue;
    }
    add(file, item);
  }
  return out;
}

/** The static folder part of a glob (`../x/*.yaml` → `../x`), relative as written. */
function picomatchBase(entry: string): string {
  const norm = entry.replace(/\\/g, '/').replace(/^\.\//, '');
  const parts = norm.split('/');
  const out: string[] = [];
  for (const p of parts.slice(0, -1)) {
    if (isGlob(p)) break;
    out.push(p);
  }
  return out.join('/') || '.';
}

/** "; did you mean `evals/cases/basic.yaml`?" when a file of a similar name sits in the same folder. */
function siblingHint(file: string, entry: string): string {
  let names: string[];
  try {
    names = readdirSync(path.dirname(file)).filter((n) => /\.ya?ml$/i.test(n));
  } catch {
    return '';
  }
  const guess = nearest(path.basename(file), names);
  return guess ? `; did you mean \`${path.posix.join(path.posix.dirname(entry.replace(/\\/g, '/')), guess)}\`?` : '';
}
