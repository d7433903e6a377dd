/** Aggregate statistics of a run (design.md, `stats/`): estimators and the run summary. */
export { wilson, passAtK, passHatK, signTest } from './estimators.js';
export {
  summarise,
  type TrialResult,
  type TrialStatus,
  type Variant,
  type Uplift,
  type RunStats,
} from './summarise.js';
export { formatP } from './summarise.js';
export { clusteredInterval, moverDifference, wilsonInterval } from './intervals.js';
export { pairedPermutationTest, holm, stratifiedWorseTest, minimumPermutationP, minimumDecisiveCases } from './tests.js';
export { estimateNoise, detectableUplift, powerTable, ASSUMED_NOISE, type NoiseModel } from './power.js';
export { normalQuantile, tQuantile, tCdf } from './distributions.js';
