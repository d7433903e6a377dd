/**
 * Problems found in user input, each pointing at a file, line, column and field path.
 * Loaders collect every problem of a suite and throw one `ConfigError` holding them all,
 * so a user fixes a whole suite in one pass. The CLI prints them and exits with code 2.
 */

/** One problem in a user's file. `line` and `col` are 1-based; 0 when unknown. */
export interface Diagnostic {
  file: string;
  line: number;
  col: number;
  /** Dotted field path, e.g. `cases.defaults.expect.must_contain`; empty for the whole file. */
  path: string;
  message: string;
  severity: 'error' | 'warning';
}

/** Thrown when input is invalid; `diagnostics` lists every problem found (errors and warnings). */
export class ConfigError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.filter((d) => d.severity === "error").map((d) => formatDiagnostic(d)).join('\n'));
    this.name = 'ConfigError';
  }
}

/** Formats as `file:line:col: field.path: message` (the form editors and CI annotators link). */
export function formatDiagnostic(d: Diagnostic, cwd = process.cwd()): string {
  const rel = relativeTo(d.file, cwd);
  const where = d.line > 0 ? `${rel}:${d.line}:${d.col || 1}` : rel;
  const field = d.path ? `${d.path}: ` : '';
  const tag = d.severity === 'warning' ? 'warning: ' : '';
  return `${where}: ${tag}${field}${d.message}`;
}

function relativeTo(file: string, cwd: string): string {
  if (file.startsWith(cwd + '/')) return file.slice(cwd.length + 1);
  return file;
}

/** Accumulates diagnostics while a loader walks the input. */
export class DiagnosticBag {
  readonly items: Diagnostic[] = [];

  error(file: string, line: number, col: number, path: string, message: string): void {
    this.items.push({ file, line, col, path, message, severity: 'error' });
  }

  warn(file: string, line: number, col: number, path: string, message: string): void {
    this.items.push({ file, line, col, path, message, severity: 'warning' });
  }

  get hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }

  /** Throws a ConfigError when any error was collected. */
  throwIfErrors(): void {
    if (this.hasErrors) throw new ConfigError(this.sorted());
  }

  sorted(): Diagnostic[] {
    return [...this.items].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.col - b.col);
  }
}
