import { afterEach, describe, expect, it } from 'vitest';
import { createProgress } from '../../src/run/progress.js';
import type { Job } from '../../src/plan/plan.js';
import type { JobResult } from '../../src/run/types.js';

describe('progress lines', () => {
  afterEach(() => {
    delete process.env.SKILL_UP_TEST_API_KEY;
  });
  it('never print a secret value that an engine quoted in its error', () => {
    process.env.SKILL_UP_TEST_API_KEY = 'sk-canary-0123456789abcdef';
    let text = '';
    const out = { isTTY: false, columns: 200, write: (s: string) => ((text += s), true) } as unknown as NodeJS.WriteStream;
    const p = createProgress(1, out);
    const job = { id: 'case/with_skill/run-1' } as Job;
    p.jobStarted(job);
    p.jobFinished(job, { status: 'error', durationMs: 10, assertions: [], reason: 'engine exited: bad key sk-canary-0123456789abcdef' } as unknown as JobResult);
    p.stop();
    expect(text).toContain('bad key [REDACTED]');
    expect(text).not.toContain('sk-canary');
  });
});
