/**
 * Trigger evaluation end to end (built CLI): a trigger eval set (test/fixtures/triggers/)
 * run on the REAL Claude Code, Codex and Gemini CLI binaries against the scripted model, whose
 * rules activate the skill only when the engine lists it and the query says "palette", so every
 * query's outcome, and each engine's TP/FP/FN/TN, is known. Also `--trigger-only`, the trigger
 * gates, the reports and their re-rendering, the config errors and `skill-up import`.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { triggerCaseId } from '../../src/config/triggers.js';
import { runCli, writeSkill } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = join(ROOT, 'test/fixtures/triggers/palette-helper');
const ENGINES = ['claude_code', 'codex', 'gemini_cli'];
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8'));
const validateResult = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, validateFormats: false }).compile(schema);

/** The fixture's set: [query, should_trigger, activated by the scripted model]. */
const SET: [string, boolean, boolean][] = [
  ['Make a color palette for our landing page', true, true],
  ['Pick a palette for the quarterly dashboard charts', true, true],
  ['Which colors should the title slide use?', true, false],
  ['Choose the accent colors for our charts', true, false],
  ['What palette of wood stains does the hardware store sell?', false, true],
  ['Write a haiku about autumn', false, false],
  ['Sort these numbers: 3, 1, 2', false, false],
];

function copyFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'su-trigger-'));
  cpSync(FIXTURE, join(dir, 'palette-helper'), { recursive: true });
  return join(dir, 'palette-helper');
}

const readDoc = (out: string) => JSON.parse(readFileSync(join(out, 'iteration-1/result.json'), 'utf8'));

describe('trigger evaluation on real engines (scripted model, offline)', () => {
  it(`--trigger-only yields the known precision and recall on ${ENGINES.join(', ')}, in every report`, async () => {
    const skill = copyFixture();
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--trigger-only', '--baseline', '--engine', ENGINES.join(','), '--min-trigger-precision', '0.2', '--min-trigger-recall', '0.9', '--output-dir', out]);
    expect(r.stderr).not.toContain('internal error');
    // Recall 50% [22%, 78%] is proven below 90%: the gate fails (exit 1); precision 67% [30%, 90%] passes 20%.
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    const doc = readDoc(out);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    // Only trigger cases, only with the skill (--baseline notwithstanding), 2 trials each.
    expect(doc.jobs).toHaveLength(ENGINES.length * SET.length * 2);
    expect(doc.jobs.every((j: { variant: string; trigger?: unknown }) => j.variant === 'with_skill' && j.trigger)).toBe(true);
    expect(doc.summary.variants).toEqual([]);
    expect(doc.triggers.engines.map((e: { engine: string }) => e.engine)).toEqual(ENGINES);
    for (const engine of ENGINES) {
      const e = doc.triggers.engines.find((x: { engine: string }) => x.engine === engine);
      expect({ tp: e.tp, fp: e.fp, fn: e.fn, tn: e.tn, errors: e.errors }, engine).toEqual({ tp: 4, fp: 2, fn: 4, tn: 4, errors: 0 });
      expect(e.precision.value).toBeCloseTo(4 / 6);
      expect(e.recall.value).toBeCloseTo(4 / 8);
      expect(e.accuracy.value).toBeCloseTo(8 / 14);
      expect(e.f1.value).toBeCloseTo(8 / 14);
      expect(e.missed.map((q: { query: string; trigger_rate: number }) => [q.query, q.trigger_rate]).sort()).toEqual([
        ['Choose the accent colors for our charts', 0],
        ['Which colors should the title slide use?', 0],
      ]);
      expect(e.false_triggers.map((q: { query: string; trigger_rate: number }) => [q.query, q.trigger_rate])).toEqual([['What palette of wood stains does the hardware store sell?', 1]]);
      // Each job: pass iff activated == should_trigger, from the engine's own activation record.
      for (const [query, should, activated] of SET) {
        const jobs = doc.jobs.filter((j: { engine: string; trigger: { query: string } }) => j.engine === engine && j.trigger.query === query);
        expect(jobs).toHaveLength(2);
        for (const j of jobs) {
          expect(j.trigger, `${engine}: ${query}`).toEqual({ skill: 'palette-helper', should_trigger: should, activated, query });
          expect(j.status).toBe(should === activated ? 'pass' : 'fail');
          expect(j.skill_activations.some((a: { skill: string }) => a.skill === 'palette-helper')).toBe(activated);
          expect(j.case_id).toBe(triggerCaseId(query));
        }
      }
    }
    const gates = doc.gates.map((g: { name: string; engine: string | null; state: string }) => `${g.name}:${g.engine}:${g.state}`);
    for (const engine of ENGINES) expect(gates).toEqual(expect.arrayContaining([`min_trigger_precision:${engine}:pass`, `min_trigger_recall:${engine}:fail`]));
    expect(gates.some((g: string) => g.startsWith('all_trials_passed'))).toBe(false);
    // Console, summary.md, report.xml, report.html.
    expect(r.stdout).toContain('claude_code triggers: precision 67% [95% CI 30%–90%], recall 50% [95% CI 22%–78%]');
    expect(r.stdout).toContain('TP 4, FP 2, FN 4, TN 4; 0 error(s) left out');
    expect(r.stdout).toMatch(/false triggers: should not trigger, did \(1\):\n\s+trigger-what-palette-of-wood-stains-does-[0-9a-f]{8} triggered 2\/2 \(100%\)/);
    const md = readFileSync(join(out, 'iteration-1/summary.md'), 'utf8');
    expect(md).toContain('### Trigger evaluation');
    expect(md).toMatch(/\| codex \| 67% \[30%, 90%\] \| 50% \[22%, 78%\] \| 57% \[\d+%, \d+%\] \| 57% \[\d+%, \d+%\] \| 4 \/ 2 \/ 4 \/ 4 \|/);
    const xml = readFileSync(join(out, 'iteration-1/report.xml'), 'utf8');
    expect(xml.match(/<testcase /g)).toHaveLength(ENGINES.length * SET.length * 2);
    expect(xml).toContain('<property name="trigger.precision" value="0.6667"/>');
    expect(xml).toContain('<property name="trigger.counts" value="TP 4, FP 2, FN 4, TN 4"/>');
    expect(xml).toContain('the skill `palette-helper` should not be activated by this query: it was activated 1 time(s) (Skill tool)');
    expect(xml).toContain('the skill `palette-helper` should be activated by this query: it was not activated (offered: palette-helper)');
    const html = readFileSync(join(out, 'iteration-1/report.html'), 'utf8');
    expect(html).toContain('Trigger evaluation');
    expect(html).toContain('4 / 2 / 4 / 4');
    // `skill-up report` re-renders the saved run's trigger section.
    const again = await runCli(['report', join(out, 'iteration-1'), '--format', 'markdown', '--output-dir', join(out, 'again')]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('gemini_cli triggers: precision 67% [95% CI 30%–90%], recall 50% [95% CI 22%–78%]');
    expect(readFileSync(join(out, 'again/summary.md'), 'utf8')).toBe(md);
  }, 900_000);

  it('a run with task and trigger cases: the uplift and the pass rates see only the task case; the default gate counts trigger misfires', async () => {
    const skill = copyFixture();
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--baseline', '--output-dir', out]);
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    const doc = readDoc(out);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(doc.jobs.filter((j: { case_id: string }) => j.case_id === 'palette-file').map((j: { variant: string; status: string }) => `${j.variant}:${j.status}`)).toEqual(['with_skill:pass', 'without_skill:fail']);
    expect(doc.jobs.filter((j: { trigger?: unknown; variant: string }) => j.trigger && j.variant === 'without_skill')).toEqual([]);
    const w = doc.summary.variants.find((v: { variant: string }) => v.variant === 'with_skill');
    expect([w.trials, w.passed]).toEqual([1, 1]);
    expect(doc.summary.uplift[0].compared_cases).toBe(1);
    expect(doc.summary.uplift[0].dropped).toEqual([]);
    expect(doc.triggers.engines[0]).toMatchObject({ tp: 4, fp: 2, fn: 4, tn: 4 });
    const all = doc.gates.find((g: { name: string }) => g.name === 'all_trials_passed');
    expect(all.state).toBe('fail');
    expect(all.reason).toContain('9 of 15 graded with_skill trial(s) passed, 14 of them trigger trials (6 misfired)');
  }, 300_000);

  it('--trigger-only on a suite without trigger cases is a usage error (exit 2)', async () => {
    const r = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--trigger-only', '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--trigger-only: the suite has no trigger case');
    expect((await runCli(['run', '--help'])).stdout).toContain('--trigger-only');
  });
});

describe('a gate asked for is listed, INCONCLUSIVE when it has nothing to decide on (CLI exit codes)', () => {
  type Gate = { name: string; engine: string | null; state: string; reason: string };
  const gateLines = (doc: { gates: Gate[] }) => doc.gates.map((g) => `${g.name}:${g.engine}:${g.state}`);

  it('--trigger-only --min-pass-rate: the pass-rate gate is INCONCLUSIVE and the misfires fail all_trials_passed (exit 1); report and merge keep the gates', async () => {
    const skill = copyFixture();
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--trigger-only', '--min-pass-rate', '0.8', '--on-inconclusive', 'pass', '--output-dir', out]);
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    const doc = readDoc(out);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(gateLines(doc)).toEqual(['max_error_rate:null:pass', 'all_trials_passed:null:fail', 'min_pass_rate:claude_code:inconclusive']);
    expect(doc.gates[1].reason).toMatch(/^8 of 14 graded trigger trial\(s\) right \(6 misfired\)/);
    expect(doc.gates[2].reason).toMatch(/only trigger cases ran on claude_code/);
    expect(r.stdout).toMatch(/INCONCLUSIVE\s+min_pass_rate.*only trigger cases ran/);
    expect(r.stdout).toMatch(/FAIL\s+all_trials_passed: 8 of 14 graded trigger trial/);
    // `skill-up report` shows the recorded gates; `merge` of two shards decides the same ones anew.
    const rep = await runCli(['report', join(out, 'iteration-1'), '--format', 'markdown', '--output-dir', join(out, 'again')]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stdout).toMatch(/min_pass_rate.*INCONCLUSIVE|INCONCLUSIVE.*min_pass_rate/);
    const shards = [];
    for (const i of [1, 2]) {
      const s = await runCli(['run', skill, '--trigger-only', '--min-pass-rate', '0.8', '--min-trigger-recall', '0.9', '--shard', `${i}/2`, '--output-dir', join(out, `shard-${i}`)]);
      expect(s.stderr).not.toContain('internal error');
      shards.push(join(out, `shard-${i}`, 'iteration-1'));
    }
    const m = await runCli(['merge', ...shards, '--output-dir', join(out, 'merged')]);
    expect(m.stderr).not.toContain('internal error');
    const merged = JSON.parse(readFileSync(join(out, 'merged', readdirSync(join(out, 'merged')).find((d) => d.startsWith('iteration-'))!, 'result.json'), 'utf8'));
    expect(gateLines(merged)).toEqual(['max_error_rate:null:pass', 'min_pass_rate:claude_code:inconclusive', 'min_trigger_recall:claude_code:fail']);
    expect(m.code).toBe(1);
  }, 600_000);

  it('a trigger gate on a run without trigger cases (none in the suite, or --case leaves them out) is INCONCLUSIVE: exit 4, mappable', async () => {
    const noTriggers = await runCli(['run', join(ROOT, 'examples/greeting-files'), '--min-trigger-precision', '0.5', '--output-dir', join(copyFixture(), '..', 'out')]);
    expect(noTriggers.code, noTriggers.stderr.slice(-2000)).toBe(4);
    expect(noTriggers.stdout).toMatch(/INCONCLUSIVE\s+min_trigger_precision.*no trigger case ran: no case sets `should_trigger`/);
    const skill = copyFixture();
    const out = join(skill, '..', 'out');
    const r = await runCli(['run', skill, '--case', 'palette-file', '--min-trigger-recall', '0.9', '--output-dir', out]);
    expect(r.code, r.stderr.slice(-2000)).toBe(4);
    const doc = readDoc(out);
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(gateLines(doc)).toEqual(['max_error_rate:null:pass', 'all_trials_passed:null:pass', 'min_trigger_recall:claude_code:inconclusive']);
    expect(doc.gates[2].reason).toContain('the case selection (--case, --tag, --shard) left them out');
    const mapped = await runCli(['run', skill, '--case', 'palette-file', '--min-trigger-recall', '0.9', '--on-inconclusive', 'fail', '--output-dir', out]);
    expect(mapped.code).toBe(1);
  }, 300_000);

  it('validate warns (file:line) for a trigger gate on a suite without trigger cases, and is quiet when it has them', async () => {
    const evalYaml = 'schema_version: v1alpha1\nengine: { name: claude_code }\ncases:\n  files: [evals/cases/*.yaml]\ngates:\n  min_pass_rate: 0.5\n  min_trigger_recall: 0.9\n';
    const skill = writeSkill({ 'evals/eval.yaml': evalYaml, 'evals/cases/a.yaml': 'input: { prompt: hi }\n' });
    const r = await runCli(['validate', skill]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/evals\/eval\.yaml:7:\d+: warning: gates\.min_trigger_recall: the suite has no trigger case .*INCONCLUSIVE \(exit 4\)/);
    const withTriggers = writeSkill({ 'evals/eval.yaml': evalYaml, 'evals/cases/a.yaml': 'input: { prompt: hi }\nshould_trigger: true\n' });
    const ok = await runCli(['validate', withTriggers]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain('min_trigger_recall');
  });
});

describe('trigger config errors (exit 2, file:line: field: message)', () => {
  const evalYaml = (extra = '') => `schema_version: v1alpha1\nengine: { name: claude_code }\ncases:\n  files: [evals/cases/*.yaml]\n${extra}`;

  it('a trigger case with `expect` or a judge is refused at the field', async () => {
    const skill = writeSkill({
      'evals/eval.yaml': evalYaml(),
      'evals/cases/t.yaml': 'input:\n  prompt: make a palette\nshould_trigger: true\nexpect:\n  must_contain: [x]\njudge:\n  type: rule_based\n  success: [{ skill_invoked: demo-skill }]\n',
    });
    const r = await runCli(['validate', skill]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/evals\/cases\/t\.yaml:4:1: expect: a trigger case \(`should_trigger: true`\) is graded only on whether the skill was activated, so `expect` would never be checked/);
    expect(r.stderr).toMatch(/evals\/cases\/t\.yaml:6:1: judge: a trigger case/);
    const bad = writeSkill({ 'evals/eval.yaml': evalYaml(), 'evals/cases/t.yaml': 'input:\n  prompt: p\nshould_trigger: "yes"\n' });
    const b = await runCli(['validate', bad]);
    expect(b.code).toBe(2);
    expect(b.stderr).toMatch(/t\.yaml:3:\d+: should_trigger: /);
  });

  it('every bad item of a trigger eval set is reported at its line, all at once', async () => {
    const json = [
      '[',
      '  {"query": "make a palette", "should_trigger": true},',
      '  {"query": "", "should_trigger": false},',
      '  {"should_trigger": true},',
      '  {"query": "fine", "should_trigger": "true"},',
      '  "just a string",',
      '  {"query": "make a palette", "should_trigger": false}',
      ']',
    ].join('\n');
    const skill = writeSkill({ 'evals/eval.yaml': evalYaml('triggers: { file: evals/trigger-eval.json }\n'), 'evals/cases/a.yaml': 'input: { prompt: hi }\n', 'evals/trigger-eval.json': json });
    const r = await runCli(['validate', skill]);
    expect(r.code).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l.includes('trigger-eval.json'));
    expect(lines.find((l) => /trigger-eval\.json:3:\d+: \[1\]\.query: `query` is empty/.test(l))).toBeTruthy();
    expect(lines.find((l) => /trigger-eval\.json:4:\d+: \[2\]: missing `query`/.test(l))).toBeTruthy();
    expect(lines.find((l) => /trigger-eval\.json:5:\d+: \[3\]\.should_trigger: `should_trigger` must be true or false, got "true"/.test(l))).toBeTruthy();
    expect(lines.find((l) => /trigger-eval\.json:6:\d+: \[4\]: an item must be an object/.test(l))).toBeTruthy();
    expect(lines.find((l) => /trigger-eval\.json:7:\d+: \[5\]\.query: the same query is at line 2 too/.test(l))).toBeTruthy();
    const missing = writeSkill({ 'evals/eval.yaml': evalYaml('triggers: { file: evals/nope.json }\n'), 'evals/cases/a.yaml': 'input: { prompt: hi }\n' });
    const m = await runCli(['validate', missing]);
    expect(m.code).toBe(2);
    expect(m.stderr).toMatch(/eval\.yaml:5:\d+: triggers\.file: trigger file `evals\/nope\.json` not found/);
    // A UTF-8 byte-order mark is accepted; a truncated file is reported where it ends.
    const bom = writeSkill({ 'evals/eval.yaml': evalYaml('triggers: { file: evals/t.json }\n'), 'evals/cases/a.yaml': 'input: { prompt: hi }\n', 'evals/t.json': '\uFEFF[{"query": "make a palette", "should_trigger": true}]\n' });
    const withBom = await runCli(['validate', bom]);
    expect(withBom.code, withBom.stderr).toBe(0);
    expect(withBom.stdout).toContain('(2 case(s)');
    const cut = writeSkill({ 'evals/eval.yaml': evalYaml('triggers: { file: evals/t.json }\n'), 'evals/cases/a.yaml': 'input: { prompt: hi }\n', 'evals/t.json': '[\n  {"query": "make a palette", "should_trigger": true},\n  {"query": "sort", "should_trigger": false}\n' });
    const truncated = await runCli(['validate', cut]);
    expect(truncated.code).toBe(2);
    expect(truncated.stderr).toMatch(/t\.json:3:45: not valid JSON: the file ends before the JSON is complete/);
    const notList = writeSkill({ 'evals/eval.yaml': evalYaml('triggers: { file: evals/t.json }\n'), 'evals/cases/a.yaml': 'input: { prompt: hi }\n', 'evals/t.json': '{"evals": []}' });
    expect((await runCli(['validate', notList])).stderr).toMatch(/t\.json:1:1: a trigger eval set must be a JSON array .* this looks like an evals\.json/);
  });
});

describe('skill-up import of a trigger eval set', () => {
  it('writes one trigger case per item (the ids of `triggers.file`) and an eval.yaml that loads; bad sets exit 2', async () => {
    const skill = writeSkill({});
    const set = SET.map(([query, should_trigger]) => ({ query, should_trigger }));
    writeFileSync(join(skill, 'evals-trigger.json'), JSON.stringify(set, null, 2));
    const out = join(skill, 'evals');
    const r = await runCli(['import', join(skill, 'evals-trigger.json'), '--output', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`wrote ${SET.length} trigger case(s)`);
    expect(r.stdout).toContain(`✓ the suite loads: ${SET.length} trigger case(s) of ${SET.length}`);
    const files = readdirSync(join(out, 'cases')).sort();
    expect(files).toEqual(SET.map(([q]) => `${triggerCaseId(q)}.yaml`).sort());
    const one = readFileSync(join(out, 'cases', `${triggerCaseId(SET[4]![0])}.yaml`), 'utf8');
    expect(one).toContain('should_trigger: false');
    expect(one).toContain('prompt: What palette of wood stains does the hardware store sell?');
    expect(existsSync(join(out, 'eval.yaml'))).toBe(true);
    const listed = await runCli(['list-cases', skill]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(triggerCaseId(SET[0]![0]));
    // A second import refuses to overwrite.
    const again = await runCli(['import', join(skill, 'evals-trigger.json'), '--output', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('would overwrite');
    // Into a folder outside any skill: as for an evals.json, the new eval.yaml names the set's skill and loads (exit 0).
    const elsewhere = join(skill, '..', 'elsewhere');
    const away = await runCli(['import', join(skill, 'evals-trigger.json'), '--output', elsewhere]);
    expect(away.code, away.stderr).toBe(0);
    expect(away.stdout).toContain(`✓ the suite loads: ${SET.length} trigger case(s)`);
    expect(readFileSync(join(elsewhere, 'eval.yaml'), 'utf8')).toMatch(/skills:\n {2}- source: local_path\n {4}path: \.\.\/demo-skill\n/);
    expect((await runCli(['list-cases', elsewhere])).code).toBe(0);
    // A set outside any skill into a folder outside any skill: refused before anything is written.
    const loose = mkdtempSync(join(tmpdir(), 'su-loose-'));
    writeFileSync(join(loose, 'trig.json'), JSON.stringify(set));
    const refused = await runCli(['import', join(loose, 'trig.json'), '--output', join(loose, 'out')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/holds a SKILL\.md, so the trigger cases would have no skill to judge/);
    expect(existsSync(join(loose, 'out'))).toBe(false);
    writeFileSync(join(skill, 'bad.json'), '[\n  {"query": "x"}\n]');
    const bad = await runCli(['import', join(skill, 'bad.json'), '--output', join(skill, 'other')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.json:2:\d+: \[0\]: missing `should_trigger`/);
  });
});
