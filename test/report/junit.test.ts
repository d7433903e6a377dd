import { describe, expect, it } from 'vitest';
import { buildJunit } from '../../src/report/junit.js';
import { makeResult } from '../run/helpers.js';

describe('buildJunit', () => {
  it('writes one testcase per job: failures with evidence, errors as <error>, skips as <skipped>', () => {
    const xml = buildJunit('my-skill', [
      makeResult({ id: 'a/with_skill/run-1', caseId: 'a' }),
      makeResult({ id: 'b/with_skill/run-1', caseId: 'b', status: 'fail', assertions: [{ text: 'files_exist: out.md', passed: false, evidence: 'out.md does not exist <here>' }] }),
      makeResult({ id: 'c/with_skill/run-1', caseId: 'c', status: 'error', reason: 'engine error in turn 1: exited with code 2', assertions: [] }),
      makeResult({ id: 'd/without_skill/run-1', caseId: 'd', variant: 'without_skill', status: 'skipped' }),
    ]);
    expect(xml.match(/<testcase /g)).toHaveLength(4);
    expect(xml).toContain('<testsuite name="my-skill [custom/with_skill]" tests="3" failures="1" errors="1" skipped="0"');
    expect(xml).toContain('<failure message="files_exist: out.md: out.md does not exist &lt;here>" type="AssertionFailure">');
    expect(xml).toContain('<error message="engine error in turn 1: exited with code 2" type="ExecutionError"/>');
    expect(xml).toContain('FAIL files_exist: out.md\n  evidence: out.md does not exist <here>');
    expect(xml).toMatch(/name="d #1"[^>]*>\s*<skipped\/>/);
  });
});
