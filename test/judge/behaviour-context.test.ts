/**
 * Skill context cost (src/judge/behaviour/context.ts) on protocol-neutral requests, and the
 * exchange-log reader it runs on (src/model/context-cost.ts): the listing entry of an installed
 * skill in the first request, the body a load put in context, nothing for skills not installed,
 * and "not observed" without requests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateTextTokens, listingEntry, skillContextCost } from '../../src/judge/behaviour/index.js';
import { loggedRequests } from '../../src/model/context-cost.js';
import type { ModelRequest, NeutralMessage } from '../../src/model/types.js';

const LISTING = 'The following skills are available for use with the Skill tool:\n\n- report-writer: Writes short project reports into report.md.\n- update-config: Configures the harness.\n';
const BODY = 'Base directory for this skill: /ws/.claude/skills/report-writer\n\n# Report writer\n\nWrite the report into report.md.';

function request(messages: NeutralMessage[], tools = ['Skill', 'Bash']): ModelRequest {
  return { protocol: 'anthropic', engine: 'claude_code', model: 'm', stream: false, system: ['You are an agent.'], messages, tools: tools.map((name) => ({ name })), rawChars: 0 };
}

const first = request([{ role: 'user', parts: [{ type: 'text', text: `<system-reminder>\n${LISTING}</system-reminder>` }, { type: 'text', text: 'Write the report.' }] }]);
const loaded = request([
  ...first.messages,
  { role: 'assistant', parts: [{ type: 'tool_call', id: 't1', name: 'Skill', input: { skill: 'report-writer' } }] },
  { role: 'user', parts: [{ type: 'tool_result', id: 't1', output: 'Launching skill: report-writer\n\n<system-reminder>\n<total_tokens>1 left</total_tokens>\n</system-reminder>', isError: false }, { type: 'text', text: BODY }] },
]);

describe('listingEntry', () => {
  it('finds a skill entry in the dash listing (Claude Code, Codex) and the XML listing (OpenCode, Gemini CLI, Qwen Code)', () => {
    expect(listingEntry(LISTING, 'report-writer')).toBe('- report-writer: Writes short project reports into report.md.\n');
    expect(listingEntry(LISTING, 'report')).toBeUndefined();
    const xml = '<available_skills><skill><name>a</name><description>A.</description></skill><skill><name>report-writer</name><description>Reports.</description></skill></available_skills>';
    expect(listingEntry(xml, 'report-writer')).toBe('<skill><name>report-writer</name><description>Reports.</description></skill>');
    expect(listingEntry(`x${'- report-writer: '.repeat(100_000)}`, 'report-writer')).toBeUndefined();
  });

  it('allows white space around the name in the XML listing (Qwen Code 0.24.4 writes `<name>\\nNAME\\n</name>`), in linear time', () => {
    const qwen = '<available_skills>\n<skill>\n<name>\nreport-writer\n</name>\n<description>\nWrites reports. (project)\n</description>\n</skill>\n</available_skills>';
    expect(listingEntry(qwen, 'report-writer')).toBe('<skill>\n<name>\nreport-writer\n</name>\n<description>\nWrites reports. (project)\n</description>\n</skill>');
    expect(listingEntry(qwen, 'report')).toBeUndefined();
    expect(listingEntry('<skill><name> report-writer-2 </name></skill>', 'report-writer')).toBeUndefined();
    const started = Date.now();
    expect(listingEntry(`<skill>${'<name>   report-writer   '.repeat(200_000)}`, 'report-writer')).toBeUndefined();
    expect(listingEntry(`<skill>${'<name>'.repeat(500_000)}${' '.repeat(1_000_000)}`, 'report-writer')).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('skillContextCost', () => {
  it('counts the installed skill listing entry of the first request and the body its load put in context', async () => {
    const c = await skillContextCost([first, loaded], ['report-writer'], ['report-writer']);
    const listing = estimateTextTokens('- report-writer: Writes short project reports into report.md.\n');
    const body = estimateTextTokens(`Launching skill: report-writer\n${BODY}`);
    expect(c).toEqual({
      observed: true,
      method: 'estimate: UTF-8 bytes / 4',
      listingTokens: listing,
      bodyTokens: body,
      skills: [{ skill: 'report-writer', listingTokens: listing, bodyTokens: body, loaded: true }],
    });
    expect(listing).toBeGreaterThan(0);
    expect(body).toBeGreaterThan(20);
  });

  it('is zero without installed skills (an engine built-in listed in both variants is not the skill under test), and not observed without requests', async () => {
    expect(await skillContextCost([first, loaded], [], [])).toEqual({ observed: true, method: 'estimate: UTF-8 bytes / 4', listingTokens: 0, bodyTokens: 0, skills: [] });
    const unloaded = await skillContextCost([first], ['report-writer'], []);
    expect(unloaded.observed && unloaded.skills[0]).toMatchObject({ loaded: false, bodyTokens: 0 });
    expect(await skillContextCost([], ['report-writer'])).toEqual({ observed: false, reason: "no model request of this job reached skill-up's scripted model" });
  });

  it('reads a failed load as no body, and UTF-8 bytes for the estimate', async () => {
    const failed = request([...first.messages, loaded.messages[1]!, { role: 'user', parts: [{ type: 'tool_result', id: 't1', output: 'Unknown skill', isError: true }] }]);
    const c = await skillContextCost([first, failed], ['report-writer']);
    expect(c.observed && c.bodyTokens).toBe(0);
    expect(estimateTextTokens('日本語')).toBe(3); // 9 bytes / 4, rounded up
    expect(estimateTextTokens('')).toBe(0);
  });
});

describe('loggedRequests (src/model/context-cost.ts)', () => {
  it('reads the generate requests of an exchange log back through their protocol, skipping other lines', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skill-up-ctx-'));
    try {
      const body = { model: 'claude-sonnet-4-5', system: 'You are an agent.', tools: [{ name: 'Skill', input_schema: { type: 'object' } }], messages: [{ role: 'user', content: [{ type: 'text', text: `<system-reminder>\n${LISTING}</system-reminder>` }, { type: 'text', text: 'Write the report.' }] }] };
      const lines = [
        { seq: 1, kind: 'utility', method: 'POST', url: '/v1/messages/count_tokens', protocol: 'anthropic', request: { headers: {}, body } },
        { seq: 2, kind: 'generate', method: 'POST', url: '/v1/messages?beta=true', protocol: 'anthropic', request: { headers: {}, body }, conversation: { engine: 'claude_code' } },
        { seq: 3, kind: 'generate', method: 'POST', url: '/v1/messages', protocol: 'nope', request: { headers: {}, body } },
      ];
      const file = join(dir, 'model-requests.jsonl');
      writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n{"torn":`);
      const got: ModelRequest[] = [];
      for await (const r of loggedRequests(file)) got.push(r);
      expect(got).toHaveLength(1);
      expect(got[0]!.tools.map((t) => t.name)).toEqual(['Skill']);
      const c = await skillContextCost(loggedRequests(file), ['report-writer']);
      expect(c.observed && c.listingTokens).toBe(estimateTextTokens('- report-writer: Writes short project reports into report.md.\n'));
      expect(await skillContextCost(loggedRequests(join(dir, 'missing.jsonl')), ['report-writer'])).toMatchObject({ observed: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
