/**
 * `run --resume`, the durable journal, `report` on a killed run and `--event-log`, end to end
 * through the built CLI. The agent appends its job folder to a log at every start, so the
 * tests count how often each job ran across a SIGKILL and the resume.
 */
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { runCli, writeSkill, type CliRun } from './helpers.js';

const ROOT = join(import.meta.dirname, '../..');
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, strict: true, allowUnionTypes: true });
ajv.addFormat('date-time', (s: string) => !Number.isNaN(Date.parse(s)));
const validateEvent = ajv.compile(JSON.parse(readFileSync(join(ROOT, 'schemas/events.schema.json'), 'utf8')));
const validateResult = new (Ajv2020 as unknown as typeof Ajv2020.default)({ allErrors: true, validateFormats: false }).compile(JSON.parse(readFileSync(join(ROOT, 'schemas/result.schema.json'), 'utf8')));

const CANARY = 'resume-canary-7c1e0b9a44';
const CASES = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];

/**
 * A suite of 6 cases × 2 trials run by an agent that logs each start to `starts.log`, sleeps,
 * and answers with the secret it was given; c1 trial 1 errors the first time (its stderr holds
 * the secret), c2 is graded by a named rule judge too.
 */
function suite(): { skill: string; root: string; starts: string } {
  const root = mkdtempSync(join(tmpdir(), 'su-resume-cli-'));
  const starts = join(root, 'starts.log');
  const skill = writeSkill(
    {
      'evals/agent.sh': [
        '#!/bin/sh',
        `echo "$1" >> ${JSON.stringify(starts)}`,
        'sleep 0.3',
        'case "$1" in',
        `  */c1/with_skill/run-1) if [ ! -e "$2/c1-flaked" ]; then : > "$2/c1-flaked"; echo "flaky, token $AGENT_TOKEN" >&2; exit 1; fi ;;`,
        'esac',
        'echo "ok (token $AGENT_TOKEN)"',
        '',
      ].join('\n'),
      'evals/eval.yaml': [
        'schema_version: v1alpha1',
        'engine:',
        '  name: logger',
        '  custom:',
        '    transport: local',
        '    response_format: text',
        '    env: { AGENT_TOKEN: "${SU_TEST_CANARY_TOKEN}" }',
        '    local: { command: ./evals/agent.sh, args: ["${output_dir}", "${SU_TEST_MARKERS}"] }',
        'cases:',
        '  files: [evals/cases/*.yaml]',
        '  parallelism: 2',
        'trials: 2',
        '',
      ].join('\n'),
      ...Object.fromEntries(CASES.map((c) => [`evals/cases/${c}.yaml`, 'input: { prompt: hi }\nexpect: { exit_code: 0 }\n'])),
      'evals/cases/c2.yaml': 'input: { prompt: hi }\nexpect: { exit_code: 0 }\njudges:\n  - id: says-ok\n    type: rule_based\n    success:\n      - output_contains: { all: ["ok"] }\n',
    },
    'resumable',
  );
  return { skill, root, starts };
}

const env = (markers: string) => ({ SU_TEST_CANARY_TOKEN: CANARY, SU_TEST_MARKERS: markers });
const jsonl = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
/** Starts per job id, from the agent's log of job folders. */
function startsPerJob(file: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const id = /iteration-\d+\/(.+)$/.exec(line)![1]!;
    out.set(id, (out.get(id) ?? 0) + 1);
  }
  return out;
}
function expectUsage(r: CliRun, what: RegExp): void {
  expect(r.code, r.stdout + r.stderr).toBe(2);
  expect(r.stderr).toMatch(what);
  expect(r.stderr).not.toContain('internal error');
  expect(r.stderr).not.toContain('job(s) of');
}

describe('run --resume after SIGKILL (built CLI)', () => {
  it('a killed run is reported from its journal, then resumed: no finished job runs again, result.json equals an uninterrupted run', async () => {
    const { skill, root, starts } = suite();
    const markers = join(root, 'markers');
    mkdirSync(markers);
    const out = join(root, 'out');
    const dir = join(out, 'iteration-1');
    const killedLog = join(root, 'killed-events.jsonl');

    // 1. Killed with SIGKILL once 4 of the 12 jobs have finished.
    let killed = false;
    const first = await runCli(['run', skill, '--output-dir', out, '--event-log', killedLog], {
      env: env(markers),
      onStderr: (text, child) => {
        if (!killed && text.includes('[4/12]')) {
          killed = true;
          child.kill('SIGKILL');
        }
      },
    });
    expect(killed, first.stderr).toBe(true);
    expect(first.code).toBeNull();
    expect(existsSync(join(dir, 'result.json'))).toBe(false);
    const journal = jsonl(join(dir, 'journal.jsonl'));
    expect(journal[0]).toMatchObject({ type: 'run', format: 1, jobs: 12, iteration: 1, evalFile: join(skill, 'evals/eval.yaml'), plan: { engines: ['custom'] } });
    expect(journal[0].suiteHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const recorded = journal.filter((l) => l.type === 'job').map((l) => l.result);
    expect(recorded.length).toBeGreaterThanOrEqual(4);
    expect(recorded.find((r) => r.id === 'c1/with_skill/run-1')?.status).toBe('error');
    const finishedBefore = recorded.filter((r) => r.status === 'pass').map((r) => r.id as string);
    expect(finishedBefore.length).toBeGreaterThanOrEqual(3);
    // The killed run's event log: every line whole and valid, no run_finished.
    const killedEvents = jsonl(killedLog);
    for (const e of killedEvents) expect(validateEvent(e), JSON.stringify(validateEvent.errors)).toBe(true);
    expect(killedEvents.some((e) => e.event === 'run_finished')).toBe(false);
    expect(killedEvents.filter((e) => e.event === 'case_completed').length).toBeGreaterThanOrEqual(4);

    // 2. A power loss mid-write: a torn last line (it claims a pass that never happened).
    appendFileSync(join(dir, 'journal.jsonl'), '{"type":"job","result":{"id":"c6/with_skill/run-2","status":"pass","caseId":"c6"');

    // 3. skill-up report rebuilds every report from the journal.
    const rep = await runCli(['report', dir]);
    expect(rep.code, rep.stderr).toBe(0);
    expect(rep.stderr).toMatch(/rebuilt from .*journal\.jsonl \(no result\.json\): the run did not finish; \d+ job\(s\) recorded, \d+ not run/);
    const rebuilt = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    expect(validateResult(rebuilt), JSON.stringify(validateResult.errors)).toBe(true);
    expect(rebuilt).toMatchObject({ interrupted: true, exit_code: 137, iteration: 1, suite_hash: journal[0].suiteHash, skill: { name: 'resumable' } });
    expect(rebuilt.jobs.map((j: { id: string }) => j.id).sort()).toEqual(recorded.map((r) => r.id).sort());
    expect(rebuilt.not_run).toBe(12 - recorded.length);
    for (const f of ['summary.md', 'report.xml', 'report.html']) expect(existsSync(join(dir, f)), f).toBe(true);
    expect(readFileSync(join(dir, 'summary.md'), 'utf8')).toContain('killed');

    // 4. Resume: only the errored and unfinished jobs run, into the same folder and journal.
    const beforeResume = startsPerJob(starts);
    const eventLog = join(root, 'events.jsonl');
    const resumed = await runCli(['run', '--resume', dir, '--event-log', eventLog], { env: env(markers) });
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
    expect(resumed.stderr).toMatch(new RegExp(`resuming .*: ${finishedBefore.length} of 12 job\\(s\\) finished and kept, ${12 - finishedBefore.length} to run \\(1 errored, ${11 - finishedBefore.length} unfinished\\); the torn last line of journal.jsonl was dropped`));
    const startsAfter = startsPerJob(starts);
    for (const id of finishedBefore) expect(startsAfter.get(id), `${id} ran again`).toBe(1);
    expect(startsAfter.get('c1/with_skill/run-1')).toBe(2);
    for (const c of CASES) for (const t of [1, 2]) expect(startsAfter.get(`${c}/with_skill/run-${t}`), `${c} run-${t}`).toBeGreaterThanOrEqual(1);
    const ranInResume = [...startsAfter].filter(([id, n]) => n > (beforeResume.get(id) ?? 0)).map(([id]) => id);
    expect(ranInResume.sort()).toEqual(CASES.flatMap((c) => [1, 2].map((t) => `${c}/with_skill/run-${t}`)).filter((id) => !finishedBefore.includes(id)).sort());

    // 5. result.json: the job set of an uninterrupted run of the same suite.
    const doc = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    expect(validateResult(doc), JSON.stringify(validateResult.errors)).toBe(true);
    expect(doc).toMatchObject({ interrupted: false, not_run: 0, exit_code: 0, started_at: journal[0].startedAt, totals: { jobs: 12, pass: 12 } });
    expect(doc.options.resumed).toMatchObject({ times: 1, kept_jobs: finishedBefore.length });
    expect(doc.options.argv).toEqual([skill, '--output-dir', out, '--event-log', killedLog]);
    const refMarkers = join(root, 'ref-markers');
    mkdirSync(refMarkers);
    writeFileSync(join(refMarkers, 'c1-flaked'), ''); // the reference run's c1 passes at once
    const ref = await runCli(['run', skill, '--output-dir', join(root, 'ref')], { env: env(refMarkers) });
    expect(ref.code, ref.stderr).toBe(0);
    const refDoc = JSON.parse(readFileSync(join(root, 'ref/iteration-1/result.json'), 'utf8'));
    const shape = (d: { jobs: { id: string; case_id: string; variant: string; trial: number; status: string }[] }) => d.jobs.map((j) => [j.id, j.case_id, j.variant, j.trial, j.status]);
    expect(shape(doc)).toEqual(shape(refDoc));
    const stats = (d: { summary: { variants: Record<string, unknown>[] } }) => d.summary.variants.map((v) => Object.fromEntries(Object.entries(v).filter(([k]) => !/duration|tokens|cost/.test(k))));
    expect(stats(doc)).toEqual(stats(refDoc));

    // 6. The journal: whole lines only, a resume line, the last result per job is the one reported.
    const after = readFileSync(join(dir, 'journal.jsonl'), 'utf8');
    expect(after.endsWith('\n')).toBe(true);
    const lines = after.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === 'resume')).toHaveLength(1);
    expect(lines.filter((l) => l.type === 'job' && l.result.id === 'c1/with_skill/run-1').map((l) => l.result.status)).toEqual(['error', 'pass']);

    // 7. The resume's event log: schema-valid, the kept jobs counted, only the rerun jobs started.
    const events = jsonl(eventLog);
    for (const e of events) expect(validateEvent(e), `${e.event}: ${JSON.stringify(validateEvent.errors)}`).toBe(true);
    expect(events[0].payload).toMatchObject({ reused_tasks: finishedBefore.length, resumed_run_id: journal[0].runId, task_total: 12 });
    expect(events.filter((e) => e.event === 'case_started').map((e) => e.payload.task_id).sort()).toEqual(ranInResume.sort());
    expect(events.at(-1)).toMatchObject({ event: 'run_finished', last_event: true, payload: { status: 'COMPLETED', completed_tasks: 12, passed: 12, exit_code: 0 } });

    // No secret anywhere skill-up wrote (the agent printed it in its answer and its error).
    for (const f of [join(dir, 'journal.jsonl'), join(dir, 'result.json'), eventLog, killedLog]) expect(readFileSync(f, 'utf8'), f).not.toContain(CANARY);
    expect(readFileSync(join(dir, 'journal.jsonl'), 'utf8')).toContain('[REDACTED]');
  });

  it('Ctrl-C mid-turn: the jobs it stopped are `skipped` with reason `run interrupted`, and --resume runs exactly those again (found by the newcomer check)', async () => {
    const { skill, root, starts } = suite();
    const markers = join(root, 'markers');
    mkdirSync(markers);
    writeFileSync(join(markers, 'c1-flaked'), ''); // every job passes when it runs to its end
    const out = join(root, 'out');
    const dir = join(out, 'iteration-1');
    let interrupted = false;
    const first = await runCli(['run', skill, '--output-dir', out], {
      env: env(markers),
      onStderr: (text, child) => {
        // Two jobs finished: the next two are in their agent's `sleep 0.3`.
        if (!interrupted && text.includes('[2/12]')) {
          interrupted = true;
          setTimeout(() => child.kill('SIGINT'), 100);
        }
      },
    });
    expect(interrupted, first.stderr).toBe(true);
    expect(first.code, first.stderr).toBe(130);
    const recorded = jsonl(join(dir, 'journal.jsonl')).filter((l) => l.type === 'job').map((l) => l.result as { id: string; status: string; reason?: string });
    const stopped = recorded.filter((r) => r.status === 'skipped');
    expect(stopped.length, JSON.stringify(recorded)).toBeGreaterThanOrEqual(1);
    for (const r of stopped) expect(r.reason, r.id).toBe('run interrupted');
    const passed = recorded.filter((r) => r.status === 'pass').map((r) => r.id);
    const resumed = await runCli(['run', '--resume', dir], { env: env(markers) });
    expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
    const doc = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    expect(doc).toMatchObject({ interrupted: false, not_run: 0, totals: { jobs: 12, pass: 12 } });
    const startsAfter = startsPerJob(starts);
    // Each stopped job started once before the interrupt and once in the resume; a passed one only once.
    for (const r of stopped) expect(startsAfter.get(r.id), r.id).toBe(2);
    for (const id of passed) expect(startsAfter.get(id), id).toBe(1);
  });

  it('refuses a changed suite (naming the files) unless --force, then runs only the new jobs; refuses a changed plan', async () => {
    const { skill, root, starts } = suite();
    const markers = join(root, 'markers');
    mkdirSync(markers);
    writeFileSync(join(markers, 'c1-flaked'), '');
    const out = join(root, 'out');
    const dir = join(out, 'iteration-1');
    const done = await runCli(['run', skill, '--output-dir', out, '--trials', '1'], { env: env(markers) });
    expect(done.code, done.stderr).toBe(0);
    writeFileSync(join(skill, 'evals/cases/c3.yaml'), 'input: { prompt: changed }\nexpect: { exit_code: 0 }\n');
    writeFileSync(join(skill, 'evals/cases/c7.yaml'), 'input: { prompt: new }\nexpect: { exit_code: 0 }\n');
    const refused = await runCli(['run', '--resume', dir], { env: env(markers) });
    expectUsage(refused, /the suite changed since that run started \(changed: evals\/cases\/c3\.yaml; added: evals\/cases\/c7\.yaml\).*--force/);
    // The plan is the journal's: another --trials is refused, the same one accepted.
    expectUsage(await runCli(['run', skill, '--resume', dir, '--trials', '2', '--force']), /--trials 2 \(the journal's run: --trials 1\)/);
    expectUsage(await runCli(['run', '--resume', dir, '--iteration', '1']), /--resume and --iteration conflict/);
    expectUsage(await runCli(['run', skill, '--force']), /--force only applies to --resume/);
    expectUsage(await runCli(['run', '--resume', join(root, 'nope')]), /--resume .*nope: not found/);
    expectUsage(await runCli(['run', '--resume', out]), /has no journal\.jsonl/);
    const before = startsPerJob(starts);
    const forced = await runCli(['run', skill, '--resume', dir, '--trials', '1', '--force', '--parallelism', '1'], { env: env(markers) });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('warning: --force: resuming although the suite changed (changed: evals/cases/c3.yaml; added: evals/cases/c7.yaml)');
    const after = startsPerJob(starts);
    // Only the new case ran: the finished jobs are kept (that is what --force allows).
    expect([...after].filter(([id, n]) => n > (before.get(id) ?? 0)).map(([id]) => id)).toEqual(['c7/with_skill/run-1']);
    const doc = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    expect(doc.jobs.map((j: { id: string }) => j.id)).toEqual([...CASES, 'c7'].map((c) => `${c}/with_skill/run-1`));
    expect(doc.not_run).toBe(0);
    // The next resume compares with the suite it was forced onto: nothing changed, nothing runs.
    const again = await runCli(['run', '--resume', dir], { env: env(markers) });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('7 of 7 job(s) finished and kept, 0 to run');
  });
});

describe('run --event-log (built CLI)', () => {
  it('logs every job, turn and judge in order, schema-valid, without secrets; a bad path is exit 2 before anything runs', async () => {
    const { skill, root, starts } = suite();
    const markers = join(root, 'markers');
    mkdirSync(markers);
    const out = join(root, 'out');
    expectUsage(await runCli(['run', skill, '--output-dir', out, '--event-log', join(root, 'no/such/dir/ev.jsonl')], { env: env(markers) }), /--event-log .*: its folder .* does not exist/);
    expectUsage(await runCli(['run', skill, '--output-dir', out, '--event-log', root], { env: env(markers) }), /is a folder; give a file path/);
    expectUsage(await runCli(['run', skill, '--output-dir', out, '--event-log', '-'], { env: env(markers) }), /does not write to stdout/);
    expectUsage(await runCli(['run', skill, '--output-dir', out, '--iteration', '1', '--event-log', join(out, 'iteration-1/ev.jsonl')], { env: env(markers) }), /which --iteration 1 empties/);
    expect(existsSync(starts)).toBe(false);
    expect(existsSync(out)).toBe(false);

    const file = join(root, 'events.jsonl');
    const r = await runCli(['run', skill, '--output-dir', out, '--event-log', file, '--trials', '1'], { env: env(markers) });
    expect(r.code, r.stderr).toBe(3); // c1 errors once: above the default --max-error-rate 0
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(CANARY);
    expect(text).toContain('flaky, token [REDACTED]');
    const events = jsonl(file);
    for (const e of events) expect(validateEvent(e), `${e.event}: ${JSON.stringify(validateEvent.errors)}`).toBe(true);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i + 1));
    expect(new Set(events.map((e) => e.invocation_id)).size).toBe(1);
    expect(events[0]).toMatchObject({ event: 'run_started', payload: { engine: 'logger', skill_name: 'resumable', task_total: 6, iterations_total: 1 } });
    expect(events.at(-1)).toMatchObject({ event: 'run_finished', last_event: true, payload: { status: 'COMPLETED', completed_tasks: 6, passed: 5, errored: 1, exit_code: 3 } });
    const journal = jsonl(join(out, 'iteration-1/journal.jsonl'));
    expect(events[0].invocation_id).toBe(journal[0].runId);
    for (const c of CASES) {
      const id = `${c}/with_skill/run-1`;
      const mine = events.filter((e) => e.payload.job_id === id || e.payload.task_id === id);
      const judge = c === 'c2' ? ['judge_started', 'judge_finished'] : [];
      expect(mine.map((e) => e.event), id).toEqual(['case_started', 'job_started', 'turn_started', 'turn_finished', ...judge, 'job_finished', 'case_completed']);
      const finished = mine.find((e) => e.event === 'job_finished')!;
      expect(finished.payload).toMatchObject({ job_id: id, case_id: c, engine: 'custom', variant: 'with_skill', trial: 1, attempt: 1, status: c === 'c1' ? 'error' : 'pass' });
      expect(finished.payload.duration_ms).toBeGreaterThanOrEqual(250);
      expect(finished.payload.tokens).toEqual({ input: 0, output: 0, cache_read: 0, cache_write: 0, total: 0 });
      // Each job's events are in time order.
      const times = mine.map((e) => Date.parse(e.time));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
    }
    expect(events.find((e) => e.event === 'judge_finished')!.payload).toMatchObject({ judge_id: 'says-ok', judge_type: 'rule_based', judge_index: 1, status: 'pass', assertions_total: 1 });
    expect(events.find((e) => e.event === 'case_completed' && e.payload.case_id === 'c1')!.payload).toMatchObject({ status: 'ERROR', configuration: 'with_skill', task_index: 1, task_total: 6 });
    expect(events.filter((e) => e.event === 'iteration_started')).toHaveLength(1);
    expect(events.filter((e) => e.event === 'iteration_completed')).toHaveLength(1);
  });
});
