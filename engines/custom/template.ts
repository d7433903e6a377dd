/**
 * `${…}` templates of a custom engine's command, args, cwd, env, url and headers, as in
 * alibaba/skill-up's custom engine contract (docs/design/custom-engine.md):
 * named variables (`${workspace}`, `${prompt}`, `${kwargs.key}`, …) first, then environment
 * references `${VAR}`, `${VAR:-default}` and `${VAR?message}` (or `${VAR:?message}`).
 */

/** Raised when a template cannot be expanded (an unknown variable, `${VAR?msg}` unset). */
export class TemplateError extends Error {}

const REF = /\$\{([A-Za-z_][A-Za-z0-9_.]*)(?:(:-|:\?|\?)([^}]*))?\}/g;

/**
 * The named variables skill-up fills in (engines/custom/adapter.ts); any other name is an
 * environment variable (or `kwargs.KEY`).
 */
export const TEMPLATE_VARIABLES: readonly string[] = [
  'workspace',
  'case_id',
  'variant',
  'trial',
  'model',
  'model_provider',
  'model_name',
  'max_turns',
  'skill_root',
  'skills_dir',
  'home',
  'output_dir',
  'prompt',
  'session_id',
  'timeout_seconds',
  'input_file',
  'output_file',
];

/** One `${…}` reference of a template. */
export interface TemplateRef {
  /** As written, e.g. `${API_URL:-http://localhost}`. */
  text: string;
  name: string;
  /** `:-` (default), `?` or `:?` (required, with a message), or undefined. */
  op?: ':-' | '?' | ':?';
  /** The default or the message. */
  arg?: string;
}

/** The `${…}` references of `template`, in order. */
export function templateReferences(template: string): TemplateRef[] {
  const out: TemplateRef[] = [];
  for (const m of template.matchAll(REF)) {
    const ref: TemplateRef = { text: m[0], name: m[1]! };
    if (m[2] !== undefined) ref.op = m[2] as TemplateRef['op'];
    if (m[3] !== undefined) ref.arg = m[3];
    out.push(ref);
  }
  return out;
}

/**
 * Expands `template`. `vars` holds the named variables (`kwargs.x` keys flattened with the dot);
 * names not in `vars` are looked up in `env`. An unset environment variable without a default
 * expands to the empty string, like a shell; `${VAR?msg}` (and `${VAR:?msg}`) throws
 * TemplateError(msg) instead, also when the variable is set but empty.
 */
export function expandTemplate(template: string, vars: Record<string, string>, env: Record<string, string | undefined>): string {
  return template.replace(REF, (_m, name: string, op: string | undefined, arg: string | undefined) => {
    if (name in vars) return vars[name]!;
    if (name.startsWith('kwargs.')) throw new TemplateError(`\${${name}}: no such key in engine.custom.kwargs`);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (op === ':-') return arg ?? '';
    if (op === '?' || op === ':?') throw new TemplateError(arg ? `\${${name}}: ${arg}` : `\${${name}} is not set`);
    return '';
  });
}
