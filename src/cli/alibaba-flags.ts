/**
 * alibaba/skill-up's `run` flags (prior-art notes, 2.1), read before skill-up's own parser:
 *
 * - `-v`, `-vv`, `--verbose`, `--verbose=N`, `--verbose=false`: the verbosity level;
 * - `--include-case-name` / `--exclude-case-name`: skill-up's `--case` / `--exclude-case`;
 * - the flags that have no meaning here (`--provider`, `--api-key`, `--runtime`,
 *   `--runtime-kwarg`/`--rk`, `--engine-kwarg`/`--ek`) are a usage error naming the flag and
 *   what to do instead, not a generic "unknown option".
 *
 * `--format`, `--model`, `--no-delete`, `--iteration`, `--engine`, `--parallelism`,
 * `--baseline`, `--output-dir`, `--dry-run` and `--auto` are skill-up's own options.
 */
import { UsageError } from '../util/args.js';

/** alibaba/skill-up run flags skill-up does not support, with what to do instead. */
export const UNSUPPORTED_RUN_FLAGS: Readonly<Record<string, string>> = {
  '--provider': 'set engine.model.provider in eval.yaml (a model name goes in --model or engine.model.name)',
  '--api-key': 'skill-up takes credentials from the environment only (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY, or engine.custom.env for a custom agent), so no key reaches a command line or a report',
  '--runtime': 'set environment.type in eval.yaml (`none`, or `docker` with environment.image); skill-up has no opensandbox runtime',
  '--runtime-kwarg': 'set the runtime\'s settings in eval.yaml\'s environment (docker: image, network, cpus, memory, pids_limit, user, workdir, mounts)',
  '--rk': 'set the runtime\'s settings in eval.yaml\'s environment (docker: image, network, cpus, memory, pids_limit, user, workdir, mounts)',
  '--engine-kwarg': 'set engine.kwargs in eval.yaml',
  '--ek': 'set engine.kwargs in eval.yaml',
};

/** alibaba/skill-up's names of skill-up's own flags. */
const ALIASES: Readonly<Record<string, string>> = {
  '--include-case-name': '--case',
  '--exclude-case-name': '--exclude-case',
};

/**
 * Takes the verbosity flags out of `argv`, renames the alias flags and refuses the
 * unsupported ones. Nothing after a lone `--` is touched.
 * @throws UsageError naming an unsupported flag, or a bad `--verbose=` value.
 */
export function readAlibabaFlags(argv: readonly string[]): { argv: string[]; verbose: number } {
  const out: string[] = [];
  let verbose = 0;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (/^-v+$/.test(a)) {
      verbose += a.length - 1;
      continue;
    }
    if (a === '--verbose') {
      verbose++;
      continue;
    }
    const v = /^--verbose=(.*)$/.exec(a);
    if (v) {
      const value = v[1]!.trim().toLowerCase();
      if (value === 'false' || value === '0') verbose = 0;
      else if (value === 'true') verbose++;
      else if (/^\d+$/.test(value)) verbose = Number(value);
      else throw new UsageError(`--verbose takes a level (1, 2), true or false, got \`${v[1]}\``);
      continue;
    }
    const name = a.startsWith('--') ? a.split('=')[0]! : a;
    const why = Object.hasOwn(UNSUPPORTED_RUN_FLAGS, name) ? UNSUPPORTED_RUN_FLAGS[name] : undefined;
    if (why) throw new UsageError(`${name} (an alibaba/skill-up run flag) is not supported by skill-up: ${why}`);
    const alias = Object.hasOwn(ALIASES, name) ? ALIASES[name] : undefined;
    if (alias) {
      out.push(a.includes('=') ? `${alias}${a.slice(name.length)}` : alias);
      continue;
    }
    out.push(a);
  }
  return { argv: out, verbose: Math.min(verbose, 2) };
}
