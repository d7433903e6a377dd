import { cpSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PINNED } from '../setup/engines.js';
import { runCli } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every engine whose real binary the global set-up installed. */
const ENGINES = Object.keys(PINNED);

interface TurnJson {
  index: number;
  prompt: string;
  status: string;
  source?: string;
  stop_reason?: string;
  final_text: string;
}

describe.each(ENGINES)('a simulated user on %s (real binary, scripted model and scripted simulator)', (engine) => {
  it('runs turn 1 from the case and turns 2 and 3 from the simulator, each written from the previous answer; an autonomous scenario stops on its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), `su-sim-${engine}-`));
    cpSync(join(ROOT, 'test/fixtures/simulated-user'), join(dir, 'simulated-user'), { recursive: true });
    const out = join(dir, 'out');
    const r = await runCli(['run', join(dir, 'simulated-user'), '--engine', engine, '--output-dir', out]);
    const doc = JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));
    const colour = doc.jobs.find((j: { case_id: string }) => j.case_id === 'colour');
    const trip = doc.jobs.find((j: { case_id: string }) => j.case_id === 'trip');

    // Three turns: who wrote each, and each simulated message followed the agent's previous answer.
    expect(colour.status, `${colour.reason ?? ''} ${JSON.stringify(colour.assertions)}`).toBe('pass');
    const turns: TurnJson[] = colour.turns;
    expect(turns.map((t) => t.status)).toEqual(['completed', 'completed', 'completed']);
    expect(turns.map((t) => t.source)).toEqual(['case', 'simulator', 'simulator']);
    expect(turns[1]!.prompt).toBe('Not blue. SWITCH-TO-GREEN please.');
    expect(turns[2]!.prompt).toBe('CONFIRM-GREEN-9 now.');
    // The agent received the simulated messages: its answers are the rules that match them.
    expect(turns[1]!.final_text).toContain('Switched to GREEN-9');
    expect(turns[2]!.final_text).toContain('GREEN-9 is final');
    expect(turns[2]!.stop_reason).toBe('turns_done');
    // The transcript records the same; the simulator's requests are logged apart from the agent's.
    const transcript = JSON.parse(readFileSync(join(out, 'iteration-1', colour.output_dir, 'transcript.json'), 'utf8'));
    expect(transcript.turns.map((t: { source?: string }) => t.source)).toEqual(['case', 'simulator', 'simulator']);
    expect(transcript.stopReason).toBe('turns_done');
    expect(existsSync(join(out, 'iteration-1', colour.output_dir, 'simulator', 'model-requests.jsonl'))).toBe(true);

    // Autonomous: the simulator answered the agent's question, then stopped by itself before max_turns (5).
    expect(trip.status, `${trip.reason ?? ''} ${JSON.stringify(trip.assertions)}`).toBe('pass');
    const tripTurns: TurnJson[] = trip.turns;
    expect(tripTurns.map((t) => t.source)).toEqual(['case', 'simulator']);
    expect(tripTurns[1]!.prompt).toBe('Lisbon, please.');
    expect(tripTurns[1]!.stop_reason).toBe('simulator_stop: the trip is booked');
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
  });
});
