/**
 * Static checks of a custom engine (`engine.custom`), so that `validate` reports what `run`
 * would otherwise only find when the first job starts the agent: a command that does not
 * exist or cannot be executed, a required environment variable that is not set, a
 * `${kwargs.KEY}` with no such key, a URL that is not one, and files the agent reads or writes
 * outside its workspace.
 *
 * A command's templates are filled in as far as they are known now (`${skill_root}`,
 * `${kwargs.KEY}`, environment variables); a command that needs a per-job value
 * (`${workspace}`, `${HOME}`, …) is checked when the job starts, and `validate` says so in a
 * warning. Workspace paths are checked for what is written literally.
 */
import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { expandTemplate, TEMPLATE_VARIABLES, TemplateError, templateReferences } from '../../engines/custom/template.js';
import { workspacePathProblem } from './paths.js';
import type { Field } from './yaml-source.js';

/**
 * Why the file `abs` cannot be executed directly, or undefined when it can: missing, a folder,
 * without execute permission, or (ENOEXEC) neither a `#!` script nor a native binary.
 */
export function executableProblem(abs: string): string | undefined {
  let st;
  try {
    st = statSync(abs);
  } catch {
    return 'does not exist';
  }
  if (st.isDirectory()) return 'is a folder, not a program';
  if (!st.isFile()) return 'is not a regular file';
  try {
    accessSync(abs, constants.X_OK);
  } catch {
    return `is not executable (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')})`;
  }
  return startProblem(abs);
}

/**
 * Why the kernel would refuse to start the executable file `abs` (ENOEXEC), or undefined: a
 * file that starts with neither `#!` (a script) nor the header of a native binary (ELF, Mach-O).
 */
export function startProblem(abs: string): string | undefined {
  const head = Buffer.alloc(4);
  let n: number;
  try {
    const fd = openSync(abs, 'r');
    try {
      n = readSync(fd, head, 0, 4, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined; // unreadable: the start reports it
  }
  if (n >= 2 && head[0] === 0x23 && head[1] === 0x21) return undefined; // #!
  if (n === 4) {
    const magic = head.readUInt32BE(0);
    if (magic === 0x7f454c46) return undefined; // ELF
    if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(magic)) return undefined; // Mach-O
  }
  return n === 0
    ? 'is empty, so it cannot be executed (ENOEXEC)'
    : 'is executable but starts with neither `#!` (a script\'s interpreter line) nor a binary header, so it cannot be executed (ENOEXEC)';
}

/** The first executable called `name` on `PATH` (absolute), or undefined. */
export function findOnPathSync(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/**
 * Checks `custom.local.command` as the run will start it: a path holding `/` is resolved
 * against the skill root (absolute paths as they are) and must be an executable file that the
 * kernel can start; a bare name must be an executable on `PATH`. Templates are filled in first
 * (see the module comment); a command needing a per-job value gets a warning instead, and a
 * bare name is not looked up when `engine.custom.env` sets `PATH` or with `lookUpPath: false`
 * (the agent runs in a container, whose image has its own PATH). A bare name missing from PATH
 * is an error, not a warning: with the local runtime the run starts it from this same PATH.
 */
export function checkLocalCommand(
  field: Field,
  skillDir: string,
  env: Record<string, string | undefined>,
  customEnv: Record<string, string>,
  kwargs: Record<string, string> = {},
  opts: { lookUpPath?: boolean } = {},
): void {
  const written = field.str();
  if (written === undefined || written === '') return;
  let command = written;
  let expandedNote = '';
  if (written.includes('${')) {
    const expanded = expandStatically(written, skillDir, env, customEnv, kwargs);
    if (expanded === undefined) {
      field.warn(`command \`${written}\` depends on a value known only when a job starts, so it is checked then, not now`);
      return;
    }
    if (expanded === null) return; // a required variable is unset: checkTemplateRefs reports it
    if (expanded.trim() === '') {
      field.error(`command \`${written}\` expands to nothing here (its variables are unset); set them, or give a default such as \`\${AGENT_BIN:-./evals/agent.sh}\``);
      return;
    }
    command = expanded;
    expandedNote = ` (from \`${written}\`)`;
  }
  if (command.includes('/')) {
    const abs = path.isAbsolute(command) ? command : path.resolve(skillDir, command);
    const problem = executableProblem(abs);
    if (!problem) return;
    const notes = [...(command !== written ? [`from \`${written}\``] : []), ...(abs !== command ? [`${abs}; a relative command is resolved against the skill root`] : [])];
    const where = notes.length ? ` (${notes.join('; ')})` : '';
    const fix = problem.startsWith('is not executable')
      ? `; make it executable (\`chmod +x ${command}\`) or run it through its interpreter (\`command: bash\`, \`args: [${command}, …]\`)`
      : problem.includes('ENOEXEC')
        ? '; add an interpreter line such as `#!/usr/bin/env bash` as its first line'
        : '';
    field.error(`command \`${command}\`${where} ${problem}${fix}`);
    return;
  }
  if (opts.lookUpPath === false || Object.prototype.hasOwnProperty.call(customEnv, 'PATH')) return;
  if (findOnPathSync(command, env.PATH)) return;
  let hint = '; install it, or give its path (e.g. `./evals/agent.sh`, relative to the skill root)';
  if (/\s/.test(command)) hint = '; `command` is one program: put its arguments in `args` (e.g. `command: python3`, `args: [agent.py]`)';
  else {
    try {
      if (statSync(path.join(skillDir, command)).isFile()) hint = `; to run the file in the skill folder, write \`./${command}\``;
    } catch {
      /* no such file either */
    }
  }
  field.error(`command \`${command}\`${expandedNote} is not on PATH (a name without \`/\` is looked up there)${hint}`);
}

/** Variables of a command whose values differ per job (the job's home, workspace, files). */
const PER_JOB = new Set([...TEMPLATE_VARIABLES.filter((v) => v !== 'skill_root'), 'HOME']);

/**
 * `command` with its templates filled in as the run will: `${skill_root}`, `${kwargs.KEY}`,
 * and environment references from `engine.custom.env` (as written, when it has no template)
 * or skill-up's environment. Undefined when a per-job value is needed; null when a required
 * variable is unset (reported elsewhere).
 */
function expandStatically(command: string, skillDir: string, env: Record<string, string | undefined>, customEnv: Record<string, string>, kwargs: Record<string, string>): string | undefined | null {
  const vars: Record<string, string> = { skill_root: skillDir };
  for (const [k, v] of Object.entries(kwargs)) vars[`kwargs.${k}`] = v;
  for (const ref of templateReferences(command)) {
    if (PER_JOB.has(ref.name)) return undefined;
    if (Object.prototype.hasOwnProperty.call(customEnv, ref.name) && customEnv[ref.name]!.includes('${')) return undefined;
  }
  try {
    return expandTemplate(command, vars, { ...env, ...customEnv });
  } catch (e) {
    if (e instanceof TemplateError) return null;
    throw e;
  }
}

/**
 * Checks the `${…}` references of one template field: `${kwargs.KEY}` needs KEY in
 * `engine.custom.kwargs`, and `${VAR?message}` / `${VAR:?message}` needs VAR set (non-empty)
 * in `env` (the environment skill-up runs in) or in `customEnv` (`engine.custom.env`, for
 * fields expanded after it; undefined for the env values themselves). Named variables (`${workspace}`, …) are always set.
 */
export function checkTemplateRefs(
  field: Field,
  kwargs: Record<string, string>,
  env: Record<string, string | undefined>,
  customEnv: Record<string, string> | undefined,
): void {
  const text = field.str();
  if (text === undefined || !text.includes('${')) return;
  for (const ref of templateReferences(text)) {
    if (TEMPLATE_VARIABLES.includes(ref.name)) continue;
    if (ref.name.startsWith('kwargs.')) {
      const key = ref.name.slice('kwargs.'.length);
      if (!Object.prototype.hasOwnProperty.call(kwargs, key)) {
        const known = Object.keys(kwargs);
        field.error(`\`${ref.text}\` names no key of \`engine.custom.kwargs\` (${known.length ? `keys: ${known.map((k) => `\`${k}\``).join(', ')}` : 'it has none'})`);
      }
      continue;
    }
    if (ref.op !== '?' && ref.op !== ':?') continue;
    if ((env[ref.name] ?? '') !== '') continue;
    if (customEnv && Object.prototype.hasOwnProperty.call(customEnv, ref.name)) continue;
    const why = ref.arg ? `: ${ref.arg}` : '';
    field.error(
      `\`${ref.text}\` requires the environment variable \`${ref.name}\`, which is not set${why}. Set it before \`skill-up run\` (and \`validate\`), or give a default: \`\${${ref.name}:-value}\``,
    );
  }
}

/**
 * Checks `environment.env` values: a `${VAR?message}` / `${VAR:?message}` needs VAR set (non-empty)
 * in `env`, skill-up's environment, which they are expanded from (src/engine/env.ts) once per run.
 */
export function checkSuiteEnvRefs(field: Field, env: Record<string, string | undefined>): void {
  const text = field.str();
  if (text === undefined || !text.includes('${')) return;
  for (const ref of templateReferences(text)) {
    if (ref.name.includes('.') || (ref.op !== '?' && ref.op !== ':?') || (env[ref.name] ?? '') !== '') continue;
    field.error(
      `\`${ref.text}\` requires the environment variable \`${ref.name}\`, which is not set${ref.arg ? `: ${ref.arg}` : ''}. Set it before \`skill-up run\` (and \`validate\`), or give a default: \`\${${ref.name}:-value}\``,
    );
  }
}

/** What a custom engine's paths are expanded with at `validate` time (see {@link checkAgentWorkspacePath}). */
export interface StaticTemplateValues {
  /** `engine.custom.kwargs`. */
  kwargs: Record<string, string>;
  /** The environment skill-up runs in. */
  env: Record<string, string | undefined>;
  /** `engine.custom.env` as written. */
  customEnv: Record<string, string>;
}

/** Variables whose folder is never inside the agent's workspace, with what they are. */
const OUTSIDE_WORKSPACE: Record<string, string> = {
  skill_root: 'the skill folder',
  output_dir: "the job's output folder",
  home: "the job's home folder",
  HOME: "the job's home folder",
};

/** Stands for the workspace while a path is expanded at `validate` time; never a real folder. */
const WORKSPACE_PLACEHOLDER = '/__skill-up-workspace__';

/**
 * Checks a workspace path of the agent (`local.cwd`, `input_file`, `output_file`): relative to
 * the workspace and inside it, as the run checks it once expanded (engines/custom/adapter.ts).
 * What is written literally is checked first (`..`, a leading `/`); then a path built from
 * `${skill_root}`, `${output_dir}` or `${home}` (never inside the workspace) is an error; then,
 * with `statics`, the templates known now (`${kwargs.KEY}`, environment variables) are filled
 * in, `${workspace}` standing for the workspace and other per-job values for a plain name, and
 * the result must stay inside the workspace.
 */
export function checkAgentWorkspacePath(field: Field, what: string, statics?: StaticTemplateValues): void {
  const text = field.str();
  if (text === undefined) return;
  const fix = "it must be relative to the agent's workspace and stay inside it (skill-up reads and writes it there)";
  const rest = text.replace(/^\$\{workspace\}(?:[\\/]+|$)/, '');
  if (rest === '') return;
  const literal = workspacePathProblem(rest);
  // e.g. `${kwargs.dir}/x`: only `..` segments are visible before expansion.
  if (literal && (!rest.startsWith('${') || rest.split(/[\\/]+/).includes('..'))) {
    field.error(`${what} \`${text}\` is ${literal}; ${fix}`);
    return;
  }
  if (!text.includes('${')) return;
  const refs = templateReferences(text);
  const outside = refs.find((r) => Object.prototype.hasOwnProperty.call(OUTSIDE_WORKSPACE, r.name) && !(r.name === 'HOME' && statics && Object.prototype.hasOwnProperty.call(statics.customEnv, 'HOME')));
  if (outside) {
    field.error(`${what} \`${text}\` is built from \`${outside.text}\`, ${OUTSIDE_WORKSPACE[outside.name]}, which is never inside the agent's workspace; ${fix}`);
    return;
  }
  if (!statics) return;
  const vars: Record<string, string> = {};
  for (const v of TEMPLATE_VARIABLES) vars[v] = 'x';
  vars.workspace = WORKSPACE_PLACEHOLDER;
  vars.skills_dir = `${WORKSPACE_PLACEHOLDER}/x`;
  for (const [k, v] of Object.entries(statics.kwargs)) vars[`kwargs.${k}`] = v;
  // An `engine.custom.env` value holding a template is known only per job: nothing to check.
  if (refs.some((r) => Object.prototype.hasOwnProperty.call(statics.customEnv, r.name) && statics.customEnv[r.name]!.includes('${'))) return;
  let expanded: string;
  try {
    expanded = expandTemplate(text, vars, { ...statics.env, ...statics.customEnv });
  } catch (e) {
    if (e instanceof TemplateError) return; // a required variable is unset: checkTemplateRefs reports it
    throw e;
  }
  if (expanded.trim() === '') return;
  const abs = path.posix.resolve(WORKSPACE_PLACEHOLDER, expanded.replace(/\\/g, '/'));
  const rel = path.posix.relative(WORKSPACE_PLACEHOLDER, abs);
  if (rel === '' || (rel !== '..' && !rel.startsWith('../') && !path.posix.isAbsolute(rel))) return;
  const shown = expanded.split(WORKSPACE_PLACEHOLDER).join('${workspace}');
  const resolved = abs.split(WORKSPACE_PLACEHOLDER).join('${workspace}');
  const where = resolved !== shown ? `, that is \`${resolved}\`` : '';
  field.error(`${what} \`${text}\` expands to \`${shown}\`${where}, which is outside the agent's workspace; ${fix}`);
}

/**
 * Checks `http.url`: without templates it must be an absolute `http://` or `https://` URL; with
 * templates only a literal start is checked (`${BASE_URL}/v1` is known at run time).
 */
export function checkHttpUrl(field: Field): void {
  const url = field.str();
  if (url === undefined || url === '' || url.startsWith('${')) return;
  // `0` fits wherever a template may stand: host, port, path.
  const probe = url.replace(/\$\{[^}]*\}/g, '0');
  let parsed: URL | undefined;
  try {
    parsed = new URL(probe);
  } catch {
    parsed = undefined;
  }
  if (!parsed) {
    field.error(`\`${url}\` is not a URL; expected an absolute http or https URL such as \`http://127.0.0.1:8080/session\``);
    return;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    field.error(`\`${url}\` is a \`${parsed.protocol.replace(/:$/, '')}:\` URL; skill-up POSTs to http or https URLs only (e.g. \`http://127.0.0.1:8080/session\`)`);
  }
}
