/**
 * The pure part of agent_judge (src/judge/agent/): reading a grader's answer, the correction
 * prompt, the majority over repeats with its agreement, the threshold, the bounded context
 * materials, and gradeJob's verdict with an agent_judge among several judges.
 */
import { describe, expect, it } from 'vitest';
import type { AgentJudgeCriterion, AgentJudgeSpec, JudgeSpec } from '../../src/config/types.js';
import {
  agentJudgeVerdict,
  boundChanges,
  boundText,
  boundTranscript,
  combineRuns,
  correctionPrompt,
  findResultsJson,
  graderPrompt,
  GRADER_PROMPT_MARKER,
  gradeJob,
  meetsThreshold,
  parseGraderReply,
  type GraderRun,
} from '../../src/judge/index.js';
import { makeInput, tempDir, turn } from './helpers.js';

const C: AgentJudgeCriterion[] = [
  { id: 'c1', text: 'uses the brand orange' },
  { id: 'c2', text: 'uses Poppins for headings' },
];
const good = '{"results":[{"id":"c1","passed":true,"evidence":"theme.json has #d97757"},{"id":"c2","passed":false,"evidence":"heading font is Arial"}]}';

describe('parseGraderReply', () => {
  it('reads a bare, a fenced and a surrounded answer alike', () => {
    for (const reply of [good, `Here you go:\n\`\`\`json\n${good}\n\`\`\`\nDone.`, `I checked the files. ${good} That is all.`, `Note {x} first. ${good}`]) {
      const r = parseGraderReply(reply, C);
      expect(r.ok, reply).toBe(true);
      if (!r.ok) continue;
      expect(r.results.get('c1')).toEqual({ passed: true, evidence: 'theme.json has #d97757' });
      expect(r.results.get('c2')).toEqual({ passed: false, evidence: 'heading font is Arial' });
    }
  });

  it('finds the answer after an unbalanced brace in the prose', () => {
    expect(findResultsJson(`the set {a, b is open ${good}`)).toBeDefined();
    expect(findResultsJson('{"other": 1} and {"results": []}')).toEqual({ results: [] });
  });

  it('names exactly what is wrong: malformed, missing, unknown, duplicate, non-boolean, empty evidence', () => {
    const bad = (reply: string) => {
      const r = parseGraderReply(reply, C);
      expect(r.ok).toBe(false);
      return r.ok ? [] : r.problems;
    };
    expect(bad('I think it all looks fine!')[0]).toMatch(/no JSON object with a `results` list/);
    expect(bad('{"results": {"c1": true}}')).toEqual(['`results` is not a list']);
    expect(bad('{"results":[{"id":"c1","passed":true,"evidence":"ok"}]}')).toEqual(['no result for criterion `c2`']);
    expect(bad('{"results":[{"id":"c1","passed":true,"evidence":"ok"},{"id":"c2","passed":true,"evidence":"ok"},{"id":"c9","passed":true,"evidence":"x"}]}')).toEqual([
      'unknown criterion id `c9` (the ids are `c1`, `c2`)',
    ]);
    expect(bad('{"results":[{"id":"c1","passed":true,"evidence":"ok"},{"id":"c1","passed":false,"evidence":"no"},{"id":"c2","passed":true,"evidence":"ok"}]}')).toEqual([
      'criterion `c1` is answered more than once',
    ]);
    expect(bad('{"results":[{"id":"c1","passed":"yes","evidence":"ok"},{"id":"c2","passed":true,"evidence":"  "}]}')).toEqual([
      '`passed` of `c1` is `yes`, not true or false',
      '`evidence` of `c2` is empty (say what you saw: a file, a line, a message)',
    ]);
    expect(bad('{"results":[{"passed":true,"evidence":"ok"},{"id":"c2","passed":true}]}')).toEqual([
      'result 1 has no `id` (a criterion id such as `c1`)',
      '`evidence` of `c2` is missing (say what you saw: a file, a line, a message)',
      'no result for criterion `c1`',
    ]);
  });

  it('stays linear on a long reply full of braces', () => {
    const reply = '{'.repeat(200_000) + good;
    const t = performance.now();
    expect(parseGraderReply(reply, C).ok).toBe(true);
    expect(performance.now() - t).toBeLessThan(5000);
  });
});

describe('the grader prompts', () => {
  it('lists the criteria with their ids, the materials and the exact answer', () => {
    const p = graderPrompt({ criteria: C, contextDir: '.skill-up/judge', materials: [{ path: '.skill-up/judge/final_message.md', what: "the agent's final message" }], finalMessage: 'Wrote theme.json' });
    expect(p.startsWith(GRADER_PROMPT_MARKER)).toBe(true);
    expect(p).toContain('- c1: uses the brand orange\n- c2: uses Poppins for headings');
    expect(p).toContain('`.skill-up/judge/final_message.md`');
    expect(p).toContain('{"results":[{"id":"c1","passed":true,"evidence":"…"}]}');
    expect(p).toContain('<<<\nWrote theme.json\n>>>');
  });

  it('a correction names the problems; without resume it carries the prompt and the previous answer', () => {
    const resumed = correctionPrompt({ criteria: C, problems: ['no result for criterion `c2`'] });
    expect(resumed.startsWith(`${GRADER_PROMPT_MARKER}: your previous answer could not be used:\n- no result for criterion \`c2\``)).toBe(true);
    expect(resumed).toContain('- c2: uses Poppins for headings');
    const fresh = correctionPrompt({ criteria: C, problems: ['x'], original: 'ORIGINAL PROMPT', previousReply: 'junk answer' });
    expect(fresh.startsWith('ORIGINAL PROMPT')).toBe(true);
    expect(fresh).toContain('Your previous answer was:\n<<<\njunk answer\n>>>');
  });
});

const run = (...verdicts: boolean[]): GraderRun => ({ ok: true, results: new Map(verdicts.map((p, i) => [`c${i + 1}`, { passed: p, evidence: `run says ${p}` }])) });

describe('majority over repeats, agreement and threshold', () => {
  it('takes the majority per criterion; a tie is not passed; agreement is the mean share agreeing', () => {
    const r = combineRuns([run(true, false), run(true, true), run(false, true)], C);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.verdicts.map((v) => v.passed)).toEqual([true, true]);
    expect(r.agreement).toBeCloseTo(2 / 3);
    const tie = combineRuns([run(true, true), run(false, true)], C);
    expect(tie.ok && tie.verdicts.map((v) => v.passed)).toEqual([false, true]);
    expect(tie.ok && tie.agreement).toBeCloseTo(0.75);
  });

  it('uses the valid runs when more than half are valid, else errs with the reasons', () => {
    const err: GraderRun = { ok: false, reason: 'engine error: boom' };
    const ok = combineRuns([run(true, true), err, run(true, false)], C);
    expect(ok.ok && ok.valid).toBe(2);
    expect(ok.ok && ok.verdicts.map((v) => v.passed)).toEqual([true, false]);
    const bad = combineRuns([run(true, true), err], C);
    expect(bad).toEqual({ ok: false, reason: 'only 1 of 2 grader runs gave a usable answer (more than half must): engine error: boom' });
    expect(combineRuns([err], C)).toEqual({ ok: false, reason: 'engine error: boom' });
  });

  it('passes at passed/total ≥ threshold', () => {
    expect(meetsThreshold(7, 10, 0.7)).toBe(true);
    expect(meetsThreshold(2, 3, 0.7)).toBe(false);
    expect(meetsThreshold(0, 0, 0)).toBe(false);
    const v = agentJudgeVerdict(combineRuns([run(true, false)], C), 0.5);
    expect(v.status).toBe('pass');
    expect(v.assertions).toEqual([
      { text: 'c1: uses the brand orange', passed: true, evidence: 'run says true' },
      { text: 'c2: uses Poppins for headings', passed: false, evidence: 'run says false' },
    ]);
    expect(agentJudgeVerdict(combineRuns([run(true, false)], C), 0.7)).toMatchObject({ status: 'fail', reason: '1 of 2 criteria passed (50%), below pass_threshold 0.7' });
  });

  it('majority voting lowers the error rate of a noisy grader (seeded simulation)', () => {
    // A grader right with probability 0.7 per criterion; the truth is `passed` for all 5.
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const crit = [1, 2, 3, 4, 5].map((i) => ({ id: `c${i}`, text: `t${i}` }));
    const noisy = (): GraderRun => ({ ok: true, results: new Map(crit.map((c) => [c.id, { passed: rand() < 0.7, evidence: 'e' }])) });
    const wrong = (repeats: number) => {
      let bad = 0;
      for (let i = 0; i < 2000; i++) {
        const c = combineRuns(Array.from({ length: repeats }, noisy), crit);
        if (c.ok) bad += c.verdicts.filter((v) => !v.passed).length;
      }
      return bad / (2000 * crit.length);
    };
    const one = wrong(1);
    const five = wrong(5);
    expect(one).toBeGreaterThan(0.27);
    expect(one).toBeLessThan(0.33);
    // Binomial: P(at most 2 of 5 right at 0.7) = 0.163.
    expect(five).toBeGreaterThan(0.13);
    expect(five).toBeLessThan(0.19);
  });
});

describe('bounded context materials', () => {
  it('cuts a text at max bytes with a note, at a character boundary', () => {
    expect(boundText('short', 100)).toEqual({ text: 'short', bytes: 5, originalBytes: 5, truncated: false });
    const b = boundText('é'.repeat(5000), 1024);
    expect(b.truncated).toBe(true);
    expect(b.bytes).toBeLessThanOrEqual(1024);
    expect(b.text).toContain('[skill-up: cut here, 10000 bytes in all]');
    expect(b.text).not.toContain('\uFFFD');
  });

  it('keeps the last N turns and fits the transcript in max bytes', () => {
    const turns = [1, 2, 3].map((i) => turn(i, `answer ${i} ${'x'.repeat(20_000)}`, [{ name: 'Read', input: { file_path: 'a' }, output: 'y'.repeat(20_000) }]));
    const t = boundTranscript({ engine: 'claude_code', turns }, { maxBytes: 8192, maxTurns: 2 });
    expect(t.truncated).toBe(true);
    expect(t.bytes).toBeLessThanOrEqual(8192);
    const doc = JSON.parse(t.text);
    expect(doc.turns.map((x: { turn: number }) => x.turn)).toEqual([2, 3]);
    expect(doc.turns_left_out).toBe(1);
    expect(doc.strings_cut_at).toBeGreaterThan(0);
  });

  it('lists generated files within max bytes', () => {
    const many = Array.from({ length: 5000 }, (_, i) => `file-${i}.txt`);
    const b = boundChanges({ added: many, modified: ['a'], deleted: [], truncated: false }, 2048);
    expect(b.bytes).toBeLessThanOrEqual(2048);
    const doc = JSON.parse(b.text);
    expect(doc.truncated).toBe(true);
    expect(doc.left_out).toBeGreaterThan(4000);
  });
});

describe('gradeJob with an agent_judge', () => {
  const spec = (over: Partial<AgentJudgeSpec> = {}): AgentJudgeSpec & { id: string } => ({
    id: 'grader',
    type: 'agent_judge',
    criteria: C,
    passThreshold: 0.5,
    timeoutSeconds: 0,
    repeats: 1,
    skills: [],
    context: { profile: 'standard', finalMessage: true, transcript: true, workspaceDiff: true, generatedFiles: true, skillSource: true, limits: { maxBytes: 65536 }, attachments: [] },
    ...over,
  });
  const rules: JudgeSpec = { id: 'rules', type: 'rule_based', success: [{ outputContains: { all: ['theme'] } }], failure: [] };

  it('an agent_judge that passes its threshold with a failed criterion passes the job; its spend is reported apart', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const input = makeInput({ workspace: dir, finalMessage: 'wrote theme.json', judges: [rules, spec()] });
      const usage = { input: 100, output: 20, cacheRead: 0, cacheWrite: 0 };
      const g = await gradeJob(input, {
        agentJudge: async (s) => ({ ...agentJudgeVerdict(combineRuns([run(true, false)], s.criteria), s.passThreshold), usage, spend: { usage, durationMs: 1500, runs: 1 } }),
      });
      expect(g.status).toBe('pass');
      expect(g.assertions.map((a) => [a.text, a.passed])).toEqual([
        ['[rules] output_contains {all: ["theme"]}', true],
        ['[grader] c1: uses the brand orange', true],
        ['[grader] c2: uses Poppins for headings', false],
      ]);
      expect(g.judge).toEqual({ usage, durationMs: 1500, runs: 1 });
    } finally {
      cleanup();
    }
  });

  it('below the threshold the job fails; a rule judge with a failed assertion still fails it; a grader error is an error', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const fail = await gradeJob(makeInput({ workspace: dir, finalMessage: 'wrote theme.json', judges: [rules, spec({ passThreshold: 1 })] }), {
        agentJudge: async (s) => agentJudgeVerdict(combineRuns([run(true, false)], s.criteria), s.passThreshold),
      });
      expect(fail.status).toBe('fail');
      expect(fail.reason).toBe('judge grader failed: 1 of 2 criteria passed (50%), below pass_threshold 1');
      const ruleFail = await gradeJob(makeInput({ workspace: dir, finalMessage: 'nothing', judges: [rules, spec()] }), {
        agentJudge: async (s) => agentJudgeVerdict(combineRuns([run(true, true)], s.criteria), s.passThreshold),
      });
      expect(ruleFail.status).toBe('fail');
      expect(ruleFail.reason).toMatch(/^judge rules failed/);
      const err = await gradeJob(makeInput({ workspace: dir, finalMessage: 'wrote theme.json', judges: [spec(), rules] }), {
        agentJudge: async () => ({ status: 'error', assertions: [], reason: 'the grader\'s engine `codex` is not available: not installed' }),
      });
      expect(err).toMatchObject({ status: 'error', reason: 'the grader\'s engine `codex` is not available: not installed' });
    } finally {
      cleanup();
    }
  });
});
