/**
 * The engine defects of issue 11, each tried again on the REAL engine binaries (installed by
 * test/setup/engines.ts, exported as SKILL_UP_<ENGINE>_BIN) through the built CLI, against
 * skill-up's scripted model server. Nothing leaves 127.0.0.1.
 *
 * - the final answer is the last assistant message of the last model turn (empty when the
 *   model's last reply after a tool call is empty), on every engine;
 * - `skills_offered` is recorded for every engine, an empty-of-the-skill list in without_skill;
 * - every turn records the tools offered to the model and the permission mode (the engine's
 *   own words, or what skill-up passed it), and the HTML report warns when the two arms differ (but not for the skill tool);
 * - no engine command runs in the user's real home: a HOME holding broken configuration files
 *   for every engine breaks neither `engines check` nor the jobs, and nothing is created there;
 * - `engines check` exits 1 when an engine is missing;
 * - no MaxListenersExceededWarning at parallelism above 10.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PINNED } from '../setup/engines.js';
import { runCli } from '../cli/helpers.js';
import { codexPermissionMode } from '../../engines/codex/adapter.js';
import { GEMINI_APPROVAL_MODE } from '../../engines/gemini-cli/adapter.js';
import { OPENCODE_PERMISSION_MODE } from '../../engines/opencode/adapter.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ENGINES = Object.keys(PINNED);

/** A HOME whose every engine configuration file is broken. */
function brokenHome(): string {
  const home = mkdtempSync(join(tmpdir(), 'broken-home-'));
  const files: Record<string, string> = {
    '.gemini/settings.json': '{ broken',
    '.claude.json': '{ broken',
    '.claude/settings.json': '{ broken',
    '.codex/config.toml': '[[[ broken',
    '.config/opencode/opencode.json': '{ broken',
    '.qwen/settings.json': '{ broken',
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(home, rel, '..'), { recursive: true });
    writeFileSync(join(home, rel), text);
  }
  return home;
}

/** Every path under `dir` with its size and mtime: equal before and after = nothing written there. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      out.push(`${p.slice(dir.length)} ${st.isDirectory() ? 'dir' : st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

const SKILL_MD = `---
name: defect-skill
description: Lists the files of the workspace. Use when asked to list files.
---
# Defect skill
Run ls.
`;

// The model narrates, runs ls, then sends an EMPTY reply: the final answer must be empty.
const MODEL = `rules:
  - reply:
      - say: "PROGRESS: I'll run ls first."
      - run: "ls"
      - say: ""
`;

const EVAL = `schema_version: v1alpha1
environment:
  type: none
engine:
  name: claude_code
  model:
    provider: scripted
    script: evals/fixtures/model.yaml
cases:
  files: [evals/cases/*.yaml]
  defaults:
    timeout_seconds: 180
    max_turns: 6
  parallelism: 2
report:
  formats: [json, html]
`;

const CASE = `title: Lists the files
input:
  prompt: Please list the files here.
judge:
  type: rule_based
  success:
    - output_contains: { all: ["nothing"] }
`;

function writeSuite(): string {
  const root = mkdtempSync(join(tmpdir(), 'defects-'));
  const skill = join(root, 'defect-skill');
  mkdirSync(join(skill, 'evals/cases'), { recursive: true });
  mkdirSync(join(skill, 'evals/fixtures'), { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), SKILL_MD);
  writeFileSync(join(skill, 'evals/eval.yaml'), EVAL);
  writeFileSync(join(skill, 'evals/fixtures/model.yaml'), MODEL);
  writeFileSync(join(skill, 'evals/cases/list.yaml'), CASE);
  return skill;
}

interface TurnJson {
  final_text: string;
  tool_calls: { name: string }[];
  skills_listed?: string[];
  tools_offered?: string[];
  permission_mode?: string;
}
interface JobJson {
  id: string;
  engine: string;
  variant: string;
  status: string;
  reason?: string;
  skills_offered?: string[];
  turns: TurnJson[];
}

describe('engine defects of issue 11 (real binaries, scripted model, broken HOME)', () => {
  let home: string;
  let before: string[];
  let out: string;
  let doc: { jobs: JobJson[] };
  let stderr: string;

  beforeAll(async () => {
    home = brokenHome();
    before = snapshot(home);
    out = join(mkdtempSync(join(tmpdir(), 'defects-out-')), 'out');
    const r = await runCli(['run', writeSuite(), '--engine', ENGINES.join(','), '--baseline', '--output-dir', out], { env: { HOME: home } });
    stderr = r.stderr;
    doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
  }, 900_000);

  it('every job of every engine ran: a broken HOME does not make jobs errors', () => {
    expect(doc.jobs.map((j) => j.engine).sort()).toEqual([...ENGINES, ...ENGINES].sort());
    for (const j of doc.jobs) expect(j.status, `${j.engine} ${j.id}: ${j.reason ?? ''}\n${stderr.slice(-2000)}`).not.toBe('error');
  });

  it('the final answer is the last model turn\'s text: empty after the tool call, never the narration', () => {
    for (const j of doc.jobs) {
      const t = j.turns[0]!;
      expect(t.tool_calls.length, `${j.engine}: the model's ls ran`).toBeGreaterThan(0);
      expect(t.final_text, `${j.engine} ${j.variant}`).toBe('');
    }
  });

  it('skills_offered is recorded for every engine: the skill in with_skill, never in without_skill', () => {
    for (const j of doc.jobs) {
      expect(Array.isArray(j.skills_offered), `${j.engine} ${j.variant}: ${JSON.stringify(j.skills_offered)}`).toBe(true);
      expect(Array.isArray(j.turns[0]!.skills_listed), `${j.engine} ${j.variant} turn`).toBe(true);
      if (j.variant === 'with_skill') expect(j.skills_offered, j.engine).toContain('defect-skill');
      else expect(j.skills_offered, j.engine).not.toContain('defect-skill');
    }
  });

  it('every turn records the tools offered to the model and the permission mode, on every engine', () => {
    for (const j of doc.jobs) {
      const t = j.turns[0]!;
      expect(t.tools_offered?.length, `${j.engine} ${j.variant}`).toBeGreaterThan(0);
      // The tool the model used was among those offered (Codex reports its own item type, `command_execution`, for the model's `exec_command`).
      expect(t.tools_offered, j.engine).toContain(j.engine === 'codex' ? 'exec_command' : t.tool_calls[0]!.name);
    }
    const mode = (engine: string) => doc.jobs.filter((j) => j.engine === engine).map((j) => j.turns[0]!.permission_mode);
    expect(mode('claude_code')).toEqual(['bypassPermissions', 'bypassPermissions']);
    expect(mode('qwen_code')).toEqual(['yolo', 'yolo']);
    // The others' output names no mode: what skill-up passed them.
    expect(mode('codex')).toEqual(Array(2).fill(codexPermissionMode(false)));
    expect(mode('gemini_cli')).toEqual([GEMINI_APPROVAL_MODE, GEMINI_APPROVAL_MODE]);
    expect(mode('opencode')).toEqual([OPENCODE_PERMISSION_MODE, OPENCODE_PERMISSION_MODE]);
  });

  it('the HTML report shows no arm warning when only the skill tool differs, and names the difference when tools differ', async () => {
    const html = readFileSync(join(out, 'iteration-1/report.html'), 'utf8');
    expect(html).not.toContain('arms not offered the same tools');
    // Take a tool and the permission mode away from one without_skill job and report again.
    const j = doc.jobs.find((x) => x.engine === 'claude_code' && x.variant === 'without_skill')!;
    const t = j.turns[0]!;
    t.tools_offered = t.tools_offered!.filter((n) => n !== 'Write');
    t.permission_mode = 'default';
    const edited = join(out, 'edited.json');
    writeFileSync(edited, JSON.stringify(doc));
    const dir = join(out, 'edited-report');
    const r = await runCli(['report', edited, '--format', 'html', '--output-dir', dir]);
    expect(r.code, r.stderr).toBe(0);
    const page = readFileSync(join(dir, readdirSync(dir).find((f) => f.endsWith('.html'))!), 'utf8');
    expect(page).toContain('arms not offered the same tools');
    expect(page).toContain('tools only in with_skill: Write; permission mode: with_skill bypassPermissions, without_skill default');
  }, 120_000);

  it('nothing was created or changed under HOME by the run', () => {
    expect(snapshot(home)).toEqual(before);
  });

  it('engines check passes with the broken HOME, writes nothing there, and exits 1 when an engine is missing', async () => {
    const ok = await runCli(['engines', 'check'], { env: { HOME: home } });
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    for (const e of ENGINES) expect(ok.stdout).toMatch(new RegExp(`^${e}: ok ${PINNED[e]!.replace(/\./g, '\\.')} `, 'm'));
    expect(snapshot(home)).toEqual(before);
    const missing = await runCli(['engines', 'check'], { env: { HOME: home, SKILL_UP_CODEX_BIN: join(home, 'no-such-codex') } });
    expect(missing.code, missing.stdout).toBe(1);
    expect(missing.stdout).toMatch(/^codex: unavailable: /m);
    const named = await runCli(['engines', 'check', 'gemini_cli', 'codex'], { env: { HOME: home, SKILL_UP_CODEX_BIN: join(home, 'no-such-codex') } });
    expect(named.code).toBe(1);
  }, 300_000);
});

describe('no listener warnings at any parallelism', () => {
  for (const parallelism of [16, 40]) {
    it(`a run at parallelism ${parallelism} prints no MaxListenersExceededWarning`, async () => {
      const out = mkdtempSync(join(tmpdir(), 'par-'));
      const r = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--trials', String(parallelism), '--baseline', '--parallelism', String(parallelism), '--output-dir', out]);
      expect(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).toContain('"jobs"');
      expect(r.stderr).not.toMatch(/MaxListenersExceeded|memory leak detected/i);
      expect(r.stderr).not.toMatch(/\(node:\d+\) \w*Warning/);
    }, 300_000);
  }
});
