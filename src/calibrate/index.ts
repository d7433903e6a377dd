/** A/A calibration of a suite (`skill-up calibrate`): analysis, rendering, calibration.json. */
export { calibrate, hasGradedTrials, DEFAULT_SPLITS } from './analyse.js';
export { groupOutcomes, fixedSplit, randomSplit, quantile } from './split.js';
export { renderCalibrationText, renderCalibrationMarkdown } from './render.js';
export { calibrationJson } from './json.js';
