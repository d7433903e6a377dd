/** A/A calibration of a suite (`skill-up calibrate`): analysis, rendering, calibration.json. */
export { calibrate, hasGradedTrials, CALIBRATION_SEED, DEFAULT_SPLITS, CALIBRATION_POWER, NOISE_FLOOR_QUANTILE } from './analyse.js';
export type { Calibration, CalibrateOptions, CaseFlakiness, EngineCalibration, FalseDifferences, FixedSplit, NoiseFloor, CalibrationPower } from './analyse.js';
export { groupOutcomes, fixedSplit, randomSplit, quantile, type CaseOutcomes, type SplitCase } from './split.js';
export { renderCalibrationText, renderCalibrationMarkdown, findings } from './render.js';
export { calibrationJson, CALIBRATION_SCHEMA_VERSION, type CalibrationSource } from './json.js';
