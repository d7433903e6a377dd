/**
 * The scripted model's `judge: true|false` rule condition: parsing and its diagnostics, the job
 * ids that name a grader run, matching (a rule without `judge:` answers both), the grader idiom
 * (read a workspace file, decide on it, say the JSON verdict), and the server's per-job
 * bookkeeping for `<job id>/judge-<r>` (its own log folder, its own exchanges, its own engine).
 */
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, formatDiagnostic } from '../../src/config/diagnostics.js';
import { viewConversation } from '../../src/model/conversation.js';
import { isJudgeJobId } from '../../src/model/log.js';
import { ruleMatches } from '../../src/model/match.js';
import { exchangeMark, noteJobEngine, offeredSince } from '../../src/model/offered.js';
import { planResponse } from '../../src/model/plan.js';
import { ANTHROPIC_TOOL_TABLE, parseAnthropicRequest } from '../../src/model/protocols/anthropic.js';
import { parseModelScript } from '../../src/model/script.js';
import { startModelServer, type ModelServer } from '../../src/model/server.js';
import type { ModelRequest, ModelScript } from '../../src/model/types.js';
import { script, wire } from './helpers.js';

type Msg = { role: string; content: unknown[] };
const prompt = (text: string): Msg => ({ role: 'user', content: [{ type: 'text', text }] });
const call = (id: string, name: string, input: object): Msg => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input }] });
const result = (id: string, content: string, isError = false): Msg => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] });

function body(messages: Msg[]): Record<string, unknown> {
  return {
    model: 'm',
    system: 'Primary working directory: /w',
    tools: ['Read', 'Write', 'Bash'].map((name) => ({ name, input_schema: { type: 'object', properties: {} } })),
    messages,
  };
}

/** A parsed request; `judge` as the server sets it for a grader run's job id. */
function req(messages: Msg[], judge = false): ModelRequest {
  const r = parseAnthropicRequest(body(messages), wire({}, 400));
  if (judge) r.judge = true;
  return r;
}

function texts(s: ModelScript, r: ModelRequest): string[] {
  const p = planResponse(s, r, ANTHROPIC_TOOL_TABLE).plan;
  if (p.kind !== 'reply') throw new Error('expected a reply');
  return p.reply.blocks.map((b) => (b.type === 'text' ? b.text : `${b.name} ${JSON.stringify(b.input)}`));
}

function diagnostics(yaml: string): string[] {
  try {
    parseModelScript(yaml, '/s/model.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).diagnostics.map((d) => formatDiagnostic(d, '/s'));
  }
  throw new Error('expected a ConfigError');
}

describe('judge: parsing', () => {
  it('reads true and false into the rule conditions', () => {
    const s = script('rules:\n  - when: { judge: true }\n    reply: [ { say: g } ]\n  - when: { judge: false, turn: 1 }\n    reply: [ { say: a } ]\n');
    expect(s.rules[0]!.when).toEqual({ judge: true });
    expect(s.rules[1]!.when).toEqual({ judge: false, turn: [1] });
    expect(s.warnings).toEqual([]);
  });

  it('rejects anything but true or false, at its line', () => {
    expect(diagnostics('rules:\n  - when: { judge: "yes" }\n    reply: [ { say: g } ]\n')).toEqual(['model.yaml:2:20: rules[0].when.judge: must be true or false, got "yes"']);
  });

  it('suggests judge for a misspelt key', () => {
    expect(diagnostics('rules:\n  - when: { juge: true }\n    reply: [ { say: g } ]\n')[0]).toMatch(/unknown key "juge"; did you mean "judge"\?/);
  });

  it('a `judge:` rule is not a catch-all: the rule after it stays reachable', () => {
    expect(script('rules:\n  - when: { judge: true }\n    reply: [ { say: g } ]\n  - reply: [ { say: a } ]\n').warnings).toEqual([]);
  });
});

describe('isJudgeJobId', () => {
  it.each([
    ['case/with_skill/run-1/judge-1', true],
    ['case/without_skill/run-3/judge-12', true],
    ['judge-2', true],
    ['case/with_skill/run-1', false],
    ['case/with_skill/run-1/judge-0', false],
    ['case/with_skill/run-1/judge-x', false],
    ['case/with_skill/run-1/judge-1/more', false],
    ['judge-1-case/with_skill/run-1', false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (id, expected) => {
    expect(isJudgeJobId(id)).toBe(expected);
  });
});

describe('judge: matching', () => {
  const s = script(`
rules:
  - name: grader
    when: { judge: true }
    reply: [ { say: grader } ]
  - name: agent
    when: { judge: false }
    reply: [ { say: agent } ]
`);
  const either = script('rules:\n  - when: { prompt_contains: write }\n    reply: [ { say: both } ]\n');

  it('true holds for a grader run only, false for the agent only', () => {
    expect(viewConversation(req([prompt('write it')], true)).judge).toBe(true);
    expect(viewConversation(req([prompt('write it')])).judge).toBe(false);
    expect(texts(s, req([prompt('write it')], true))).toEqual(['grader']);
    expect(texts(s, req([prompt('write it')]))).toEqual(['agent']);
  });

  it('a rule without `judge:` matches both, so existing scripts keep working', () => {
    const rule = either.rules[0]!;
    expect(ruleMatches(rule, viewConversation(req([prompt('write it')], true)))).toBe(true);
    expect(ruleMatches(rule, viewConversation(req([prompt('write it')])))).toBe(true);
  });
});

describe('the grader idiom: read a workspace file, decide, say the verdict', () => {
  const pass = '{"results":[{"id":"c1","passed":true,"evidence":"report.md: \\"Problems: none\\""}]}';
  const fail = '{"results":[{"id":"c1","passed":false,"evidence":"report.md has no Problems: line"}]}';
  const s = script(`
rules:
  - name: grade-good
    when: { judge: true, tool_result_contains: "Problems:" }
    reply: [ { say: '${pass}' } ]
  - name: grade-read
    when: { judge: true }
    reply:
      - { read_file: report.md }
      - { say: '${fail}' }
  - name: agent
    when: { skill_listed: my-skill }
    reply: [ { say: "agent answer" } ]
`);
  const graderPrompt = prompt('Grade these criteria: c1 the report has a Problems section');

  it('first grader request → Read of the workspace file', () => {
    expect(texts(s, req([graderPrompt], true))).toEqual(['Read {"file_path":"/w/report.md"}']);
  });

  it('the file has the phrase → the passing verdict', () => {
    const r = req([graderPrompt, call('t1', 'Read', { file_path: '/w/report.md' }), result('t1', '     1\tProgress: shipped\n     2\tProblems: none\n')], true);
    expect(texts(s, r)).toEqual([pass]);
    expect(JSON.parse(texts(s, r)[0]!)).toEqual({ results: [{ id: 'c1', passed: true, evidence: 'report.md: "Problems: none"' }] });
  });

  it('the file lacks it, or is missing → the failing verdict (grade-read step 2)', () => {
    const lacking = req([graderPrompt, call('t1', 'Read', {}), result('t1', '     1\tAll good this week.\n')], true);
    expect(texts(s, lacking)).toEqual([fail]);
    const missing = req([graderPrompt, call('t1', 'Read', {}), result('t1', 'File does not exist.', true)], true);
    expect(texts(s, missing)).toEqual([fail]);
  });

  it('the agent, whose tool result says the same, never reaches the grader rules', () => {
    const agent = req([prompt('Grade these criteria'), call('t1', 'Read', {}), result('t1', 'Problems: none')]);
    expect(texts(s, agent)[0]).toMatch(/^\[scripted-model\] no rule matched/);
  });
});

describe('the server and grader job ids', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const s = script(`
rules:
  - when: { judge: true, engine: opencode }
    reply: [ { say: "grader on opencode" } ]
  - when: { judge: true }
    reply: [ { say: "grader" } ]
  - when: { engine: qwen_code }
    reply: [ { say: "agent on qwen" } ]
  - reply: [ { say: "agent" } ]
`);

  async function post(path: string, key: string, payload: unknown, extra: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const res = await fetch(`${server!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', ...extra }, body: JSON.stringify(payload) });
    return (await res.json()) as Record<string, unknown>;
  }
  const anthropicText = (r: Record<string, unknown>) => (r.content as Array<{ text?: string }>)[0]!.text;

  it('answers a grader key from the judge rules, files it under its own folder and marks it', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'skill-up-judge-log-'));
    server = await startModelServer({ script: s, logDir });
    const job = 'greet/with_skill/run-1';
    const one = { ...body([prompt('hello')]), stream: false };
    expect(anthropicText(await post('/v1/messages', `skill-up-job:${job}`, one))).toBe('agent');
    const mark = exchangeMark(server.url, job);
    expect(anthropicText(await post('/v1/messages', `skill-up-job:${job}/judge-1`, one))).toBe('grader');
    expect(anthropicText(await post('/v1/messages', `skill-up-job:${job}/judge-2`, one))).toBe('grader');

    // The job's own exchanges do not include its graders'; each grader run has its own.
    expect(exchangeMark(server.url, job)).toBe(mark);
    expect(offeredSince(server.url, job, mark)).toBeUndefined();
    expect(server.requestsFor(job).map((e) => e.conversation?.judge)).toEqual([undefined]);
    expect(server.requestsFor(`${job}/judge-1`).map((e) => e.conversation?.judge)).toEqual([true]);
    await server.close();
    server = undefined;
    const graderLog = join(logDir, 'greet/with_skill/run-1/judge-1/model-requests.jsonl');
    expect(existsSync(graderLog)).toBe(true);
    const line = JSON.parse(readFileSync(graderLog, 'utf8').trim()) as { jobId: string; conversation: { judge: boolean } };
    expect(line).toMatchObject({ jobId: `${job}/judge-1`, conversation: { judge: true } });
    expect(readFileSync(join(logDir, 'greet/with_skill/run-1/model-requests.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('a grader run has its own engine, not the one its job runs', async () => {
    server = await startModelServer({ script: s });
    const job = 'greet/with_skill/run-1';
    noteJobEngine(server.url, job, 'qwen_code');
    noteJobEngine(server.url, `${job}/judge-1`, 'opencode');
    const chat = { model: 'm', messages: [{ role: 'user', content: 'hello' }], tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: {} } } }] };
    const text = (r: Record<string, unknown>) => (r.choices as Array<{ message: { content: string } }>)[0]!.message.content;
    expect(text(await post('/v1/chat/completions', `skill-up-job:${job}`, chat))).toBe('agent on qwen');
    expect(text(await post('/v1/chat/completions', `skill-up-job:${job}/judge-1`, chat))).toBe('grader on opencode');
    expect(server.requestsFor(`${job}/judge-1`)[0]!.conversation).toMatchObject({ engine: 'opencode', judge: true });
    // Forgetting the job leaves its grader's bookkeeping alone (and the other way round).
    server.forget(job);
    expect(text(await post('/v1/chat/completions', `skill-up-job:${job}/judge-1`, chat))).toBe('grader on opencode');
  });
});
