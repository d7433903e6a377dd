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
