/**
 * The `judge:` condition with REAL engines through the engine layer: one script drives the agent
 * (Claude Code, job `grade/with_skill/run-1`, the `report` skill installed and listed) and its
 * grader runs (job ids `<job>/judge-<r>`, in a copy of the finished workspace that keeps the
 * skill listed, so the agent's rules would match the grader too): a grader reads the agent's file
 * and answers the JSON verdict with evidence quoted from it. Grader 2 runs OpenCode, another
 * engine than the job's.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineContext, TranscriptTurn } from '../../src/engine/types.js';
import { binOverrideVar } from '../../src/engine/known.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import { findEngineDefinition } from '../../engines/index.js';
import { adapterTestCase, engineConfig } from '../support/engine.js';

const PASS = '{"results":[{"id":"c1","passed":true,"evidence":"report.md line 2: \\"Problems: none this week\\""}]}';
const FAIL = '{"results":[{"id":"c1","passed":false,"evidence":"report.md has no Problems: line"}]}';
const SCRIPT = `
rules:
  - name: grade-good
    when: { judge: true, tool_result_contains: "Problems: none this week" }
    reply: [ { say: '${PASS}' } ]
  - name: grade-read
    when: { judge: true }
    reply:
      - { read_file: report.md }
      - { say: '${FAIL}' }
  - name: activate
    when: { skill_listed: report, skill_loaded: false }
    reply: [ { use_skill: report } ]
  - name: write
    when: { skill_loaded: report }
    reply:
      - { write_file: { path: report.md, content: "Progress: shipped v2\\nProblems: none this week\\n" } }
      - { say: "Wrote report.md" }
  - reply: [ { say: "no skill, no report" } ]
`;
const SKILL_MD = '---\nname: report\ndescription: Writes the weekly report. Use when asked for a report.\n---\n# Report\nWrite report.md with Progress and Problems lines.\n';

let server: ModelServer;
let root: string;

beforeAll(async () => {
  for (const name of ['claude_code', 'opencode']) {
    if (!process.env[binOverrideVar(name)]) throw new Error(`${binOverrideVar(name)} is not set: run the tests through vitest.config.ts (its global set-up installs the engines)`);
  }
  server = await startModelServer({ script: parseModelScript(SCRIPT, 'judge-engine.yaml') });
  root = await mkdtemp(join(tmpdir(), 'skill-up-judge-engine-'));
}, 600_000);

afterAll(async () => {
  await server?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Runs one turn of `engine` in `workspace` as job `jobId` against the scripted server. */
async function turn(engine: string, jobId: string, workspace: string, prompt: string): Promise<TranscriptTurn> {
  const def = findEngineDefinition(engine)!;
  const adapter = await def.load();
  const dir = join(root, jobId.replace(/\//g, '_'));
  const ctx: EngineContext = {
    jobId,
    engine: engineConfig(engine),
    case: adapterTestCase('judge-engine'),
    variant: 'with_skill',
    trial: 1,
    workspace,
    homeDir: join(dir, 'home'),
    outputDir: join(dir, 'out'),
    installedSkills: ['report'],
    baseEnv: { PATH: process.env.PATH, LANG: 'C.UTF-8' },
    signal: new AbortController().signal,
    deadline: Infinity,
    modelBaseUrl: server.url,
  };
  const prepared = await adapter.prepare(ctx);
  return adapter.runTurn(ctx, prepared, { index: 1, prompt, history: [prompt], timeoutMs: 90_000 });
}

describe('judge: with real engines', () => {
  it('one script drives the agent and its graders, each under its own job id and engine', async () => {
    const job = 'grade/with_skill/run-1';
    const work = join(root, 'workspace');
    await mkdir(join(work, '.claude/skills/report'), { recursive: true });
    await writeFile(join(work, '.claude/skills/report/SKILL.md'), SKILL_MD);

    const agent = await turn('claude_code', job, work, 'Write the weekly report.');
    expect(agent.error).toBeUndefined();
    expect(agent.finalText).toBe('Wrote report.md');
    expect(await readFile(join(work, 'report.md'), 'utf8')).toContain('Problems: none this week');
    expect(server.requestsFor(job).every((e) => e.conversation === undefined || e.conversation.judge === undefined)).toBe(true);

    // Graders work on copies of the finished workspace; the skill is still installed and listed there.
    const copy1 = join(root, 'grader-1');
    await cp(work, copy1, { recursive: true });
    const g1 = await turn('claude_code', `${job}/judge-1`, copy1, 'Grade the criteria: c1 report.md has a Problems line. Answer {"results":[…]}.');
    expect(g1.error).toBeUndefined();
    expect(JSON.parse(g1.finalText)).toEqual(JSON.parse(PASS));
    const g1Calls = server.requestsFor(`${job}/judge-1`).filter((e) => e.kind === 'generate' && (e.conversation?.toolsOffered.length ?? 0) > 0);
    expect(g1Calls.length).toBeGreaterThan(0);
    expect(g1Calls.every((e) => e.conversation!.judge === true)).toBe(true);
    expect(g1Calls.some((e) => e.conversation!.skillsListed.includes('report'))).toBe(true);
    expect(g1Calls.map((e) => e.trace?.ruleName).filter(Boolean)).toEqual(['grade-read', 'grade-good']);

    // Another engine grades the same job: its requests are filed under its own engine.
    const copy2 = join(root, 'grader-2');
    await cp(work, copy2, { recursive: true });
    await writeFile(join(copy2, 'report.md'), 'Progress: shipped v2\n');
    const g2 = await turn('opencode', `${job}/judge-2`, copy2, 'Grade the criteria: c1 report.md has a Problems line. Answer {"results":[…]}.');
    expect(g2.error).toBeUndefined();
    expect(JSON.parse(g2.finalText)).toEqual(JSON.parse(FAIL));
    const g2Calls = server.requestsFor(`${job}/judge-2`).filter((e) => e.kind === 'generate' && (e.conversation?.toolsOffered.length ?? 0) > 0);
    expect(g2Calls.every((e) => e.conversation!.engine === 'opencode' && e.conversation!.judge === true)).toBe(true);
    expect(server.requestsFor(job).every((e) => e.conversation === undefined || e.conversation.engine === 'claude_code')).toBe(true);
  }, 240_000);
});
