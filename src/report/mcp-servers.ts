/**
 * The MCP servers offered per arm (issue 16), from result.json's `jobs[].mcp_servers`: what the
 * markdown summary and the HTML report list, and the check that the two arms of a case were
 * offered the same servers. They always should be (src/run/job.ts offers a case's servers to
 * both variants); if they were not, the comparison of the arms is not only about the skill, so
 * the reports flag it (summary.md: src/report/markdown.ts `mcpMarkdown`; the HTML report: html/view.ts).
 *
 * A job tells what it was offered when it records `mcp_servers` or ran a turn (a job that never
 * started says nothing, so it can neither flag nor hide a difference). Servers compare by name,
 * mode and transport, whatever their order.
 */
import type { Variant } from '../engine/types.js';
import type { McpServerOffered } from '../run/types.js';
import type { JobJson } from './result-json.js';

/** `tickets (mocked, stdio), fs (real, stdio)`, or `none`. */
export function mcpServersText(servers: readonly McpServerOffered[] | undefined): string {
  return servers?.length ? servers.map((s) => `${s.name} (${s.mode}, ${s.transport})`).join(', ') : 'none';
}

/** One case of one engine: what each arm was offered. */
export interface McpCaseOffer {
  engine: string;
  caseId: string;
  /** Per arm, each distinct offering its jobs told (texts, first seen first); absent when no job of the arm told. */
  arms: Partial<Record<Variant, string[]>>;
  /** The arms were offered different servers, or the trials of one arm were. */
  differs: boolean;
  /** `with_skill: tickets (mocked, stdio); without_skill: none`. */
  text: string;
}

/** One line of the listing: the cases offered the same per arm. */
export interface McpOfferRow {
  /** `all cases`, or the case ids (with the engine where not all of a case's engines are in the row), the first {@link MAX_ROW_CASES}. */
  cases: string;
  /** The arm's offering (`a | b` when its trials differed), `—` when none of its jobs told. */
  withSkill: string;
  withoutSkill: string;
  differs: boolean;
}

/** What the reports show: rows, the cases whose arms differ, whether the run had a baseline arm. */
export interface McpOffers {
  rows: McpOfferRow[];
  differences: McpCaseOffer[];
  /** Some job ran without the skill: the listing has a without_skill column. */
  baseline: boolean;
}

/** Case ids named in one row, at most. */
export const MAX_ROW_CASES = 10;

const key = (servers: readonly McpServerOffered[] | undefined) =>
  (servers ?? []).map((s) => `${s.name}\u0000${s.mode}\u0000${s.transport}`).sort().join('\u0001');

/**
 * The MCP servers offered per (engine, case) and arm, grouped into rows of cases offered the
 * same; undefined when no job had servers (the reports then show nothing). Pure.
 */
export function mcpOffers(jobs: readonly JobJson[]): McpOffers | undefined {
  if (!jobs.some((j) => j.mcp_servers?.length)) return undefined;
  type Arm = Map<string, string>;
  const byCase = new Map<string, { engine: string; caseId: string; arms: Partial<Record<Variant, Arm>> }>();
  for (const j of jobs) {
    if (!j.mcp_servers?.length && j.turns.length === 0) continue;
    const k = `${j.engine}\u0000${j.case_id}`;
    let entry = byCase.get(k);
    if (!entry) byCase.set(k, (entry = { engine: j.engine, caseId: j.case_id, arms: {} }));
    const arm = (entry.arms[j.variant] ??= new Map());
    const id = key(j.mcp_servers);
    if (!arm.has(id)) arm.set(id, mcpServersText(j.mcp_servers));
  }
  // What each case's arms were offered, by server set (whatever the order): the rows group by it.
  const groupKey = new Map<McpCaseOffer, string>();
  const offers: McpCaseOffer[] = [...byCase.values()].map(({ engine, caseId, arms }) => {
    const w = arms.with_skill;
    const wo = arms.without_skill;
    const differs = (w?.size ?? 0) > 1 || (wo?.size ?? 0) > 1 || (w !== undefined && wo !== undefined && [...w.keys()][0] !== [...wo.keys()][0]);
    const out: McpCaseOffer['arms'] = {};
    if (w) out.with_skill = [...w.values()];
    if (wo) out.without_skill = [...wo.values()];
    const text = (['with_skill', 'without_skill'] as const)
      .filter((v) => out[v])
      .map((v) => `${v}: ${out[v]!.join(' | ')}`)
      .join('; ');
    const offer = { engine, caseId, arms: out, differs, text };
    groupKey.set(offer, [w, wo].map((a) => (a ? [...a.keys()].join('\u0002') : '-')).join('\u0000'));
    return offer;
  });
  return { rows: rowsOf(offers, (o) => groupKey.get(o)!), differences: offers.filter((o) => o.differs), baseline: jobs.some((j) => j.variant === 'without_skill') };
}

/** Groups the offers by what each arm was offered (`groupOf`), in the order first seen; a row shows its first case's texts. */
function rowsOf(offers: McpCaseOffer[], groupOf: (o: McpCaseOffer) => string): McpOfferRow[] {
  const armText = (o: McpCaseOffer, v: Variant) => o.arms[v]?.join(' | ') ?? '—';
  const groups = new Map<string, McpCaseOffer[]>();
  for (const o of offers) groups.set(groupOf(o), [...(groups.get(groupOf(o)) ?? []), o]);
  const enginesOf = new Map<string, Set<string>>();
  for (const o of offers) enginesOf.set(o.caseId, (enginesOf.get(o.caseId) ?? new Set()).add(o.engine));
  return [...groups.values()].map((g) => {
    const first = g[0]!;
    // A case is named alone when all its engines are in this row; else with the engines that are.
    const here = new Map<string, string[]>();
    for (const o of g) here.set(o.caseId, [...(here.get(o.caseId) ?? []), o.engine]);
    const names = [...here].map(([c, es]) => (es.length === enginesOf.get(c)!.size ? c : `${c} (${es.join(', ')})`));
    const shown = names.slice(0, MAX_ROW_CASES).join(', ');
    const cases = groups.size === 1 && offers.length > 1 ? 'all cases' : names.length > MAX_ROW_CASES ? `${shown} (+${names.length - MAX_ROW_CASES} more)` : shown;
    return { cases, withSkill: armText(first, 'with_skill'), withoutSkill: armText(first, 'without_skill'), differs: g.some((o) => o.differs) };
  });
}
