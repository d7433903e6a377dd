/**
 * The MCP servers offered per arm (issue 16): result.json `jobs[].mcp_servers` both ways, the
 * grouping and the unequal-arms check (src/report/mcp-servers.ts), and what summary.md and the
 * HTML report show: nothing without servers, the servers per arm, a visible flag when the two
 * arms of a case were offered different servers.
 */
import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html/index.js';
import { buildSummaryMarkdown } from '../../src/report/markdown.js';
import { mcpOffers, mcpServersText } from '../../src/report/mcp-servers.js';
import { jobJson, jobResultOf } from '../../src/report/result-json.js';
import type { JobResult, McpServerOffered } from '../../src/run/types.js';
import { job, makeDoc, makeResult } from './helpers.js';

const TICKETS: McpServerOffered = { name: 'tickets', mode: 'mocked', transport: 'stdio' };
const FS: McpServerOffered = { name: 'fs', mode: 'real', transport: 'stdio' };
const API: McpServerOffered = { name: 'api', mode: 'real', transport: 'http' };
const BOTH = 'tickets (mocked, stdio), fs (real, stdio)';

/** Both arms of `caseId`, two trials each, offered `withSkill` / `withoutSkill`. */
function arms(caseId: string, withSkill: McpServerOffered[] | undefined, withoutSkill: McpServerOffered[] | undefined = withSkill): JobResult[] {
  const m = (s: McpServerOffered[] | undefined) => (s ? { mcpServers: s } : {});
  return [1, 2].flatMap((t) => [job(caseId, 'with_skill', t, [['ok', true]], m(withSkill)), job(caseId, 'without_skill', t, [['ok', t === 1]], m(withoutSkill))]);
}

describe('result.json mcp_servers', () => {
  it('is written per job and read back, in configuration order, without anything but name, mode and transport', () => {
    const r = makeResult({ mcpServers: [{ ...TICKETS, command: '/bin/secret' } as McpServerOffered, API] });
    const j = jobJson(r);
    expect(j.mcp_servers).toEqual([TICKETS, API]);
    expect(JSON.stringify(j)).not.toContain('secret');
    expect(jobResultOf(JSON.parse(JSON.stringify(j))).mcpServers).toEqual([TICKETS, API]);
  });

  it('is absent when the job offered no server', () => {
    expect('mcp_servers' in jobJson(makeResult())).toBe(false);
    expect('mcp_servers' in jobJson(makeResult({ mcpServers: [] }))).toBe(false);
    expect('mcpServers' in jobResultOf(jobJson(makeResult()))).toBe(false);
  });
});

describe('mcpOffers', () => {
  it('is undefined when no job had servers', () => {
    expect(mcpOffers(makeDoc(arms('a', undefined)).jobs)).toBeUndefined();
  });

  it('one row for the run when every case offered the same to both arms', () => {
    const m = mcpOffers(makeDoc([...arms('a', [TICKETS, FS]), ...arms('b', [FS, TICKETS])]).jobs)!;
    expect(m.differences).toEqual([]);
    // Order does not make a difference; the text is the first job's (configuration order).
    expect(m.rows).toEqual([{ cases: 'all cases', withSkill: BOTH, withoutSkill: BOTH, differs: false }]);
    expect(m.baseline).toBe(true);
  });

  it('a row per group of cases offered the same; a case with none says so', () => {
    const m = mcpOffers(makeDoc([...arms('a', [TICKETS]), ...arms('b', [TICKETS]), ...arms('c', undefined)]).jobs)!;
    expect(m.rows).toEqual([
      { cases: 'a, b', withSkill: 'tickets (mocked, stdio)', withoutSkill: 'tickets (mocked, stdio)', differs: false },
      { cases: 'c', withSkill: 'none', withoutSkill: 'none', differs: false },
    ]);
  });

  it('flags a case whose arms were offered different servers, or whose trials were', () => {
    const m = mcpOffers(makeDoc([...arms('a', [TICKETS, FS]), ...arms('b', [TICKETS, FS], [TICKETS]), ...arms('c', [{ ...FS, mode: 'mocked' }], [FS])]).jobs)!;
    expect(m.differences.map((d) => [d.caseId, d.text])).toEqual([
      ['b', `with_skill: ${BOTH}; without_skill: tickets (mocked, stdio)`],
      ['c', 'with_skill: fs (mocked, stdio); without_skill: fs (real, stdio)'],
    ]);
    expect(m.rows.map((r) => [r.cases, r.differs])).toEqual([['a', false], ['b', true], ['c', true]]);
    const trials = [job('d', 'with_skill', 1, [['ok', true]], { mcpServers: [TICKETS] }), job('d', 'with_skill', 2, [['ok', true]], { mcpServers: [FS] })];
    const t = mcpOffers(makeDoc(trials).jobs)!;
    expect(t.differences.map((d) => d.text)).toEqual(['with_skill: tickets (mocked, stdio) | fs (real, stdio)']);
    expect(t.baseline).toBe(false);
  });

  it('a job that never started (no servers recorded, no turn) neither flags nor hides a difference', () => {
    const notStarted = job('a', 'without_skill', 3, [], { status: 'error', turns: [] });
    const m = mcpOffers(makeDoc([...arms('a', [TICKETS]), notStarted]).jobs)!;
    expect(m.differences).toEqual([]);
    // But a job that ran turns without servers, next to one that had them, is a difference.
    const ranWithout = job('a', 'without_skill', 3, [['ok', true]]);
    expect(mcpOffers(makeDoc([...arms('a', [TICKETS]), ranWithout]).jobs)!.differences.map((d) => d.caseId)).toEqual(['a']);
  });

  it('names a case with its engines when only some of its engines are in a row', () => {
    const e = (engine: string, s: McpServerOffered[]) => (['with_skill', 'without_skill'] as const).map((v) => job('a', v, 1, [['ok', true]], { engine, mcpServers: s }));
    const m = mcpOffers(makeDoc([...e('claude_code', [TICKETS]), ...e('codex', [TICKETS]), ...e('gemini_cli', [FS])]).jobs)!;
    expect(m.rows.map((r) => r.cases)).toEqual(['a (claude_code, codex)', 'a (gemini_cli)']);
  });

  it('mcpServersText', () => {
    expect(mcpServersText([TICKETS, API])).toBe('tickets (mocked, stdio), api (real, http)');
    expect(mcpServersText(undefined)).toBe('none');
  });
});

describe('summary.md', () => {
  it('lists the servers per arm in one table, and nothing when no job had servers', () => {
    const md = buildSummaryMarkdown(makeDoc([...arms('a', [TICKETS, FS]), ...arms('b', [TICKETS, FS])]));
    expect(md).toContain(['### MCP servers offered', '', '| Cases | with_skill | without_skill |', '|---|---|---|', `| all cases | ${BOTH} | ${BOTH} |`].join('\n'));
    expect(md).not.toContain('different MCP servers');
    expect(buildSummaryMarkdown(makeDoc(arms('a', undefined)))).not.toContain('MCP');
  });

  it('flags the cases whose arms were offered different servers', () => {
    const md = buildSummaryMarkdown(makeDoc([...arms('a', [TICKETS, FS]), ...arms('b', [TICKETS, FS], [TICKETS])]));
    expect(md).toContain(`| ⚠️ b | ${BOTH} | tickets (mocked, stdio) |`);
    expect(md).toContain(`> ⚠️ **The arms were offered different MCP servers** in 1 case(s): **b** (agent (custom)): with\\_skill: ${BOTH}; without\\_skill: tickets (mocked, stdio).`);
  });

  it('has no without_skill column when the run had no baseline', () => {
    const md = buildSummaryMarkdown(makeDoc([job('a', 'with_skill', 1, [['ok', true]], { mcpServers: [API] })]));
    expect(md).toContain('| Cases | with_skill |\n|---|---|\n| a | api (real, http) |\n');
  });
});

describe('HTML report', () => {
  /** The text of the page's MCP section (empty when it has none), tags removed, white space collapsed. */
  const text = (html: string) => (/<section class="gates mcp"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '').replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

  it('lists the servers per arm, and shows no MCP section when no job had servers', () => {
    const html = renderHtmlReport(makeDoc([...arms('a', [TICKETS, FS]), ...arms('b', [TICKETS, FS])]));
    expect(html).toContain('id="h-mcp"');
    expect(text(html), text(html)).toContain(`Cases with_skill without_skill all cases ${BOTH} ${BOTH}`);
    expect(html).not.toContain('arms offered different MCP servers');
    expect(renderHtmlReport(makeDoc(arms('a', undefined)))).not.toContain('h-mcp');
  });

  it('flags the cases whose arms were offered different servers', () => {
    const html = renderHtmlReport(makeDoc([...arms('a', [TICKETS]), ...arms('b', [TICKETS], [])]));
    expect(html).toContain('⚠ arms offered different MCP servers');
    expect(html).toMatch(/<li class="mcp-diff-case" data-case="b" data-engine="custom">/);
    expect(html).toContain('<strong>b</strong> <span class="muted">(agent)</span>: with_skill: tickets (mocked, stdio); without_skill: none</li>');
    expect(html).toMatch(/<tr class="mcp-row mcp-differs">\s*<th scope="row"><span class="pill warn"[^>]*>⚠<\/span> b<\/th>/);
  });
});
