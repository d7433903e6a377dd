/**
 * The one YAML-with-positions + schema + did-you-mean module (src/config/yaml-source.ts,
 * schema.ts, schema-errors.ts, src/util/did-you-mean.ts), as the three file families use it:
 * config, the model script and SKILL.md frontmatter (a text parsed out of a larger file).
 */
import { describe, expect, it } from 'vitest';
import { DiagnosticBag, formatDiagnostic } from '../../src/config/diagnostics.js';
import { SCHEMAS, validateAgainst } from '../../src/config/schema.js';
import { reportSchemaErrors } from '../../src/config/schema-errors.js';
import { Field, parseYaml } from '../../src/config/yaml-source.js';
import { didYouMean, nearest } from '../../src/util/did-you-mean.js';

const lines = (bag: DiagnosticBag) => bag.sorted().map((d) => formatDiagnostic(d, '/s'));

describe('parseYaml with a line offset (text cut out of a larger file)', () => {
  it('reports syntax errors, duplicate keys and positions in the lines of the whole file', () => {
    const bag = new DiagnosticBag();
    const src = parseYaml('/s/SKILL.md', 'name: a\ndescription: b\nname: c\n', bag, { lineOffset: 1, label: ' in frontmatter' });
    expect(src.ok).toBe(false);
    expect(lines(bag)).toEqual(['SKILL.md:4:1: YAML syntax error in frontmatter: Map keys must be unique: `name` appears twice in the same map (first at line 2)']);
    const ok = parseYaml('/s/SKILL.md', 'name: a\nmetadata:\n  v: 1\n', new DiagnosticBag(), { lineOffset: 1 });
    expect(Field.root(ok, new DiagnosticBag()).get('metadata').get('v').position()).toEqual({ line: 4, col: 6 });
  });
});

describe('reportSchemaErrors on every registered schema', () => {
  it('compiles the four schemas with one ajv', () => {
    expect(Object.keys(SCHEMAS)).toEqual(['eval', 'case', 'model-script', 'skill-frontmatter']);
    expect(validateAgainst('skill-frontmatter', { name: 'x', description: 'y', metadata: { a: 'b' } })).toEqual([]);
    expect(validateAgainst('model-script', { rules: [{ reply: [{ say: 'hi' }] }] })).toEqual([]);
  });

  it('words frontmatter problems in the default config phrasing when no phraser is given', () => {
    const bag = new DiagnosticBag();
    const src = parseYaml('/s/SKILL.md', 'name: Bad\ndescripton: x\n', bag, { lineOffset: 1 });
    reportSchemaErrors('skill-frontmatter', Field.root(src, bag));
    const got = lines(bag);
    expect(got).toContain('SKILL.md:2:1: missing required key `description`');
    expect(got).toContain('SKILL.md:3:1: descripton: unknown key `descripton`; did you mean `description`?');
    expect(got.filter((l) => l.startsWith('SKILL.md:2:7: name: '))).toHaveLength(1);
  });

  it('lets a phraser reword, split or drop a problem, at a child of its place', () => {
    const bag = new DiagnosticBag();
    const src = parseYaml('/s/m.yaml', 'rules:\n  - reply: [ { sya: hi } ]\n', bag);
    reportSchemaErrors('model-script', Field.root(src, bag), (p) =>
      p.error.keyword === 'additionalProperties' ? [{ message: 'first', at: 'key', child: 'sya' }, { message: 'second', at: 'value' }] : [],
    );
    expect(lines(bag)).toEqual(['m.yaml:2:14: rules[0].reply[0]: second', 'm.yaml:2:16: rules[0].reply[0].sya: first']);
  });
});

describe('nearest / didYouMean', () => {
  it('finds a typo, treats - _ and case alike, and stays quiet when nothing is close', () => {
    expect(nearest('must_contian', ['must_contain', 'must_not_contain'])).toBe('must_contain');
    expect(nearest('Allowed_Tools', ['name', 'allowed-tools'])).toBe('allowed-tools');
    expect(nearest('frobnicate', ['run', 'validate'])).toBeUndefined();
    expect(nearest('x', [])).toBeUndefined();
  });

  it('takes a fixed distance limit (flags, commands)', () => {
    expect(didYouMean('--trails', ['--trials', '--tag'], { maxDistance: 3 })).toBe('; did you mean `--trials`?');
    expect(nearest('runnnn', ['run'], { maxDistance: 2 })).toBeUndefined();
    expect(nearest('runn', ['run'], { maxDistance: 2 })).toBe('run');
  });
});

describe('parseYaml reads the YAML 1.2 core schema only', () => {
  const read = (text: string, options = {}) => {
    const bag = new DiagnosticBag();
    const src = parseYaml('/s/eval.yaml', text, bag, options);
    return { src, lines: lines(bag), errors: bag.sorted().filter((d) => d.severity === 'error').length };
  };

  it.for([
    ['!!binary (a byte array)', 'files: !!binary aGVsbG8=\n', 'eval.yaml:1:8: YAML tag `!!binary` is not supported here; write a plain string'],
    ['!!omap on the next line', 'x: 1\nfiles: !!omap\n  - a.txt: hello\n', 'eval.yaml:2:8: YAML tag `!!omap` is not supported here; write a plain map'],
    ['!!set', 'files: !!set {a, b}\n', 'eval.yaml:1:8: YAML tag `!!set` is not supported here; write a plain list'],
    ['!!pairs', 'p: !!pairs [a: 1]\n', 'eval.yaml:1:4: YAML tag `!!pairs` is not supported here; write a plain list of maps'],
    ['!!timestamp (a Date)', 'when: !!timestamp 2001-12-14\n', 'eval.yaml:1:7: YAML tag `!!timestamp` is not supported here; write a plain string'],
    ['a local tag', 'a: !secret x\n', 'eval.yaml:1:4: YAML tag `!secret` is not supported here; write a plain string'],
    ['a verbatim tag', 'a: !<tag:yaml.org,2002:binary> aGVsbG8=\n', 'eval.yaml:1:4: YAML tag `!!binary` is not supported here; write a plain string'],
    ['a %TAG handle', '%TAG !e! tag:example.com,2000:\n---\na: !e!thing x\n', 'eval.yaml:3:4: YAML tag `!<tag:example.com,2000:thing>` is not supported here; write a plain string'],
    ['!!binary under %YAML 1.1', '%YAML 1.1\n---\na: !!binary aGVsbG8=\n', 'eval.yaml:3:4: YAML tag `!!binary` is not supported here; write a plain string'],
    ['a tag on a key', '!!binary aGVsbG8=: x\n', 'eval.yaml:1:1: YAML tag `!!binary` is not supported here; write a plain string'],
    ['a core tag that does not fit', 'n: !!int many\n', 'eval.yaml:1:4: YAML tag `!!int` does not fit this value; remove the tag'],
  ] as const)('refuses %s: one error at the tag, and the source is not ok (no schema check runs on it)', ([, text, line]) => {
    const r = read(text);
    expect(r.lines).toEqual([line]);
    expect(r.errors).toBe(1);
    expect(r.src.ok).toBe(false);
  });

  it('keeps the core tags, and YAML 1.2 values (no YAML 1.1 `yes` booleans or sexagesimals)', () => {
    const r = read('a: !!str 1\nb: !!int "2"\nc: !!map {d: !!seq [!!null ~, !!bool true, !!float 1.5]}\ne: yes\nf: 0o17\ng: 1:30\n');
    expect(r.lines).toEqual([]);
    expect(r.src.ok).toBe(true);
    expect(r.src.data).toEqual({ a: '1', b: 2, c: { d: [null, true, 1.5] }, e: 'yes', f: 15, g: '1:30' });
  });

  it('says "in frontmatter" in SKILL.md, at the line of the whole file', () => {
    const bag = new DiagnosticBag();
    parseYaml('/s/SKILL.md', 'name: a\nmetadata: !!set {a, b}\n', bag, { lineOffset: 1, label: ' in frontmatter' });
    expect(lines(bag)).toEqual(['SKILL.md:3:11: YAML tag `!!set` is not supported in frontmatter; write a plain list']);
  });
});
