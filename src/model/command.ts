/**
 * `skill-up model-server --script FILE [--port N] [--log-dir DIR] [--quiet]`
 *
 * Starts the scripted model server in the foreground, prints where it listens and how to
 * point Claude Code at it, prints one line per model call (unless `--quiet`), and runs until
 * SIGINT or SIGTERM (or `io.signal` aborts). Exit codes: 0 after a clean stop, 2 for a usage
 * error or an invalid script (diagnostics are printed as `file:line:col: field: message`),
 * 3 when the port cannot be bound.
 */
import { untilStopped } from '../util/stop.js';
import { ConfigError, formatDiagnostic } from '../config/diagnostics.js';
import type { ExchangeLogEntry } from './log.js';
import { loadModelScript } from './script.js';
import { startModelServer } from './server.js';
import { intFlag, parse, UsageError } from '../util/args.js';

export const MODEL_SERVER_USAGE = `usage: skill-up model-server --script FILE [--port N] [--log-dir DIR] [--quiet]

Serves a scripted model on 127.0.0.1 until interrupted: the Anthropic Messages API (Claude Code),
OpenAI Responses (Codex), OpenAI Chat Completions (OpenCode, Qwen Code) and the Gemini API
(Gemini CLI), all on the same port.
  --script FILE   rule file (YAML, schemas/model-script.schema.json)
  --port N        TCP port (default 0: a free port)
  --log-dir DIR   append every exchange to DIR/model-requests.jsonl
                  (DIR/<jobId>/… when the API key is skill-up-job:<jobId>)
  --quiet         do not print one line per request

Examples (the server in one terminal, an engine pointed at it in another; any API key is accepted):
  skill-up model-server --script evals/model.yaml --port 8080
  # Claude Code: Anthropic Messages (POST /v1/messages)
  ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ANTHROPIC_API_KEY=dummy claude -p "create hello.py" --output-format stream-json --verbose --permission-mode bypassPermissions
  # Codex: OpenAI Responses (POST /v1/responses); codex ignores OPENAI_BASE_URL, a provider of its own does it
  OPENAI_API_KEY=dummy codex exec -c model_provider=scripted -c 'model_providers.scripted={name="scripted",base_url="http://127.0.0.1:8080/v1",wire_api="responses",env_key="OPENAI_API_KEY"}' "create hello.py"
  # Qwen Code and other OpenAI-compatible clients: Chat Completions (POST /v1/chat/completions)
  echo "create hello.py" | OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=dummy OPENAI_MODEL=scripted-model qwen --auth-type openai --output-format stream-json --yolo
  # Gemini CLI: the Gemini API (POST …/models/<model>:streamGenerateContent); its settings.json
  # needs "security": {"auth": {"selectedType": "gemini-api-key"}}, else it exits 41
  GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8080 GEMINI_API_KEY=dummy gemini --output-format stream-json --approval-mode yolo --prompt="create hello.py"`;

/** Where the command writes, and what stops it (tests pass their own). */
export interface CommandIO {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  /** Stops the server like SIGINT does. */
  signal?: AbortSignal;
  /** Called once the server listens, with its URL. */
  onListening?: (url: string) => void;
}

const defaultIO: CommandIO = {
  stdout: (l) => process.stdout.write(l + '\n'),
  stderr: (l) => process.stderr.write(l + '\n'),
};

interface Args {
  script?: string;
  port: number;
  logDir?: string;
  quiet: boolean;
  help: boolean;
}

/** The flags of `skill-up model-server`, on the parser every command uses (src/util/args.ts). */
function parseArgs(argv: string[]): Args | string {
  const rest = argv[0] === 'model-server' ? argv.slice(1) : argv;
  try {
    const { values, positionals } = parse(rest, {
      script: { type: 'string' },
      port: { type: 'string' },
      'log-dir': { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    if (positionals.length > 0) return `unknown argument ${positionals[0]!}`;
    if (values.script === '') return '--script needs a file';
    if (values['log-dir'] === '') return '--log-dir needs a folder';
    const args: Args = { port: intFlag('port', values.port, 0, 65535) ?? 0, quiet: values.quiet === true, help: values.help === true };
    if (values.script !== undefined) args.script = values.script;
    if (values['log-dir'] !== undefined) args.logDir = values['log-dir'];
    return args;
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
}

/** One human line per exchange. */
export function describeExchange(e: ExchangeLogEntry): string {
  const who = e.jobId ? ` job=${e.jobId}` : e.sessionId ? ` session=${e.sessionId.slice(0, 8)}` : '';
  if (e.kind !== 'generate' || !e.trace) return `${e.method} ${e.url} → ${e.status}${who}`;
  const c = e.conversation;
  const rule = e.trace.rule < 0 ? 'no rule' : `rule ${e.trace.rule}${e.trace.ruleName ? ` (${e.trace.ruleName})` : ''} step ${e.trace.step}`;
  const what = e.error
    ? `HTTP ${e.error.status} ${e.error.message}`
    : (e.reply?.blocks ?? []).map((b) => (b.type === 'text' ? `text ${JSON.stringify(b.text.length > 50 ? b.text.slice(0, 47) + '...' : b.text)}` : `${b.name} ${JSON.stringify(b.input).slice(0, 80)}`)).join(' + ');
  return `${e.method} ${e.url.split('?')[0]} turn ${c?.turn ?? '?'} ${rule} → ${what}${who}`;
}

/**
 * Runs the command. `argv` are the arguments after `model-server` (a leading
 * `model-server` is skipped too).
 * @returns the exit code (see the module doc).
 */
export async function runModelServerCommand(argv: string[], io: CommandIO = defaultIO): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    io.stderr(`skill-up model-server: ${args}`);
    io.stderr(MODEL_SERVER_USAGE);
    return 2;
  }
  if (args.help) {
    io.stdout(MODEL_SERVER_USAGE);
    return 0;
  }
  if (!args.script) {
    io.stderr('skill-up model-server: --script FILE is required');
    io.stderr(MODEL_SERVER_USAGE);
    return 2;
  }

  let script;
  try {
    script = await loadModelScript(args.script);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    for (const d of e.diagnostics) io.stderr(formatDiagnostic(d));
    return 2;
  }
  for (const w of script.warnings) io.stderr(formatDiagnostic(w));

  let server;
  try {
    server = await startModelServer({
      script,
      port: args.port,
      ...(args.logDir ? { logDir: args.logDir } : {}),
      onRequest: args.quiet ? undefined : (e) => io.stdout(describeExchange(e)),
    });
  } catch (e) {
    io.stderr(`skill-up model-server: cannot listen on 127.0.0.1:${args.port}: ${(e as Error).message}`);
    return 3;
  }

  io.stdout(`listening on ${server.url}`);
  io.stdout(`script: ${script.file} (${script.rules.length} rule${script.rules.length === 1 ? '' : 's'})`);
  io.stdout('try:');
  io.stdout(
    `  ANTHROPIC_BASE_URL=${server.url} ANTHROPIC_API_KEY=dummy CLAUDE_CODE_MAX_RETRIES=0 DISABLE_TELEMETRY=1 ` +
      `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 claude -p "create hello.py" --output-format stream-json --verbose ` +
      `--permission-mode bypassPermissions --max-turns 5`,
  );
  io.onListening?.(server.url);

  await untilStopped(io.signal);
  await server.close();
  io.stdout('model server stopped');
  return 0;
}
