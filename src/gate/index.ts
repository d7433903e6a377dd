/** The decision stage: gates and exit codes from a run's statistics (gates.ts, decide.ts). */
export { exitCodeOf, intervalState, type GateResult, type PreviousRun } from './gates.js';
export { decide, configJson, DEFAULT_DECISION, type Decision, type DecisionConfig } from './decide.js';
export { resolveGates, type GateOverrides } from './config.js';
