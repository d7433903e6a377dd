import { describe, expect, it } from 'vitest';
import { parseDecision } from '../../src/simulator/decision.js';
import { buildSimulatorPrompt, correctionPrompt } from '../../src/simulator/conversation.js';

describe('the simulator decision parser', () => {
  it('reads a reply and a stop', () => {
    expect(parseDecision('{"action":"reply","message":"Make it blue."}', 'may_stop')).toEqual({ ok: true, decision: { action: 'reply', message: 'Make it blue.' } });
    expect(parseDecision(' {"action":"stop","reason":"done"}\n', 'may_stop')).toEqual({ ok: true, decision: { action: 'stop', reason: 'done' } });
  });

  it('accepts a code fence around the object and ignores extra keys', () => {
    expect(parseDecision('```json\n{"action":"reply","message":"hi","mood":"calm"}\n```', 'must_reply')).toEqual({ ok: true, decision: { action: 'reply', message: 'hi' } });
    expect(parseDecision('```\n{"action":"stop","reason":"ok"}\n```', 'may_stop')).toMatchObject({ ok: true, decision: { action: 'stop' } });
  });

  it('names what is wrong with a malformed answer', () => {
    expect(parseDecision('Sure! Here you go', 'may_stop')).toMatchObject({ ok: false, problem: expect.stringMatching(/^the answer is not valid JSON/) });
    expect(parseDecision('["reply"]', 'may_stop')).toEqual({ ok: false, problem: 'the answer is JSON but not an object (got a list)' });
    expect(parseDecision('{"action":"wave"}', 'may_stop')).toEqual({ ok: false, problem: '`"action"` is "wave"; it must be "reply" or "stop"' });
    expect(parseDecision('{"message":"x"}', 'must_reply')).toEqual({ ok: false, problem: 'it has no `"action"`; it must be "reply"' });
    expect(parseDecision('{"action":"reply","message":"  "}', 'may_stop')).toMatchObject({ ok: false, problem: expect.stringContaining('non-empty string `"message"`') });
    expect(parseDecision('', 'may_stop')).toEqual({ ok: false, problem: 'the answer was empty, not a JSON object' });
  });

  it('refuses stop where a reply is required (a respond turn)', () => {
    const r = parseDecision('{"action":"stop","reason":"bored"}', 'must_reply');
    expect(r).toMatchObject({ ok: false, problem: expect.stringContaining('not allowed here') });
  });
});

describe('the simulator request text', () => {
  it('quotes the scenario, the instruction and each turn in order, then the decision format', () => {
    const text = buildSimulatorPrompt({
      scenario: 'You want a CSV.',
      instruction: 'Ask for a header row.',
      history: [
        { user: 'Export the data.', agent: 'Which format?' },
        { user: 'CSV.', agent: 'Done: out.csv' },
      ],
      mode: 'must_reply',
    });
    const order = ['You want a CSV.', 'Ask for a header row.', '--- user (turn 1) ---\nExport the data.', '--- agent (turn 1) ---\nWhich format?', '--- user (turn 2) ---\nCSV.', '--- agent (turn 2) ---\nDone: out.csv', '{"action":"reply"'];
    const at = order.map((s) => text.indexOf(s));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    // A respond turn may not stop: the stop form is not offered.
    expect(text).not.toContain('"action":"stop"');
    expect(buildSimulatorPrompt({ history: [], mode: 'may_stop' })).toContain('{"action":"stop","reason":');
  });

  it('cuts a very long answer with …', () => {
    const text = buildSimulatorPrompt({ history: [{ user: 'u', agent: 'x'.repeat(20_000) }], mode: 'may_stop' });
    expect(text).toContain(`${'x'.repeat(7999)}…`);
    expect(text).not.toContain('x'.repeat(8001));
  });

  it('the correction names the problem and the allowed forms', () => {
    expect(correctionPrompt('the answer is not valid JSON', 'must_reply')).toBe('Your answer was not a valid decision: the answer is not valid JSON. Answer again with only the JSON object {"action":"reply","message":"…"}, no other text.');
  });
});
