/**
 * The answer templates of mocked MCP tools: `{{params.x}}`, defaults, dotted paths, the
 * `\{{` escape, refusals of anything else, and linear time on hostile input.
 */
import { describe, expect, it } from 'vitest';
import { parseTemplate, renderTemplate, TemplateError } from '../../src/mcp/mock/template.js';

const render = (t: string, args: Record<string, unknown>) => renderTemplate(parseTemplate(t), args);

describe('mocked MCP answer templates', () => {
  it('inserts string arguments as they are and other values as JSON', () => {
    expect(render('id={{params.id}} n={{ params.n }} tags={{params.tags}}', { id: 'T-1', n: 3, tags: ['a', 'b'] })).toEqual({
      text: 'id=T-1 n=3 tags=["a","b"]',
      missing: [],
    });
  });

  it('uses the default for a missing, null or empty argument, and not for 0 or false', () => {
    const t = "{{params.p | default:'main'}}/{{params.q|default:\"x y\"}}";
    expect(render(t, {}).text).toBe('main/x y');
    expect(render(t, { p: null, q: '' }).text).toBe('main/x y');
    expect(render(t, { p: 0, q: false }).text).toBe('0/false');
  });

  it('renders a missing argument without default as empty and lists it', () => {
    expect(render('a{{params.x}}b{{params.o.k}}c', { o: {} })).toEqual({ text: 'abc', missing: ['x', 'o.k'] });
  });

  it('reads dotted paths into object arguments, own keys only', () => {
    expect(render('{{params.o.k}}', { o: { k: 'v' } }).text).toBe('v');
    expect(render('{{params.o.toString}}', { o: {} })).toEqual({ text: '', missing: ['o.toString'] });
  });

  it('does not template inside inserted arguments', () => {
    expect(render('{{params.x}}', { x: '{{params.y}}', y: 'no' }).text).toBe('{{params.y}}');
  });

  it('keeps `\\{{` as a literal {{ and leaves a lone } or { alone', () => {
    expect(render('\\{{params.x}} {a} }}', { x: 'v' }).text).toBe('{{params.x}} {a} }}');
  });

  it.each([
    ['{{foo}}', 'is not a parameter'],
    ['{{param.x}}', 'is not a parameter'],
    ['{{params.}}', 'empty or invalid parameter name'],
    ["{{params.x | upper}}", "a filter other than default"],
    ['{{params.x | default:y}}', 'needs a quoted default'],
    ["{{params.x | default:'y}}", 'unclosed quote'],
    ["{{params.x | default:'y' z}}", 'unexpected text after the default'],
    ['{{params.x y}}', 'unexpected text after the parameter name'],
    ['a {{params.x', 'never closed'],
  ])('refuses %s', (t, why) => {
    expect(() => parseTemplate(t)).toThrow(TemplateError);
    expect(() => parseTemplate(t)).toThrow(why);
  });

  it('parses hostile input in linear time', () => {
    const n = 200_000;
    const many = '{{params.a}}'.repeat(n);
    let t0 = performance.now();
    expect(render(many, { a: 'x' }).text).toBe('x'.repeat(n));
    const manyMs = performance.now() - t0;
    // A long unclosed run and a long placeholder body: each is scanned once.
    t0 = performance.now();
    expect(() => parseTemplate('{{' + ' '.repeat(2_000_000))).toThrow('never closed');
    expect(() => parseTemplate(`{{params.${'a'.repeat(2_000_000)} | default:'${'b'.repeat(2_000_000)}}}`)).toThrow('unclosed quote');
    expect(render('\\{{'.repeat(n), {}).text).toBe('{{'.repeat(n));
    expect(performance.now() - t0 + manyMs).toBeLessThan(3000);
  });
});
