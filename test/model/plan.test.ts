import { describe, expect, it } from 'vitest';
import { fillTemplate, groupSteps, placeholderNames, planResponse, TEMPLATE_VARIABLES } from '../../src/model/plan.js';
import { ANTHROPIC_TOOL_TABLE, parseAnthropicRequest } from '../../src/model/protocols/anthropic.js';
import type { ModelRequest, ModelScript, Plan } from '../../src/model/types.js';
import { loadCaptured, parseCaptured, prefix, script, wire, withFullSystemMessage } from './helpers.js';

function plan(s: ModelScript, req: ModelRequest): Plan {
  return planResponse(s, req, ANTHROPIC_TOOL_TABLE).plan;
}

function reply(p: Plan) {
  if (p.kind !== 'reply') throw new Error(`expected a reply, got HTTP ${p.kind === 'error' ? p.status : ''}`);
  return p.reply;
}

const HELLO_WORLD = script(`
rules:
  - when: { skill_listed: hello-world, skill_loaded: false }
    reply: [ { use_skill: hello-world } ]
  - when: { skill_loaded: hello-world }
    reply:
      - { write_file: { path: hello.py, content: "print('Hello, World!')\\n" } }
      - { say: "Created hello.py" }
  - reply: [ { say: "I don't know how to do that." } ]
`);

describe('steps over the captured write-then-resume conversation', () => {
  const s = script(`
rules:
  - when: { turn: 2 }
    reply: [ { say: "Turn {{turn}} in {{cwd}}: you asked {{prompt}}" } ]
  - when: { prompt_contains: [nothing-here, "CREATE IT"] }
    reply:
      - { write_file: { path: hello.txt, content: Hello from fake model } }
      - { say: done }
`);

  it('first request → Write tool_use with an absolute path', () => {
    const r = reply(plan(s, parseCaptured(loadCaptured('request-1-first-turn.trimmed.json'))));
    expect(r.stop).toBe('tool_use');
    expect(r.blocks).toEqual([
      { type: 'tool_call', id: expect.stringMatching(/^[0-9a-f]{24}$/), name: 'Write', input: { file_path: '/tmp/lab/demo-out/claude/work/hello.txt', content: 'Hello from fake model' } },
    ]);
    expect(r.model).toBe('claude-opus-5-5');
  });

  it('request after the tool result → the next step (final text)', () => {
    const p = plan(s, parseCaptured(loadCaptured('request-2-after-tool-result.trimmed.json')));
    expect(p.trace).toEqual({ rule: 1, step: 1, exhausted: false });
    expect(reply(p)).toMatchObject({ stop: 'end_turn', blocks: [{ type: 'text', text: 'done' }] });
  });

  it('resumed turn 2 → templated text', () => {
    const r = reply(plan(s, parseCaptured(loadCaptured('request-3-resume.trimmed.json'))));
    expect(r.blocks).toEqual([{ type: 'text', text: 'Turn 2 in /tmp/lab/demo-out/claude/work: you asked What did you do?' }]);
  });

  it('ids and usage are deterministic functions of the request', () => {
    const req = parseCaptured(loadCaptured('request-1-first-turn.trimmed.json'));
    const a = reply(plan(s, req));
    const b = reply(plan(s, req));
    expect(a.id).toBe(b.id);
    expect(a.blocks[0]).toEqual(b.blocks[0]);
    expect(a.usage.inputTokens).toBe(Math.ceil(req.rawChars / 4));
    expect(a.usage.outputTokens).toBe(Math.ceil(('Write'.length + JSON.stringify((a.blocks[0] as { input: object }).input).length) / 4));
    const other = reply(plan(s, parseCaptured(loadCaptured('request-2-after-tool-result.trimmed.json'))));
    expect(other.id).not.toBe(a.id);
  });
});

describe('the design example over a real skill run', () => {
  const full = parseCaptured(loadCaptured('skill-run-request-3.full.json'));

  it('use_skill, then the second rule starts at its own step 0, then its say', () => {
    const first = plan(HELLO_WORLD, prefix(full, 2));
    expect(first.trace).toMatchObject({ rule: 0, step: 0 });
    expect(reply(first).blocks).toEqual([{ type: 'tool_call', id: expect.any(String), name: 'Skill', input: { skill: 'hello-world' } }]);

    const second = plan(HELLO_WORLD, prefix(full, 4));
    expect(second.trace).toMatchObject({ rule: 1, step: 0 });
    expect(reply(second).blocks).toEqual([
      { type: 'tool_call', id: expect.any(String), name: 'Write', input: { file_path: '/tmp/probe/work/hello.py', content: "print('Hello, World!')\n" } },
    ]);

    const third = plan(HELLO_WORLD, full);
    expect(third.trace).toMatchObject({ rule: 1, step: 1, exhausted: false });
    expect(reply(third)).toMatchObject({ stop: 'end_turn', blocks: [{ type: 'text', text: 'Created hello.py' }] });
  });

  it('without the skill listed, the catch-all answers', () => {
    const r = reply(plan(HELLO_WORLD, parseCaptured(withFullSystemMessage(loadCaptured('request-1-first-turn.trimmed.json')))));
    expect(r.blocks).toEqual([{ type: 'text', text: "I don't know how to do that." }]);
  });
});

describe('planning details', () => {
  const base = (messages: unknown[], tools = ['Bash', 'Read', 'Skill', 'Write']) =>
    parseAnthropicRequest(
      {
        model: 'm',
        system: 'Primary working directory: /w',
        tools: tools.map((name) => ({ name, input_schema: { type: 'object', properties: name === 'Bash' ? { command: {}, description: {} } : {} } })),
        messages,
      },
      wire({}, 400),
    );
  const prompt = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });
  const call = (id: string, name: string, input: object) => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input }] });
  const result = (id: string, content: string) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] });

  it('a say before a tool action rides in the same message; exhaustion repeats the last say', () => {
    const s = script('rules:\n  - reply: [ { say: "Let me look." }, { run: "ls -la" } ]\n');
    const r1 = reply(plan(s, base([prompt('hi')])));
    expect(r1.blocks).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_call', id: expect.any(String), name: 'Bash', input: { command: 'ls -la', description: 'Run: ls -la' } },
    ]);
    expect(r1.stop).toBe('tool_use');
    const p2 = plan(s, base([prompt('hi'), call('t1', 'Bash', { command: 'ls -la' }), result('t1', 'a.txt')]));
    expect(p2.trace).toMatchObject({ step: 1, exhausted: true });
    expect(reply(p2).blocks).toEqual([{ type: 'text', text: 'Let me look.' }]);
  });

  it('answers "Done." past the end of a reply without say', () => {
    const s = script('rules:\n  - reply: [ { read_file: notes.md } ]\n');
    expect(reply(plan(s, base([prompt('hi')]))).blocks[0]).toMatchObject({ name: 'Read', input: { file_path: '/w/notes.md' } });
    expect(reply(plan(s, base([prompt('hi'), call('t1', 'Read', {}), result('t1', 'x')]))).blocks).toEqual([{ type: 'text', text: 'Done.' }]);
  });

  it('says which tool is missing instead of calling it', () => {
    const s = script('rules:\n  - reply: [ { write_file: { path: a, content: b } } ]\n');
    const p = plan(s, base([prompt('hi')], ['Bash']));
    expect(p.trace.missingTool).toBe('Write');
    expect(reply(p)).toMatchObject({ stop: 'end_turn', blocks: [{ type: 'text', text: '[scripted-model] tool Write not offered by this engine' }] });
  });

  it('sends a raw tool call as written, templated', () => {
    const s = script('rules:\n  - reply: [ { tool: { name: Custom, input: { where: "{{cwd}}/x", n: 3 } } } ]\n');
    expect(reply(plan(s, base([prompt('hi')]))).blocks).toEqual([{ type: 'tool_call', id: expect.any(String), name: 'Custom', input: { where: '/w/x', n: 3 } }]);
  });

  it('counts an assistant reply replayed as several messages once', () => {
    const s = script('rules:\n  - reply: [ { run: a }, { run: b }, { say: end } ]\n');
    const split = [
      prompt('go'),
      { role: 'assistant', content: [{ type: 'text', text: 'I will run a.' }] },
      call('t1', 'Bash', { command: 'a' }),
      result('t1', 'ok'),
    ];
    const p = plan(s, base(split));
    expect(p.trace.step).toBe(1);
    expect(reply(p).blocks[0]).toMatchObject({ name: 'Bash', input: { command: 'b' } });
  });

  it('matches tool_result_contains, engine and prompt_matches', () => {
    const s = script(`
rules:
  - when: { engine: codex }
    reply: [ { say: codex } ]
  - when: { tool_result_contains: "EXIT CODE 1" }
    reply: [ { say: failed } ]
  - when: { prompt_matches: "(?i)^fix" }
    reply: [ { run: make } ]
`);
    expect(reply(plan(s, base([prompt('Fix the build')]))).blocks[0]).toMatchObject({ name: 'Bash' });
    expect(reply(plan(s, base([prompt('Fix the build'), call('t1', 'Bash', {}), result('t1', 'make: exit code 1')]))).blocks).toEqual([{ type: 'text', text: 'failed' }]);
  });

  it('answers a visible text when no rule matches', () => {
    const s = script('rules:\n  - when: { turn: 3 }\n    reply: [ { say: x } ]\n');
    const p = plan(s, base([prompt('hello there')]));
    expect(p.trace.rule).toBe(-1);
    expect(reply(p).blocks).toEqual([{ type: 'text', text: '[scripted-model] no rule matched this request (turn 1, prompt: "hello there")' }]);
  });

  it('plans an HTTP error for an error rule', () => {
    const s = script('rules:\n  - error: { status: 529, message: "overloaded at turn {{turn}}", type: overloaded_error }\n    delay_ms: 5\n');
    expect(plan(s, base([prompt('x')]))).toEqual({ kind: 'error', status: 529, message: 'overloaded at turn 1', errorType: 'overloaded_error', delayMs: 5, trace: { rule: 0, step: 0, exhausted: false } });
  });

  it('groupSteps gathers says into the next tool step', () => {
    expect(
      groupSteps([
        { kind: 'say', text: 'a' },
        { kind: 'say', text: 'b' },
        { kind: 'use_skill', skill: 's' },
        { kind: 'run', command: 'c' },
        { kind: 'say', text: 'z' },
      ]),
    ).toEqual([{ texts: ['a', 'b'], action: { kind: 'use_skill', skill: 's' } }, { texts: [], action: { kind: 'run', command: 'c' } }, { texts: ['z'] }]);
  });
});

describe('the placeholder grammar the script check and the fill share', () => {
  const vars = { cwd: '/w', turn: 2, prompt: 'hi' };
  it('fills exactly the placeholders the check reads as known names', () => {
    const texts = ['{{cwd}}/a', '{{ turn }}:{{\tprompt\n}}', '{{{cwd}}}', '{{ cwd x }}', '{{}}', '{{nope}}', 'plain {', '{{cwd}'];
    for (const t of texts) {
      const known = placeholderNames(t).filter((n) => (TEMPLATE_VARIABLES as readonly string[]).includes(n));
      const filled = fillTemplate(t, vars);
      // Every known placeholder is replaced; every other one is left as written.
      expect(placeholderNames(filled).filter((n) => (TEMPLATE_VARIABLES as readonly string[]).includes(n)), t).toEqual([]);
      expect(placeholderNames(filled).length, t).toBe(placeholderNames(t).length - known.length);
    }
    expect(fillTemplate({ a: ['{{ turn }}:{{\tprompt\n}}', '{{{cwd}}}'] }, vars)).toEqual({ a: ['2:hi', '{/w}'] });
    expect(placeholderNames('{{ cwd x }} {{}} {{nope}}')).toEqual(['cwd x', '', 'nope']);
  });
});
