/**
 * The HTML report's Handlebars templates as text, and the hash that ties a precompiled module
 * to them. Loads no Handlebars: the renderer (render.ts) and the build step
 * (scripts/precompile-templates.mjs, through precompile.ts) both read the templates here, so
 * the two always agree on what the hash covers.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Handlebars compile options of every template (main and partials alike, as Handlebars compiles a partial at run time with its caller's options). */
export const TEMPLATE_OPTIONS = { strict: true } as const;

/** The templates of one report: `templates/report.hbs` and `templates/partials/<name>.hbs`. */
export interface TemplateSources {
  main: string;
  /** Partial name (file name without `.hbs`) → its text, sorted by name. */
  partials: [string, string][];
}

/**
 * Reads the templates under `<dir>/templates` (dir: the folder holding `templates/` and
 * `assets/`, render.ts `htmlReportDir()`).
 * @throws Error of the file system when a template cannot be read.
 */
export function readTemplateSources(dir: string): TemplateSources {
  const partialsDir = join(dir, 'templates', 'partials');
  const partials = readdirSync(partialsDir)
    .filter((f) => f.endsWith('.hbs'))
    .sort()
    .map((f): [string, string] => [f.slice(0, -4), readFileSync(join(partialsDir, f), 'utf8')]);
  return { main: readFileSync(join(dir, 'templates', 'report.hbs'), 'utf8'), partials };
}

/**
 * SHA-256 (hex) of everything a precompiled module depends on: the template texts, their
 * names, the compile options and the Handlebars version. A precompiled module carrying another
 * hash was made from other templates and must not be used.
 */
export function templatesHash(sources: TemplateSources, handlebarsVersion: string): string {
  return createHash('sha256').update(JSON.stringify({ handlebars: handlebarsVersion, options: TEMPLATE_OPTIONS, main: sources.main, partials: sources.partials }), 'utf8').digest('hex');
}
