/** Aggregate statistics of a run (design.md, `stats/`): estimators and the run summary. */
export { wilson, passAtK, passHatK, signTest } from './estimators.js';
export {
  summarise,
  caseStats,
  type TrialResult,
  type TrialStatus,
  type Variant,
  type Interval,
  type CaseStats,
  type VariantStats,
  type CaseComparison,
  type Uplift,
  type RunStats,
  type SummariseOptions,
} from './summarise.js';
export { formatP, type ArmErrors, type DroppedCase } from './summarise.js';
export { clusteredInterval, moverDifference, wilsonInterval, correlation, type CaseCounts, type ClusteredInterval } from './intervals.js';
export { pairedPermutationTest, holm, stratifiedWorseTest, minimumPermutationP, minimumDecisiveCases, type TestResult } from './tests.js';
export { estimateNoise, detectableUplift, casesNeeded, powerTable, ASSUMED_NOISE, POWER_UPLIFTS, POWER_TRIALS, type NoiseModel, type PowerRow } from './power.js';
export { normalQuantile, tQuantile, tCdf, seededRandom } from './distributions.js';
