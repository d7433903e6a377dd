/**
 * JUnit XML (`report.xml`) built with junit-report-builder from the result.json document:
 * one `<testsuite>` per engine and variant, one `<testcase>` per case × variant × trial
 * (`name` = `<case> #<trial>`, `classname` = `<skill>.<engine>.<variant>`, `time` in seconds).
 * A fail carries its failed assertions with evidence in `<failure>`; an error is `<error>`
 * (never a failure), a skip `<skipped>`. Layout after alibaba/skill-up's report.xml
 * (prior-art notes, 6.4), with every trial and the baseline kept as their own test cases.
 */
import type { Builder, TestSuite } from 'junit-report-builder';
import { requireCjs } from '../util/cjs.js';
import type { JobJson, ResultDoc } from './result-json.js';
import { costProperties } from '../cost/junit.js';
import { triggerProperties } from './triggers.js';
import { oneLine as cutOneLine } from '../util/cut.js';

// The package is CommonJS with `module.exports = builder`; its .d.ts declares an ES default
// export, which under NodeNext typing would be `.default`. At run time the import is the builder.
const junit = requireCjs('junit-report-builder') as Builder;

/** Renders the XML document of a run (`doc.jobs`, skill name `doc.skill.name`). */
export function buildJunit(doc: ResultDoc): string {
  return [...junitPieces(doc)].join('');
}

/** The frame junit-report-builder writes around its suites: the declaration and the `<testsuites …>` line (with the counts it sums), and the end. */
const ROOT_OPEN = /^<\?xml[^\n]*\n<testsuites tests="\d+" failures="\d+" errors="\d+" skipped="\d+">\n/;
const ROOT_CLOSE = '\n</testsuites>';
const SUITE_CLOSE = '\n  </testsuite>';
/** The counts of a suite built without test cases, at the end of its `<testsuite …>` line. */
const NO_COUNTS = /tests="0" failures="0" errors="0" skipped="0">\n/;

/** Test cases built per junit-report-builder document: few enough that each document dies young (tens of MB for a whole 10,000-job suite otherwise). */
const CHUNK = 200;

/** The XML junit-report-builder makes of `builder`, without its frame. @throws Error when the frame is not the one expected. */
function inner(builder: Builder): string {
  const xml = builder.build();
  const open = ROOT_OPEN.exec(xml);
  if (!open || !xml.endsWith(ROOT_CLOSE)) throw new Error('junit-report-builder wrote an unexpected document frame');
  return xml.slice(open[0].length, xml.length - ROOT_CLOSE.length);
}

interface Counts {
  tests: number;
  failures: number;
  errors: number;
  skipped: number;
}

const countsOf = (s: TestSuite): Counts => ({ tests: s.getTestCaseCount(), failures: s.getFailureCount(), errors: s.getErrorCount(), skipped: s.getSkippedCount() });
const attrs = (c: Counts) => `tests="${c.tests}" failures="${c.failures}" errors="${c.errors}" skipped="${c.skipped}"`;

/**
 * {@link buildJunit}'s text piece by piece, so that neither an XML tree nor the test cases of
 * a whole suite are ever in memory at once. Still junit-report-builder's own XML: each suite's
 * head (its `<testsuite>` line and properties) is built by it without test cases, and the test
 * cases by it {@link CHUNK} at a time in a throwaway suite, each cut out of its frame; the
 * counts on the `<testsuites>` and `<testsuite>` lines are junit-report-builder's own sums,
 * taken in a first pass. The joined pieces are byte for byte the document one builder makes
 * of all the suites (test/report/junit.test.ts).
 */
export function* junitPieces(doc: ResultDoc): Generator<string> {
  const groups = groupsOf(doc);
  if (groups.size === 0) {
    const b = junit.newBuilder();
    runSuite(doc, b.testSuite());
    yield b.build();
    return;
  }
  const counts = new Map<string, Counts>();
  const total: Counts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  for (const [key, jobs] of groups) {
    const c: Counts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
    for (let i = 0; i < jobs.length; i += CHUNK) {
      const suite = junit.newBuilder().testSuite();
      for (const r of jobs.slice(i, i + CHUNK)) addCase(doc.skill.name, suite, r);
      const n = countsOf(suite);
      for (const k of ['tests', 'failures', 'errors', 'skipped'] as const) {
        c[k] += n[k];
        total[k] += n[k];
      }
    }
    counts.set(key, c);
  }
  yield `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ${attrs(total)}>`;
  for (const [key, jobs] of groups) {
    const head = junit.newBuilder();
    groupSuite(doc, key, jobs, head.testSuite());
    const h = inner(head);
    if (!NO_COUNTS.test(h) || !h.endsWith(SUITE_CLOSE)) throw new Error('junit-report-builder wrote an unexpected suite');
    yield `\n${h.slice(0, h.length - SUITE_CLOSE.length).replace(NO_COUNTS, `${attrs(counts.get(key)!)}>\n`)}`;
    for (let i = 0; i < jobs.length; i += CHUNK) {
      const part = junit.newBuilder();
      const suite = part.testSuite().name(key);
      for (const r of jobs.slice(i, i + CHUNK)) addCase(doc.skill.name, suite, r);
      const body = inner(part);
      yield `\n${body.slice(body.indexOf('\n') + 1, body.length - SUITE_CLOSE.length)}`;
    }
    yield SUITE_CLOSE;
  }
  yield ROOT_CLOSE;
}

/** Jobs per `<testsuite>` (`<engine>/<variant>`), in first-appearance order. */
function groupsOf(doc: ResultDoc): Map<string, JobJson[]> {
  const groups = new Map<string, JobJson[]>();
  for (const r of doc.jobs) {
    const key = `${r.engine}/${r.variant}`;
    const g = groups.get(key);
    if (g) g.push(r);
    else groups.set(key, [r]);
  }
  return groups;
}

/**
 * Every `<testsuite>` of the run with its test cases, each in a builder of `builderFor`, in
 * document order (tests pass one shared builder to get the whole document from
 * junit-report-builder itself, the reference for {@link junitPieces}).
 * @internal exported for tests.
 */
export function* junitSuites(doc: ResultDoc, builderFor: () => Builder = () => junit.newBuilder()): Generator<{ builder: Builder; suite: TestSuite }> {
  const groups = groupsOf(doc);
  if (groups.size === 0) {
    const builder = builderFor();
    yield { builder, suite: runSuite(doc, builder.testSuite()) };
  }
  for (const [key, jobs] of groups) {
    const builder = builderFor();
    const suite = groupSuite(doc, key, jobs, builder.testSuite());
    for (const r of jobs) addCase(doc.skill.name, suite, r);
    yield { builder, suite };
  }
}

/** The suite of a run without jobs: its name and the decision's properties. */
function runSuite(doc: ResultDoc, suite: TestSuite): TestSuite {
  suite.name(`${doc.skill.name} [run]`);
  for (const [k, v] of decisionProperties(doc, null)) suite.property(k, v);
  return suite;
}

/** The name and properties of the suite of one engine and variant (`key`), without its test cases. */
function groupSuite(doc: ResultDoc, key: string, jobs: JobJson[], suite: TestSuite): TestSuite {
  suite.name(`${doc.skill.name} [${key}]`);
  suite.property('engine', jobs[0]!.engine).property('variant', jobs[0]!.variant);
  for (const [k, v] of costProperties(doc, jobs)) suite.property(k, v);
  for (const [k, v] of decisionProperties(doc, jobs[0]!.engine)) suite.property(k, v);
  if (jobs[0]!.variant === 'with_skill') for (const [k, v] of triggerProperties(doc.triggers, jobs[0]!.engine)) suite.property(k, v);
  return suite;
}

/** One job's `<testcase>`. */
function addCase(skillName: string, suite: TestSuite, r: JobJson): void {
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
    return;
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

/** `s` on one line, at most `max` units; a cut ends in `…` (src/util/cut.ts). */
function oneLine(s: string, max = 200): string {
  return cutOneLine(s, max);
}
