/**
 * The malformed-input corpus (issue 10's list of malformed inputs, the hostile review's
 * FIFO, template, nesting and key findings, and issue 11's review: rules that check nothing
 * (`rule-*`), YAML 1.1 tags (`yaml-tag-*`, `skill-md-*-binary`, `skill-md-metadata-set`) and a
 * SKILL.md linked from outside the skill folder): one folder per suite
 * that skill-up once mishandled, under test/fixtures/malformed/<id>/:
 *
 * - `demo-skill/`: the suite (SKILL.md, evals/…), copied into a temporary folder per test;
 * - `expected.txt`: what `validate` and `run` must print. Lines are substrings of stderr
 *   (`file:line:col: field: message` as printed with the skill folder as working folder),
 *   `#` lines are comments, and `validate: exit N` / `run: exit N` set a command's expected
 *   exit code (default 2, with exactly one error and the substrings);
 * - `setup.mjs` (optional): `default({ skillDir, root })` finishes the copy (files that cannot
 *   be committed: 20 MB, Latin-1, symbolic links, modes, absolute paths) and may return
 *   `{ env }` for the commands.
 *
 * Each command must finish within a bound and never print a stack trace. Uses the built CLI
 * (dist/): build first.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN } from '../cli/helpers.js';

const CORPUS = fileURLToPath(new URL('../fixtures/malformed/', import.meta.url));
const IDS = readdirSync(CORPUS).filter((n) => statSync(path.join(CORPUS, n)).isDirectory()).sort();

/** Seconds a command may take: generated 20 MB suites get more. */
const BOUND_SECONDS = 20;
const BIG_BOUND_SECONDS = 60;

interface Expected {
  exit: Record<'validate' | 'run', number>;
  substrings: string[];
}

function readExpected(id: string): Expected {
  const out: Expected = { exit: { validate: 2, run: 2 }, substrings: [] };
  for (const line of readFileSync(path.join(CORPUS, id, 'expected.txt'), 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const directive = /^(validate|run): exit (\d+)$/.exec(line);
    if (directive) out.exit[directive[1] as 'validate' | 'run'] = Number(directive[2]);
    else out.substrings.push(line);
  }
  return out;
}

/** Copies the case's suite into a fresh temporary folder and runs its setup. */
async function prepare(id: string): Promise<{ skillDir: string; root: string; env: Record<string, string> }> {
  const root = mkdtempSync(path.join(tmpdir(), `su-malformed-${id}-`));
  const skillDir = path.join(root, 'work', 'demo-skill');
  mkdirSync(path.dirname(skillDir), { recursive: true });
  cpSync(path.join(CORPUS, id, 'demo-skill'), skillDir, { recursive: true });
  // Scripts are executable unless the setup says otherwise (a checkout may lose the bit).
  const walk = (dir: string) => {
    for (const ent of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, ent.name);
      if (ent.isDirectory()) walk(p);
      else if (ent.isFile() && readFileSync(p).subarray(0, 2).toString() === '#!') chmodSync(p, 0o755);
    }
  };
  walk(skillDir);
  const setupFile = path.join(CORPUS, id, 'setup.mjs');
  let env: Record<string, string> = {};
  if (existsSync(setupFile)) {
    const mod = (await import(pathToFileURL(setupFile).href)) as { default: (a: { skillDir: string; root: string }) => unknown };
    const r = (await mod.default({ skillDir, root })) as { env?: Record<string, string> } | undefined;
    env = r?.env ?? {};
  }
  return { skillDir, root, env };
}

/** Runs the built CLI, killing it after `seconds` (a hang fails the test instead of blocking it). */
function cli(args: string[], cwd: string, env: Record<string, string>, seconds: number): Promise<{ code: number | null; stderr: string; stdout: string; ms: number; killed: boolean }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, CI: '1', ...env } });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, seconds * 1000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started, killed });
    });
  });
}

describe('the malformed-input corpus', () => {
  it('holds the 68 cases of the findings, each with a suite and expected.txt', () => {
    expect(IDS).toHaveLength(68);
    for (const id of IDS) {
      expect(existsSync(path.join(CORPUS, id, 'demo-skill', 'SKILL.md')), id).toBe(true);
      expect(existsSync(path.join(CORPUS, id, 'expected.txt')), id).toBe(true);
    }
  });

  // One test per case and command, each its own CLI process (one at a time: two 20 MB suites at once would contend).
  const runs = IDS.flatMap((id) => (['validate', 'run'] as const).map((command) => [id, command] as const));
  it.for(runs)('%s, %s: one message at file:line and field, the right exit code, no stack trace, within the bound', { timeout: (BIG_BOUND_SECONDS + 30) * 1000 }, async ([id, command]) => {
    const expected = readExpected(id);
    const bound = id.startsWith('20mb') ? BIG_BOUND_SECONDS : BOUND_SECONDS;
    const { skillDir, root, env } = await prepare(id);
    const args = command === 'run' ? ['run', '.', '--output-dir', path.join(root, 'out')] : ['validate', '.'];
    const r = await cli(args, skillDir, env, bound);
    const shown = `${command} ${id} (exit ${r.code}, ${r.ms} ms):\n${r.stderr}${r.stdout}`;
    expect(r.killed, `did not finish within ${bound} s: ${shown}`).toBe(false);
    expect(r.stderr, shown).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(r.stderr, shown).not.toMatch(/internal error/);
    // A process warning of a dependency (`(node:123) Warning: Keys with collection values …`) is not a diagnostic.
    expect(r.stderr, shown).not.toMatch(/\(node:\d+\) Warning/);
    // A file outside the skill folder (skill-md-symlink-out's SKILL.md target) is never read, so never quoted.
    expect(r.stderr + r.stdout, shown).not.toContain('hunter2');
    expect(r.code, shown).toBe(expected.exit[command]);
    if (expected.exit[command] !== 2) return;
    for (const s of expected.substrings) expect(r.stderr, shown).toContain(s);
    expect(r.stderr, shown).toMatch(/^1 error\(s\)/m);
    // A run stops before its first job: no iteration folder, no result.
    if (command === 'run') expect(existsSync(path.join(root, 'out')), shown).toBe(false);
  });
});

describe('the escape for a literal {{ (x-braces-jinja, fixed)', () => {
  it('`\\{{ name }}` validates and reaches the agent as `{{ name }}`', { timeout: 60_000 }, async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'su-braces-'));
    const skillDir = path.join(root, 'demo-skill');
    cpSync(path.join(CORPUS, 'x-braces-jinja', 'demo-skill', 'SKILL.md'), path.join(skillDir, 'SKILL.md'));
    mkdirSync(path.join(skillDir, 'evals', 'cases'), { recursive: true });
    const write = (rel: string, text: string) => writeFileSync(path.join(skillDir, rel), text);
    write('evals/agent.sh', '#!/bin/sh\n# Answers with the session input it was given (the prompt as sent).\ncat "$1"\n');
    chmodSync(path.join(skillDir, 'evals/agent.sh'), 0o755);
    write(
      'evals/eval.yaml',
      'schema_version: v1alpha1\nengine:\n  name: echo-agent\n  custom:\n    transport: local\n    response_format: text\n    local: { command: ./evals/agent.sh, args: ["${input_file}"] }\ncases:\n  files: [evals/cases/*.yaml]\n',
    );
    write(
      'evals/cases/jinja.yaml',
      'input:\n  prompt: Write a Jinja template that prints \\{{ name }}\njudge:\n  type: rule_based\n  success:\n    - output_contains: { all: ["prints {{ name }}"], not: ["\\\\{{"] }\n',
    );
    const v = await cli(['validate', '.'], skillDir, {}, BOUND_SECONDS);
    expect(v.code, v.stderr).toBe(0);
    const r = await cli(['run', '.', '--output-dir', path.join(root, 'out')], skillDir, {}, BOUND_SECONDS * 2);
    expect(r.code, r.stderr + r.stdout).toBe(0);
  });
});

describe('too few open files (`ulimit -n`) to load skill-up', () => {
  it.for([20, 40, 60])('at ulimit -n %i, validate and run say so in one line and exit 3', { timeout: 60_000 }, async (n) => {
    const { skillDir, root } = await prepare('trials-huge');
    for (const args of [['validate', '.'], ['run', '.', '--output-dir', path.join(root, 'out')]]) {
      const quoted = args.map((a) => `'${a}'`).join(' ');
      const r = spawnSync('/bin/sh', ['-c', `ulimit -n ${n} && exec '${process.execPath}' '${BIN}' ${quoted}`], { cwd: skillDir, encoding: 'utf8', env: { ...process.env, CI: '1' } });
      const shown = `ulimit -n ${n}, ${args[0]} (exit ${r.status}):\n${r.stderr}${r.stdout}`;
      expect(r.status, shown).toBe(3);
      expect(r.stderr, shown).toBe(`skill-up needs at least 64 open files (ulimit -n is ${n}); raise it with \`ulimit -n 1024\`\n`);
    }
  });
});
