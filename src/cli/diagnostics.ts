/** Printing of config diagnostics on stderr. */
import { formatDiagnostic, type Diagnostic } from '../config/diagnostics.js';

/** Prints warnings (one line each); errors are printed by main's ConfigError handler. */
export function printWarnings(warnings: Diagnostic[]): void {
  for (const w of warnings) process.stderr.write(formatDiagnostic(w) + '\n');
}

/** Prints every diagnostic, errors first, then a count line. */
export function printDiagnostics(diags: Diagnostic[]): void {
  const errors = diags.filter((d) => d.severity === 'error');
  const warnings = diags.filter((d) => d.severity === 'warning');
  for (const d of [...errors, ...warnings]) process.stderr.write(formatDiagnostic(d) + '\n');
  process.stderr.write(`${errors.length} error(s)${warnings.length ? `, ${warnings.length} warning(s)` : ''}\n`);
}
