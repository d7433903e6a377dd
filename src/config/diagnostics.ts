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
  /**
   * `error` blocks (exit 2); `warning` is advice; `info` is a note (printed as `note:`, never
   * counted as a problem), e.g. that a SKILL.md field is one engine's extension.
   */
  severity: 'error' | 'warning' | 'info';
  /** A warning that `--strict` makes an error (an unknown SKILL.md field): see {@link strictErrors}. */
  strict?: boolean;
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
  const tag = d.severity === 'warning' ? 'warning: ' : d.severity === 'info' ? 'note: ' : '';
  return `${where}: ${tag}${field}${d.message}`;
}

/**
 * What `--strict` (`skill-up validate --strict`, `run --strict`) does to `diags`: every warning
 * marked `strict` (an unknown SKILL.md field) becomes an error, worded so; everything else is
 * returned unchanged. Returns `diags` itself when none is marked.
 */
export function strictErrors(diags: Diagnostic[]): Diagnostic[] {
  if (!diags.some((d) => d.strict && d.severity === 'warning')) return diags;
  return diags.map((d) => (d.strict && d.severity === 'warning' ? { ...d, severity: 'error' as const, message: `${d.message} (an error under --strict)` } : d));
}

/**
 * `--strict`: throws a ConfigError holding `warnings` when one of them is marked `strict` (an
 * unknown SKILL.md field), that one as an error; returns otherwise. Used by `validate --strict`
 * and `run --strict`.
 * @throws ConfigError
 */
export function throwIfStrict(warnings: Diagnostic[]): void {
  const promoted = strictErrors(warnings);
  if (promoted !== warnings) throw new ConfigError(promoted);
}

function relativeTo(file: string, cwd: string): string {
  if (file.startsWith(cwd + '/')) return file.slice(cwd.length + 1);
  return file;
}

/**
 * Most errors (and, separately, warnings) a bag keeps per file. A file with more (a generated
 * 20 MB suite) gets one extra diagnostic counting the rest, so a report stays readable and
 * collecting it stays fast.
 */
export const MAX_DIAGNOSTICS_PER_FILE = 100;

/** The "… and N more" diagnostics, sorted after the others of their file. */
const SUMMARIES = new WeakSet<Diagnostic>();

/** Accumulates diagnostics while a loader walks the input (at most {@link MAX_DIAGNOSTICS_PER_FILE} per file and severity). */
export class DiagnosticBag {
  readonly items: Diagnostic[] = [];
  private readonly counts = new Map<string, number>();
  private readonly overflow = new Map<string, { d: Diagnostic; dropped: number }>();

  /** Records an error (or counts it in the file's "… more" line once the file has its maximum). */
  error(file: string, line: number, col: number, path: string, message: string): void {
    this.add({ file, line, col, path, message, severity: 'error' });
  }

  /** Records a note (`info`: printed as `note:`, never a problem; capped like errors). */
  note(file: string, line: number, col: number, path: string, message: string): void {
    this.add({ file, line, col, path, message, severity: 'info' });
  }

  /** Records a warning (capped like errors); `strict`: one `--strict` makes an error ({@link strictErrors}). */
  warn(file: string, line: number, col: number, path: string, message: string, opts: { strict?: boolean } = {}): void {
    this.add({ file, line, col, path, message, severity: 'warning', ...(opts.strict ? { strict: true } : {}) });
  }

  /** False when a further diagnostic of `severity` in `file` would only be counted (callers may skip locating it). */
  accepts(file: string, severity: Diagnostic['severity'] = 'error'): boolean {
    return (this.counts.get(`${severity}\u0000${file}`) ?? 0) < MAX_DIAGNOSTICS_PER_FILE;
  }

  private add(d: Diagnostic): void {
    const key = `${d.severity}\u0000${d.file}`;
    const n = this.counts.get(key) ?? 0;
    if (n < MAX_DIAGNOSTICS_PER_FILE) {
      this.counts.set(key, n + 1);
      this.items.push(d);
      return;
    }
    let o = this.overflow.get(key);
    if (!o) {
      o = { d: { ...d, line: 0, col: 0, path: '', message: '' }, dropped: 0 };
      SUMMARIES.add(o.d);
      this.overflow.set(key, o);
      this.items.push(o.d);
    }
    o.dropped++;
    const what = d.severity === 'error' ? 'errors' : d.severity === 'warning' ? 'warnings' : 'notes';
    o.d.message = `… and ${o.dropped.toLocaleString('en-US')} more ${what} in this file, not listed (the first ${MAX_DIAGNOSTICS_PER_FILE} are shown)`;
  }

  get hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }

  /** Throws a ConfigError when any error was collected. */
  throwIfErrors(): void {
    if (this.hasErrors) throw new ConfigError(this.sorted());
  }

  /** The diagnostics by file, line and column; a file's "… and N more" line comes last in it. */
  sorted(): Diagnostic[] {
    const last = (d: Diagnostic) => (SUMMARIES.has(d) ? 1 : 0);
    return [...this.items].sort((a, b) => a.file.localeCompare(b.file) || last(a) - last(b) || a.line - b.line || a.col - b.col);
  }
}
