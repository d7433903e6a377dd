/** The merge stage: shards of `skill-up run --shard i/n` → one run (checks, combining, copying the job folders). */
export { checkShards, listSome, MergeError, safeJobDir, type CheckedShard, type MergePlan, type ShardInput } from './check.js';
export { combine, decisionConfigOf, orderJobs, withoutShardFlag, type Merged } from './combine.js';
export { copyJobDirs } from './copy.js';
export type { MergeRecord, MergedShardRecord } from './types.js';
