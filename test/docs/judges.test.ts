/**
 * Keeps docs/judges/*.md honest against the code and the schemas: every rule kind, `expect`
 * key and `post_condition` key of schemas/case.schema.json has its heading (or code span) in
 * rules.md and no heading names a key that does not exist; the `EVAL_*` variables documented
 * in script.md are exactly those src/ sets (and those a real script judge receives); every
 * field of the script and agent judges appears in its page; and the script judge example of
 * script.md (docs/judges/example/report-check) runs through the built CLI with the verdicts and
 * evidence the page shows.
 */
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../cli/helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DOCS = join(ROOT, 'docs/judges');
const page = (name: string) => readFileSync(join(DOCS, name), 'utf8');
const caseSchema = JSON.parse(readFileSync(join(ROOT, 'schemas/case.schema.json'), 'utf8')) as {
  $defs: Record<string, { properties?: Record<string, SchemaNode> }>;
};
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  description?: string;
}
const propsOf = (def: string): string[] => Object.keys(caseSchema.$defs[def]?.properties ?? {});

/** The `## ` sections of a markdown page: heading line → body (up to the next `## `). */
function sections(md: string): Map<string, string> {
  const out = new Map<string, string>();
  const parts = md.split(/^## /m).slice(1);
  for (const p of parts) {
    const nl = p.indexOf('\n');
    out.set(p.slice(0, nl), p.slice(nl + 1));
  }
  return out;
}
function section(md: string, headingPart: string): string {
  const found = [...sections(md)].find(([h]) => h.includes(headingPart));
  if (!found) throw new Error(`no section whose heading contains ${headingPart}`);
  return found[1];
}
/** The code spans of the `### ` headings of `body`: `### \`key\`` → key. */
function headingKeys(body: string): string[] {
  return [...body.matchAll(/^### `([^`]+)`/gm)].map((m) => m[1]!);
}
const hasCodeSpan = (text: string, key: string) => new RegExp('`' + key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '`').test(text);

/** Every .ts file under `dir`. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return e.isFile() && e.name.endsWith('.ts') ? [p] : [];
  });
}

/**
 * The `EVAL_*` environment variable names src/ uses. Names declared as TypeScript constants
 * (`const EVAL_DIR = …`, `EVAL_SCHEMA_ID`, `EVAL_NAMES`) are identifiers of the code, not
 * variables any process receives, so they are left out.
 */
function evalVariablesInSrc(): Set<string> {
  const seen = new Set<string>();
  const constants = new Set<string>();
  for (const f of tsFiles(join(ROOT, 'src'))) {
    const text = readFileSync(f, 'utf8');
    for (const m of text.matchAll(/\bEVAL_[A-Z_]+\b/g)) seen.add(m[0]);
    for (const m of text.matchAll(/\bconst\s+(EVAL_[A-Z_]+)\s*=/g)) constants.add(m[1]!);
  }
  return new Set([...seen].filter((n) => !constants.has(n)));
}
const evalNamesIn = (text: string) => new Set([...text.matchAll(/\bEVAL_[A-Z_]+\b/g)].map((m) => m[0]));

describe('docs/judges/rules.md covers every rule kind of the case schema', () => {
  const rules = page('rules.md');

  it('has a heading for every `expect` key, and none for a key the schema lacks', () => {
    const keys = propsOf('expect');
    expect(keys).toContain('skill_not_invoked');
    const documented = headingKeys(section(rules, 'The `expect` gate'));
    expect([...documented].sort()).toEqual([...keys].sort());
  });

  it('has a heading for every `success`/`failure` rule kind, and none for a kind the schema lacks', () => {
    const kinds = propsOf('rule');
    expect(kinds).toEqual(expect.arrayContaining(['output_matches', 'skill_invoked', 'skill_not_invoked', 'no_silent_failure']));
    const documented = headingKeys(section(rules, 'Rule kinds'));
    expect([...documented].sort()).toEqual([...kinds].sort());
  });

  it('names every `post_condition` key as a code span in its section', () => {
    const body = section(rules, '`post_condition`');
    const keys = propsOf('postCondition');
    expect(keys.length).toBeGreaterThanOrEqual(4);
    for (const k of keys) expect(hasCodeSpan(body, k), k).toBe(true);
  });

  it('gives every rule kind and expect key a YAML example', () => {
    for (const name of ['The `expect` gate', 'Rule kinds']) {
      const body = section(rules, name);
      for (const chunk of body.split(/^### /m).slice(1)) {
        const key = /^`([^`]+)`/.exec(chunk)?.[1];
        expect(chunk, `${key}: no yaml example`).toMatch(/```yaml\n[\s\S]*?\b\w+:/);
      }
    }
  });
});

describe('docs/judges/script.md documents exactly the EVAL_* variables', () => {
  const script = page('script.md');
  const inSrc = evalVariablesInSrc();

  it('finds the variables in src/ (the filter did not drop them)', () => {
    expect(inSrc).toEqual(new Set(['EVAL_FINAL_MESSAGE', 'EVAL_FINAL_MESSAGE_FILE', 'EVAL_FINAL_MESSAGE_BYTES', 'EVAL_EXIT_CODE', 'EVAL_TRANSCRIPT_PATH', 'EVAL_WORKSPACE', 'EVAL_SKILL_DIR', 'EVAL_CASE_ID']));
  });

  it('documents every one of them, and none that src/ does not set', () => {
    const documented = evalNamesIn(script);
    for (const n of inSrc) expect(documented.has(n), `${n} is not documented`).toBe(true);
    for (const n of documented) expect(inSrc.has(n), `${n} is documented but src/ never sets it`).toBe(true);
  });

  it('has a table row (meaning and example) for each', () => {
    for (const n of inSrc) expect(script, n).toMatch(new RegExp(`^\\| \`${n}\` \\| [^|]+ \\| [^|]+ \\|$`, 'm'));
  });
});

/** Fields of `$defs.judge` by the page that documents them (src/config/judges.ts KEYS_BY_TYPE). */
const JUDGE_FIELDS = {
  'rules.md': ['success', 'failure'],
  'script.md': ['id', 'type', 'script_path', 'timeout_seconds'],
  'agent.md': ['id', 'type', 'criteria', 'pass_threshold', 'engine', 'model', 'timeout_seconds', 'repeats', 'skills', 'context'],
} as const;

/** Every property name under `node`, however deep (not through `$ref`s). */
function nestedKeys(node: SchemaNode | undefined, out: string[] = []): string[] {
  if (!node) return out;
  for (const [k, v] of Object.entries(node.properties ?? {})) {
    out.push(k);
    nestedKeys(v, out);
  }
  if (node.items) nestedKeys(node.items, out);
  return out;
}

describe('docs/judges pages name every field of their judge', () => {
  const judge = caseSchema.$defs.judge!;

  it('assigns every field of the schema\'s judge definition to a page', () => {
    const assigned = new Set(Object.values(JUDGE_FIELDS).flat());
    expect([...assigned].sort()).toEqual(Object.keys(judge.properties ?? {}).sort());
  });

  for (const [name, fields] of Object.entries(JUDGE_FIELDS)) {
    it(`${name} names ${fields.join(', ')}`, () => {
      const text = page(name);
      for (const f of fields) expect(hasCodeSpan(text, f), `${name} lacks \`${f}\``).toBe(true);
    });
  }

  it('agent.md names every field of `context` (limits and attachments included) and of a criterion', () => {
    const text = page('agent.md');
    const keys = [...nestedKeys(judge.properties!.context), ...nestedKeys(judge.properties!.criteria?.items)];
    expect(keys).toEqual(expect.arrayContaining(['profile', 'max_bytes', 'workspace_diff_max_lines', 'label', 'text']));
    for (const k of keys) {
      // `limits.max_bytes` in a table is a code span containing the key.
      expect(new RegExp('`(?:[a-z_]+\\.)?' + k + '`').test(text), `agent.md lacks \`${k}\``).toBe(true);
    }
  });

  it('README.md links every page', () => {
    const readme = page('README.md');
    for (const p of ['rules.md', 'script.md', 'agent.md', 'trigger.md']) expect(readme).toContain(`](${p}`);
  });
});

describe('the script judge example of script.md, through the built CLI', () => {
  const EXAMPLE = join(DOCS, 'example/report-check');
  let run: CliRun;
  let iteration: string;
  const grading = (c: string) =>
    JSON.parse(readFileSync(join(iteration, c, 'with_skill/run-1/grading.json'), 'utf8')) as { status: string; reason?: string; expectations: { text: string; passed: boolean; evidence: string }[] };

  beforeAll(async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'su-docs-judges-'));
    const skill = join(tmp, 'report-check');
    cpSync(EXAMPLE, skill, { recursive: true });
    // A case of the test's own: a script judge that prints the names of the EVAL_* variables it got.
    writeFileSync(join(skill, 'evals/scripts/env-names.sh'), '#!/usr/bin/env bash\nenv | cut -d= -f1 | grep "^EVAL_" | sort | tr "\\n" " "\n');
    chmodSync(join(skill, 'evals/scripts/env-names.sh'), 0o755);
    writeFileSync(join(skill, 'evals/cases/env-names.yaml'), 'input: { prompt: Summarise data.csv into report.md. }\ncontext: { files: { data.csv: "item,amount\\napples,1\\n" } }\njudge: { type: script, script_path: evals/scripts/env-names.sh }\n');
    run = await runCli(['run', skill, '--output-dir', join(tmp, 'out')]);
    iteration = join(tmp, 'out', 'iteration-1');
  }, 60_000);

  it('shows in script.md the script the example holds', () => {
    const file = readFileSync(join(EXAMPLE, 'evals/scripts/check-report.sh'), 'utf8');
    expect(page('script.md')).toContain('```bash\n' + file + '```');
  });

  it('passes the complete report and fails the draft, with the evidence the page shows', () => {
    expect(run.stderr).not.toContain('internal error');
    const ok = grading('complete');
    expect(ok.status).toBe('pass');
    expect(ok.expectations).toHaveLength(1);
    expect(ok.expectations[0]!.text).toBe('script: evals/scripts/check-report.sh');
    expect(ok.expectations[0]!.evidence).toMatch(/^ok: Total: 3; write_file called 1 time\(s\); case complete, engine exit code 0 \[stderr: read \/.+\/report\.md\]$/);
    const draft = grading('draft');
    expect(draft.status).toBe('fail');
    expect(draft.reason).toBe('judge script failed: script exited with code 1');
    expect(draft.expectations[0]).toMatchObject({ passed: false, evidence: "FAIL: report.md has no 'Total: N' line [exit code 1]" });
    // The console line quoted in script.md.
    expect(run.stderr + run.stdout).toContain("FAIL  draft/with_skill/run-1");
  });

  it('gives a script judge exactly the EVAL_* variables script.md documents', () => {
    const got = new Set(grading('env-names').expectations[0]!.evidence.trim().split(/\s+/));
    expect(got).toEqual(evalNamesIn(page('script.md')));
  });
});
