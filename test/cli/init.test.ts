/**
 * `skill-up init` through the built CLI on a copy of a real public skill
 * (test/fixtures/skills/frontend-design, Apache-2.0, its LICENSE.txt copied along): the suite
 * it writes runs offline at once and passes with the skill on the real Claude Code and Codex
 * binaries (test/setup/engines.ts) and the custom stand-in agent; nothing is overwritten
 * without --force.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'skills', 'frontend-design');

/** A fresh folder holding a copy of frontend-design; returns [parent, skill folder]. */
function copySkill(): [string, string] {
  const parent = mkdtempSync(join(tmpdir(), 'su-cli-init-'));
  const dir = join(parent, 'frontend-design');
  cpSync(FIXTURE, dir, { recursive: true });
  return [parent, dir];
}

interface Job { variant: string; status: string; skill_activations: { skill: string }[] }

/** `skill-up run` of the skill folder from its parent; the run's jobs by variant. */
async function runSuite(parent: string, extra: string[] = []) {
  const out = join(parent, 'out');
  const r = await runCli(['run', 'frontend-design', '--output-dir', out, ...extra], { cwd: parent });
  const result = join(out, 'iteration-1', 'result.json');
  const jobs = existsSync(result) ? (JSON.parse(readFileSync(result, 'utf8')) as { jobs: Job[] }).jobs : [];
  return { r, jobs, iteration: join(out, 'iteration-1') };
}

describe('skill-up init', () => {
  it('writes the suite, says so and what to run next; `run` passes with the skill on Claude Code and fails without', async () => {
    const [parent, dir] = copySkill();
    const init = await runCli(['init', 'frontend-design'], { cwd: parent });
    expect(init.code, init.stderr).toBe(0);
    for (const f of ['evals/eval.yaml', 'evals/cases/when-to-use.yaml', 'evals/cases/main-promise.yaml', 'evals/model.yaml']) {
      expect(init.stdout).toContain(`wrote ${join('frontend-design', f)}\n`);
      expect(existsSync(join(dir, f)), f).toBe(true);
    }
    expect(init.stdout).toContain('is valid: 2 starter case(s), engine claude_code, with and without the skill');
    expect(init.stdout).toContain('next: skill-up run frontend-design\n');
    expect(readFileSync(join(dir, 'evals/eval.yaml'), 'utf8')).toMatch(/name: claude_code\n {2}version: 2\.1\.332 /);

    const { r, jobs, iteration } = await runSuite(parent);
    expect(r.code, r.stderr.slice(-3000) + r.stdout.slice(-3000)).toBe(0);
    expect(jobs).toHaveLength(2 * 2 * 3);
    for (const j of jobs) {
      expect(j.status).toBe(j.variant === 'with_skill' ? 'pass' : 'fail');
      expect(j.skill_activations.map((a) => a.skill)).toEqual(j.variant === 'with_skill' ? ['frontend-design'] : []);
    }
    expect(r.stdout).toContain('claude_code uplift: +100 points');
    for (const f of ['result.json', 'report.html', 'report.xml', 'summary.md']) expect(existsSync(join(iteration, f)), f).toBe(true);
  }, 300_000);

  it('--engine codex writes a Codex suite that also runs offline and passes with the skill', async () => {
    const [parent, dir] = copySkill();
    const init = await runCli(['init', dir, '--engine', 'codex'], { cwd: parent });
    expect(init.code, init.stderr).toBe(0);
    expect(readFileSync(join(dir, 'evals/eval.yaml'), 'utf8')).toMatch(/name: codex\n {2}version: \d/);
    const { r, jobs } = await runSuite(parent, ['--trials', '1']);
    expect(r.code, r.stderr.slice(-3000) + r.stdout.slice(-3000)).toBe(0);
    expect(jobs.map((j) => `${j.variant}:${j.status}`).sort()).toEqual(['with_skill:pass', 'with_skill:pass', 'without_skill:fail', 'without_skill:fail']);
  }, 300_000);

  it('--engine custom writes a stand-in agent instead of a model; it passes with the skill', async () => {
    const [parent, dir] = copySkill();
    const init = await runCli(['init', '--engine', 'custom'], { cwd: dir });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('wrote evals/agent.mjs\n');
    expect(init.stdout).toContain('next: skill-up run .\n');
    expect(existsSync(join(dir, 'evals/model.yaml'))).toBe(false);
    const { r, jobs } = await runSuite(parent, ['--trials', '1']);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(jobs.map((j) => `${j.variant}:${j.status}`).sort()).toEqual(['with_skill:pass', 'with_skill:pass', 'without_skill:fail', 'without_skill:fail']);
  }, 120_000);

  it('never overwrites: exit 2 naming the file, nothing written; --force replaces every file', async () => {
    const [parent, dir] = copySkill();
    mkdirSync(join(dir, 'evals'));
    writeFileSync(join(dir, 'evals/model.yaml'), 'rules: []\n');
    const refused = await runCli(['init', 'frontend-design'], { cwd: parent });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`skill-up init: would overwrite ${join('frontend-design', 'evals/model.yaml')}; nothing was written: pass --force to replace it`);
    expect(refused.stdout).toBe('');
    expect(existsSync(join(dir, 'evals/eval.yaml'))).toBe(false);
    expect(readFileSync(join(dir, 'evals/model.yaml'), 'utf8')).toBe('rules: []\n');

    const forced = await runCli(['init', 'frontend-design', '--force'], { cwd: parent });
    expect(forced.code, forced.stderr).toBe(0);
    expect(readFileSync(join(dir, 'evals/model.yaml'), 'utf8')).toContain('use_skill: frontend-design');

    // A second init over the suite it wrote: refused again, listing every file.
    const again = await runCli(['init', 'frontend-design', '--engine', 'qwen_code'], { cwd: parent });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/would overwrite .*eval\.yaml, .*when-to-use\.yaml, .*main-promise\.yaml, .*model\.yaml; nothing was written: pass --force to replace them/);
    expect(readFileSync(join(dir, 'evals/eval.yaml'), 'utf8')).toContain('name: claude_code');
  });

  it('usage errors: an unknown engine (with a did-you-mean), no SKILL.md, no description; --help has examples', async () => {
    const [parent, dir] = copySkill();
    const unknown = await runCli(['init', dir, '--engine', 'codx']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown engine `codx`');
    expect(unknown.stderr).toContain('codex');

    const empty = join(parent, 'empty');
    mkdirSync(empty);
    const none = await runCli(['init', empty]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('SKILL.md');
    expect(none.stderr).not.toContain('internal error');

    const bare = join(parent, 'bare');
    mkdirSync(bare);
    writeFileSync(join(bare, 'SKILL.md'), '---\nname: bare\n---\n# Bare\n');
    const nodesc = await runCli(['init', bare]);
    expect(nodesc.code).toBe(2);
    expect(nodesc.stderr).toContain('description');
    expect(existsSync(join(bare, 'evals'))).toBe(false);

    // A SKILL.md that `validate` rejects (the name is not the folder's): written, then exit 2 saying why.
    const renamed = join(parent, 'renamed');
    cpSync(FIXTURE, renamed, { recursive: true });
    const mismatch = await runCli(['init', renamed]);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toContain('the suite was written, but it does not load yet');
    expect(mismatch.stderr).toContain('`name` is `frontend-design` but the skill folder is `renamed`');
    expect(existsSync(join(renamed, 'evals/eval.yaml'))).toBe(true);

    const help = await runCli(['init', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: skill-up init [skill folder] [--engine <name>] [--force]');
    expect(help.stdout).toContain('claude_code, codex, opencode, gemini_cli, qwen_code, custom');
    expect(help.stdout).toContain('Examples:');
    const top = await runCli(['--help']);
    expect(top.stdout).toContain('  init [skill folder]');
    expect(top.stdout).toContain('skill-up init path/to/my-skill');
  });
});
