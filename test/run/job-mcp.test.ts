/**
 * A job's MCP servers (src/run/mcp.ts, src/run/job.ts): the engine gets the same launches in both
 * variants — a real server's `${VAR}` templates expanded, a mocked one as `skill-up mcp-mock` with
 * its spec in the job folder — the result names the servers offered, the transcript marks their
 * calls, expanded values never reach a file, and a server that cannot be offered is an `error`
 * naming it before the agent runs.
 */
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { McpServerSpec } from '../../src/config/mcp.js';
import type { CaseSpec } from '../../src/config/types.js';
import type { EngineAdapter, EngineContext } from '../../src/engine/types.js';
import { planJobs } from '../../src/plan/plan.js';
import { runJobOnce, type JobEnv } from '../../src/run/job.js';
import { requiredEnvProblems } from '../../src/run/mcp.js';
import { redactor } from '../../src/util/redact.js';
import { fakeAdapter } from './fake-adapter.js';
import { makeCase, makeSuite } from './helpers.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'skill-up-job-mcp-'));
  await mkdir(join(dir, 'skill'));
  await mkdir(join(dir, 'iteration-1'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SECRET = 'sk-mcp-very-secret-0042';

const real = (over: Partial<McpServerSpec> = {}): McpServerSpec => ({
  name: 'fs',
  mode: 'real',
  transport: 'stdio',
  command: '${FS_BIN}',
  args: ['--root', '${FS_ROOT:-/srv}'],
  env: { TOKEN: '${FS_TOKEN}' },
  headers: {},
  requiredEnv: ['FS_TOKEN'],
  at: 'evals/eval.yaml:6',
  ...over,
});
const mocked: McpServerSpec = {
  name: 'tickets',
  mode: 'mocked',
  transport: 'stdio',
  args: [],
  env: {},
  headers: {},
  requiredEnv: [],
  toolResponses: { get_ticket: { default: 'ticket {{params.id}} is open' } },
  at: 'evals/eval.yaml:11',
};

/** Every job of `c` (both variants) on `adapter`, with `baseEnv`. */
function jobsOf(c: CaseSpec, adapter: EngineAdapter, baseEnv: Record<string, string | undefined>) {
  const suite = makeSuite([c], { skillDir: join(dir, 'skill'), evalFile: join(dir, 'skill', 'evals', 'eval.yaml'), benchmark: { enabled: true } });
  const env: JobEnv = {
    suite,
    adapters: new Map([['custom', adapter]]),
    skills: [],
    iterationDir: join(dir, 'iteration-1'),
    keepWorkspaces: false,
    workspaceRoot: dir,
    baseEnv,
    signal: new AbortController().signal,
  };
  return { jobs: planJobs(suite), env };
}

describe('a job with MCP servers', () => {
  it('offers the same expanded launches in both variants, records them, marks their calls and keeps the secret out of every file', async () => {
    const seen: { variant: string; servers: EngineContext['mcpServers'] }[] = [];
    const adapter = fakeAdapter(
      (_req, ctx) => {
        seen.push({ variant: ctx.variant, servers: ctx.mcpServers });
        return {
          finalText: `used token ${SECRET}`,
          toolCalls: [
            { name: 'mcp__tickets__get_ticket', input: { id: 'T-7' }, output: 'ticket T-7 is open' },
            { name: 'mcp__other__x', input: {} },
            { name: 'Bash', input: { command: `echo ${SECRET}` } },
          ],
        };
      },
      { supportsMcp: true },
    );
    const { jobs, env } = jobsOf(makeCase('m', { mcpServers: [real(), mocked] }), adapter, { PATH: process.env.PATH, FS_BIN: '/usr/bin/fs-server', FS_TOKEN: SECRET });
    expect(jobs.map((j) => j.variant).sort()).toEqual(['with_skill', 'without_skill']);
    for (const job of jobs) {
      const r = await runJobOnce(job, env, 1);
      expect(r.status, r.reason).toBe('pass');
      expect(r.mcpServers).toEqual([
        { name: 'fs', mode: 'real', transport: 'stdio' },
        { name: 'tickets', mode: 'mocked', transport: 'stdio' },
      ]);
      const jobDir = join(env.iterationDir, job.id);
      const mockSpec = join(jobDir, 'mcp', 'tickets.json');
      const launches = seen.at(-1)!.servers!;
      expect(launches[0]).toEqual({ name: 'fs', transport: 'stdio', command: '/usr/bin/fs-server', args: ['--root', '/srv'], env: { TOKEN: SECRET } });
      expect(launches[1]).toMatchObject({ name: 'tickets', transport: 'stdio', command: process.execPath, args: [expect.stringMatching(/dist\/src\/cli\/skill-up\.cjs$/), 'mcp-mock', '--config', mockSpec] });
      const spec = JSON.parse(await readFile(mockSpec, 'utf8'));
      expect(spec).toMatchObject({ name: 'tickets', tool_responses: { get_ticket: { default: 'ticket {{params.id}} is open' } }, log_file: join(jobDir, 'mcp', 'tickets.calls.jsonl') });
      expect((await stat(mockSpec)).mode & 0o777).toBe(0o600);
      const transcript = JSON.parse(await readFile(join(jobDir, 'transcript.json'), 'utf8'));
      expect(transcript.turns[0].toolCalls.map((t: { name: string; mcp?: unknown }) => [t.name, t.mcp ?? null])).toEqual([
        ['mcp__tickets__get_ticket', { server: 'tickets', tool: 'get_ticket' }],
        ['mcp__other__x', null],
        ['Bash', null],
      ]);
      // The expanded env value is a secret: redacted wherever the agent repeated it.
      for (const f of ['transcript.json', 'outputs/response.md']) expect(await readFile(join(jobDir, f), 'utf8')).not.toContain(SECRET);
      expect(redactor().redact(r.finalMessage)).not.toContain(SECRET);
    }
    expect(seen[0]!.servers).toEqual(seen[1]!.servers!.map((s) => (s.name === 'tickets' ? { ...s, args: [s.args![0], 'mcp-mock', '--config', expect.any(String)] } : s)));
  });

  it('is an error naming the server and its variable when `required_env` is unset, before the agent runs', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'ran' }), { supportsMcp: true });
    const { jobs, env } = jobsOf(makeCase('m', { mcpServers: [real()] }), adapter, { PATH: process.env.PATH, FS_BIN: '/bin/x' });
    const r = await runJobOnce(jobs[0]!, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toBe('mcp server `fs` (evals/eval.yaml:6) needs `FS_TOKEN` set in skill-up\'s environment; it is not');
    expect(r.mcpServers).toEqual([{ name: 'fs', mode: 'real', transport: 'stdio' }]);
    expect(adapter.calls).toEqual([]);
  });

  it('is an error naming the server and field when its command is empty once expanded (an unset `${VAR}`)', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'ran' }), { supportsMcp: true });
    const { jobs, env } = jobsOf(makeCase('m', { mcpServers: [real({ requiredEnv: [] })] }), adapter, { PATH: process.env.PATH, FS_TOKEN: 'x' });
    const r = await runJobOnce(jobs[0]!, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toBe("mcp server `fs` (evals/eval.yaml:6): its command `${FS_BIN}` is empty once expanded from skill-up's environment; set the variables it names");
    expect(adapter.calls).toEqual([]);
  });

  it('is an error on an engine that cannot offer MCP servers, never a run without them', async () => {
    const adapter = fakeAdapter(() => ({ finalText: 'ran' }));
    const { jobs, env } = jobsOf(makeCase('m', { mcpServers: [mocked] }), adapter, { PATH: process.env.PATH });
    const r = await runJobOnce(jobs[0]!, env, 1);
    expect(r.status).toBe('error');
    expect(r.reason).toMatch(/^engine `custom` cannot offer MCP servers to its agent \(`tickets`\)/);
    expect(adapter.calls).toEqual([]);
  });
});

describe('requiredEnvProblems', () => {
  it('lists each server with its unset or empty variables, and nothing when all are set', () => {
    const servers = [real({ requiredEnv: ['A', 'B'] }), real({ name: 'web', requiredEnv: ['C'], at: 'evals/cases/x.yaml:4' })];
    expect(requiredEnvProblems(servers, { A: 'set', B: '' })).toEqual([
      'mcp server `fs` (evals/eval.yaml:6) needs `B` set in skill-up\'s environment; it is not',
      'mcp server `web` (evals/cases/x.yaml:4) needs `C` set in skill-up\'s environment; it is not',
    ]);
    expect(requiredEnvProblems(servers, { A: '1', B: '2', C: '3' })).toEqual([]);
  });
});
