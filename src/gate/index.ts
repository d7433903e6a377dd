/** The decision stage: gates and exit codes from a run's statistics (gates.ts, decide.ts). */
export { exitCodeOf, intervalState, type GateResult, type PreviousRun } from './gates.js';
export { decide, configJson, DEFAULT_DECISION, DEFAULT_REGRESSION_MARGIN, type Decision, type DecisionConfig } from './decide.js';
