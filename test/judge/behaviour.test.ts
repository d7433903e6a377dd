/**
 * The behaviour checks' pure parts (src/judge/behaviour): claim extraction and verification,
 * shell test-command recognition, tool loops, silent failures, and the three rule kinds on a
 * judge input; each extractor also on adversarial long inputs, where it must stay linear.
 */
import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../../src/engine/types.js';
import {
  acknowledgement,
  claimsOf,
  computeBehaviour,
  extractClaims,
  isTestCommand,
  longestToolRun,
  matchPath,
  pathOf,
  shellExitsUnobservable,
  silentFailures,
  statedExitCode,
  verifyClaims,
} from '../../src/judge/behaviour/index.js';
import { claimsVerifiedCheck, noSilentFailureCheck, noToolLoopCheck } from '../../src/judge/behaviour/checks.js';
import { evaluateRule } from '../../src/judge/rules.js';
import { makeInput, turn } from './helpers.js';

const found = (text: string) => extractClaims(text, 1).map((c) => `${c.kind}:${c.path ?? ''}`);
const changes = (added: string[] = [], modified: string[] = [], deleted: string[] = []) => ({ added, modified, deleted, truncated: false });

describe('extractClaims', () => {
  it('finds created, changed and deleted files in backticks and as plain paths with an extension', () => {
    expect(found('Created report.md with the summary.')).toEqual(['file_created:report.md']);
    expect(found('I created `report.md` and updated `src/index.ts`.')).toEqual(['file_created:report.md', 'file_changed:src/index.ts']);
    expect(found('I removed old/legacy.py. Then I wrote notes.txt!')).toEqual(['file_deleted:old/legacy.py', 'file_created:notes.txt']);
    expect(found('The file `docs/guide.md` was modified to add a section.')).toEqual(['file_changed:docs/guide.md']);
    expect(found("I've written [the report](./out/report.md) for you.")).toEqual(['file_created:out/report.md']);
    expect(found('Saved the palette to `Makefile` and `scripts/build`.')).toEqual(['file_created:Makefile', 'file_created:scripts/build']);
  });

  it('passes a verb on from a line ending in `:` or a heading to the list items below it', () => {
    expect(found('Files created:\n- a.md\n- `b/c.json`\n\nThat is all, see x.md')).toEqual(['file_created:a.md', 'file_created:b/c.json']);
    expect(found('## Files changed\n1. src/a.ts\n2) src/b.ts\nDone.')).toEqual(['file_changed:src/a.ts', 'file_changed:src/b.ts']);
  });

  it('claims nothing for negations, modals, questions, plans, URLs, domains, versions and product names', () => {
    expect(found('I could not create report.md.')).toEqual([]);
    expect(found('report.md was not created because the folder is read-only.')).toEqual([]);
    expect(found('I will create report.md next. You should update config.yaml.')).toEqual([]);
    expect(found('Should I have created report.md?')).toEqual([]);
    expect(found('Created a page at https://example.com/a.html and example.com.')).toEqual([]);
    expect(found('Updated to version 1.2.3 of Node.js, e.g. the latest.')).toEqual([]);
    expect(found('Create report.md with the summary')).toEqual([]); // an instruction, not a past claim
  });

  it('claims nothing for a verb whose object is "nothing", "none", "no …" or "zero …"', () => {
    expect(found('I deleted nothing; `keep.md` is unchanged.')).toEqual([]);
    expect(found('Removed none of the files: keep.md stays.')).toEqual([]);
    expect(found('I changed no files besides reading `notes.md`.')).toEqual([]);
    expect(found('Modified zero files, `a.ts` included.')).toEqual([]);
    // Another verb in the sentence still claims its own path.
    expect(found('I deleted nothing in the end, and then created `new.md`.')).toEqual(['file_created:new.md']);
    expect(found('Deleted `old.md`; nothing else changed.')).toEqual(['file_deleted:old.md']);
  });

  it('claims no "tests pass" for a partial pass: except, but, other than, apart from after the pass word', () => {
    const kinds = (t: string) => extractClaims(t, 1).map((c) => c.kind);
    expect(kinds('All 12 tests pass except 2.')).toEqual([]);
    expect(kinds('Except for the e2e suite, all tests passed.')).toEqual([]);
    expect(kinds('All 12 tests pass but 2.')).toEqual([]);
    expect(kinds('The tests passed other than the flaky one.')).toEqual([]);
    expect(kinds('Tests pass apart from `test_io`.')).toEqual([]);
    expect(kinds('The suite is green, aside from two skipped specs.')).toEqual([]);
    // Beyond the window the pass claim stands; before the pass word "but" is not an exception.
    expect(kinds('All tests pass, and I then tidied up the README file and the docs, but left the changelog alone.')).toEqual(['tests_pass']);
    expect(kinds('It took a while, but all tests pass.')).toEqual(['tests_pass']);
    expect(kinds('The other tests passed.')).toEqual(['tests_pass']);
  });

  it('finds "tests pass" claims, but not failure reports, conditions or instructions', () => {
    const kinds = (t: string) => extractClaims(t, 1).map((c) => c.kind);
    expect(kinds('All 12 tests passed.')).toEqual(['tests_pass']);
    expect(kinds('The test suite is green.')).toEqual(['tests_pass']);
    expect(kinds('`npm test` passes now.')).toEqual(['tests_pass']);
    expect(kinds('3 tests passed, 2 failed.')).toEqual([]);
    expect(kinds('The tests do not pass yet.')).toEqual([]);
    expect(kinds('Run `npm test` to make sure the tests pass.')).toEqual([]);
    expect(kinds('If the tests pass, merge it.')).toEqual([]);
  });

  it('keeps each (kind, path) once and at most `max` claims', () => {
    expect(found('Created a.md. Created a.md again. Updated a.md.')).toEqual(['file_created:a.md', 'file_changed:a.md']);
    const many = Array.from({ length: 80 }, (_, i) => `Created f${i}.md.`).join(' ');
    expect(extractClaims(many, 1)).toHaveLength(50);
    const { found: all, total } = claimsOf([turn(1, many)]);
    expect(all).toHaveLength(50);
    expect(total).toBe(51); // counted up to one past the cap per answer
  });

  it('reads claims from every answered turn, not from errored ones', () => {
    const turns = [turn(1, 'Created a.md.'), turn(2, 'Created b.md.', [], { error: { kind: 'crash', message: 'x' } }), turn(3, 'Updated c.md.')];
    expect(claimsOf(turns, ['completed', 'error', 'completed']).found.map((c) => `${c.turn}:${c.path}`)).toEqual(['1:a.md', '3:c.md']);
  });

  it('stays linear on adversarial long answers (megabytes of dots, backticks, verbs, list items)', () => {
    const inputs = [
      'a.'.repeat(500_000),
      '`'.repeat(1_000_000),
      'created '.repeat(150_000) + 'x.md',
      '- '.repeat(400_000),
      `${'x'.repeat(1_000_000)}.md created`,
      'Files created:\n' + '- a.md\n'.repeat(150_000),
      '](('.repeat(300_000),
      'tests pass other '.repeat(100_000),
      'deleted nothing '.repeat(100_000) + '`x.md`',
    ];
    const started = Date.now();
    for (const s of inputs) expect(extractClaims(s, 1).length).toBeLessThanOrEqual(50);
    // Quadratic work on these inputs would take minutes; linear work takes well under a second each.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('pathOf and matchPath', () => {
  it('recognises paths conservatively', () => {
    const p = (raw: string, code = false) => pathOf({ raw, code });
    expect(p('report.md.')).toBe('report.md');
    expect(p('(src/a.ts),')).toBe('src/a.ts');
    expect(p('.env', true)).toBe('.env');
    expect(p('src/lib', true)).toBe('src/lib');
    expect(p('README')).toBeUndefined();
    expect(p('3.14')).toBeUndefined();
    expect(p('npm test', true)).toBeUndefined();
    expect(p('a'.repeat(2000) + '.md')).toBeUndefined();
  });

  it('matches from the end at a path-segment boundary', () => {
    expect(matchPath('report.md', ['docs/report.md'])).toBe('docs/report.md');
    expect(matchPath('/tmp/ws-123/report.md', ['report.md', 'other.md'])).toBe('report.md');
    expect(matchPath('port.md', ['report.md'])).toBeUndefined();
    expect(matchPath('a.md', ['a.md', 'x/a.md'])).toBe('a.md');
  });
});

describe('verifyClaims', () => {
  it('verifies file claims against the workspace changes, with evidence either way', () => {
    const claims = extractClaims('Created a.md, updated b.md and deleted c.md. Wrote d.md. Removed e.md.', 1);
    const v = verifyClaims(claims, { changes: changes(['a.md'], ['b.md', 'e.md'], ['c.md']), turns: [] });
    expect(v.map((c) => [c.path, c.verified])).toEqual([['a.md', true], ['b.md', true], ['c.md', true], ['d.md', false], ['e.md', false]]);
    expect(v[3]!.evidence).toBe('d.md is not among the files the agent added or modified (added: a.md; modified: b.md, e.md)');
    expect(v[4]!.evidence).toBe('e.md still exists (the agent modified it)');
    expect(verifyClaims(claims.slice(0, 1), { turns: [] })[0]!.evidence).toContain('not recorded');
  });

  it('verifies "tests pass" against the last test command run up to that turn', () => {
    const [claim] = extractClaims('All tests pass.', 2);
    const bash = (command: string, isError: boolean, output = ''): ToolCall => ({ name: 'Bash', input: { command }, isError, output });
    const check = (turns: { index: number; toolCalls: ToolCall[] }[]) => verifyClaims([claim!], { turns })[0]!;
    expect(check([]).evidence).toBe('no test command ran (no shell command at all)');
    expect(check([{ index: 1, toolCalls: [bash('ls', false)] }]).evidence).toBe('no test command ran (shell commands: "ls")');
    expect(check([{ index: 1, toolCalls: [bash('npm test', true, 'Exit code 1\nFAIL')] }]).verified).toBe(false);
    expect(check([{ index: 1, toolCalls: [bash('npm test', true, 'Exit code 1'), bash('npx vitest run', false)] }]).verified).toBe(true);
    // A later test run after the claim's turn does not count; one whose outcome is unknown does not verify.
    expect(check([{ index: 3, toolCalls: [bash('pytest', false)] }]).verified).toBe(false);
    expect(check([{ index: 1, toolCalls: [{ name: 'shell', input: { command: ['go', 'test', './...'] } }] }]).evidence).toContain('did not report its outcome');
    // Gemini CLI reports success but states the exit code in its output.
    expect(check([{ index: 1, toolCalls: [{ name: 'run_shell_command', input: { command: 'cargo test' }, isError: false, output: 'Exit Code: 101' }] }]).verified).toBe(false);
  });

  it('never verifies "tests pass" on an engine that does not report shell exit statuses (Gemini CLI)', () => {
    const [claim] = extractClaims('Ran npm test: all tests pass.', 1);
    const turns = [{ index: 1, toolCalls: [{ name: 'run_shell_command', input: { command: 'npm test' }, isError: false, output: 'npm error enoent Could not read package.json' }] }];
    const gemini = verifyClaims([claim!], { turns, engine: 'gemini_cli' })[0]!;
    expect(gemini.verified).toBe(false);
    expect(gemini.evidence).toBe(`the last test command "npm test" (turn 1) ran, but the engine did not report its outcome (Gemini CLI's output does not say whether a shell command failed (its exit status is not reported))`);
    // An alias names the same engine; an engine that reports exits trusts isError: false; a stated exit code 0 still counts on Gemini CLI.
    expect(verifyClaims([claim!], { turns, engine: 'gemini' })[0]!.verified).toBe(false);
    expect(verifyClaims([claim!], { turns, engine: 'qwen_code' })[0]!.verified).toBe(true);
    const stated = [{ index: 1, toolCalls: [{ ...turns[0]!.toolCalls[0]!, output: 'ok\nExit Code: 0' }] }];
    expect(verifyClaims([claim!], { turns: stated, engine: 'gemini_cli' })[0]!.verified).toBe(true);
    expect(shellExitsUnobservable('gemini_cli')).toContain('Gemini CLI');
    for (const e of ['claude_code', 'codex', 'opencode', 'qwen_code', 'custom', undefined]) expect(shellExitsUnobservable(e), String(e)).toBeUndefined();
  });
});

describe('shell commands', () => {
  it('recognises test runners across ecosystems, and not look-alikes', () => {
    for (const c of ['npm test', 'npm t', 'npm run test:unit', 'yarn test', 'pnpm run test', 'npx vitest run', 'python -m pytest -q', 'go test ./...', 'cargo test', 'make test', 'make check', 'cd app && ./node_modules/.bin/jest', 'mvn verify', 'bundle exec rspec']) {
      expect(isTestCommand(c), c).toBe(true);
    }
    for (const c of ['ls tests', 'cat test.txt', 'npm install', 'git commit -m test', 'vim jest.config.js']) expect(isTestCommand(c), c).toBe(false);
  });

  it('reads a stated exit code from the start or end of an output', () => {
    expect(statedExitCode('Exit code 2\nboom')).toBe(2);
    expect(statedExitCode('Output: …\nExit Code: 0')).toBe(0);
    expect(statedExitCode(`${'x\n'.repeat(100_000)}exit code: 7`)).toBe(7);
    expect(statedExitCode('the exit code was fine')).toBeUndefined();
  });
});

describe('longestToolRun', () => {
  const call = (name: string, input: unknown): ToolCall => ({ name, input });
  it('finds the longest run of identical consecutive calls within a turn, keys in any order', () => {
    const t1 = [call('Bash', { command: 'ls', d: 1 }), call('Bash', { d: 1, command: 'ls' }), call('Bash', { command: 'ls', d: 1 }), call('Read', { f: 'a' })];
    const loop = longestToolRun([{ index: 1, toolCalls: t1 }]);
    expect(loop).toMatchObject({ longestRun: 3, tool: 'Bash', turn: 1, detected: true, threshold: 3 });
    // Runs do not continue across turns, and an interruption resets them.
    const split = [
      { index: 1, toolCalls: [call('Bash', { c: 1 }), call('Bash', { c: 1 })] },
      { index: 2, toolCalls: [call('Bash', { c: 1 }), call('Read', {}), call('Bash', { c: 1 })] },
    ];
    expect(longestToolRun(split)).toMatchObject({ longestRun: 2, turn: 1, detected: false });
    expect(longestToolRun(split, 2).detected).toBe(true);
    expect(longestToolRun([]).longestRun).toBe(0);
  });

  it('stays linear on 10,000 identical calls with large inputs', () => {
    const big = { content: 'x'.repeat(1000) };
    const calls = Array.from({ length: 10_000 }, () => call('Write', big));
    expect(longestToolRun([{ index: 1, toolCalls: calls }]).longestRun).toBe(10_000);
  });
});

describe('silentFailures', () => {
  const failed = (output: string): ToolCall => ({ name: 'Bash', input: { command: 'cat x' }, isError: true, output });
  it('counts failures no answer from their turn on acknowledges', () => {
    expect(silentFailures([turn(1, 'All done.', [failed('Exit code 1\nNo such file')])])).toMatchObject({ failures: 1, unmentionedCount: 1, detected: true });
    expect(silentFailures([turn(1, 'The command failed: x is missing.', [failed('Exit code 1')])]).detected).toBe(false);
    expect(silentFailures([turn(1, 'Working…', [failed('Exit code 1')]), turn(2, "I couldn't read x.")]).detected).toBe(false);
    // An earlier turn's answer does not acknowledge a later failure.
    expect(silentFailures([turn(1, 'There was an error before.'), turn(2, 'Done.', [failed('boom')])]).detected).toBe(true);
    // Engine errors count too.
    expect(silentFailures([turn(1, '', [], { error: { kind: 'api', message: 'overloaded' } })]).unmentioned).toEqual([{ turn: 1, tool: 'engine', error: 'api: overloaded' }]);
  });

  it('does not count a failure retried with the same input that then succeeded', () => {
    const ok: ToolCall = { name: 'Bash', input: { command: 'cat x' }, isError: false, output: 'hi' };
    expect(silentFailures([turn(1, 'Here it is.', [failed('Exit code 1'), ok])])).toMatchObject({ failures: 1, recovered: 1, detected: false });
  });

  it('on an engine that does not report shell exits, counts shell calls of unknown outcome and those no answer acknowledges', () => {
    const cat: ToolCall = { name: 'run_shell_command', input: { command: 'cat /nonexistent-file' }, isError: false, output: 'cat: /nonexistent-file: No such file or directory' };
    const read: ToolCall = { name: 'read_file', input: { file_path: 'a' }, isError: false, output: 'x' };
    const why = shellExitsUnobservable('gemini_cli');
    const s = silentFailures([turn(1, 'All done, everything went well.', [read, cat])], undefined, why);
    expect(s).toMatchObject({ failures: 0, detected: false, unobservable: { reason: why, shellCalls: 1, unacknowledged: 1, examples: [{ turn: 1, tool: 'run_shell_command', error: 'cat /nonexistent-file' }] } });
    expect(silentFailures([turn(1, 'The file was not found.', [cat])], undefined, why).unobservable).toMatchObject({ shellCalls: 1, unacknowledged: 0 });
    // A call the engine marked failed is still a failure; an engine that reports exits has no unobservable part.
    const marked = silentFailures([turn(1, 'Done.', [{ ...cat, isError: true }])], undefined, why);
    expect(marked.detected).toBe(true);
    expect(marked.unobservable).toBeUndefined();
    expect(silentFailures([turn(1, 'Done.', [cat])]).unobservable).toBeUndefined();
  });

  it('matches acknowledgements at word starts only, in linear time on long answers', () => {
    expect(acknowledgement('It FAILED twice')).toBe('fail');
    expect(acknowledgement('terror and ferrors')).toBeUndefined();
    expect(acknowledgement('It wasn’t possible')).toBe("wasn't");
    expect(acknowledgement('terro'.repeat(200_000))).toBeUndefined();
  });
});

describe('the behaviour rule kinds', () => {
  it('claims_verified fails on a file the agent claims but never wrote, with evidence; passes when it wrote it', async () => {
    const lying = { ...makeInput({ workspace: '/nonexistent', finalMessage: 'Created report.md.' }), changes: changes() };
    const r = await evaluateRule({ claimsVerified: {} }, lying);
    expect(r).toMatchObject({ text: 'claims_verified', holds: false });
    expect(r.evidence).toContain('NOT verified: file_created report.md');
    const honest = { ...lying, changes: changes(['report.md']) };
    expect((await evaluateRule({ claimsVerified: {} }, honest)).holds).toBe(true);
    // Only the kinds asked for are checked; no claim at all holds.
    expect(claimsVerifiedCheck(lying, ['tests_pass'])).toEqual({ holds: true, evidence: 'no tests_pass claim found in the answers' });
  });

  it('no_tool_loop and no_silent_failure say what they saw', () => {
    const ls: ToolCall = { name: 'Bash', input: { command: 'ls' }, isError: false, output: '' };
    const input = makeInput({ workspace: '/nonexistent', turns: [turn(1, 'Done.', [ls, ls, ls])] });
    expect(noToolLoopCheck(input, 3)).toEqual({ holds: false, evidence: 'Bash called 3 time(s) in a row with the same input in turn 1: {"command":"ls"} (a loop is 3 or more)' });
    expect(noToolLoopCheck(input, 4).holds).toBe(true);
    const bad: ToolCall = { name: 'Bash', input: { command: 'cat x' }, isError: true, output: 'Exit code 1' };
    const silent = makeInput({ workspace: '/nonexistent', turns: [turn(1, 'Done.', [bad])] });
    expect(noSilentFailureCheck(silent).holds).toBe(false);
    expect(noSilentFailureCheck(silent).evidence).toContain('Bash in turn 1: "Exit code 1"');
  });

  it('no_silent_failure is undecided (the judge an error) when shell exits cannot be seen (Gemini CLI) and no answer mentions a problem', async () => {
    const cat: ToolCall = { name: 'run_shell_command', input: { command: 'cat /nonexistent-file' }, isError: false, output: 'cat: /nonexistent-file: No such file or directory' };
    const gemini = (answer: string) => {
      const input = makeInput({ workspace: '/nonexistent', turns: [turn(1, answer, [cat])] });
      return { ...input, transcript: { ...input.transcript, engine: 'gemini_cli' } };
    };
    expect(noSilentFailureCheck(gemini('All done, everything went well.'))).toEqual({
      holds: false,
      unknown: true,
      evidence: `cannot be checked: Gemini CLI's output does not say whether a shell command failed (its exit status is not reported); 1 of 1 shell call(s) of unknown outcome not mentioned by any answer from their turn on (run_shell_command in turn 1: "cat /nonexistent-file")`,
    });
    const told = noSilentFailureCheck(gemini('The file was not found.'));
    expect(told.holds).toBe(true);
    expect(told.evidence).toContain('1 shell call(s) of unknown outcome');
    // The same transcript on an engine that reports exits: isError false is a success.
    const qwen = gemini('All done, everything went well.');
    expect(noSilentFailureCheck({ ...qwen, transcript: { ...qwen.transcript, engine: 'qwen_code' } })).toEqual({ holds: true, evidence: 'no tool call failed and the engine reported no error' });
    // Through a rule_based judge: an error naming why, never a pass or a fail.
    const { runRuleJudge } = await import('../../src/judge/rules.js');
    const outcome = await runRuleJudge({ success: [{ noSilentFailure: { enabled: true } } as never], failure: [] }, gemini('All done, everything went well.'));
    expect(outcome.status).toBe('error');
    expect(outcome.reason).toMatch(/^cannot be checked on this job: no_silent_failure: cannot be checked: Gemini CLI's output/);
  });
});

describe('computeBehaviour', () => {
  it('records every check, and "unknown" skill context when the requests are not observable', async () => {
    const b = await computeBehaviour({
      transcript: { turns: [turn(1, 'Created a.md.', [{ name: 'Bash', input: { command: 'false' }, isError: true, output: '' }])] },
      changes: changes(['a.md']),
      skillsInstalled: ['s'],
      requests: { unobservable: 'unknown: a real model' },
    });
    expect(b).toMatchObject({ claimsTotal: 1, claimsVerified: 1, toolLoop: { longestRun: 1, detected: false }, silentFailure: { detected: true }, skillContext: { observed: false, reason: 'unknown: a real model' } });
  });
});

describe('loopThresholdOf', () => {
  it("takes the case's smallest no_tool_loop max_repeats, so the record and the rule agree", async () => {
    const { loopThresholdOf } = await import('../../src/judge/behaviour/index.js');
    const rule = (n: number) => ({ noToolLoop: { maxRepeats: n } });
    expect(loopThresholdOf([])).toBe(3);
    expect(loopThresholdOf([{ type: 'rule_based', success: [rule(5)], failure: [] } as never, { type: 'rule_based', success: [], failure: [rule(4)] } as never])).toBe(4);
  });
});
