/**
 * `skill-up engines list | install <engine>[@version] | check [<engine>[@version]…]`.
 *
 * Exit codes follow design.md: 0 success, 1 `check` found an engine missing or unusable (any
 * engine checked: the named ones, else every known engine), 2 usage error, 3 infrastructure
 * error (an install failed). Results go to stdout; the install progress line and error
 * messages go to stderr.
 */
import { cacheRoot, displayPath, enginesDir } from './cache.js';
import { binOverrideVar, knownEngines } from './known.js';
import { checkEngine, installEngine, listEngines, type EngineCheck } from './resolve.js';
import { parse, UsageError } from '../util/args.js';
import { didYouMean } from '../util/did-you-mean.js';
import { imageReferenceProblem } from '../config/image-ref.js';
import { engineDefinitions, findEngineDefinition } from '../../engines/index.js';

/** The subcommands of `skill-up engines`. */
const COMMANDS = ['list', 'install', 'check'] as const;

/** Every engine spelling eval.yaml accepts (canonical names and aliases, from the registry). */
function engineSpellings(): string[] {
  return engineDefinitions().flatMap((d) => [d.name, ...d.aliases]);
}

/** "unknown engine" with a did-you-mean over every spelling and the canonical names. */
function unknownEngine(name: string): string {
  return `unknown engine "${name}"${didYouMean(name, engineSpellings())} (known: ${knownEngines().map((e) => e.name).join(', ')})`;
}

/** The help text; its engine list is read from the registry when shown. */
const helpText = (): string => `Usage: skill-up engines <command> [options]

Manage the agent CLIs skill-up drives. Engines are resolved from SKILL_UP_<ENGINE>_BIN,
then (with engine.version pinned in eval.yaml) skill-up's cache, else PATH, else the newest
cached version. The cache is $SKILL_UP_CACHE_DIR or ~/.cache/skill-up.

Commands:
  list                          Known engines, their npm package, cached versions and PATH executable
  install <engine>[@version]    npm-install an engine version into the cache (default: npm's latest)
  check [<engine>[@version]…]   Resolve each engine as a run would and run \`--version\`
                                (default: every known engine; a pinned version must be cached);
                                exit code 1 when any engine checked is missing or unusable

Options of check:
  --runtime docker --image <image>
                                Also check the Docker runtime: the daemon (DOCKER_HOST), the
                                image and the Node in it, then run each engine's \`--version\`
                                inside a container of the image (its package mounted read-only,
                                no network); exit code 3 when the daemon or image is unusable

Options:
  --json                        Machine-readable output (list, check)
  -h, --help                    Show this help

Engines: ${knownEngines().map((e) => `${e.name} (${e.npmPackage})`).join(', ')}

Examples:
  skill-up engines list
  skill-up engines install claude_code@2.1.332
  skill-up engines install codex
  skill-up engines check claude_code
  skill-up engines check claude_code codex --runtime docker --image node:20
  SKILL_UP_CLAUDE_CODE_BIN=/opt/claude/bin/claude skill-up engines check claude_code
`;

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

const defaultIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
};

/** Splits `name@version` (the version is optional). */
export function parseEngineSpec(spec: string): { name: string; version?: string } {
  const at = spec.indexOf('@');
  if (at <= 0) return { name: spec };
  const version = spec.slice(at + 1);
  return { name: spec.slice(0, at), version: version === '' ? undefined : version };
}

/**
 * Runs `skill-up engines …` with `argv` = the words after `engines`. Returns the exit code;
 * never throws for user or engine errors.
 */
export async function runEnginesCommand(argv: string[], io: Io = defaultIo): Promise<number> {
  // The parser every command uses (src/util/args.ts): unknown flags get its did-you-mean.
  let parsed: { values: { json?: boolean; help?: boolean; runtime?: string; image?: string }; positionals: string[] } | undefined;
  let problem: string | undefined;
  try {
    parsed = parse(argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, runtime: { type: 'string' }, image: { type: 'string' } });
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    problem = e.message;
  }
  const json = parsed?.values.json === true;
  const help = parsed?.values.help === true || argv.includes('--help') || argv.includes('-h');
  const [cmd, ...rest] = parsed?.positionals ?? [];
  if (help || (cmd === undefined && argv.length === 0)) {
    io.out(helpText());
    return help ? 0 : 2;
  }
  if (problem !== undefined) return usage(io, problem);
  switch (cmd) {
    case 'list':
      if (rest.length > 0) return usage(io, '`engines list` takes no arguments');
      return list(io, json);
    case 'install':
      if (rest.length !== 1) return usage(io, '`engines install` takes exactly one <engine>[@version]');
      return install(io, rest[0]!);
    case 'check': {
      const { runtime, image } = parsed!.values;
      if (runtime === undefined && image === undefined) return check(io, rest, json);
      if (runtime !== 'docker') return usage(io, runtime === undefined ? '`--image` goes with `--runtime docker`' : `unknown runtime "${runtime}" (\`--runtime docker\` is the one to check; the local runtime needs no check)`);
      if (!image) return usage(io, '`--runtime docker` needs `--image <image>`: the image your eval.yaml names in environment.image');
      const badImage = imageReferenceProblem(image);
      if (badImage) return usage(io, `--image \`${image}\` ${badImage}`);
      return checkInDocker(io, rest, image, json);
    }
    default:
      return usage(io, cmd === undefined ? 'missing command' : `unknown command "${cmd}"${didYouMean(cmd, COMMANDS)}`);
  }
}

function usage(io: Io, message: string): number {
  io.err(`skill-up engines: ${message}\nRun \`skill-up engines --help\` for usage.\n`);
  return 2;
}

async function list(io: Io, json: boolean): Promise<number> {
  const rows = await listEngines();
  if (json) {
    io.out(JSON.stringify({ cacheDir: enginesDir(cacheRoot()), engines: rows }, null, 2) + '\n');
    return 0;
  }
  const table = [['ENGINE', 'PACKAGE', 'CACHED', 'ON PATH']];
  for (const r of rows) {
    table.push([r.name, r.npmPackage, r.cachedVersions.join(', ') || '-', r.onPath ? displayPath(r.onPath) : '-']);
  }
  io.out(formatTable(table));
  for (const r of rows) {
    if (r.override) io.out(`${r.override.variable}=${r.override.value} overrides ${r.name}\n`);
  }
  io.out(`cache: ${displayPath(enginesDir(cacheRoot()))}\n`);
  return 0;
}

async function install(io: Io, spec: string): Promise<number> {
  const { name, version } = parseEngineSpec(spec);
  const def = findEngineDefinition(name);
  if (!def) return usage(io, unknownEngine(name));
  try {
    const r = await installEngine(def.name, version, { onProgress: (line) => io.err(`${line}\n`) });
    io.out(`${r.name} ${r.version}${r.installed ? '' : ' (already installed)'}: ${displayPath(r.path)}\n`);
    io.out(`Pin it in eval.yaml:  engine: { name: ${r.name}, version: ${r.version} }\n`);
    return 0;
  } catch (e) {
    io.err(`skill-up engines install: ${(e as Error).message}\n`);
    return 3;
  }
}

/** The engines `check` names (canonical names: an alias such as `gemini` checks its engine), default every known one; the usage message for an unknown name. */
function checkTargets(specs: string[]): { name: string; version?: string }[] | string {
  const targets = specs.length > 0 ? specs.map(parseEngineSpec) : knownEngines().map((e) => ({ name: e.name, version: undefined }));
  for (const t of targets) {
    const def = findEngineDefinition(t.name);
    if (!def) return unknownEngine(t.name);
    t.name = def.name;
  }
  return targets;
}

async function check(io: Io, specs: string[], json: boolean): Promise<number> {
  const targets = checkTargets(specs);
  if (typeof targets === 'string') return usage(io, targets);
  const results: EngineCheck[] = [];
  for (const t of targets) results.push(await requirementsMet(await checkEngine(t.name, t.version)));
  if (json) {
    io.out(JSON.stringify(results, null, 2) + '\n');
  } else {
    for (const r of results) {
      if (r.ok) {
        const from = r.source === 'env' ? binOverrideVar(r.name) : r.source;
        io.out(`${r.name}: ok ${r.version} at ${displayPath(r.path!)} (${from})\n`);
      } else {
        const msg = r.message ?? '';
        io.out(`${r.name}: unavailable: ${msg.startsWith(`${r.name}: `) ? msg.slice(r.name.length + 2) : msg}\n`);
      }
    }
  }
  // Every engine checked must work (issue 11): a missing one is exit 1, so CI notices it.
  return results.every((r) => r.ok) ? 0 : 1;
}

/**
 * `check --runtime docker --image <image>`: the daemon, the image and its Node (exit 3 when any
 * fails), then each engine resolved here and run with `--version` in a throwaway container of
 * the image, as a job would run it (src/runtime/docker/runtime.ts): exit 1 when one fails there.
 */
async function checkInDocker(io: Io, specs: string[], image: string, json: boolean): Promise<number> {
  const targets = checkTargets(specs);
  if (typeof targets === 'string') return usage(io, targets);
  const { checkEnginesInImage } = await import('../runtime/docker/check.js');
  const checked = [];
  for (const t of targets) checked.push(await requirementsMet(await checkEngine(t.name, t.version)));
  const r = await checkEnginesInImage(image, checked, process.env);
  if (json) {
    io.out(JSON.stringify(r, null, 2) + '\n');
  } else if (r.daemon.ok) {
    io.out(`docker: ok ${r.daemon.engine} ${r.daemon.version} at ${r.daemon.endpoint}; image ${image}: node ${r.daemon.nodeVersion}\n`);
    for (const e of r.engines) {
      const msg = e.message ?? '';
      const why = msg.startsWith(`${e.name}: `) ? msg.slice(e.name.length + 2) : msg;
      // Not found here at all, or found here but failing inside the image.
      io.out(e.ok ? `${e.name}: ok ${e.version} in ${image} (${displayPath(e.path!)}, mounted read-only)\n` : `${e.name}: unavailable${e.path ? ` in ${image}` : ''}: ${why}\n`);
    }
  } else {
    io.err(`skill-up engines check: ${r.daemon.message}\n`);
  }
  if (!r.daemon.ok) return 3;
  return r.engines.every((e) => e.ok) ? 0 : 1;
}

/**
 * A resolved engine's check, failed when the engine's adapter names something else it needs that
 * this environment lacks (`EngineAdapter.unmetRequirement`, e.g. OpenCode's `rg` on PATH): what
 * every job would otherwise report as `missing`.
 */
async function requirementsMet(r: EngineCheck): Promise<EngineCheck> {
  if (!r.ok || !r.path) return r;
  const adapter = await findEngineDefinition(r.name)?.load();
  const why = await adapter?.unmetRequirement?.(r.path, process.env);
  return why ? { name: r.name, ok: false, path: r.path, source: r.source, version: r.version, message: why } : r;
}

function formatTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}
