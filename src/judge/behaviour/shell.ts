/**
 * Shell tool calls across engines: the command a call ran, whether it is a test runner, and
 * whether it succeeded. Engines name their shell tool differently (Claude Code `Bash`, Codex
 * `command_execution`, OpenCode `bash`, Gemini CLI and Qwen Code `run_shell_command`), but
 * all of them put the command line in the input's `command` (a string, or an argv array),
 * which is what is read here; a custom agent that reports `command`/`cmd` is read the same.
 *
 * Everything here is linear in the command or output length; no regular expression is used.
 */
import { findEngineDefinition } from '../../../engines/index.js';
import type { ToolCall } from '../../engine/types.js';

/** Characters of a command line inspected (longer ones: their start). */
const MAX_COMMAND_CHARS = 16 * 1024;
/** Characters of a tool output searched for an `Exit code: N` line, at its start and its end. */
const EXIT_SCAN_CHARS = 4096;

/** The command line a shell tool call ran, or undefined when the call is not a shell command. */
export function shellCommandOf(call: Pick<ToolCall, 'input'>): string | undefined {
  const input = call.input;
  if (!input || typeof input !== 'object' || Array.isArray(input)) return undefined;
  const obj = input as Record<string, unknown>;
  for (const key of ['command', 'cmd']) {
    const v = obj[key];
    if (typeof v === 'string' && v.trim() !== '') return v.slice(0, MAX_COMMAND_CHARS);
    if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v.join(' ').slice(0, MAX_COMMAND_CHARS);
  }
  return undefined;
}

/** Programs that are test runners by themselves (`npx vitest run`, `python -m pytest`, `./node_modules/.bin/jest`). */
const RUNNERS = new Set(['vitest', 'jest', 'mocha', 'pytest', 'py.test', 'unittest', 'rspec', 'phpunit', 'ctest', 'tox', 'nox', 'ava', 'karma', 'nosetests', 'trial']);
/** Programs whose `test` subcommand runs the tests (`go test`, `cargo test`, `npm test`, `make test`). */
const TEST_SUBCOMMAND = new Set(['go', 'cargo', 'deno', 'swift', 'mix', 'dotnet', 'mvn', 'gradle', 'gradlew', 'bazel', 'bazelisk', 'rake', 'make', 'npm', 'yarn', 'pnpm', 'bun', 'zig', 'stack', 'cabal', 'lein', 'sbt', 'flutter', 'dart', 'elixir']);
/** Package managers whose `run <script>` runs a script named `test…`. */
const SCRIPT_RUNNERS = new Set(['npm', 'yarn', 'pnpm', 'bun']);

/** Words of a command line: split at white space and shell separators, lower-cased, each reduced to its last path segment. */
function words(command: string): string[] {
  const out: string[] = [];
  let cur = '';
  const push = () => {
    if (cur !== '') out.push(cur.slice(cur.lastIndexOf('/') + 1).toLowerCase());
    cur = '';
  };
  for (const ch of command) {
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === ';' || ch === '&' || ch === '|' || ch === '(' || ch === ')' || ch === '`' || ch === '"' || ch === "'") push();
    else cur += ch;
  }
  push();
  return out;
}

/**
 * Whether `command` runs a test suite: a test runner (`pytest`, `vitest`, `jest`, `mocha`,
 * `rspec`, `phpunit`, `ctest`, `tox`, …, also as `python -m pytest` or `npx vitest`), or a
 * build tool's test subcommand (`npm test`, `npm t`, `npm run test:unit`, `yarn test`,
 * `go test`, `cargo test`, `make test`, `make check`, `mvn test`/`verify`, `gradle test`,
 * `dotnet test`, `deno test`, `swift test`, `mix test`, `bazel test`, …).
 */
export function isTestCommand(command: string): boolean {
  const w = words(command);
  for (let i = 0; i < w.length; i++) {
    const word = w[i]!;
    if (RUNNERS.has(word)) return true;
    const next = w[i + 1];
    if (next === undefined) continue;
    if (TEST_SUBCOMMAND.has(word)) {
      if (next === 'test' || next.startsWith('test:') || (SCRIPT_RUNNERS.has(word) && next === 't')) return true;
      if (word === 'make' && next === 'check') return true;
      if (word === 'mvn' && next === 'verify') return true;
    }
    if (SCRIPT_RUNNERS.has(word) && (next === 'run' || next === 'run-script') && w[i + 2]?.startsWith('test')) return true;
  }
  return false;
}

/**
 * The exit code a tool output states on a line of its own (`Exit code: 1`, `exit code 2`,
 * `Exit Code: 0`: Claude Code, Gemini CLI and Qwen Code print one), searched in the first and
 * last {@link EXIT_SCAN_CHARS} characters; undefined when none is stated.
 */
export function statedExitCode(output: string | undefined): number | undefined {
  if (!output) return undefined;
  const parts = output.length <= EXIT_SCAN_CHARS * 2 ? [output] : [output.slice(0, EXIT_SCAN_CHARS), output.slice(-EXIT_SCAN_CHARS)];
  for (const part of parts) {
    for (const raw of part.split('\n')) {
      const line = raw.trim().toLowerCase();
      if (!line.startsWith('exit code')) continue;
      let rest = line.slice('exit code'.length).trimStart();
      if (rest.startsWith(':')) rest = rest.slice(1).trimStart();
      let digits = '';
      for (const ch of rest) {
        if (ch >= '0' && ch <= '9' && digits.length < 6) digits += ch;
        else break;
      }
      if (digits !== '') return Number(digits);
    }
  }
  return undefined;
}

/**
 * Why the shell calls of `engine` (a transcript's engine name) have no known outcome, or
 * undefined when the engine reports it (its definition's `shellExitObservable`, default true;
 * an unknown or custom engine: reported, as its own `isError`).
 */
export function shellExitsUnobservable(engine: string | undefined): string | undefined {
  const def = engine !== undefined ? findEngineDefinition(engine) : undefined;
  if (!def || def.shellExitObservable !== false) return undefined;
  return `${def.label}'s output does not say whether a shell command failed (its exit status is not reported)`;
}

/**
 * The call as far as its outcome is known: a shell call of an engine that does not report shell
 * exit statuses (`shellExitsKnown` false) keeps `isError: true` (the tool itself failed) but
 * loses `isError: false`, which only means the tool ran.
 */
export function observedCall<T extends Pick<ToolCall, 'input' | 'isError' | 'output'>>(call: T, shellExitsKnown: boolean): T {
  if (shellExitsKnown || call.isError !== false || shellCommandOf(call) === undefined) return call;
  return { ...call, isError: undefined };
}

/** A call failed: the engine marked it an error, or its output states a non-zero exit code. */
export function callFailed(call: Pick<ToolCall, 'isError' | 'output'>): boolean {
  if (call.isError === true) return true;
  const code = statedExitCode(call.output);
  return code !== undefined && code !== 0;
}

/**
 * A call is known to have succeeded: not failed, and the engine marked it as no error
 * (`isError: false`) or its output states exit code 0. A call whose outcome the engine did not
 * report is neither failed nor succeeded.
 */
export function callSucceeded(call: Pick<ToolCall, 'isError' | 'output'>): boolean {
  if (callFailed(call)) return false;
  return call.isError === false || statedExitCode(call.output) === 0;
}
