/**
 * result.json's `merge` block: written by `skill-up merge` into the run it assembles from the
 * shards of `skill-up run --shard i/n` (snake_case, as written; schema: result.schema.json).
 */

/** One shard that went into a merged run. */
export interface MergedShardRecord {
  /** 1-based shard number. */
  index: number;
  /** The shard's iteration folder, as given to `merge` (relative to its working folder). */
  source: string;
  /** The shard's case ids, in suite order. */
  cases: string[];
  jobs: number;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  /** The shard's own exit code (its gates over its part only). */
  exit_code: number;
  interrupted: boolean;
  not_run: number;
}

/** What a merged run was made of, and what it lacks (`--allow-partial`). */
export interface MergeRecord {
  /** n of `--shard i/n`. */
  count: number;
  /** The merged shards, by index. */
  shards: MergedShardRecord[];
  /** True when a shard is missing or was interrupted: the run is not the whole plan. */
  partial: boolean;
  /** Shard numbers not given (only with `--allow-partial`). */
  missing_shards: number[];
  /** Cases of the plan in no given shard, in suite order. */
  missing_cases: string[];
}
