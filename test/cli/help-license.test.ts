/**
 * Newcomer fixes of issue 15 (item 3c and leftovers), through the built CLI: the top-level help
 * names every API the scripted model speaks, `model-server --help` has examples, and the
 * repository carries the Apache-2.0 text its package.json names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('help texts', () => {
  it('skill-up --help: model-server speaks four APIs, in the commands column', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.startsWith('  model-server '))!;
    expect(line).toBe('  model-server --script FILE     serve a scripted model for any engine (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini APIs)');
    // The description starts in the same column as its neighbours'.
    const engines = r.stdout.split('\n').find((l) => l.startsWith('  engines '))!;
    expect(line.indexOf(' serve a') + 1).toBe(engines.indexOf('the agent CLIs'));
    expect(r.stdout).not.toContain('(Anthropic API)');
  });

  it('skill-up model-server --help: examples for Claude Code, Codex, OpenAI-compatible clients and Gemini CLI', async () => {
    const r = await runCli(['model-server', '--help']);
    expect(r.code).toBe(0);
    const examples = r.stdout.slice(r.stdout.indexOf('\nExamples'));
    expect(examples.length).toBeGreaterThan(100);
    for (const want of ['skill-up model-server --script', 'ANTHROPIC_BASE_URL=', ' claude -p ', ' codex exec ', 'OPENAI_BASE_URL=', ' qwen ', 'GOOGLE_GEMINI_BASE_URL=', ' gemini ']) {
      expect(examples).toContain(want);
    }
  });
});

describe('LICENSE', () => {
  it('is the whole Apache License 2.0, as package.json says', () => {
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license).toBe('Apache-2.0');
    const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
    expect(text).toMatch(/^\s+Apache License\n\s+Version 2\.0, January 2004\n\s+http:\/\/www\.apache\.org\/licenses\/\n/);
    for (const section of ['1. Definitions.', '9. Accepting Warranty or Additional Liability.', 'END OF TERMS AND CONDITIONS', 'APPENDIX: How to apply the Apache License to your work.']) {
      expect(text).toContain(section);
    }
    expect(text.split('\n')).toHaveLength(203);
  });
});
