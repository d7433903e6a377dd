import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PINNED } from '../setup/engines.js';
import { runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every engine whose real binary the global set-up installed. */
const ENGINES = Object.keys(PINNED);

describe.each(ENGINES)('a three-turn case with a capture on %s (real binary, scripted model)', (engine) => {
  it('captures in turn 1, templates turn 2, resumes the session for turn 3, grades per turn', async () => {
    const dir = mkdtempSync(join(tmpdir(), `su-mt-${engine}-`));
    cpSync(join(ROOT, 'test/fixtures/multi-turn'), join(dir, 'multi-turn'), { recursive: true });
    const out = join(dir, 'out');
    const r = await runCli(['run', join(dir, 'multi-turn'), '--engine', engine, '--output-dir', out]);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    const job = doc.jobs[0];
    expect(job.status, `${job.reason ?? ''} ${JSON.stringify(job.assertions)}`).toBe('pass');
    expect(r.code).toBe(0);
    expect(job.turns.map((t: { status: string }) => t.status)).toEqual(['completed', 'completed', 'completed']);
    expect(job.turns[1].prompt).toBe('Save the token abc123XYZ into token.txt.');
    const sessions = new Set(job.turns.map((t: { session_id?: string }) => t.session_id));
    expect(sessions.size).toBe(1);
    expect([...sessions][0]).toBeTruthy();
  });

  it('an unresolved {{variable}} is a config error (exit 2) before any engine starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), `su-mt2-${engine}-`));
    cpSync(join(ROOT, 'test/fixtures/multi-turn'), join(dir, 'multi-turn'), { recursive: true });
    const kase = join(dir, 'multi-turn/evals/cases/token-flow.yaml');
    writeFileSync(kase, readFileSync(kase, 'utf8').replace('{{token}}', '{{tokn}}'));
    const out = join(dir, 'out');
    const r = await runCli(['run', join(dir, 'multi-turn'), '--engine', engine, '--output-dir', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/token-flow\.yaml:\d+:\d+: input\.turns\[1\]\.content: `\{\{tokn\}\}` is not captured by an earlier turn/);
  });
});

describe('a custom engine in conversation_mode: stateful', () => {
  it('is called once per turn, gets the previous session_id back, and a capture feeds the next turn', async () => {
    const { writeSkill } = await import('./helpers.js');
    const skill = writeSkill({
      // Answers with the session it was given (or a new one) and the token once asked.
      'evals/agent.sh': [
        '#!/usr/bin/env bash',
        'in=$(cat "$1")',
        'sid=$(printf %s "$in" | node -e \'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);process.stdout.write(j.session_id||"")})\')',
        'n=$(printf %s "$in" | node -e \'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{process.stdout.write(String(JSON.parse(s).messages.length))})\')',
        'prompt=$(printf %s "$in" | node -e \'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{process.stdout.write(JSON.parse(s).messages.at(-1).content)})\')',
        'given=$sid; [ -z "$sid" ] && sid="sess-42"',
        'printf \'{"exit_code":0,"final_message":"seen session=[%s] messages=%s prompt=[%s] token=T0K3N","session_id":"%s"}\' "$given" "$n" "$prompt" "$sid"',
      ].join('\n'),
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'engine:',
        '  name: stateful-agent',
        '  custom:',
        '    transport: local',
        '    conversation_mode: stateful',
        '    local: { command: ./evals/agent.sh, args: ["${input_file}"] }',
        'cases:',
        '  files: [evals/cases/*.yaml]',
      ].join('\n'),
      'evals/cases/two.yaml': [
        'input:',
        '  turns:',
        '    - content: first',
        '      capture: [{ variable: tok, pattern: "token=(?P<value>\\\\w+)" }]',
        '    - content: "use {{tok}}"',
        'judge:',
        '  type: rule_based',
        '  success:',
        '    - turn_response_contains: { turn: 1, contains_all: ["session=[]"] }',
        '    - turn_response_contains: { turn: 2, contains_all: ["session=[sess-42]", "messages=1", "prompt=[use T0K3N]"] }',
      ].join('\n'),
    });
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--output-dir', out]);
    const job = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8')).jobs[0];
    expect(job.status, JSON.stringify(job.assertions) + (job.reason ?? '')).toBe('pass');
    expect(r.code).toBe(0);
    expect(job.turns.map((t: { session_id?: string }) => t.session_id)).toEqual(['sess-42', 'sess-42']);
  });
});
