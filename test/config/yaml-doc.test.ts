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
