/**
 * Review finding 3: a custom agent whose SessionResult held 350,000 tool calls (about 45 MB,
 * under the 64 MiB cap) made skill-up peak near 1 GB. A turn now keeps at most 10,000 tool
 * calls (the rest counted in `toolCallsDropped`, shown as a note in the job's reason) and at
 * most 16 Mi characters of tool inputs and outputs; the streamed SessionResult reader never
 * builds the dropped calls. Peak RSS of skill-up itself (VmHWM polled in /proc) ≤ 200 MB.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSessionResult } from '../../engines/custom/session.js';
import { droppedToolCalls, MAX_TOOL_CALLS_PER_TURN, MAX_TOOL_IO_CHARS_PER_TURN } from '../../src/run/types.js';
import { BIN, writeSkill } from '../cli/helpers.js';

const PEAK_LIMIT_KB = 200 * 1000;
const CALLS = Number(process.env.SU_TEST_CALLS ?? 350_000);

function vmHwm(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs the built CLI, polling its own VmHWM (the agent's memory is not skill-up's). */
function runMeasured(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; peakKb: number }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, CI: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let hwm = 0;
    const poll = setInterval(() => {
      const v = vmHwm(child.pid!);
      if (v !== undefined && v > hwm) hwm = v;
    }, 10);
    child.on('close', (code) => {
      clearInterval(poll);
      res({ code, stdout, stderr, peakKb: hwm });
    });
  });
}

// Streams `{"name":"t<i>","input":{"a":"y"*50},"output":"z"*50}` × CALLS to stdout.
const GENERATOR = `
const out = process.stdout, y = 'y'.repeat(50), z = 'z'.repeat(50), N = ${CALLS};
out.write('{"exit_code":0,"final_message":"done","tool_calls":[');
let i = 0;
function go() {
  let s = '';
  for (let k = 0; k < 5000 && i < N; k++, i++) s += (i ? ',' : '') + '{"name":"t' + i + '","input":{"a":"' + y + '"},"output":"' + z + '"}';
  if (i < N) { if (out.write(s)) setImmediate(go); else out.once('drain', go); } else out.end(s + ']}');
}
go();
`;

describe('a turn with 350,000 tool calls (built CLI)', () => {
  it('peaks at most 200 MB, keeps the first 10,000, counts the rest, and tool_called still works on kept calls', async () => {
    const skill = writeSkill({
      'evals/gen.js': GENERATOR,
      'evals/agent.sh': ['#!/usr/bin/env bash', `exec "${process.execPath}" "$(dirname "$0")/gen.js"`].join('\n'),
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'environment: { type: none }',
        'engine:',
        '  name: chatty',
        '  custom:',
        '    transport: local',
        '    timeout_seconds: 120',
        '    local: { command: ./evals/agent.sh }',
        'cases:',
        '  inline:',
        '    - id: many',
        '      input: { turns: [{ content: hi }] }',
        '      judges:',
        '        - id: tools',
        '          type: rule_based',
        '          success:',
        '            - tool_called: { name: t9999, args: { a: "' + 'y'.repeat(50) + '" } }',
        '            - tool_called: { name: t0 }',
      ].join('\n'),
    });
    const out = join(skill, '..', 'out');
    const r = await runMeasured(['run', skill, '--output-dir', out]);
    console.log(`350k tool calls: peak ${r.peakKb} kB; exit ${r.code}`);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    const job = doc.jobs[0];
    expect(job.status, `${job.reason} ${JSON.stringify(job.assertions)} ${r.stderr.slice(-2000)}`).toBe('pass');
    expect(r.code).toBe(0);
    expect(r.peakKb, r.stderr.slice(-2000)).toBeLessThanOrEqual(PEAK_LIMIT_KB);
    expect(job.reason).toMatch(/340000 tool call\(s\) past the first 10000 were counted, not kept/);
    const transcript = JSON.parse(readFileSync(join(out, 'iteration-1', job.output_dir, 'transcript.json'), 'utf8'));
    expect(transcript.turns[0].toolCalls).toHaveLength(MAX_TOOL_CALLS_PER_TURN);
    expect(transcript.turns[0].toolCallsDropped).toBe(CALLS - MAX_TOOL_CALLS_PER_TURN);
  }, 180_000);
});

describe('parseSessionResult bounds tool calls', () => {
  it('keeps MAX_TOOL_CALLS_PER_TURN calls and counts the rest', () => {
    const calls = Array.from({ length: MAX_TOOL_CALLS_PER_TURN + 5 }, (_, i) => ({ name: `t${i}`, input: {} }));
    const r = parseSessionResult(JSON.stringify({ exit_code: 0, final_message: 'x', tool_calls: calls }));
    expect(r.toolCalls).toHaveLength(MAX_TOOL_CALLS_PER_TURN);
    expect(r.toolCalls.at(-1)!.name).toBe(`t${MAX_TOOL_CALLS_PER_TURN - 1}`);
    expect(droppedToolCalls.get(r.toolCalls)).toBe(5);
  });

  it('past the size budget, a call keeps a short preview of its input and output', () => {
    const big = 'b'.repeat(90_000);
    const n = Math.ceil(MAX_TOOL_IO_CHARS_PER_TURN / 180_000) + 3;
    const calls = Array.from({ length: n }, (_, i) => ({ name: `t${i}`, input: { a: big }, output: big }));
    const r = parseSessionResult(JSON.stringify({ exit_code: 0, final_message: 'x', tool_calls: calls }));
    expect(r.toolCalls).toHaveLength(n);
    expect(r.toolCalls[0]!.input).toEqual({ a: big });
    const last = r.toolCalls.at(-1)!;
    expect(typeof last.input).toBe('string');
    expect((last.input as string).length).toBeLessThan(1000);
    expect(last.output!.length).toBeLessThan(1000);
    expect(droppedToolCalls.get(r.toolCalls)).toBeUndefined();
  });
});
