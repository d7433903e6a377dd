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
  for (const [key, jobs] of groups) {
    const suite = builder.testSuite().name(`${skillName} [${key}]`);
    suite.property('engine', jobs[0]!.engine).property('variant', jobs[0]!.variant);
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

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').slice(0, 200);
}
