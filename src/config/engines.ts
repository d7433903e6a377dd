/**
 * `engine`, `engines` and `engine.custom` of eval.yaml → `EngineConfig`: names and aliases,
 * the custom-engine contract, the scripted model, and secrets kept off command lines.
 */
import type { CustomEngineConfig, EngineConfig, ModelConfig } from './types.js';
import { nearest } from './schema-errors.js';
import { skillPath } from './paths.js';
import { credentialReferences, literalCredential } from './secrets.js';
import { checkAgentWorkspacePath, checkHttpUrl, checkLocalCommand, checkTemplateRefs } from './custom.js';
import { checkTimeoutSeconds } from './limits.js';
import { ConfigError, DiagnosticBag } from './diagnostics.js';
import { Field, readYamlSource } from './yaml-source.js';
import { engineDefinitions } from '../../engines/index.js';

/** Built-in engines by canonical name, from the engine registry (read at call time). */
export function builtinEngines(): string[] {
  return engineDefinitions().map((d) => d.name);
}

/** Every accepted spelling → canonical name, from the engine registry's names and aliases (read at call time). */
export function engineAliases(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of engineDefinitions()) for (const n of [d.name, ...d.aliases]) out[n] = d.name;
  return out;
}

/** alibaba/skill-up engines skill-up does not drive. */
const UNSUPPORTED = new Set(['qodercli', 'qoder', 'qoder-cli', 'qodercn']);

/** The canonical name of a built-in engine spelling, or undefined. */
export function canonicalEngineName(name: string): string | undefined {
  const aliases = engineAliases();
  return Object.hasOwn(aliases, name) ? aliases[name] : undefined;
}

/**
 * "unknown engine …" message for a name that is neither built in nor a custom engine, with a
 * did-you-mean when close to a built-in spelling.
 */
export function unknownEngineMessage(name: string): string {
  const builtins = builtinEngines().map((n) => `\`${n}\``).join(', ');
  if (UNSUPPORTED.has(name.toLowerCase())) {
    return `engine \`${name}\` is not supported by skill-up (built-in engines: ${builtins}); to drive it yourself, add \`engine.custom\``;
  }
  const guess = nearest(name, Object.keys(engineAliases()));
  const tail = guess ? `; did you mean \`${guess}\`?` : `; built-in engines are ${builtins}`;
  return `unknown engine \`${name}\`${tail} (any other name needs \`engine.custom\` describing how to run your agent)`;
}

/** How {@link buildEngine} checks what it can of the machine the engine runs on. */
export interface EngineBuildOptions {
  /**
   * The engine runs in a container (`environment.type: docker`): a custom agent's bare command
   * is looked up on the image's PATH, not this machine's, so it is not looked up here.
   */
  inContainer?: boolean;
}

/**
 * Builds one engine from a name string or an engine map at `field`. Problems are reported at
 * their place; the result is still returned (with defaults) so later checks can run.
 */
export function buildEngine(field: Field, skillDir: string, opts: EngineBuildOptions = {}): EngineConfig | undefined {
  if (typeof field.value === 'string') {
    const canonical = canonicalEngineName(field.value);
    if (!canonical) {
      // A bare name may refer to a custom engine defined elsewhere; the caller resolves that.
      return { name: 'custom', displayName: field.value, model: {}, kwargs: {} };
    }
    return { name: canonical, displayName: field.value, model: {}, kwargs: {} };
  }
  if (!field.isMap()) return undefined;
  const nameField = field.get('name');
  const written = nameField.str() ?? 'claude_code';
  const customField = field.get('custom');
  const canonical = canonicalEngineName(written);
  if (!field.has('name') && !customField.missing) {
    customField.error('a custom engine needs `engine.name`: any name for your agent other than the built-in engines (e.g. `name: my-agent`)', 'key');
  } else if (canonical && !customField.missing) {
    customField.error(
      `\`custom\` describes your own agent, but \`${written}\` is a built-in engine; give your agent another name (e.g. \`my-agent\`) or remove \`custom\``,
      'key',
    );
  }
  if (!canonical && nameField.str() !== undefined && customField.missing) {
    nameField.error(unknownEngineMessage(written));
  }
  const engine: EngineConfig = {
    name: canonical ?? 'custom',
    displayName: written,
    model: buildModel(field.get('model'), skillDir),
    kwargs: field.get('kwargs').scalarMap(),
  };
  const version = field.get('version').str();
  if (version !== undefined && !canonical) {
    field.get('version').warn('`version` only pins built-in engines installed from npm; ignored for a custom engine', 'key');
  } else if (version !== undefined) {
    const problem = versionProblem(version);
    if (problem) field.get('version').error(problem);
    else engine.version = version;
  }
  if (!canonical && customField.isMap()) engine.custom = buildCustom(customField, skillDir, opts);
  return engine;
}

/** An exact semantic version: `2.1.3`, `1.0.0-beta.2`, `0.5.0+build.7` (no ranges, tags or paths). */
export const EXACT_VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/**
 * Why `version` cannot be an `engine.version` pin, or undefined. skill-up installs exactly that
 * version into its cache (one folder per version), so it must be an exact version: a tag
 * (`latest`) or a range (`^2.0.0`) would be cached under its own name and never updated, and
 * a path or URL (`file:…`, `../x`) is not an npm version at all.
 */
export function versionProblem(version: string): string | undefined {
  if (EXACT_VERSION.test(version)) return undefined;
  const shown = `\`${version.length > 60 ? `${version.slice(0, 57)}...` : version}\``;
  let what: string;
  if (/^(file|link|git|git\+\w+|https?|npm|workspace):/i.test(version) || /[\\/]/.test(version) || version.startsWith('.')) what = 'a path or URL, not an npm version';
  else if (/^v\d+\.\d+\.\d+/.test(version) && EXACT_VERSION.test(version.slice(1))) what = `written with a leading \`v\` (write \`${version.slice(1)}\`)`;
  else if (/^[A-Za-z][\w-]*$/.test(version) && !/^[xX*]$/.test(version)) what = 'a dist-tag, which moves';
  else if (/[\^~<>=*| ]|^\d+(\.\d+)?$|(^|\.)[xX](\.|$)/.test(version)) what = 'a version range';
  else what = 'not a version';
  return `engine version ${shown} is ${what}; \`version\` must be an exact version such as 2.1.3 (skill-up installs exactly that version of the engine into its cache)`;
}

function buildModel(field: Field, skillDir: string): ModelConfig {
  const model: ModelConfig = {};
  const provider = field.get('provider').str();
  const name = field.get('name').str();
  const baseUrl = field.get('base_url').str();
  if (provider !== undefined) model.provider = provider;
  if (name !== undefined) model.name = name;
  if (baseUrl) model.baseUrl = baseUrl;
  for (const legacy of ['params', 'entry']) {
    if (field.has(legacy)) field.get(legacy).warn(`\`model.${legacy}\` is a legacy alibaba/skill-up field with no effect; ignored`, 'key');
  }
  const scriptField = field.get('script');
  if (provider === 'scripted') {
    if (scriptField.missing) {
      field.get('provider').error('provider `scripted` needs `script`: the rule file of the scripted model, e.g. `script: evals/fixtures/model.yaml`');
    } else {
      const script = skillPath(scriptField, skillDir, 'file', 'scripted model file');
      if (script) model.script = script;
    }
  } else if (!scriptField.missing) {
    scriptField.warn(`\`script\` is only used with \`provider: scripted\`; ignored for provider \`${provider ?? '(none)'}\``, 'key');
  }
  return model;
}

function buildCustom(field: Field, skillDir: string, opts: EngineBuildOptions): CustomEngineConfig {
  const transport = field.get('transport').str() === 'http' ? 'http' : 'local';
  const custom: CustomEngineConfig = {
    transport,
    responseFormat: field.get('response_format').str() === 'text' ? 'text' : 'session_result',
    conversationMode: field.get('conversation_mode').str() === 'stateful' ? 'stateful' : 'batch',
    env: field.get('env').scalarMap(),
    kwargs: field.get('kwargs').scalarMap(),
  };
  const timeout = checkTimeoutSeconds(field.get('timeout_seconds'));
  if (timeout !== undefined && timeout > 0) custom.timeoutSeconds = timeout;

  const local = field.get('local');
  const http = field.get('http');
  if (field.get('transport').str() === 'local' && local.missing) {
    field.get('transport').error('transport `local` needs `local.command`: the program that runs your agent');
  }
  if (field.get('transport').str() === 'http' && http.missing) {
    field.get('transport').error('transport `http` needs `http.url`: the endpoint skill-up POSTs each session to');
  }
  if (transport === 'http' && !local.missing) local.warn('`local` is ignored with transport `http`', 'key');
  if (transport === 'local' && !http.missing) http.warn('`http` is ignored with transport `local`', 'key');

  if (local.isMap()) {
    checkNoSecret(local.get('command'));
    local.get('args').items().forEach(checkNoSecret);
    checkNoSecret(local.get('cwd'));
    if (transport === 'local') {
      // What the first job would otherwise find: the agent cannot start, a variable is unset,
      // a file it reads or writes lies outside its workspace.
      checkLocalCommand(local.get('command'), skillDir, process.env, custom.env, custom.kwargs, { lookUpPath: !opts.inContainer });
      for (const f of [local.get('command'), ...local.get('args').items(), local.get('cwd'), local.get('input_file'), local.get('output_file')]) {
        checkTemplateRefs(f, custom.kwargs, process.env, custom.env);
      }
      const statics = { kwargs: custom.kwargs, env: process.env, customEnv: custom.env };
      checkAgentWorkspacePath(local.get('cwd'), 'working folder `cwd`', statics);
      checkAgentWorkspacePath(local.get('input_file'), '`input_file`', statics);
      checkAgentWorkspacePath(local.get('output_file'), '`output_file`', statics);
      custom.local = { command: local.get('command').str() ?? '', args: local.get('args').strings() };
      const cwd = local.get('cwd').str();
      const inputFile = local.get('input_file').str();
      const outputFile = local.get('output_file').str();
      if (cwd !== undefined) custom.local.cwd = cwd;
      if (inputFile !== undefined) custom.local.inputFile = inputFile;
      if (outputFile !== undefined) custom.local.outputFile = outputFile;
    }
  }
  if (http.isMap()) {
    checkNoSecret(http.get('url'));
    for (const [, header] of http.get('headers').entries()) warnLiteral(header, 'a header');
    for (const key of ['request_body', 'files']) {
      if (http.has(key)) http.get(key).warn(`\`http.${key}\` is not supported yet; ignored`, 'key');
    }
    if (transport === 'http') {
      checkHttpUrl(http.get('url'));
      checkTemplateRefs(http.get('url'), custom.kwargs, process.env, custom.env);
      for (const [, header] of http.get('headers').entries()) checkTemplateRefs(header, custom.kwargs, process.env, custom.env);
      custom.http = { url: http.get('url').str() ?? '', headers: http.get('headers').scalarMap() };
    }
  }
  // `env` values are expanded against skill-up's own environment (not against each other).
  for (const [, value] of field.get('env').entries()) checkTemplateRefs(value, custom.kwargs, process.env, undefined);
  for (const [, value] of field.get('env').entries()) warnLiteral(value, 'an environment value');
  for (const [key, value] of field.get('kwargs').entries()) {
    if (typeof value.value === 'string' && literalCredential(value.value)) {
      value.error(`\`kwargs.${key}\` holds ${literalCredential(value.value)}; kwargs are written into the session input and reports. Put secrets in \`engine.custom.env\` as \`NAME: \${NAME}\``);
    }
  }
  return custom;
}

/** A command, argument, cwd or URL must not carry a secret, literally or by reference. */
function checkNoSecret(field: Field): void {
  const text = field.str();
  if (text === undefined) return;
  const literal = literalCredential(text);
  if (literal) {
    field.error(
      `contains what looks like ${literal}; never write secrets into eval.yaml: pass them via \`engine.custom.env\` (e.g. \`MY_TOKEN: \${MY_TOKEN}\`) and read them from the environment in your agent`,
    );
    return;
  }
  const refs = credentialReferences(text);
  if (refs.length > 0) {
    field.error(
      `references ${refs.map((r) => `\`${r}\``).join(', ')}, which would put a secret on the command line or in the URL (visible in process lists and logs); pass it via \`engine.custom.env\` instead and read it from the environment in your agent`,
    );
  }
}

function warnLiteral(field: Field, what: string): void {
  const text = field.str();
  const literal = text !== undefined ? literalCredential(text) : undefined;
  if (literal) {
    field.warn(`${what} holds what looks like ${literal} written literally; reference an environment variable instead, e.g. \`\${MY_TOKEN}\``);
  }
}

/**
 * The config error for a pinned `engine.version` that npm says does not exist (`npm error code
 * ETARGET`), reported at the `version` value in eval.yaml (`engine` or an `engines[]` item),
 * so `run` stops with file, line and field (exit 2) instead of erroring every job. Undefined
 * when `installMessage` is another install failure (network, permissions: not the suite's fault).
 */
export function missingVersionError(evalFile: string, engine: EngineConfig, installMessage: string): ConfigError | undefined {
  if (!engine.version || !/\bETARGET\b|\bnotarget\b|No matching version/.test(installMessage)) return undefined;
  const bag = new DiagnosticBag();
  const root = Field.root(readYamlSource(evalFile, new DiagnosticBag()), bag);
  const candidates = [root.get('engine'), ...root.get('engines').items()];
  const at = candidates.map((f) => f.get('version')).find((v) => v.str() === engine.version) ?? root.get('engine');
  const npmPackage = /could not install (\S+)@/.exec(installMessage)?.[1];
  at.error(
    `engine version \`${engine.version}\` of ${engine.displayName}${npmPackage ? ` (${npmPackage})` : ''} does not exist on the npm registry (npm: no matching version); pin a published version (\`npm view ${npmPackage ?? '<package>'} versions\` lists them)`,
  );
  return new ConfigError(bag.sorted());
}
