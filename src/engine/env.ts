/**
 * What environment every process skill-up starts receives: an ALLOW-LIST, never skill-up's
 * whole environment (which holds the user's unrelated credentials: cloud keys, GitHub tokens,
 * database URLs).
 *
 * An agent (engine process) gets, in this order (later wins):
 * 1. the common base, {@link BASE_ENV_ALLOW}: `PATH`, `USER`/`LOGNAME`/`SHELL`, locale (`LANG`,
 *    `LANGUAGE`, `LC_*`, `TZ`), terminal basics (`TERM`, `COLORTERM`, `NO_COLOR`), temp dirs
 *    (`TMPDIR`, `TMP`, `TEMP`), proxies (`HTTP(S)_PROXY`, `NO_PROXY`, `ALL_PROXY`, either case:
 *    an agent behind a corporate proxy cannot reach its model otherwise; a password in a proxy
 *    URL is still redacted from every output), TLS trust (`NODE_EXTRA_CA_CERTS`,
 *    `SSL_CERT_FILE`, `SSL_CERT_DIR`), Node's `NODE_OPTIONS`/`NODE_TLS_REJECT_UNAUTHORIZED`,
 *    and Windows' system variables;
 * 2. what its engine declares it needs (`EngineAdapter.envAllow`, {@link EnvAllowList}): e.g.
 *    Claude Code's `ANTHROPIC_*`/`CLAUDE_*` with a real model (none with a scripted one);
 * 3. the suite's `environment.env` (templates `${VAR}`, `${VAR:-default}`, `${VAR?message}`/`${VAR:?message}`
 *    expanded from skill-up's environment: the way to pass any other variable through);
 * 4. (custom engines) `engine.custom.env`;
 * then the adapter's own settings (`HOME`, config dirs, scripted-model URL and key) on top.
 *
 * Setup steps (src/runtime/workspace.ts) and script judges (src/judge/script.ts) get the
 * common base plus `environment.env` ({@link childProcessEnv}).
 */
import type { EngineConfig, Suite } from '../config/types.js';
import { redactor, suiteValueIsSecret, urlSecrets } from '../util/redact.js';
import type { EngineContext } from './types.js';

/** A variable name, or a pattern names must match. */
export type EnvPattern = string | RegExp;

/**
 * The variables of skill-up's environment an engine's processes receive besides the common
 * base ({@link BASE_ENV_ALLOW}); declared by each adapter (`EngineAdapter.envAllow`).
 */
export interface EnvAllowList {
  /** Passed whatever the model. */
  always?: readonly EnvPattern[];
  /** Passed only with a real model (`engine.model.provider` is not `scripted`): credentials and routing. */
  realModel?: readonly EnvPattern[];
  /** Real model only: more patterns chosen from the engine config and the environment (a provider's keys, Bedrock's `AWS_*`, …). */
  select?(engine: EngineConfig, parent: Readonly<Record<string, string | undefined>>): readonly EnvPattern[];
}

/** Variables every process skill-up starts may receive (see the module comment). */
export const BASE_ENV_ALLOW: readonly EnvPattern[] = [
  'PATH',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  /^LC_[A-Z_]+$/,
  'TZ',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'TMPDIR',
  'TMP',
  'TEMP',
  /^(HTTP|HTTPS|ALL|NO)_PROXY$/i,
  'NODE_EXTRA_CA_CERTS',
  'NODE_OPTIONS',
  'NODE_TLS_REJECT_UNAUTHORIZED',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  // Windows: processes misbehave without these.
  /^(SYSTEMROOT|SYSTEMDRIVE|WINDIR|COMSPEC|PATHEXT|APPDATA|LOCALAPPDATA|PROGRAMDATA|PROGRAMFILES|USERPROFILE)$/i,
];

/** Whether `name` matches one of `patterns`. */
export function matchesEnv(name: string, patterns: readonly EnvPattern[]): boolean {
  for (const p of patterns) if (typeof p === 'string' ? p === name : p.test(name)) return true;
  return false;
}

/** The variables of `parent` whose names match `patterns` (unset and empty ones left out). */
export function pickEnv(parent: Readonly<Record<string, string | undefined>>, patterns: readonly EnvPattern[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (patterns.length === 0) return out;
  for (const [k, v] of Object.entries(parent)) if (v !== undefined && matchesEnv(k, patterns)) out[k] = v;
  return out;
}

/** The common base of every child process: {@link BASE_ENV_ALLOW} picked from `parent`. */
export function minimalEnv(parent: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  return pickEnv(parent, BASE_ENV_ALLOW);
}

/** Every pattern an engine's processes are allowed, for `engine` (base included). */
export function enginePatterns(allow: EnvAllowList | undefined, engine: EngineConfig, parent: Readonly<Record<string, string | undefined>>): EnvPattern[] {
  const out: EnvPattern[] = [...BASE_ENV_ALLOW, ...(allow?.always ?? [])];
  if (engine.model.provider !== 'scripted') out.push(...(allow?.realModel ?? []), ...(allow?.select?.(engine, parent) ?? []));
  return out;
}

/**
 * The starting environment of one job's engine processes: from `ctx.baseEnv` (skill-up's own
 * environment) only what {@link enginePatterns} allows, then the suite's `environment.env`
 * (`ctx.suiteEnv`, already expanded). The adapter adds its own variables on top.
 */
export function agentEnv(ctx: Pick<EngineContext, 'baseEnv' | 'engine' | 'suiteEnv'>, allow: EnvAllowList | undefined): Record<string, string | undefined> {
  return { ...pickEnv(ctx.baseEnv, enginePatterns(allow, ctx.engine, ctx.baseEnv)), ...(ctx.suiteEnv ?? {}) };
}

/** A `${…}` reference in `environment.env`: `${VAR}`, `${VAR:-default}`, `${VAR?message}`. */
const REF = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|:\?|\?)([^}]*))?\}/g;

/** An `environment.env` template that cannot be expanded (`${VAR?message}` with VAR unset). */
export class SuiteEnvError extends Error {}

/**
 * `template` with `${VAR}` (unset: empty), `${VAR:-default}` and `${VAR?message}` (unset: an
 * error naming `what`) expanded from `parent`. Anything else is literal.
 * @throws SuiteEnvError naming `what` and the variable
 */
export function expandEnvTemplate(template: string, parent: Readonly<Record<string, string | undefined>>, what: string): string {
  return template.replace(REF, (_m, name: string, op: string | undefined, arg: string | undefined) => {
    const v = parent[name];
    if (v !== undefined && v !== '') return v;
    if (op === ':-') return arg ?? '';
    if (op === '?' || op === ':?') throw new SuiteEnvError(`${what}: \${${name}}${arg ? `: ${arg}` : ' is not set'}`);
    return '';
  });
}

/**
 * `environment.env` with its templates expanded from `parent` ({@link expandEnvTemplate}).
 * @throws SuiteEnvError naming the variable
 */
export function expandSuiteEnv(env: Readonly<Record<string, string>>, parent: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, template] of Object.entries(env)) out[k] = expandEnvTemplate(template, parent, `environment.env.${k}`);
  return out;
}

/** Expanded `environment.env` per suite object (computed once per run). */
const expanded = new WeakMap<Suite, Record<string, string>>();

/** `suite.environment.env` expanded from `parent` (memoised per suite). @throws SuiteEnvError */
export function suiteEnvOf(suite: Suite, parent: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  let env = expanded.get(suite);
  if (!env) expanded.set(suite, (env = expandSuiteEnv(suite.environment.env, parent)));
  return env;
}

/** Named variables of `engine.custom` templates: not environment references, and not secret (paths, ids). */
const NAMED_TEMPLATE_VARS = /^(workspace|input_file|output_file|prompt|case_id|variant|trial|model|model_provider|model_name|max_turns|skill_root|skills_dir|home|output_dir|session_id|timeout_seconds|kwargs\..*)$/;

/**
 * The secret values an `engine.custom` template yields: every environment reference's value,
 * and the whole expansion when the template holds no named variable (paths and ids are no
 * secrets, so `${workspace}/x` is not taken whole).
 */
function templateSecrets(template: string, parent: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  let named = false;
  const whole = template.replace(/\$\{([A-Za-z_][A-Za-z0-9_.]*)(?:(:-|:\?|\?)([^}]*))?\}/g, (_m, name: string, op: string | undefined, arg: string | undefined) => {
    if (NAMED_TEMPLATE_VARS.test(name)) {
      named = true;
      return '';
    }
    const v = parent[name] || (op === ':-' ? (arg ?? '') : '');
    out.push(v);
    return v;
  });
  if (!named) out.push(whole);
  return out;
}

/** Variables given to setup steps and script judges on top of the base (`environment.env` of the running suite). */
let passThrough: Record<string, string> = {};

/**
 * Prepares a loaded suite for running: expands `environment.env` (the result is returned and
 * kept for {@link childProcessEnv}) and teaches the process-wide redactor every value the suite
 * hands to processes: `environment.env`, each engine's `engine.custom.env` and
 * `engine.custom.http.headers` (as expanded from `parent`), and credentials in
 * `engine.custom.http.url`. Values shorter than 8 characters are not secrets, nor are plain words
 * under non-credential names (src/util/redact.ts `suiteValueIsSecret`).
 * @throws SuiteEnvError when an `environment.env` template cannot be expanded
 */
export function prepareSuiteEnv(suite: Suite, parent: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  const env = suiteEnvOf(suite, parent);
  const r = redactor();
  for (const [k, v] of Object.entries(suite.environment.env)) {
    // A plain word under a non-credential name (`VARIANT_LABEL: with_skill`) is no secret.
    r.addAll(templateSecrets(v, parent).filter((s) => suiteValueIsSecret(k, s)));
    if (env[k] !== undefined && suiteValueIsSecret(k, env[k])) r.add(env[k]);
    r.addAll(urlSecrets(env[k] ?? ''));
  }
  for (const e of new Set([suite.engine, ...suite.engines])) {
    const c = e.custom;
    if (!c) continue;
    for (const [k, v] of Object.entries(c.env)) r.addAll(templateSecrets(v, parent).filter((s) => suiteValueIsSecret(k, s)));
    for (const v of Object.values(c.http?.headers ?? {})) r.addAll(templateSecrets(v, parent));
    if (c.http?.url) r.addAll(urlSecrets(c.http.url));
  }
  passThrough = env;
  return env;
}

/**
 * The environment of a non-agent child process (a setup step, a script judge): the common base
 * from `parent`, plus the running suite's `environment.env` ({@link prepareSuiteEnv}), plus `extra`.
 */
export function childProcessEnv(extra: Record<string, string> = {}, parent: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  return { ...minimalEnv(parent), ...passThrough, ...extra };
}
