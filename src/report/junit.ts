/**
 * JUnit XML (`report.xml`) built with junit-report-builder from the result.json document:
 * one `<testsuite>` per engine and variant, one `<testcase>` per case × variant × trial
 * (`name` = `<case> #<trial>`, `classname` = `<skill>.<engine>.<variant>`, `time` in seconds).
 * A fail carries its failed assertions with evidence in `<failure>`; an error is `<error>`
 * (never a failure), a skip `<skipped>`. Layout after alibaba/skill-up's report.xml
 * (prior-art notes, 6.4), with every trial and the baseline kept as their own test cases.
 */
import junitModule, { type Builder } from 'junit-report-builder';
import type { JobJson, ResultDoc } from './result-json.js';
import { costProperties } from '../cost/junit.js';
import { triggerProperties } from './triggers.js';

// The package is CommonJS with `module.exports = builder`; its .d.ts declares an ES default
// export, which under NodeNext typing would be `.default`. At run time the import is the builder.
const junit = junitModule as unknown as Builder;

/** Renders the XML document of a run (`doc.jobs`, skill name `doc.skill.name`). */
export function buildJunit(doc: ResultDoc): string {
  const skillName = doc.skill.name;
  const builder = junit.newBuilder();
  const groups = new Map<string, JobJson[]>();
  for (const r of doc.jobs) {
    const key = `${r.engine}/${r.variant}`;
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  if (groups.size === 0) {
    const suite = builder.testSuite().name(`${skillName} [run]`);
    for (const [k, v] of decisionProperties(doc, null)) suite.property(k, v);
  }
  for (const [key, jobs] of groups) {
    const suite = builder.testSuite().name(`${skillName} [${key}]`);
    suite.property('engine', jobs[0]!.engine).property('variant', jobs[0]!.variant);
    for (const [k, v] of costProperties(doc, jobs)) suite.property(k, v);
    for (const [k, v] of decisionProperties(doc, jobs[0]!.engine)) suite.property(k, v);
    if (jobs[0]!.variant === 'with_skill') for (const [k, v] of triggerProperties(doc.triggers, jobs[0]!.engine)) suite.property(k, v);
    for (const r of jobs) {
      const tc = suite
        .testCase()
        .className(`${skillName}.${r.engine}.${r.variant}`)
        .name(`${r.case_id} #${r.trial}`)
        .time(r.duration_ms / 1000);
      const passedLines = r.assertions.filter((a) => a.passed).map((a) => `PASS ${a.text}: ${a.evidence}`);
      if (r.variant === 'without_skill' && r.status !== 'pass') {
        // The baseline is measured, not gated (the exit code ignores it): a CI test-report
        // plugin must not turn the build red because the skill was missing in the baseline.
        const first = r.assertions.find((a) => !a.passed);
        const why = r.status === 'fail' && first ? `${first.text}: ${oneLine(first.evidence)}` : (r.reason ?? r.status);
        tc.skipped();
        tc.standardOutput(`without_skill baseline: ${r.status} (not gated): ${why}\n\n${r.assertions.map((a) => `${a.passed ? 'PASS' : 'FAIL'} ${a.text}: ${a.evidence}`).join('\n')}`);
        continue;
      }
      if (r.status === 'fail') {
        const failed = r.assertions.filter((a) => !a.passed);
        const first = failed[0];
        tc.failure(first ? `${first.text}: ${oneLine(first.evidence)}` : (r.reason ?? 'failed'), 'AssertionFailure');
        tc.stacktrace([...failed.map((a) => `FAIL ${a.text}\n  evidence: ${a.evidence}`), ...passedLines].join('\n'));
      } else if (r.status === 'error') {
        tc.error(r.reason ?? 'error', 'ExecutionError');
        tc.standardOutput(r.turns.map((t) => `turn ${t.index}: ${t.status}${t.reason ? ` (${t.reason})` : ''}`).join('\n'));
      } else if (r.status === 'skipped') {
        tc.skipped();
      }
      if (r.status !== 'error') tc.standardOutput(`final message:\n${r.final_message.slice(0, 4000)}\n\n${passedLines.join('\n')}`);
    }
  }
  return builder.build();
}

/**
 * The decision as JUnit properties for a suite of `engine` (null: a suite of no engine, which
 * gets every gate): `exit_code`, the run-wide gates and the engine's gates, and the engine's
 * uplift verdict, each state followed by its one-sentence reason.
 */
export function decisionProperties(doc: ResultDoc, engine: string | null): [string, string][] {
  const out: [string, string][] = [['exit_code', String(doc.exit_code)]];
  for (const g of doc.gates ?? []) {
    if (engine !== null && g.engine !== null && g.engine !== engine) continue;
    const key = `gate.${g.name}${g.engine === null ? '' : `.${g.engine}`}`;
    out.push([key, g.state], [`${key}.reason`, oneLine(g.reason, 1000)]);
  }
  for (const u of doc.summary.uplift) {
    if (engine !== null && u.engine !== engine) continue;
    out.push([`verdict.${u.engine}`, u.verdict], [`verdict.${u.engine}.reason`, oneLine(u.reason, 1000)]);
  }
  return out;
}

function oneLine(s: string, max = 200): string {
  return s.replace(/\s+/g, ' ').slice(0, max);
}
