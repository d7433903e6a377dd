/**
 * agent_judge in eval.yaml and case files (src/config/judges.ts and the judge schema):
 * criteria as strings or `{id, text}`, `engine` by name or inline, `repeats`, `skills`,
 * `context` (profile, booleans, limits, attachments), inheritance from the eval-level judge,
 * and every bad value refused with file, line and field.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentJudgeSpec } from '../../src/config/types.js';
import { loadErrors, loadOk, MINIMAL_CASE, MINIMAL_EVAL, only, show, writeSkill } from '../config/helpers.js';

const agentJudge = async (dir: string, i = 0): Promise<AgentJudgeSpec> => {
  const { suite } = await loadOk(dir);
  const j = suite.cases[i]!.judges[0]!;
  if (j.type !== 'agent_judge') throw new Error('not an agent_judge');
  return j;
};

const GRADER_SKILL = '---\nname: house-rubric\ndescription: How to grade house-style answers. Use when grading.\n---\n\n# Rubric\n';

describe('agent_judge config', () => {
  it('criteria: strings get c1, c2, … by position; maps keep their id', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge:\n  type: agent_judge\n  criteria:\n    - explains the bug\n    - { id: has_test, text: adds a regression test }\n    - names the file\n`,
    });
    expect((await agentJudge(dir)).criteria).toEqual([
      { id: 'c1', text: 'explains the bug' },
      { id: 'has_test', text: 'adds a regression test' },
      { id: 'c3', text: 'names the file' },
    ]);
  });

  it('refuses a bad or duplicate criterion id and an incomplete criterion map', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge:\n  type: agent_judge\n  criteria:\n    - first\n    - { id: c1, text: again }\n    - { id: Bad-Id, text: x }\n    - { id: ok }\n`,
    });
    const diags = await loadErrors(dir);
    expect(show([only(diags, /duplicate criterion id `c1`/)], dir)[0]).toMatch(/^evals\/cases\/a\.yaml:7:13: judge\.criteria\[1\]\.id: duplicate criterion id `c1`; also used at line 6/);
    only(diags, /Bad-Id/);
    only(diags, /text/);
  });

  it('engine by name reuses that engine of the suite; inline is any engine; unknown names get a did-you-mean', async () => {
    const evalYaml = `schema_version: v1alpha1\nengine: {name: claude_code, version: 2.1.3, model: {name: claude-sonnet-4-5}}\nengines: [{name: codex, version: 0.1.0, model: {name: gpt-5}}]\ncases:\n  files: [evals/cases/*.yaml]\n`;
    const byName = writeSkill({ 'evals/eval.yaml': evalYaml, 'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], engine: codex, model: openai/gpt-5-mini}\n` });
    const j = await agentJudge(byName);
    expect(j.engine).toMatchObject({ name: 'codex', version: '0.1.0', model: { name: 'gpt-5' } });
    expect(j.model).toBe('openai/gpt-5-mini');
    const inline = writeSkill({
      'evals/eval.yaml': evalYaml,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge:\n  type: agent_judge\n  criteria: [x]\n  engine:\n    name: grader-api\n    custom: {transport: http, http: {url: "http://127.0.0.1:9/grade"}, response_format: text}\n`,
    });
    expect((await agentJudge(inline)).engine).toMatchObject({ name: 'custom', displayName: 'grader-api', custom: { transport: 'http', responseFormat: 'text' } });
    const typo = writeSkill({ 'evals/eval.yaml': evalYaml, 'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], engine: codx}\n` });
    const d = only(await loadErrors(typo), /names no engine/);
    expect(d.message).toContain('did you mean `codex`?');
    expect(d.message).toContain("the suite's engines are `claude_code`, `codex`");
    expect(show([d], typo)[0]).toMatch(/^evals\/cases\/a\.yaml:3:51: judge\.engine:/);
  });

  it('repeats: 1 by default, 1..25 accepted, anything else refused', async () => {
    const ok = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], repeats: 5}\n`, 'evals/cases/b.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x]}\n` });
    expect((await agentJudge(ok, 0)).repeats).toBe(5);
    expect((await agentJudge(ok, 1)).repeats).toBe(1);
    for (const bad of ['0', '26', '2.5', 'three']) {
      const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], repeats: ${bad}}\n` });
      const d = only(await loadErrors(dir), /repeats|whole number/);
      expect(d.path).toBe('judge.repeats');
    }
  });

  it('skills: folders inside the skill root holding SKILL.md; outside, missing or without SKILL.md refused', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], skills: [evals/graders/rubric]}\n`,
      'evals/graders/rubric/SKILL.md': GRADER_SKILL,
    });
    expect((await agentJudge(dir)).skills).toEqual([path.join(dir, 'evals/graders/rubric')]);
    const bad = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], skills: [../elsewhere, evals/empty, evals/nope]}\n`,
      'evals/empty/README.md': 'no skill here',
    });
    const diags = await loadErrors(bad);
    only(diags, /grader skill `\.\.\/elsewhere` is outside the skill folder/);
    only(diags, /grader skill `evals\/empty` has no SKILL\.md/);
    only(diags, /grader skill `evals\/nope` not found/);
  });

  it('context: profiles, booleans, limits and attachments act; attachments outside the skill root are refused', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge:\n  type: agent_judge\n  criteria: [x]\n  context:\n    profile: minimal\n    transcript: true\n    limits: {max_bytes: 2048, transcript_max_turns: 2, workspace_diff_max_lines: 50}\n    attachments: [{path: evals/ref/answer.md, label: the reference answer}, {path: evals/ref/dir}]\n`,
      'evals/ref/answer.md': '# Answer\n',
      'evals/ref/dir/a.txt': 'a',
    });
    expect((await agentJudge(dir)).context).toEqual({
      profile: 'minimal',
      finalMessage: true,
      transcript: true,
      workspaceDiff: false,
      generatedFiles: true,
      skillSource: false,
      limits: { maxBytes: 2048, transcriptMaxTurns: 2, workspaceDiffMaxLines: 50 },
      attachments: [
        { path: path.join(dir, 'evals/ref/answer.md'), label: 'the reference answer' },
        { path: path.join(dir, 'evals/ref/dir') },
      ],
    });
    const std = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x]}\n` });
    expect((await agentJudge(std)).context).toMatchObject({ profile: 'standard', transcript: true, workspaceDiff: true, skillSource: true, limits: { maxBytes: 65536 } });

    const bad = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge:\n  type: agent_judge\n  criteria: [x]\n  context:\n    profile: huge\n    limits: {max_bytes: 10, transcript_max_turns: 0}\n    attachments: [{path: ../../etc/passwd}, {path: evals/link}, {label: nothing}]\n`,
    });
    mkdirSync(path.join(bad, 'evals/link'), { recursive: true });
    writeFileSync(path.join(path.dirname(bad), 'outside.txt'), 'secret');
    symlinkSync(path.join(path.dirname(bad), 'outside.txt'), path.join(bad, 'evals/link/out.txt'));
    const diags = await loadErrors(bad);
    expect(diags.map((d) => d.path).sort()).toEqual([
      'judge.context.attachments[0].path',
      'judge.context.attachments[1].path',
      'judge.context.attachments[2]',
      'judge.context.limits.max_bytes',
      'judge.context.limits.transcript_max_turns',
      'judge.context.profile',
    ]);
    only(diags, /attachment `\.\.\/\.\.\/etc\/passwd` is outside the skill folder/);
    only(diags, /symbolic link to a place outside the skill folder/);
  });

  it('a case agent_judge inherits every field but criteria from the eval-level agent_judge, and problems are reported once', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}judge: {type: agent_judge, model: anthropic/claude-sonnet-4-6, repeats: 3, skills: [evals/graders/rubric], context: {profile: minimal}}\n`,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x]}\n`,
      'evals/cases/b.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [y], repeats: 1, context: {profile: standard}}\n`,
      'evals/graders/rubric/SKILL.md': GRADER_SKILL,
    });
    const a = await agentJudge(dir, 0);
    expect(a).toMatchObject({ model: 'anthropic/claude-sonnet-4-6', repeats: 3, skills: [path.join(dir, 'evals/graders/rubric')], context: { profile: 'minimal' } });
    const b = await agentJudge(dir, 1);
    expect(b).toMatchObject({ repeats: 1, context: { profile: 'standard' } });
    const bad = writeSkill({
      'evals/eval.yaml': `${MINIMAL_EVAL}judge: {type: agent_judge, skills: [evals/missing]}\n`,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x]}\n`,
      'evals/cases/b.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [y]}\n`,
    });
    const d = only(await loadErrors(bad), /grader skill `evals\/missing` not found/);
    expect(d.file).toBe(path.join(bad, 'evals/eval.yaml'));
  });

  it('warns (file:line, not an error) about pass_threshold 0 and criteria with the same text', async () => {
    const dir = writeSkill({
      'evals/eval.yaml': MINIMAL_EVAL,
      'evals/cases/a.yaml': `${MINIMAL_CASE}judge:\n  type: agent_judge\n  pass_threshold: 0\n  criteria:\n    - same thing\n    - { id: again, text: "Same   Thing" }\n    - other\n`,
    });
    const { warnings } = await loadOk(dir);
    const shown = show(warnings, dir);
    expect(shown.filter((l) => /pass_threshold: 0/.test(l))).toEqual([expect.stringMatching(/^evals\/cases\/a\.yaml:\d+:19: warning: judge\.pass_threshold: `pass_threshold: 0` passes every job/)]);
    expect(shown.filter((l) => /same text/.test(l))).toEqual([expect.stringMatching(/^evals\/cases\/a\.yaml:\d+:\d+: warning: judge\.criteria\[1\]\.text: criterion `again` has the same text as criterion `c1` \(line \d+\)/)]);
    expect(warnings.filter((w) => /other/.test(w.message))).toEqual([]);
  });

  it('an eval-level `criteria` that is a map is refused as not a list, without a misleading "no criteria"', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': `${MINIMAL_EVAL}judge: {type: agent_judge, criteria: {a: b}}\n`, 'evals/cases/a.yaml': MINIMAL_CASE });
    const diags = await loadErrors(dir);
    expect(only(diags, /criteria/).message).toMatch(/expected a non-empty list of criteria/);
    expect(diags.filter((d) => /has no `criteria`/.test(d.message))).toEqual([]);
  });

  it('an imported evals.json with a repeated expectation warns (skill-up run --auto, validate)', async () => {
    const dir = writeSkill({ 'evals/evals.json': JSON.stringify({ skill_name: 'x', evals: [{ id: 1, prompt: 'do it', expectations: ['x holds', 'x holds'] }] }) });
    const { loadEvalsJsonSuite } = await import('../../src/import/auto.js');
    const { warnings } = await loadEvalsJsonSuite(path.join(dir, 'evals/evals.json'));
    expect(show(warnings, dir)).toContainEqual(expect.stringMatching(/^evals\/evals\.json:1:\d+: warning: .*this expectation repeats an earlier one of this eval; it becomes one criterion/));
  });

  it('no longer warns that skills or context are not supported', async () => {
    const dir = writeSkill({ 'evals/eval.yaml': MINIMAL_EVAL, 'evals/cases/a.yaml': `${MINIMAL_CASE}judge: {type: agent_judge, criteria: [x], skills: [], context: {profile: minimal}}\n` });
    const { warnings } = await loadOk(dir);
    expect(warnings.filter((w) => /not supported/.test(w.message))).toEqual([]);
  });
});
