/**
 * Cost in USD of a job: as the engine reported it, else estimated from its tokens and the price
 * table in the repository (`prices.json` beside this file, each provider's public price page
 * named there). An estimate is always marked as one. The scripted model's tokens are made up,
 * so a job on it has no cost at all (never an estimate).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineConfig } from '../config/types.js';
import type { TokenUsage } from '../engine/types.js';
import type { JobResult } from '../run/types.js';
import { packageRoot } from '../util/package-root.js';

/** USD per million tokens of one model. A null cache price means "charged at the input price". */
export interface ModelPrice {
  provider: string;
  input: number;
  output: number;
  cache_read: number | null;
  cache_write: number | null;
  aliases?: string[];
}

/** Where a provider's prices come from. */
export interface ProviderSource {
  source: string;
  as_of: string;
  note?: string;
}

/** The parsed `prices.json`. */
export interface PriceTable {
  providers: Record<string, ProviderSource>;
  models: Record<string, ModelPrice>;
}

/** An estimate (never a reported cost). */
export interface CostEstimate {
  usd: number;
  estimated: true;
  /** The table's id of the model priced (e.g. `claude-sonnet-4-5`). */
  model: string;
  /** In words: which prices, from whom, as of when. */
  source: string;
}

/** Path of the price table, relative to the package root (named in messages). */
export const PRICES_FILE = 'src/cost/prices.json';

let cached: PriceTable | undefined;

/** The price table shipped with skill-up. */
export function priceTable(): PriceTable {
  cached ??= JSON.parse(readFileSync(join(packageRoot(), PRICES_FILE), 'utf8')) as PriceTable;
  return cached;
}

/**
 * A model id as the table keys it: lower case, without a provider prefix (`anthropic/`,
 * `openai/`, `models/`, Bedrock's `anthropic.`), a date suffix (`-20250929`, `@20250929`,
 * `-2025-04-14`), `-latest`, or a Bedrock version suffix (`-v1:0`).
 */
export function normaliseModelId(name: string): string {
  let id = name.trim().toLowerCase();
  id = id.replace(/^.*\//, '');
  id = id.replace(/^(anthropic|us\.anthropic|eu\.anthropic|apac\.anthropic)\./, '');
  id = id.replace(/-v\d+(:\d+)?$/, '');
  id = id.replace(/[-@](\d{8}|\d{4}-\d{2}-\d{2})$/, '');
  id = id.replace(/-latest$/, '');
  return id;
}

/** The table entry of `model` (by id or alias, after {@link normaliseModelId}); null when it is not in the table. */
export function lookupPrice(model: string, table: PriceTable = priceTable()): { id: string; price: ModelPrice; provider: ProviderSource | undefined } | null {
  const id = normaliseModelId(model);
  if (!id) return null;
  for (const [key, price] of Object.entries(table.models)) {
    if (key === id || (price.aliases ?? []).includes(id)) return { id: key, price, provider: table.providers[price.provider] };
  }
  return null;
}

/** `anthropic` → `Anthropic`, `openai` → `OpenAI`, for the wording of sources. */
function providerName(p: string): string {
  return ({ anthropic: 'Anthropic', openai: 'OpenAI', google: 'Google', qwen: 'Alibaba Cloud (Qwen)' } as Record<string, string>)[p] ?? p;
}

/** In words: the prices of `id` and where they come from. */
export function priceSource(id: string, price: ModelPrice, provider: ProviderSource | undefined): string {
  const from = provider ? `, as published by ${providerName(price.provider)} (${provider.source}) as of ${provider.as_of}` : '';
  return `${id} prices${from}; ${PRICES_FILE}`;
}

/**
 * The estimated cost of `usage` on `model`, or null when there is nothing to estimate from:
 * no model name, a model not in the table, or the scripted model (`provider: scripted`, whose
 * tokens are made up). Pure apart from reading the table once.
 */
export function estimateCost(model: string | undefined, usage: TokenUsage, opts: { provider?: string; table?: PriceTable } = {}): CostEstimate | null {
  if (opts.provider === 'scripted' || !model) return null;
  const found = lookupPrice(model, opts.table);
  if (!found) return null;
  const p = found.price;
  const usd = (usage.input * p.input + usage.output * p.output + usage.cacheRead * (p.cache_read ?? p.input) + usage.cacheWrite * (p.cache_write ?? p.input)) / 1e6;
  return { usd, estimated: true, model: found.id, source: priceSource(found.id, p, found.provider) };
}

/** How the jobs of an engine get their cost, known before any job runs. */
export type CostBasis =
  | { kind: 'scripted' }
  | { kind: 'priced'; model: string; source: string }
  /** No model name, or one the table does not hold: only a cost the engine itself reports counts. */
  | { kind: 'reported-only'; model: string | undefined };

/** How `engine`'s jobs are priced. */
export function costBasis(engine: EngineConfig): CostBasis {
  if (engine.model.provider === 'scripted') return { kind: 'scripted' };
  const name = engine.model.name;
  const found = name ? lookupPrice(name) : null;
  if (found) return { kind: 'priced', model: found.id, source: priceSource(found.id, found.price, found.provider) };
  return { kind: 'reported-only', model: name };
}

/** One sentence on an engine without an estimate; null when its jobs can be estimated. */
export function noEstimateReason(engine: EngineConfig): string | null {
  const b = costBasis(engine);
  if (b.kind === 'scripted') return 'no cost: scripted model (its tokens are made up)';
  if (b.kind === 'priced') return null;
  return b.model
    ? `no estimate: model \`${b.model}\` is not in skill-up's price table (${PRICES_FILE}); only a cost the engine reports is counted`
    : `no estimate: no model name is configured (engine.model.name or --model); only a cost the engine reports is counted`;
}

/**
 * Gives `result` its cost: kept as reported; else estimated from its tokens (with
 * `costEstimated`); none for the scripted model. Returns the estimate made, if any.
 */
export function priceResult(result: JobResult, engine: EngineConfig): CostEstimate | null {
  if (engine.model.provider === 'scripted') {
    delete result.costUsd;
    delete result.costEstimated;
    return null;
  }
  if (result.costUsd !== undefined && !result.costEstimated) return null;
  const tokens = result.usage.input + result.usage.output + result.usage.cacheRead + result.usage.cacheWrite;
  const est = tokens > 0 ? estimateCost(engine.model.name, result.usage, { provider: engine.model.provider }) : null;
  if (!est) {
    delete result.costUsd;
    delete result.costEstimated;
    return null;
  }
  result.costUsd = est.usd;
  result.costEstimated = true;
  return est;
}
