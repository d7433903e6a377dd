/**
 * The cost estimator (src/cost/estimate.ts) and the price table it reads (src/cost/prices.json).
 */
import { describe, expect, it } from 'vitest';
import { costBasis, estimateCost, lookupPrice, noEstimateReason, normaliseModelId, priceResult, priceTable } from '../../src/cost/estimate.js';
import type { EngineConfig } from '../../src/config/types.js';
import { makeResult } from '../run/helpers.js';

const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ input, output, cacheRead, cacheWrite });
const engine = (model: EngineConfig['model']): EngineConfig => ({ name: 'custom', displayName: 'agent', model, kwargs: {} });

describe('price table', () => {
  it('names a source page and a date for every provider, and prices every model of a known provider', () => {
    const t = priceTable();
    for (const [id, p] of Object.entries(t.providers)) {
      expect(p.source, id).toMatch(/^https:\/\/\S+$/);
      expect(p.as_of, id).toMatch(/^\d{4}-\d{2}(-\d{2})?$/);
    }
    const seen = new Set<string>();
    for (const [id, m] of Object.entries(t.models)) {
      expect(t.providers[m.provider], id).toBeDefined();
      for (const k of ['input', 'output'] as const) expect(m[k], `${id} ${k}`).toBeGreaterThan(0);
      for (const k of ['cache_read', 'cache_write'] as const) expect(m[k] === null || m[k] >= 0, `${id} ${k}`).toBe(true);
      // Every id and alias resolves to one entry only.
      for (const name of [id, ...(m.aliases ?? [])]) {
        expect(seen.has(name), `${name} listed twice`).toBe(false);
        seen.add(name);
        expect(normaliseModelId(name), `${name} is not in normal form`).toBe(name);
      }
    }
    for (const needed of ['claude-sonnet-4-5', 'claude-opus-4-1', 'claude-haiku-4-5', 'gpt-4.1', 'gpt-5', 'o3', 'gemini-2.5-pro', 'gemini-2.5-flash', 'qwen3-coder-plus']) {
      expect(t.models[needed], needed).toBeDefined();
    }
  });
});

describe('estimateCost', () => {
  it('prices a known model from its tokens: input, output, cache reads and writes at their own rates', () => {
    // claude-sonnet-4-5: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    const e = estimateCost('claude-sonnet-4-5', usage(1_000_000, 100_000, 2_000_000, 400_000))!;
    expect(e.usd).toBeCloseTo(3 + 1.5 + 0.6 + 1.5, 10);
    expect(e.estimated).toBe(true);
    expect(e.model).toBe('claude-sonnet-4-5');
    expect(e.source).toContain('as published by Anthropic (https://www.anthropic.com/pricing#api) as of');
    expect(e.source).toContain('src/cost/prices.json');
  });

  it('finds a model by alias, by a dated or provider-prefixed id, and by a Bedrock id', () => {
    const u = usage(1_000_000, 0);
    expect(estimateCost('sonnet', u)!.model).toBe('claude-sonnet-4-5');
    expect(estimateCost('claude-sonnet-4-5-20250929', u)!.model).toBe('claude-sonnet-4-5');
    expect(estimateCost('anthropic/claude-opus-4-1-20250805', u)!.usd).toBeCloseTo(15, 10);
    expect(estimateCost('us.anthropic.claude-sonnet-4-20250514-v1:0', u)!.model).toBe('claude-sonnet-4');
    expect(estimateCost('openai/gpt-4.1-2025-04-14', u)!.usd).toBeCloseTo(2, 10);
    expect(estimateCost('GPT-5-Codex', u)!.model).toBe('gpt-5');
    expect(estimateCost('models/gemini-2.5-flash', u)!.usd).toBeCloseTo(0.3, 10);
    expect(estimateCost('claude-3-5-sonnet-latest', u)!.model).toBe('claude-3-5-sonnet');
    // A prefix of a longer id is not that model: o3 is not o3-mini.
    expect(estimateCost('o3-mini', u)!.usd).toBeCloseTo(1.1, 10);
    expect(estimateCost('o3', u)!.usd).toBeCloseTo(2, 10);
  });

  it('charges a cache price the table leaves open at the input price (an overestimate, never an under)', () => {
    // OpenAI has no cache-write charge; Gemini's cache rate is not recorded.
    expect(estimateCost('gpt-4.1', usage(0, 0, 0, 1_000_000))!.usd).toBeCloseTo(2, 10);
    expect(estimateCost('gemini-2.5-pro', usage(0, 0, 1_000_000, 0))!.usd).toBeCloseTo(1.25, 10);
  });

  it('gives no estimate for an unknown model, no model, or the scripted model', () => {
    expect(lookupPrice('my-local-llama')).toBeNull();
    expect(estimateCost('my-local-llama', usage(1000, 1000))).toBeNull();
    expect(estimateCost(undefined, usage(1000, 1000))).toBeNull();
    expect(estimateCost('claude-sonnet-4-5', usage(1000, 1000), { provider: 'scripted' })).toBeNull();
  });

  it('says why an engine has no estimate', () => {
    expect(noEstimateReason(engine({ provider: 'scripted', name: 'claude-sonnet-4-5' }))).toBe('no cost: scripted model (its tokens are made up)');
    expect(noEstimateReason(engine({ name: 'my-local-llama' }))).toMatch(/^no estimate: model `my-local-llama` is not in skill-up's price table \(src\/cost\/prices\.json\)/);
    expect(noEstimateReason(engine({}))).toMatch(/^no estimate: no model name is configured/);
    expect(noEstimateReason(engine({ provider: 'anthropic', name: 'claude-haiku-4-5' }))).toBeNull();
    expect(costBasis(engine({ name: 'claude-haiku-4-5' }))).toMatchObject({ kind: 'priced', model: 'claude-haiku-4-5' });
  });
});

describe('priceResult', () => {
  it('keeps a reported cost as reported', () => {
    const r = makeResult({ costUsd: 0.25, usage: usage(1_000_000, 0) });
    expect(priceResult(r, engine({ name: 'claude-sonnet-4-5' }))).toBeNull();
    expect(r.costUsd).toBe(0.25);
    expect(r.costEstimated).toBeUndefined();
  });

  it('estimates a missing cost from the tokens and marks it', () => {
    const r = makeResult({ usage: usage(1_000_000, 1_000_000) });
    const e = priceResult(r, engine({ name: 'claude-haiku-4-5' }));
    expect(e?.usd).toBeCloseTo(6, 10);
    expect(r.costUsd).toBeCloseTo(6, 10);
    expect(r.costEstimated).toBe(true);
  });

  it('never prices a job on the scripted model, and leaves an unknown model or a job without tokens without cost', () => {
    const scripted = makeResult({ costUsd: 1.5, usage: usage(1000, 1000) });
    priceResult(scripted, engine({ provider: 'scripted', name: 'claude-sonnet-4-5' }));
    expect(scripted.costUsd).toBeUndefined();
    const unknown = makeResult({ usage: usage(1000, 1000) });
    priceResult(unknown, engine({ name: 'my-local-llama' }));
    expect(unknown.costUsd).toBeUndefined();
    const empty = makeResult({ usage: usage(0, 0) });
    priceResult(empty, engine({ name: 'claude-sonnet-4-5' }));
    expect(empty.costUsd).toBeUndefined();
  });
});
