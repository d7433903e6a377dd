/**
 * A small in-process engine adapter for the unit tests of skill-up's own loop (runJobOnce's
 * turns, executeJobs' retries). It is not an imitation of any engine's output: each turn's
 * answer comes from the test's `reply` function, and every request is recorded.
 */
import { blankTurn, type EngineAdapter, type EngineContext, type TranscriptTurn, type TurnRequest } from '../../src/engine/types.js';

/** What the fake saw: each turn request, with the job it came from. */
export interface FakeCall {
  jobId: string | undefined;
  request: TurnRequest;
}

/** Creates the adapter; `reply` answers each turn (a partial TranscriptTurn, or a thrown error). */
export function fakeAdapter(reply: (req: TurnRequest, ctx: EngineContext, call: number) => Partial<TranscriptTurn> | Promise<Partial<TranscriptTurn>>, opts: { supportsResume?: boolean; supportsMcp?: boolean } = {}): EngineAdapter & { calls: FakeCall[] } {
  const calls: FakeCall[] = [];
  return {
    name: 'custom',
    skillDirs: ['.agents/skills'],
    supportsResume: opts.supportsResume ?? true,
    ...(opts.supportsMcp ? { supportsMcp: true } : {}),
    calls,
    async prepare() {
      return undefined;
    },
    async runTurn(ctx, _prepared, req) {
      calls.push({ jobId: ctx.jobId, request: req });
      const extra = await reply(req, ctx, calls.length);
      return blankTurn(req, { exitCode: 0, durationMs: 5, ...extra });
    },
  };
}
