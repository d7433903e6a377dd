import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadErrors, loadOk, only, writeSkill } from '../config/helpers.js';

const SCRIPTED_ENGINE = 'engine: { name: claude_code, model: { provider: scripted, script: evals/model.yaml } }\n';
const MODEL = 'rules:\n  - reply: [ { say: hi } ]\n';
const evalWith = (extra: string) => `schema_version: v1alpha1\n${SCRIPTED_ENGINE}${extra}cases:\n  files: [evals/cases/*.yaml]\n`;
const RESPOND_CASE = 'input:\n  turns:\n    - content: hi\n    - respond: "ask for more"\n';

describe('user simulator configuration', () => {
  it('a respond turn without eval.yaml user_simulator is an error at its key', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': evalWith(''), 'evals/model.yaml': MODEL, 'evals/cases/a.yaml': RESPOND_CASE });
    const d = only(await loadErrors(dir), /needs a user simulator/);
    expect([path.basename(d.file), d.line, d.path]).toEqual(['a.yaml', 4, 'input.turns[1].respond']);
  });

  it('alibaba\'s empty `user_simulator: {}` configures no simulator', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': evalWith('user_simulator: {}\n'), 'evals/model.yaml': MODEL, 'evals/cases/a.yaml': RESPOND_CASE });
    expect(only(await loadErrors(dir), /needs a user simulator/).line).toBe(4);
  });

  it('a scenario without eval.yaml user_simulator is an error at its key', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': evalWith(''), 'evals/model.yaml': MODEL, 'evals/cases/a.yaml': 'input: { prompt: hi }\nuser_simulator:\n  scenario: You want tea.\n' });
    const d = only(await loadErrors(dir), /a scenario needs a user simulator/);
    expect([d.line, d.path]).toEqual([3, 'user_simulator.scenario']);
  });

  it('a turn with both content and respond is an error', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': evalWith('user_simulator: { provider: scripted }\n'),
      'evals/model.yaml': MODEL,
      'evals/cases/a.yaml': 'input:\n  turns:\n    - content: hi\n      respond: ask\n',
    });
    const d = only(await loadErrors(dir), /`content` \(line 3, the message as written\) or `respond`/);
    expect([d.line, d.path]).toEqual([4, 'input.turns[0].respond']);
  });

  it('an uncaptured {{variable}} in a respond instruction is an error at the instruction', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': evalWith('user_simulator: { provider: scripted }\n'),
      'evals/model.yaml': MODEL,
      'evals/cases/a.yaml': 'input:\n  turns:\n    - content: hi\n    - respond: "confirm {{colour}}"\n',
    });
    const d = only(await loadErrors(dir), /\{\{colour\}\}` is not captured/);
    expect([d.line, d.path]).toEqual([4, 'input.turns[1].respond']);
  });

  it('provider: scripted needs a scripted engine; a real provider needs protocol and model', async () => {
    const noScripted = writeSkill({ 'evals/eval.yaml': 'schema_version: v1alpha1\nuser_simulator: { provider: scripted }\ncases:\n  files: [evals/cases/*.yaml]\n', 'evals/cases/a.yaml': RESPOND_CASE });
    const d = only(await loadErrors(noScripted), /no engine has `model: \{ provider: scripted/);
    expect([d.line, d.path]).toEqual([2, 'user_simulator.provider']);
    const real = writeSkill({ 'evals/eval.yaml': evalWith('user_simulator:\n  provider: openai\n  protocol: openai\n'), 'evals/model.yaml': MODEL, 'evals/cases/a.yaml': RESPOND_CASE });
    expect(only(await loadErrors(real), /`user_simulator.model` is needed with `provider: openai`/).line).toBe(3);
    const badProtocol = writeSkill({ 'evals/eval.yaml': evalWith('user_simulator: { provider: openai, protocol: grpc, model: m }\n'), 'evals/model.yaml': MODEL, 'evals/cases/a.yaml': RESPOND_CASE });
    expect((await loadErrors(badProtocol)).some((e) => e.path === 'user_simulator.protocol')).toBe(true);
  });

  it('a valid suite: respond turns, an autonomous case whose rules may name turns up to max_turns, the connection with its defaults', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': evalWith('user_simulator: { provider: scripted }\n'),
      'evals/model.yaml': MODEL,
      'evals/cases/a.yaml': RESPOND_CASE + '    - respond: true\n',
      'evals/cases/b.yaml':
        'input: { prompt: Plan a trip. }\nuser_simulator: { scenario: You want Lisbon. }\nconstraints: { max_turns: 4 }\njudge:\n  type: rule_based\n  success:\n    - turn_response_contains: { turn: 3, contains_all: [booked] }\n',
    });
    const { suite, warnings } = await loadOk(dir);
    expect(warnings).toEqual([]);
    expect(suite.userSimulator).toEqual({ provider: 'scripted', protocol: 'anthropic', model: 'scripted-simulator', timeoutSeconds: 30 });
    const a = suite.cases.find((c) => c.id === 'a')!;
    expect(a.turns.map((t) => t.respond)).toEqual([undefined, 'ask for more', '']);
    expect(a.userSimulator).toBeUndefined();
    expect(suite.cases.find((c) => c.id === 'b')!.userSimulator).toEqual({ scenario: 'You want Lisbon.', autonomous: true });
  });

  it('a real provider gets its default endpoint and key variable by protocol', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': evalWith('user_simulator: { provider: anthropic, protocol: anthropic, model: claude-haiku-4-5, timeout_seconds: 12 }\n'),
      'evals/model.yaml': MODEL,
      'evals/cases/a.yaml': RESPOND_CASE,
    });
    const { suite } = await loadOk(dir);
    expect(suite.userSimulator).toEqual({ provider: 'anthropic', protocol: 'anthropic', model: 'claude-haiku-4-5', timeoutSeconds: 12, baseUrl: 'https://api.anthropic.com', apiKeyEnv: 'ANTHROPIC_API_KEY' });
  });
});
