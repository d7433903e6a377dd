/**
 * skill-up's entry point: dispatches sub-commands and turns every expected failure into one
 * clear message and an exit code (2 for bad input, 3 for infrastructure), never a stack trace.
 */
import { nearest } from '../util/did-you-mean.js';
import { ConfigError } from '../config/diagnostics.js';
import { PlanError } from '../plan/plan.js';
import { OutputDirError } from '../run/output.js';
import { UsageError } from '../util/args.js';
import { printDiagnostics } from './diagnostics.js';
import { VERSION } from '../util/version.js';

const HELP = `skill-up ${VERSION}: does an Agent Skill make coding agents better? Measure it.

Usage: skill-up <command> [options]

Commands:
  init [skill folder] write a starter suite from SKILL.md (evals/: eval.yaml, 2 cases, a scripted model) that runs offline
  run [path]          run a skill's eval suite and write result.json, report.xml, summary.md, benchmark.json
  calibrate [path]    A/A calibration: flakiness, false-difference rate, noise floor, power table
  validate [path]     check eval.yaml, case files and SKILL.md; report every problem
  list-cases [path]   list the suite's cases
  report <result.json>           regenerate reports (junit, markdown, benchmark, html) from a saved run
  compare <old> <new>            compare two runs case by case (or --engines a,b / --variants of one run); exit 1 on a proven regression
  merge <run folder>...          put the shards of \`run --shard i/n\` back together into one run (statistics over the union)
  regrade <iteration folder>     grade a saved run again with the suite's current judges, without running the agents
  import <evals.json>            convert Anthropic skill-creator evals.json into eval.yaml + cases
  engines <list|install|check>   the agent CLIs skill-up can drive, and its engine cache
  model-server --script FILE     serve a scripted model for any engine (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini APIs)
  mcp-mock --config FILE         serve a mocked MCP server (built-in filesystem, canned tool answers) over stdio or HTTP

Run \`skill-up <command> --help\` for a command's options and examples.

Examples:
  skill-up init path/to/my-skill && skill-up run path/to/my-skill
  skill-up init path/to/my-skill --engine codex --force
  skill-up run examples/greeting-files --trials 3 --baseline
  skill-up validate path/to/my-skill
  skill-up report my-skill-workspace/iteration-1/result.json --format markdown
  skill-up import my-skill/evals/evals.json
`;

// Each command's modules load only when it runs: a smaller process starts faster and forks
// engine processes faster (fork time grows with the parent's memory).
const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  run: async (argv) => (await import('./run.js')).runCommand(argv),
  validate: async (argv) => (await import('./validate.js')).validateCommand(argv),
  'list-cases': async (argv) => (await import('./validate.js')).listCasesCommand(argv),
  report: async (argv) => (await import('./report.js')).reportCommand(argv),
  compare: async (argv) => (await import('./compare.js')).compareCommand(argv),
  merge: async (argv) => (await import('./merge.js')).mergeCommand(argv),
  regrade: async (argv) => (await import('./regrade.js')).regradeCommand(argv),
  calibrate: async (argv) => (await import('./calibrate.js')).calibrateCommand(argv),
  import: async (argv) => (await import('./import.js')).importCommand(argv),
  init: async (argv) => (await import('./init.js')).initCommand(argv),
  engines: async (argv) => (await import('../engine/engines-command.js')).runEnginesCommand(argv),
  'model-server': async (argv) => (await import('../model/index.js')).runModelServerCommand(argv),
  'mcp-mock': async (argv) => (await import('./mcp-mock.js')).mcpMockCommand(argv),
};

/** Runs the CLI with `argv` (without node and script) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '-h' || cmd === '--help' || cmd === 'help') {
    process.stdout.write(HELP);
    return cmd ? 0 : 2;
  }
  if (cmd === '-v' || cmd === '--version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const handler = COMMANDS[cmd];
  if (!handler) {
    const near = nearest(cmd, Object.keys(COMMANDS), { maxDistance: 2 });
    const hint = near !== undefined ? ` did you mean \`${near}\`?` : '';
    process.stderr.write(`skill-up: unknown command \`${cmd}\`${hint ? `;${hint}` : ''} (commands: ${Object.keys(COMMANDS).join(', ')}; see skill-up --help)\n`);
    return 2;
  }
  try {
    return await handler(rest);
  } catch (e) {
    if (e instanceof ConfigError) {
      printDiagnostics(e.diagnostics);
      return 2;
    }
    if (e instanceof UsageError || e instanceof PlanError || e instanceof OutputDirError) {
      process.stderr.write(`skill-up ${cmd}: ${e.message} (see skill-up ${cmd} --help)\n`);
      return 2;
    }
    process.stderr.write(`skill-up ${cmd}: internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 3;
  }
}
