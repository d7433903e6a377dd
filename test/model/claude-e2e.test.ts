/**
 * End-to-end: the real Claude Code binary against the scripted model server.
 *
 * The binary is `$SKILL_UP_CLAUDE_CODE_BIN`, which the global set-up (test/setup/claude.ts)
 * provides by installing the pinned version from the npm registry. Without it these tests
 * fail with the reason: they are never skipped silently.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { FIXTURES, script } from './helpers.js';

const CANDIDATE = process.env.SKILL_UP_CLAUDE_CODE_BIN || process.env.SKILL_UP_CLAUDE_BIN || '/tmp/cc/node_modules/.bin/claude';

function whyUnavailable(): string | undefined {
  if (!existsSync(CANDIDATE)) return `no Claude Code binary at ${CANDIDATE} (set SKILL_UP_CLAUDE_BIN or npm install --prefix /tmp/cc @anthropic-ai/claude-code@2.1.332)`;
  // Installed with --ignore-scripts, bin/claude.exe is a ~500-byte stub that only prints an error.
  if (statSync(CANDIDATE).size < 100_000) return `${CANDIDATE} is the npm stub, not the native binary (install without --ignore-scripts)`;
  return undefined;
}

const unavailable = whyUnavailable();
if (unavailable) throw new Error(`[claude-e2e] ${unavailable}`);
const title = `Claude Code e2e (${CANDIDATE})`;

interface Run {
  code: number;
  ms: number;
  lines: Array<Record<string, unknown>>;
  result: Record<string, unknown>;
  stderr: string;
}

let root: string;
let server: ModelServer;
const timings: Record<string, number> = {};

/** Runs `claude -p` in `cwd` against the server with per-run HOME and CLAUDE_CONFIG_DIR. */
function claude(name: string, cwd: string, prompt: string, extra: string[] = []): Promise<Run> {
  const home = join(root, `${name}-home`);
  mkdirSync(join(home, 'config'), { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, 'config'),
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: `skill-up-job:${name}`,
    IS_SANDBOX: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
  const args = ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions', '--max-turns', '5', ...extra];
  const t0 = Date.now();
  // Asynchronous on purpose: the server runs in this process and must keep answering.
  return new Promise((resolve) => {
    const child = execFile(CANDIDATE, args, { cwd, env, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const ms = Date.now() - t0;
      timings[name + (extra.includes('--resume') ? ' (resume)' : '')] = ms;
      const lines = stdout
        .split('\n')
        .filter((l) => l.trim().startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const result = lines.find((l) => l.type === 'result') ?? {};
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      resolve({ code, ms, lines, result, stderr });
    });
    // An open stdin pipe makes `claude -p` wait ~3 s for piped input before it starts.
    child.stdin?.end();
  });
}

function workspace(name: string, skill?: { name: string; body: string }): string {
  const dir = join(root, `${name}-work`);
  mkdirSync(dir, { recursive: true });
  if (skill) {
    mkdirSync(join(dir, '.claude', 'skills', skill.name), { recursive: true });
    writeFileSync(join(dir, '.claude', 'skills', skill.name, 'SKILL.md'), skill.body);
  }
  return dir;
}

function toolUses(run: Run): Array<{ name: string; input: Record<string, unknown> }> {
  const out: Array<{ name: string; input: Record<string, unknown> }> = [];
  for (const l of run.lines) {
    if (l.type !== 'assistant') continue;
    for (const b of (l.message as { content: Array<Record<string, unknown>> }).content) {
      if (b.type === 'tool_use') out.push({ name: b.name as string, input: b.input as Record<string, unknown> });
    }
  }
  return out;
}

const HELLO_SKILL = {
  name: 'hello-world',
  body: '---\nname: hello-world\ndescription: Writes a hello world program in Python. Use when asked to create hello.py.\n---\n# Hello world\n\nWrite `hello.py` printing Hello, World!\n',
};

describe(title, () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'skill-up-claude-e2e-'));
    const hello = await loadModelScript(join(FIXTURES, 'hello-world.yaml'));
    const plain = script(`
rules:
  - when: { prompt_contains: explode }
    error: { status: 500, message: "scripted overload" }
  - when: { turn: 2 }
    reply: [ { say: "This is turn {{turn}}; you said: {{prompt}}" } ]
  - when: { prompt_contains: hello.py }
    reply:
      - { write_file: { path: hello.py, content: "print('Hello, World!')\\n" } }
      - { say: "Created hello.py" }
`);
    server = await startModelServer({ script: ({ jobId }) => (jobId?.startsWith('skill') || jobId?.startsWith('baseline') ? hello : plain), logDir: join(root, 'logs') });
  });

  afterAll(async () => {
    await server?.close();
    if (root && !process.env.SKILL_UP_KEEP_E2E) rmSync(root, { recursive: true, force: true });
    console.log(`[claude-e2e] wall time per claude run (ms): ${JSON.stringify(timings)}`);
  });

  it('writes hello.py with the scripted content (2 model calls)', async () => {
    const cwd = workspace('write');
    const run = await claude('write', cwd, 'create hello.py');
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(cwd, 'hello.py'), 'utf8')).toBe("print('Hello, World!')\n");
    expect(run.result).toMatchObject({ type: 'result', is_error: false, result: 'Created hello.py' });
    expect(toolUses(run)).toEqual([{ name: 'Write', input: { file_path: join(cwd, 'hello.py'), content: "print('Hello, World!')\n" } }]);
    const calls = server.requestsFor('write').filter((e) => e.kind === 'generate');
    expect(calls.map((e) => e.trace?.step)).toEqual([0, 1]);
    expect(calls[0]!.conversation).toMatchObject({ engine: 'claude_code', turn: 1, prompt: 'create hello.py', cwd });
    expect(existsSync(join(root, 'logs', 'write', 'model-requests.jsonl'))).toBe(true);

    // Second turn through --resume: the replayed history makes it turn 2.
    const sessionId = run.result.session_id as string;
    const resumed = await claude('write', cwd, 'What did you do?', ['--resume', sessionId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.result).toMatchObject({ is_error: false, session_id: sessionId, result: 'This is turn 2; you said: What did you do?' });
  });

  it('activates a skill in .claude/skills with use_skill, then writes hello.py', async () => {
    const cwd = workspace('skill', HELLO_SKILL);
    const run = await claude('skill', cwd, 'create hello.py');
    expect(run.code, run.stderr).toBe(0);
    const init = run.lines.find((l) => l.type === 'system' && l.subtype === 'init');
    expect(init?.skills).toContain('hello-world');
    expect(toolUses(run)).toEqual([
      { name: 'Skill', input: { skill: 'hello-world' } },
      { name: 'Write', input: { file_path: join(cwd, 'hello.py'), content: "print('Hello, World!')\n" } },
    ]);
    expect(readFileSync(join(cwd, 'hello.py'), 'utf8')).toBe("print('Hello, World!')\n");
    expect(run.result).toMatchObject({ is_error: false, result: 'Created hello.py' });
    const calls = server.requestsFor('skill').filter((e) => e.kind === 'generate');
    expect(calls.map((e) => [e.trace?.rule, e.trace?.step])).toEqual([
      [0, 0],
      [1, 0],
      [1, 1],
    ]);
    expect(calls[0]!.conversation!.skillsListed).toContain('hello-world');
    expect(calls[1]!.conversation!.skillsLoaded).toEqual(['hello-world']);
  });

  it('without the skill (baseline arm) the catch-all answers and nothing is written', async () => {
    const cwd = workspace('baseline');
    const run = await claude('baseline', cwd, 'create hello.py');
    expect(run.code, run.stderr).toBe(0);
    expect(run.result).toMatchObject({ is_error: false, result: "I don't know how to do that." });
    expect(existsSync(join(cwd, 'hello.py'))).toBe(false);
  });

  it('serves parallel sessions without mixing their steps or logs', async () => {
    const names = ['par-1', 'par-2', 'par-3', 'par-4'];
    const runs = await Promise.all(names.map((n) => claude(n, workspace(n), 'create hello.py')));
    runs.forEach((run, i) => {
      expect(run.code, run.stderr).toBe(0);
      expect(readFileSync(join(root, `${names[i]}-work`, 'hello.py'), 'utf8')).toBe("print('Hello, World!')\n");
      const calls = server.requestsFor(names[i]!).filter((e) => e.kind === 'generate');
      expect(calls.map((e) => e.trace?.step)).toEqual([0, 1]);
      expect(new Set(calls.map((e) => e.sessionId)).size).toBe(1);
    });
  });

  it('surfaces a scripted HTTP 500 as an API error', async () => {
    const cwd = workspace('error');
    const run = await claude('error', cwd, 'explode please');
    expect(run.code).toBe(1);
    expect(run.result).toMatchObject({ is_error: true, api_error_status: 500 });
    expect(String(run.result.result)).toContain('scripted overload');
  });
});
