/** The decision stage: gates and exit codes from a run's statistics (gates.ts, decide.ts). */
export { evaluateGates, exitCodeOf, intervalState, hasStatisticalGate, type GateConfig, type GateResult, type GateState, type GateName, type PreviousRun, type PreviousCase, type OnInconclusive } from './gates.js';
export { decide, configJson, DEFAULT_DECISION, DEFAULT_REGRESSION_MARGIN, type Decision, type DecisionConfig } from './decide.js';
