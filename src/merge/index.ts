/** The merge stage: shards of `skill-up run --shard i/n` → one run (checks, combining, copying the job folders). */
export { checkShards, listSome, MergeError, type ShardInput } from './check.js';
export { combine, orderJobs, withoutShardFlag } from './combine.js';
export { copyJobDirs } from './copy.js';
