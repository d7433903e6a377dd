/**
 * JUnit XML (`report.xml`) built with junit-report-builder: one `<testsuite>` per engine and
 * variant, one `<testcase>` per case × variant × trial. A fail carries its failed assertions
 * with evidence in `<failure>`; an error is `<error>` (never a failure), a skip `<skipped>`.
 * Layout after alibaba/skill-up's report.xml (prior-art notes, 6.4).
 */
import junitModule, { type Builder } from 'junit-report-builder';

// The package is CommonJS with `module.exports = builder`; its .d.ts declares an ES default
// export, which under NodeNext typing would be `.default`. At run time the import is the builder.
const junit = junitModule as unknown as Builder;
import type { JobResult } from '../run/types.js';

/** Renders the XML document for `results` of the skill `skillName`. */
export function buildJunit(skillName: string, results: JobResult[]): string {
  const builder = junit.newBuilder();
  const groups = new Map<string, JobResult[]>();
  for (const r of results) {
    const key = `${r.engine}/${r.variant}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  for (const [key, jobs] of groups) {
    const suite = builder.testSuite().name(`${skillName} [${key}]`);
    suite.property('engine', jobs[0]!.engine).property('variant', jobs[0]!.variant);
    for (const r of jobs) {
      const tc = suite
        .testCase()
        .className(`${skillName}.${r.engine}.${r.variant}`)
        .name(`${r.caseId} #${r.trial}`)
        .time(r.durationMs / 1000);
      const passedLines = r.assertions.filter((a) => a.passed).map((a) => `PASS ${a.text}: ${a.evidence}`);
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
      if (r.status !== 'error') tc.standardOutput(`final message:\n${r.finalMessage.slice(0, 4000)}\n\n${passedLines.join('\n')}`);
    }
  }
  return builder.build();
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').slice(0, 200);
}
