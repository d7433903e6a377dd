/**
 * `${…}` templates of a custom engine's command, args, cwd, env, url and headers, as in
 * alibaba/skill-up's custom engine contract (docs/design/custom-engine.md):
 * named variables (`${workspace}`, `${prompt}`, `${kwargs.key}`, …) first, then environment
 * references `${VAR}`, `${VAR:-default}` and `${VAR?message}`.
 */

/** Raised when a template cannot be expanded (an unknown variable, `${VAR?msg}` unset). */
export class TemplateError extends Error {}

const REF = /\$\{([A-Za-z_][A-Za-z0-9_.]*)(?:(:-|\?)([^}]*))?\}/g;

/**
 * Expands `template`. `vars` holds the named variables (`kwargs.x` keys flattened with the dot);
 * names not in `vars` are looked up in `env`. An unset environment variable without a default
 * expands to the empty string, like a shell; `${VAR?msg}` throws TemplateError(msg) instead.
 */
export function expandTemplate(template: string, vars: Record<string, string>, env: Record<string, string | undefined>): string {
  return template.replace(REF, (_m, name: string, op: string | undefined, arg: string | undefined) => {
    if (name in vars) return vars[name]!;
    if (name.startsWith('kwargs.')) throw new TemplateError(`\${${name}}: no such key in engine.custom.kwargs`);
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (op === ':-') return arg ?? '';
    if (op === '?') throw new TemplateError(arg ? `\${${name}}: ${arg}` : `\${${name}} is not set`);
    return '';
  });
}
