import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCwd, parseSkillListing, skillOfToolCall, stripReminders, viewConversation } from '../../src/model/conversation.js';
import { parseAnthropicRequest } from '../../src/model/protocols/anthropic.js';
import { FIXTURES, loadCaptured, parseCaptured, prefix, wire, withFullSystemMessage } from './helpers.js';

const CLAUDE_SAMPLE_SKILLS = [
  'hello',
  'dataviz',
  'update-config',
  'keybindings-help',
  'code-review',
  'simplify',
  'fewer-permission-prompts',
  'loop',
  'claude-api',
  'workflow-authoring',
  'run',
  'plugin-authoring',
  'init',
  'security-review',
];

describe('Claude Code samples (engine research captures)', () => {
  it('first turn: prompt without reminders, cwd, tools, session id; listing cut by the trim', () => {
    const req = parseCaptured(loadCaptured('request-1-first-turn.trimmed.json'));
    expect(req).toMatchObject({ protocol: 'anthropic', engine: 'claude_code', model: 'claude-opus-5-5', stream: true, sessionId: '082396b3-b72a-4980-aed6-e4682023c9b7' });
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'system']);
    const c = viewConversation(req);
    expect(c.prompt).toBe('Create it [[write hello.txt Hello from fake model]]');
    expect(c.turn).toBe(1);
    expect(c.cwd).toBe('/tmp/lab/demo-out/claude/work');
    expect(c.toolsOffered).toEqual(['Agent', 'Bash', 'Edit', 'ListAgents', 'Read', 'ReportFindings', 'ScheduleWakeup', 'Skill', 'ToolSearch', 'Workflow', 'DeferredToolPlaceholder', 'Write']);
    expect(c.replyStarts).toEqual([]);
    // The trimmed body cuts the role:"system" message before its skill listing.
    expect(c.skillsListed).toEqual([]);
    expect(c.skillsLoaded).toEqual([]);
  });

  it('finds the 14 skills of the full role:"system" message, multi-line descriptions included', () => {
    const c = viewConversation(parseCaptured(withFullSystemMessage(loadCaptured('request-1-first-turn.trimmed.json'))));
    expect(c.skillsListed).toEqual(CLAUDE_SAMPLE_SKILLS);
    expect(c.cwd).toBe('/tmp/lab/demo-out/claude/work');
  });

  it('after a tool result: one reply so far, latest tool result, still turn 1', () => {
    const c = viewConversation(parseCaptured(loadCaptured('request-2-after-tool-result.trimmed.json')));
    expect(c.prompt).toBe('Create it [[write hello.txt Hello from fake model]]');
    expect(c.turn).toBe(1);
    expect(c.replyStarts).toEqual([2]);
    expect(c.lastToolResult?.output).toMatch(/^File created successfully at: \/tmp\/lab\/demo-out\/claude\/work\/hello.txt/);
    expect(c.lastToolResult?.isError).toBe(false);
    expect(c.skillsLoaded).toEqual([]);
  });

  it('resume: the new prompt is turn 2 and earlier replies belong to turn 1', () => {
    const c = viewConversation(parseCaptured(loadCaptured('request-3-resume.trimmed.json')));
    expect(c.prompt).toBe('What did you do?');
    expect(c.turn).toBe(2);
    expect(c.promptIndex).toBe(5);
    expect(c.replyStarts).toEqual([]);
    expect(c.lastToolResult).toBeUndefined();
  });
});

describe('a full captured skill run (skill-up server, Claude Code 2.1.332)', () => {
  const req = parseCaptured(loadCaptured('skill-run-request-3.full.json'));

  it('treats the synthetic "Base directory for this skill" message as context, not a prompt', () => {
    // Claude Code sends the skill body in the same user message as the Skill tool's result.
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'user', 'assistant', 'user']);
    expect(req.messages[3]!.parts.map((p) => p.type)).toEqual(['tool_result', 'text']);
    expect(req.messages[3]!.parts[1]).toMatchObject({ type: 'text', meta: true, text: expect.stringMatching(/^Base directory for this skill: \/tmp\/probe\/work\/.claude\/skills\/hello-world/) });
    const c = viewConversation(req);
    expect(c).toMatchObject({ prompt: 'create hello.py', turn: 1, promptIndex: 0, cwd: '/tmp/probe/work', replyStarts: [2, 4] });
    expect(c.skillsListed[0]).toBe('hello-world');
    expect(c.skillsListed).toContain('security-review');
    expect(c.skillsLoaded).toEqual(['hello-world']);
  });

  it('skill_loaded needs the Skill call answered: not in the request that makes it', () => {
    expect(viewConversation(prefix(req, 2)).skillsLoaded).toEqual([]);
    expect(viewConversation(prefix(req, 3)).skillsLoaded).toEqual([]); // call sent, no result yet
    expect(viewConversation(prefix(req, 4)).skillsLoaded).toEqual(['hello-world']);
  });
});

describe('parseAnthropicRequest', () => {
  it('a skill body sent as its own user message is not a new prompt either', () => {
    const req = parseAnthropicRequest(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'make it' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Skill', input: { skill: 'x' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'Launching skill: x' }] },
          { role: 'user', content: [{ type: 'text', text: 'Base directory for this skill: /w/.claude/skills/x\n\n# X' }] },
        ],
      },
      wire(),
    );
    expect(viewConversation(req)).toMatchObject({ prompt: 'make it', turn: 1, replyStarts: [1], skillsLoaded: ['x'] });
  });


  it('takes the session id from metadata.user_id when the header is absent', () => {
    const req = parseAnthropicRequest(
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], metadata: { user_id: JSON.stringify({ session_id: 's-1' }) } },
      wire(),
    );
    expect(req.sessionId).toBe('s-1');
    expect(req.stream).toBe(false);
    expect(viewConversation(req).prompt).toBe('hi');
  });

  it('rejects a body without messages', () => {
    expect(() => parseAnthropicRequest({ model: 'm' }, wire())).toThrow(/messages: field required/);
  });

  it('reads tool_result content blocks and is_error; an errored skill call is not a load', () => {
    const req = parseAnthropicRequest(
      {
        model: 'm',
        system: 'Primary working directory: /w',
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Skill', input: { skill: 'a' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true, content: [{ type: 'text', text: 'Unknown skill: a' }] }] },
        ],
      },
      wire(),
    );
    const c = viewConversation(req);
    expect(c.cwd).toBe('/w');
    expect(c.lastToolResult).toEqual({ output: 'Unknown skill: a', isError: true });
    expect(c.skillsLoaded).toEqual([]);
    expect(c.turn).toBe(1);
  });
});

describe('helpers', () => {
  it('stripReminders removes closed and unclosed reminder blocks', () => {
    expect(stripReminders('<system-reminder>x</system-reminder>\nhello')).toBe('hello');
    expect(stripReminders('hello <system-reminder>cut off')).toBe('hello');
  });

  it('parses the Codex and <available_skills> listings', () => {
    const codex = readFileSync(join(FIXTURES, 'codex-skills-instructions.txt'), 'utf8');
    expect(parseSkillListing([codex])).toEqual(['imagegen', 'openai-docs', 'skill-creator', 'skill-installer', 'hello']);
    const xml = '<available_skills><skill><name>a-b</name><description>d</description></skill><skill><name>\nqwen-one\n</name></skill></available_skills>';
    expect(parseSkillListing([xml])).toEqual(['a-b', 'qwen-one']);
  });

  it('finds the cwd in each engine format', () => {
    expect(findCwd(['x', ' - Primary working directory: /a/b\n - Is a git repository: false'])).toBe('/a/b');
    expect(findCwd(['<environment_context>\n  <cwd>/c</cwd>\n'])).toBe('/c');
    expect(findCwd(["I'm currently working in the directory: /d\n"])).toBe('/d');
    expect(findCwd(['  Working directory: /e\n'])).toBe('/e');
    expect(findCwd(['nothing'])).toBeUndefined();
  });

  it('skillOfToolCall: skill tools, SKILL.md reads, not SKILL.md writes', () => {
    expect(skillOfToolCall('Skill', { skill: 'pdf' })).toBe('pdf');
    expect(skillOfToolCall('activate_skill', { name: 'pdf' })).toBe('pdf');
    expect(skillOfToolCall('Read', { file_path: '/w/.claude/skills/pdf/SKILL.md' })).toBe('pdf');
    expect(skillOfToolCall('exec_command', { cmd: "sed -n '1,200p' .agents/skills/pdf/SKILL.md" })).toBe('pdf');
    expect(skillOfToolCall('Write', { file_path: '/w/.claude/skills/pdf/SKILL.md', content: 'x' })).toBeUndefined();
    expect(skillOfToolCall('Bash', { command: 'ls' })).toBeUndefined();
  });
});
