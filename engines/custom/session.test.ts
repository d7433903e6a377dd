import { describe, expect, it } from 'vitest';
import { parseSessionResult, SessionResultError } from './session.js';

describe('parseSessionResult: money and tokens', () => {
  const base = { exit_code: 0, final_message: 'done' };
  it('takes a cost ≥ 0 in USD', () => {
    expect(parseSessionResult(JSON.stringify({ ...base, cost_usd: 0.25 })).costUsd).toBe(0.25);
    expect(parseSessionResult(JSON.stringify(base)).costUsd).toBeUndefined();
  });
  it('refuses a negative or non-numeric cost as a malformed SessionResult (the job is an error, never a crash of the run)', () => {
    for (const bad of [-5, '0.1', true]) {
      expect(() => parseSessionResult(JSON.stringify({ ...base, cost_usd: bad }))).toThrow(SessionResultError);
    }
    expect(() => parseSessionResult(JSON.stringify({ ...base, cost_usd: -5 }))).toThrow(/cost_usd must be a number ≥ 0/);
  });
  it('counts a negative token figure as 0', () => {
    expect(parseSessionResult(JSON.stringify({ ...base, input_tokens: -10, output_tokens: 7 })).usage).toMatchObject({ input: 0, output: 7 });
  });
});
