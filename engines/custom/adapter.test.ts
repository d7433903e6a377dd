import { mkdtempSync, mkdirSync, writeFileSync, chmodSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaseSpec, CustomEngineConfig, EngineConfig } from '../../src/config/types.js';
import type { EngineContext } from '../../src/engine/types.js';
import { createCustomAdapter } from './adapter.js';
import { expandTemplate, TemplateError } from './template.js';
import { alive } from '../../test/support/proc.js';

function setup(cfg: Partial<CustomEngineConfig> & Pick<CustomEngineConfig, 'transport'>) {
  const root = mkdtempSync(join(tmpdir(), 'su-custom-'));
  const full: CustomEngineConfig = { responseFormat: 'session_result', conversationMode: 'batch', env: {}, kwargs: {}, ...cfg };
  const engine: EngineConfig = { name: 'custom', displayName: 'my-agent', model: { name: 'm1' }, kwargs: {}, custom: full };
  const kase = { id: 'c1', maxTurns: 5, turns: [] } as unknown as CaseSpec;
  const ws = join(root, 'ws');
  const home = join(root, 'home');
  const out = join(root, 'out');
  for (const d of [ws, home, out]) mkdirSync(d, { recursive: true });
  const ac = new AbortController();
  const ctx: EngineContext = {
    engine, case: kase, variant: 'with_skill', trial: 2, workspace: ws, homeDir: home, outputDir: out,
    installedSkills: [], baseEnv: { PATH: process.env.PATH, SECRET_THING: 's3cr3t-value' }, signal: ac.signal, deadline: Infinity,
  };
  return { root, ctx, adapter: createCustomAdapter(full, root), ac };
}

function script(root: string, name: string, body: string): string {
  const p = join(root, name);
  writeFileSync(p, `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const turn = (prompt: string, timeoutMs = 10_000) => ({ index: 1, prompt, history: [prompt], timeoutMs });

describe('custom engine, local transport', () => {
  it('passes the SessionInput and templated args, and parses a SessionResult from stdout', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'agent.sh', 'cat "$1" > "$2/seen-input.json"; echo "{\\"exit_code\\":0,\\"final_message\\":\\"hi $3 $MY_ENV\\",\\"input_tokens\\":7,\\"tool_calls\\":[{\\"name\\":\\"write_file\\",\\"input\\":{\\"path\\":\\"a\\"}}],\\"skills_used\\":[\\"s1\\"]}"');
    const cfg: CustomEngineConfig = { transport: 'local', responseFormat: 'session_result', conversationMode: 'batch', env: { MY_ENV: '${SECRET_THING}' }, kwargs: { profile: 'p1' }, local: { command: agent, args: ['${input_file}', '${workspace}', '${kwargs.profile}-${case_id}-${variant}-${trial}'] } };
    const adapter = createCustomAdapter(cfg, root);
    const prep = await adapter.prepare(ctx);
    const t = await adapter.runTurn(ctx, prep, turn('make a file'));
    expect(t.error).toBeUndefined();
    expect(t.finalText).toBe('hi p1-c1-with_skill-2 s3cr3t-value');
    expect(t.usage.input).toBe(7);
    expect(t.toolCalls).toEqual([{ name: 'write_file', input: { path: 'a' }, output: undefined, isError: false }]);
    expect(t.skillActivations).toEqual([{ skill: 's1', via: 'reported by agent' }]);
    const seen = JSON.parse(readFileSync(join(ctx.workspace, 'seen-input.json'), 'utf8'));
    expect(seen).toMatchObject({ case_id: 'c1', variant: 'with_skill', trial: 2, messages: [{ role: 'user', content: 'make a file' }], max_turns: 5 });
  });

  it('reports a crash (non-zero exit) as an engine error with the stderr tail, not a fail', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'crash.sh', 'echo "boom: segfault in agent" >&2; exit 139');
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: [] } }, root);
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x'));
    expect(t.error?.kind).toBe('crash');
    expect(t.error?.message).toContain('exited with code 139');
    expect(t.error?.message).toContain('boom: segfault in agent');
  });

  it('kills the whole process tree on timeout, including a background child', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'hang.sh', `sleep 300 & echo $! > "${root}/child.pid"; sleep 300`);
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: [] } }, root);
    const t0 = Date.now();
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x', 500));
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(t.error?.kind).toBe('timeout');
    const child = Number(readFileSync(join(root, 'child.pid'), 'utf8'));
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(child)).toBe(false);
  });

  it('sweeps background children left behind by an agent that exits normally', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'leaky.sh', `sleep 300 & echo $! > "${root}/child.pid"; echo done`);
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: [] } }, root);
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x'));
    expect(t.finalText).toBe('done');
    const child = Number(readFileSync(join(root, 'child.pid'), 'utf8'));
    await new Promise((r) => setTimeout(r, 100));
    expect(alive(child)).toBe(false);
  });

  it('keeps a 50 MB answer whole in its stdout file: the turn holds a bounded preview and the reference', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'loud.sh', 'head -c 52428800 /dev/zero | tr "\\0" "a"; printf "THE-END\\n\\n"');
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: [] } }, root);
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x'));
    expect(t.error).toBeUndefined();
    expect(t.finalTextFile).toBe('outputs/turn-1.stdout.txt');
    // The answer is the stdout without its trailing white space: the file's first N bytes.
    expect(t.finalTextBytes).toBe(52428800 + 'THE-END'.length);
    expect(t.finalText.length).toBeLessThan(16 * 1024);
    expect(t.finalText.endsWith('THE-END')).toBe(true);
    expect(t.finalText).toContain('the whole text is in outputs/turn-1.stdout.txt');
  });

  it('reports a missing command as kind missing', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: './no/such/agent', args: [] } }, root);
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x'));
    expect(t.error?.kind).toBe('missing');
    expect(t.error?.message).toContain('command not found');
  });

  it('treats output that is not a SessionResult as a protocol error naming the problem', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'bad.sh', 'echo "{\\"final_message\\": \\"x\\"}"');
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'session_result', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: [] } }, root);
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x'));
    // Where it was read from, what is wrong, and what the agent wrote.
    expect(t.error).toEqual({ kind: 'protocol', message: 'stdout: SessionResult.exit_code must be an integer; it starts with: {"final_message": "x"}' });
  });

  it('a SessionResult that is no JSON: names stdout and quotes its first characters, a cut ending in …', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'chatty.sh', `printf 'Thinking about it…\n%.0s' {1..20}`);
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'session_result', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: [] } }, root);
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x'));
    expect(t.error?.kind).toBe('protocol');
    const m = /^stdout: not a SessionResult JSON \(.+\); it starts with: (.*)$/.exec(t.error!.message);
    expect(m, t.error!.message).not.toBeNull();
    expect(m![1]).toHaveLength(120);
    expect(m![1]!.startsWith('Thinking about it… Thinking about it…')).toBe(true);
    expect(m![1]!.endsWith('…')).toBe(true);
  });

  it('an unusable output_file: named by its path in the workspace; one never written says so', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const cfg = (body: string, outputFile: string): CustomEngineConfig => ({
      transport: 'local', responseFormat: 'session_result', conversationMode: 'batch', env: {}, kwargs: {},
      local: { command: script(root, 'of.sh', body), args: ['${output_file}'], outputFile },
    });
    const bad = createCustomAdapter(cfg('echo \'{"exit_code": "0", "final_message": "done"}\' > "$1"', 'out/result.json'), root);
    const t = await bad.runTurn(ctx, await bad.prepare(ctx), turn('x'));
    expect(t.error).toEqual({ kind: 'protocol', message: 'output_file out/result.json (in the workspace): SessionResult.exit_code must be an integer; it starts with: {"exit_code": "0", "final_message": "done"}' });
    // An absolute path under the workspace is shown relative to it too.
    const none = createCustomAdapter(cfg('echo "{}"', '${workspace}/res/none.json'), root);
    const t2 = await none.runTurn(ctx, await none.prepare(ctx), turn('x'));
    expect(t2.error).toEqual({ kind: 'protocol', message: 'output_file res/none.json (in the workspace): not written (the agent exited without writing it)' });
  });

  it('reads the SessionResult from output_file when configured', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'file.sh', 'echo noise; echo "{\\"exit_code\\":0,\\"final_message\\":\\"from file\\"}" > "$1"');
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'session_result', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: ['${output_file}'], outputFile: 'out/result.json' } }, root);
    const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x'));
    expect(t.finalText).toBe('from file');
    expect(existsSync(join(ctx.workspace, 'out/result.json'))).toBe(true);
  });
});

describe('custom engine, http transport', () => {
  it('POSTs the SessionInput and reads the SessionResult; non-2xx is an api error', async () => {
    const bodies: unknown[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        bodies.push({ body: JSON.parse(body), auth: req.headers.authorization });
        if (req.url === '/fail') {
          res.writeHead(503).end('overloaded');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ exit_code: 0, final_message: 'ok from http', session_id: 'abc' }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const { root, ctx } = setup({ transport: 'http' });
      const mk = (path: string) => createCustomAdapter({ transport: 'http', responseFormat: 'session_result', conversationMode: 'stateful', env: {}, kwargs: {}, http: { url: `http://127.0.0.1:${port}${path}`, headers: { authorization: 'Bearer ${SECRET_THING}' } } }, root);
      const ok = mk('/run');
      const t = await ok.runTurn(ctx, await ok.prepare(ctx), { ...turn('hello'), sessionId: 'prev' });
      expect(t.finalText).toBe('ok from http');
      expect(t.sessionId).toBe('abc');
      expect(bodies[0]).toMatchObject({ body: { session_id: 'prev', messages: [{ role: 'user', content: 'hello' }] }, auth: 'Bearer s3cr3t-value' });
      const bad = mk('/fail');
      const t2 = await bad.runTurn(ctx, await bad.prepare(ctx), turn('hello'));
      expect(t2.error?.kind).toBe('api');
      expect(t2.error?.message).toContain('HTTP 503');
    } finally {
      server.close();
    }
  });

  it('reports a refused connection as an engine error', async () => {
    const { root, ctx } = setup({ transport: 'http' });
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const a = createCustomAdapter({ transport: 'http', responseFormat: 'session_result', conversationMode: 'batch', env: {}, kwargs: {}, http: { url: `http://127.0.0.1:${port}/run`, headers: {} } }, root);
    const t = await a.runTurn(ctx, await a.prepare(ctx), turn('x'));
    expect(t.error?.kind).toBe('crash');
    expect(t.error?.message).toContain('ECONNREFUSED');
  });
});

describe('expandTemplate', () => {
  it('expands named variables, env references and defaults', () => {
    expect(expandTemplate('${a}-${HOME_X:-dflt}-${SET}', { a: '1' }, { SET: 'v' })).toBe('1-dflt-v');
    expect(expandTemplate('${UNSET}', {}, {})).toBe('');
  });
  it('throws on ${VAR?message} when unset and on unknown kwargs', () => {
    expect(() => expandTemplate('${TOKEN?set TOKEN first}', {}, {})).toThrow(new TemplateError('${TOKEN}: set TOKEN first'));
    expect(() => expandTemplate('${kwargs.nope}', {}, {})).toThrow(TemplateError);
  });
});

describe('output caps', () => {
  it('keeps at most the cap (SKILL_UP_MAX_OUTPUT_BYTES) of a stream on disk while draining and counting all of it, and says so', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    const agent = script(root, 'flood.sh', 'head -c 10485760 /dev/zero | tr "\\0" "y"');
    const adapter = createCustomAdapter({ transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: {}, kwargs: {}, local: { command: agent, args: [] } }, root);
    const before = process.env.SKILL_UP_MAX_OUTPUT_BYTES;
    process.env.SKILL_UP_MAX_OUTPUT_BYTES = String(1024 * 1024);
    try {
      const t = await adapter.runTurn(ctx, await adapter.prepare(ctx), turn('x', 60_000));
      expect(t.error?.kind).toBe('protocol');
      expect(t.error?.message).toContain('the answer (stdout) larger than 1048576 bytes (10485760 bytes)');
      const { statSync } = await import('node:fs');
      expect(statSync(join(ctx.outputDir, 'outputs/turn-1.stdout.txt')).size).toBe(1024 * 1024);
    } finally {
      if (before === undefined) delete process.env.SKILL_UP_MAX_OUTPUT_BYTES;
      else process.env.SKILL_UP_MAX_OUTPUT_BYTES = before;
    }
  });

  it('names a command that is not found or not executable', async () => {
    const { root, ctx } = setup({ transport: 'local' });
    writeFileSync(join(root, 'noexec.sh'), 'echo hi\n');
    for (const [command, want] of [['nodez', 'command not found: nodez'], [join(root, 'noexec.sh'), 'is not executable (chmod +x']] as const) {
      const a = createCustomAdapter({ transport: 'local', responseFormat: 'text', conversationMode: 'batch', env: {}, kwargs: {}, local: { command, args: [] } }, root);
      const t = await a.runTurn(ctx, await a.prepare(ctx), turn('x'));
      expect(t.error?.kind).toBe('missing');
      expect(t.error?.message).toContain(want);
    }
  });
});
