/**
 * calibration.json: the {@link Calibration} with snake_case keys (as result.json's stats
 * block), plus where its trials came from. Rates, uplifts and widths are fractions
 * (0.08 = 8 points), variances fractions²; `cases_needed` keys are trial counts.
 */
import type { Calibration } from './analyse.js';

/** Version of the calibration.json format written by this code. */
export const CALIBRATION_SCHEMA_VERSION = '1';

/** camelCase keys → snake_case, recursively (the calibration holds no user-named keys). */
function snake(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snake);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snake(x)]));
  }
  return v;
}

/** Where the calibrated trials came from. */
export interface CalibrationSource {
  /** Absolute path of the result.json analysed. */
  resultFile: string;
  /** The skill-up version that wrote calibration.json. */
  toolVersion: string;
}

/** The calibration.json document. */
export function calibrationJson(c: Calibration, source: CalibrationSource): Record<string, unknown> {
  return {
    schema_version: CALIBRATION_SCHEMA_VERSION,
    tool: { name: 'skill-up', version: source.toolVersion },
    result_file: source.resultFile,
    ...(snake(c) as Record<string, unknown>),
  };
}
