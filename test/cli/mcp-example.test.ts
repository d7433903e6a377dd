/**
 * examples/internal-comms-slack, run as its README says (`skill-up run examples/internal-comms-slack
 * --baseline --trials 3`) on the real Claude Code with the scripted model: a real skill
 * (internal-comms) whose 3P guideline sends the agent to Slack, offered a mocked Slack MCP server.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface JobJson {
  variant: 'with_skill' | 'without_skill';
  status: string;
  reason?: string;
  output_dir: string;
  assertions?: { text: string; passed: boolean; evidence?: string }[];
  mcp_servers?: { name: string; mode: string; transport: string }[];
}

describe('examples/internal-comms-slack (real Claude Code, scripted model, mocked Slack MCP server)', () => {
  it('with the skill the agent searches Slack and writes the 3P update from the posts it returned; without it, a generic update and no Slack call; exit 0', async () => {
    // Both folders, side by side as in the clone: the suite names the skill as ../internal-comms.
    const dir = mkdtempSync(join(tmpdir(), 'su-mcp-example-'));
    for (const name of ['internal-comms', 'internal-comms-slack']) cpSync(join(ROOT, 'examples', name), join(dir, name), { recursive: true });
    const out = join(dir, 'out');
    const r = await runCli(['run', join(dir, 'internal-comms-slack'), '--baseline', '--trials', '3', '--output-dir', out]);
    const jobs: JobJson[] = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs;
    const arm = (v: string) => jobs.filter((j) => j.variant === v);
    const why = (js: JobJson[]) => js.map((j) => `${j.status}: ${j.reason ?? ''} ${JSON.stringify(j.assertions?.filter((a) => !a.passed))}`).join('\n');

    expect(arm('with_skill').map((j) => j.status), why(arm('with_skill'))).toEqual(['pass', 'pass', 'pass']);
    expect(arm('without_skill').map((j) => j.status), why(arm('without_skill'))).toEqual(['fail', 'fail', 'fail']);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);

    for (const j of arm('with_skill')) {
      const slack = j.assertions?.find((a) => a.text.startsWith('mcp_tool_called'));
      expect(slack?.passed, JSON.stringify(j.assertions)).toBe(true);
      expect(slack?.evidence).toContain('mcp__slack__search_messages {"channel":"#platform-team"');
      const jobDir = join(out, 'iteration-1', j.output_dir);
      // The update holds the facts only the Slack answer had, in the skill's 3P format.
      const update = readFileSync(join(jobDir, 'outputs/workspace/3p-update.md'), 'utf8');
      expect(update.split('\n')[0]).toMatch(/^\S+ Platform team \(March 3-7, 2025\)$/u);
      expect(update).toContain('p95 latency is down 30%');
      // The mock answered the call from its `responses[0]` template, and logged it in the job folder.
      const calls = readFileSync(join(jobDir, 'mcp/slack.calls.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ tool: 'search_messages', arguments: { channel: '#platform-team' }, matched: 'responses[0]', isError: false });
      expect(calls[0].result).toContain('#platform-team, 2025-03-03 to 2025-03-07: 3 posts');
      expect(j.mcp_servers).toEqual([{ name: 'slack', mode: 'mocked', transport: 'stdio' }]);
    }
    for (const j of arm('without_skill')) {
      // It failed on the content (a generic update), and it never asked Slack.
      expect(j.assertions?.find((a) => !a.passed)?.text, JSON.stringify(j.assertions)).toContain('file_contains: 3p-update.md');
      expect(existsSync(join(out, 'iteration-1', j.output_dir, 'mcp/slack.calls.jsonl'))).toBe(false);
      const transcript = JSON.parse(readFileSync(join(out, 'iteration-1', j.output_dir, 'transcript.json'), 'utf8'));
      const names = transcript.turns.flatMap((t: { toolCalls?: { name: string }[] }) => (t.toolCalls ?? []).map((c) => c.name));
      expect(names.filter((n: string) => n.startsWith('mcp__'))).toEqual([]);
      expect(j.mcp_servers).toEqual([{ name: 'slack', mode: 'mocked', transport: 'stdio' }]);
    }
  }, 120_000);
});
