import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INLINE_TEXT_BYTES } from '../../src/engine/final-text.js';
import { parseSessionResult, readSessionResultFile, SessionResultError, WHOLE_PARSE_BYTES } from './session.js';

function jobDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'su-session-'));
  mkdirSync(join(d, 'outputs'));
  return d;
}

/** Writes `text` as the agent's output and reads it back through the file reader. */
async function viaFile(text: string, maxBytes = 1024 * 1024 * 1024) {
  const dir = jobDir();
  const file = join(dir, 'outputs', 'turn-1.stdout.txt');
  writeFileSync(file, text);
  const r = await readSessionResultFile(file, dir, 'outputs/turn-1.final.txt', maxBytes);
  const whole = r.finalMessageFile ? readFileSync(join(dir, r.finalMessageFile)).subarray(0, r.finalMessageBytes).toString('utf8') : r.finalMessage;
  return { r, whole, dir };
}

/** A padding field that pushes a SessionResult over WHOLE_PARSE_BYTES, so it is streamed. */
const PAD = 'p'.repeat(WHOLE_PARSE_BYTES + 10);

describe('readSessionResultFile: a streamed SessionResult reads like JSON.parse', () => {
  const tricky = 'line 1\nline\t2 "quoted" back\\slash / slash é 😀 \u2028 {braces} [brackets] ,commas, \u0001 end';
  const cases: Record<string, unknown>[] = [
    { exit_code: 0, final_message: tricky, pad: PAD },
    { pad: PAD, final_message: tricky, exit_code: 3, session_id: 'abc', input_tokens: 5, output_tokens: 7 },
    {
      exit_code: 0,
      pad: PAD,
      tool_calls: [{ name: 'w', input: { path: 'a "b" {c}', n: [1, 2, { d: null }] }, output: 'ok ] } "' }],
      skills_used: ['s1'],
      final_message: tricky,
      cost_usd: 0.25,
    },
    { final_message: tricky, pad: PAD, exit_code: 0, transcript: [{ type: 'tool_call', name: 'x', input: {} }], skills_listed: [], last: true },
  ];
  for (const [i, value] of cases.entries()) {
    for (const indent of [0, 2]) {
      it(`case ${i + 1}, ${indent ? 'indented' : 'compact'}`, async () => {
        const text = JSON.stringify(value, null, indent) + (indent ? '\n' : '');
        const want = parseSessionResult(text);
        const { r, whole } = await viaFile(text);
        expect(r.finalMessageFile).toBeUndefined();
        expect(whole).toBe(want.finalMessage);
        expect({ ...r, finalMessageBytes: undefined }).toEqual({ ...want, finalMessageBytes: undefined });
        expect(r.finalMessageBytes).toBe(Buffer.byteLength(want.finalMessage));
      });
    }
  }

  it('decodes a 3 MB final message full of escapes (across every read boundary) into its file, byte for byte', async () => {
    const unit = 'a\n\u00e9\ud83d\ude00"\\/\t<>\u0000z';
    const message = unit.repeat(Math.ceil((3 * 1024 * 1024) / unit.length));
    const text = JSON.stringify({ exit_code: 0, final_message: message, session_id: 's' });
    const { r, whole } = await viaFile(text);
    expect(r.finalMessageFile).toBe('outputs/turn-1.final.txt');
    expect(r.finalMessageBytes).toBe(Buffer.byteLength(message));
    expect(whole === message).toBe(true);
    expect(r.finalMessage.length).toBeLessThan(16 * 1024);
    expect(r.sessionId).toBe('s');
  });

  it('keeps a lone surrogate escape as U+FFFD, as UTF-8 encoding does', async () => {
    const text = `{"exit_code":0,"final_message":"x\\ud800y\\udc00z","pad":"${PAD}"}`;
    const { whole } = await viaFile(text);
    expect(whole).toBe(Buffer.from(JSON.parse(text).final_message as string, 'utf8').toString('utf8'));
  });

  it('names what is wrong with a malformed or incomplete SessionResult', async () => {
    const bad = [
      [`{"exit_code":0,"final_message":"abc","pad":"${PAD}"`, /not a SessionResult JSON \(unexpected end of the JSON object/],
      [`{"exit_code":0,"final_message":"abc","pad":"${PAD}"} trailing`, /unexpected data after the JSON object/],
      [`{"final_message":"abc","pad":"${PAD}"}`, /^SessionResult.exit_code must be an integer$/],
      [`{"exit_code":0,"final_message":7,"pad":"${PAD}"}`, /^SessionResult.final_message must be a string$/],
      [`{"exit_code":0,"final_message":"a\\qb","pad":"${PAD}"}`, /bad escape/],
      [`{"exit_code":0,"final_message":"a","final_message":"b","pad":"${PAD}"}`, /final_message given twice/],
      [`[${JSON.stringify(PAD)}]`, /expected "\{"/],
      [`{"exit_code":0,"final_message":"a","x":[1,2,,3],"pad":"${PAD}"}`, /the value of "x"/],
    ] as const;
    for (const [text, want] of bad) {
      const err = await viaFile(text).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SessionResultError);
      expect((err as Error).message).toMatch(want);
    }
  });

  it('refuses a final message larger than the cap', async () => {
    const text = JSON.stringify({ exit_code: 0, final_message: 'm'.repeat(2 * 1024 * 1024) });
    const err = await viaFile(text, 1024 * 1024).catch((e: unknown) => e);
    expect((err as Error).message).toContain('SessionResult.final_message larger than 1048576 bytes');
  });

  it('spills a large final message of a small file too (parsed whole, then stored once)', async () => {
    const message = 'q'.repeat(INLINE_TEXT_BYTES + 1);
    const { r, whole } = await viaFile(JSON.stringify({ exit_code: 0, final_message: message }));
    expect(r.finalMessageFile).toBe('outputs/turn-1.final.txt');
    expect(whole).toBe(message);
  });
});
