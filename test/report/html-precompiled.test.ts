/**
 * The HTML report's precompiled templates (scripts/precompile-templates.mjs): the page they
 * render is the page the templates compiled at run time render, and a precompiled module made
 * from other templates than those on disk is never used.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { precompiledModuleText } from '../../src/report/html/precompile.js';
import { htmlReportDir, loadTemplates, renderWith } from '../../src/report/html/render.js';
import { readTemplateSources } from '../../src/report/html/templates.js';
import { packageRoot } from '../../src/util/package-root.js';
import { syntheticRun } from './fixtures/synthetic-run.js';

/** Writes a precompiled module of `sources` into a temp folder; returns its path. */
function moduleOf(sources: ReturnType<typeof readTemplateSources>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'su-precompiled-')), 'templates.precompiled.cjs');
  writeFileSync(file, precompiledModuleText(sources));
  return file;
}

describe('precompiled HTML templates', () => {
  const { doc, transcripts } = syntheticRun({ cases: 4, engines: ['claude_code', 'codex'], trials: 2, inject: '</script><b>{{x}}</b>' });

  it('render byte for byte the page of the templates compiled at run time', () => {
    const pre = loadTemplates(moduleOf(readTemplateSources(htmlReportDir())));
    const compiled = loadTemplates(null);
    expect([pre.source, compiled.source]).toEqual(['precompiled', 'compiled']);
    const html = renderWith(pre, doc, { transcripts });
    expect(html.length).toBeGreaterThan(10_000);
    expect(html).toBe(renderWith(compiled, doc, { transcripts }));
    // The empty run takes other branches of the templates.
    const empty = syntheticRun({ cases: 0 }).doc;
    expect(renderWith(pre, empty)).toBe(renderWith(compiled, empty));
  });

  it('are never used once the templates changed (the module carries their hash)', () => {
    const sources = readTemplateSources(htmlReportDir());
    const stale = [
      { ...sources, main: sources.main.replace('</body>', '<p>STALE</p></body>') },
      { ...sources, partials: sources.partials.map(([n, t], i): [string, string] => [n, i === 0 ? `${t}<p>STALE</p>` : t]) },
      { ...sources, partials: sources.partials.slice(1) },
    ];
    for (const s of stale) {
      const t = loadTemplates(moduleOf(s));
      expect(t.source).toBe('compiled');
      expect(renderWith(t, doc)).not.toContain('STALE');
    }
    // A missing module: compiled at run time.
    expect(loadTemplates(join(tmpdir(), 'no-such-dir-su', 'templates.precompiled.cjs')).source).toBe('compiled');
  });

  it('are what the build renders with (dist), loading handlebars/runtime but not the compiler', () => {
    const dist = join(packageRoot(), 'dist', 'src', 'report', 'html', 'render.js');
    expect(existsSync(dist), `${dist} is missing: run npm run build`).toBe(true);
    const script = `import(${JSON.stringify(dist)}).then(m => {
      const t = m.loadTemplates();
      m.renderWith(t, JSON.parse(process.argv[1]));
      const mods = Object.keys(require('node:module')._cache).filter((k) => k.includes('/handlebars/'));
      process.stdout.write(JSON.stringify({ source: t.source, compiler: mods.some((k) => k.includes('/compiler/')), runtime: mods.length > 0 }));
    })`;
    const out = execFileSync(process.execPath, ['-e', script, JSON.stringify(syntheticRun({ cases: 2, trials: 1 }).doc)], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ source: 'precompiled', compiler: false, runtime: true });
  });
});
