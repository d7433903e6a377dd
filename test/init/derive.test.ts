/** src/init/derive.ts: what `skill-up init` reads out of real skills' descriptions. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeSkill } from '../../src/init/derive.js';
import { lintSkill } from '../../src/skill/lint.js';

const SKILLS = join(import.meta.dirname, '..', 'fixtures', 'skills');

async function facts(name: string) {
  const r = await lintSkill(join(SKILLS, name));
  return { name: r.name!, description: r.description!, body: r.body! };
}

describe('describeSkill on the real skills of test/fixtures/skills', () => {
  it('internal-comms: the first sentence is the promise, "should use this skill whenever" the clause', async () => {
    const parts = describeSkill(await facts('internal-comms'));
    expect(parts.promise).toBe('A set of resources to help me write all kinds of internal communications, using the formats that my company likes to use');
    expect(parts.whenToUse).toBe('asked to write some sort of internal communications (status reports, leadership updates, 3P updates, company newsletters, FAQs, incident reports, project updates, etc.)');
  });

  it('mcp-builder: "Use when …", up to the sentence end', async () => {
    const parts = describeSkill(await facts('mcp-builder'));
    expect(parts.promise).toBe('Guide for creating high-quality MCP (Model Context Protocol) servers that enable LLMs to interact with external services through well-designed tools');
    expect(parts.whenToUse).toBe('building MCP servers to integrate external APIs or services, whether in Python (FastMCP) or Node/TypeScript (MCP SDK)');
  });

  it('algorithmic-art and brand-guidelines: "Use this when" / "Use it when"', async () => {
    expect(describeSkill(await facts('algorithmic-art')).whenToUse).toBe('users request creating art using code, generative art, algorithmic art, flow fields, or particle systems');
    expect(describeSkill(await facts('brand-guidelines')).whenToUse).toBe('brand colors or style guidelines, visual formatting, or company design standards apply');
  });

  it('frontend-design and webapp-testing say no "use when": the promise alone', async () => {
    for (const name of ['frontend-design', 'webapp-testing']) {
      const parts = describeSkill(await facts(name));
      expect(parts.whenToUse, name).toBeUndefined();
      expect(parts.promise.length, name).toBeGreaterThan(20);
      expect(parts.promise, name).not.toMatch(/\.$/);
    }
  });

  it("the title is the body's first heading", async () => {
    const body = (await facts('frontend-design')).body;
    expect(describeSkill(await facts('frontend-design')).title).toBe(/^#+\s+(.+)$/m.exec(body)![1]);
    expect(readFileSync(join(SKILLS, 'frontend-design', 'SKILL.md'), 'utf8')).toContain(`# ${describeSkill(await facts('frontend-design')).title}`);
  });
});

describe('describeSkill on hand-made descriptions', () => {
  it('keeps e.g. and etc. inside their sentence', () => {
    const parts = describeSkill({ name: 'x', description: 'Formats tables, e.g. CSV and TSV, etc. for reports. Use when a table needs formatting.' });
    expect(parts.promise).toBe('Formats tables, e.g. CSV and TSV, etc. for reports');
    expect(parts.whenToUse).toBe('a table needs formatting');
  });

  it('one sentence without a full stop; no body: the title is the name', () => {
    expect(describeSkill({ name: 'tiny', description: '  Does   one thing  ' })).toEqual({ promise: 'Does one thing', title: 'tiny' });
  });

  it('"Use for …" counts as a when-to-use clause', () => {
    expect(describeSkill({ name: 'x', description: 'Writes release notes. Use for changelogs and release announcements.' }).whenToUse).toBe('changelogs and release announcements');
  });
});
