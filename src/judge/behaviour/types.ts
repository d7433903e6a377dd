/**
 * Behaviour checks of one job (issue 12, deliverable 5): what the agent did besides its
 * answer, recorded on every job (JobResult.behaviour, result.json `jobs[].behaviour`) and
 * usable as rules (`claims_verified`, `no_tool_loop`, `no_silent_failure`, src/judge/rules.ts)
 * and gates (src/gate/behaviour.ts).
 *
 * - claims: files the agent's answers say it created, changed or deleted, and "tests pass",
 *   each checked against the workspace changes and the transcript (claims.ts);
 * - tool loop: the longest run of identical consecutive tool calls in a turn (loops.ts);
 * - silent failure: failed tool calls or engine errors no answer acknowledges (silent.ts);
 * - skill context: estimated tokens the skill listing and the loaded skill body put in front
 *   of the model, read from the requests the engine sent the scripted model (context.ts).
 *
 * Every extractor is linear in its input and bounded (see the MAX_* constants).
 */

/** What a claim says happened. */
export type ClaimKind = 'file_created' | 'file_changed' | 'file_deleted' | 'tests_pass';

/** Every claim kind, in the order reports list them. */
export const CLAIM_KINDS: readonly ClaimKind[] = ['file_created', 'file_changed', 'file_deleted', 'tests_pass'];

/** One claim an answer made, as found (before verification). */
export interface FoundClaim {
  /** The sentence (or list line) that makes the claim, clipped to {@link MAX_CLAIM_TEXT_CHARS}. */
  text: string;
  kind: ClaimKind;
  /** The file the claim is about, as written (file kinds only). */
  path?: string;
  /** 1-based turn whose answer made it. */
  turn: number;
}

/** A claim with its verdict: `verified` only when the evidence shows it holds. */
export interface Claim extends FoundClaim {
  verified: boolean;
  /** What was seen: the change that matches, or why nothing does. */
  evidence: string;
}

/** The longest run of one tool called with the same input consecutively within one turn. */
export interface ToolLoop {
  /** Calls in the longest run (0 when no tool was called, 1 when no call repeated). */
  longestRun: number;
  /** The tool of that run. */
  tool?: string;
  /** 1-based turn of that run. */
  turn?: number;
  /** The repeated input as compact JSON, clipped to 200 characters. */
  input?: string;
  /** A run of at least this many calls is a loop ({@link DEFAULT_LOOP_REPEATS} unless a rule says otherwise). */
  threshold: number;
  /** `longestRun >= threshold`. */
  detected: boolean;
}

/** One failure no later answer acknowledged. */
export interface UnmentionedFailure {
  turn: number;
  /** The tool whose call failed, or `engine` for an engine error of the turn. */
  tool: string;
  /** The failure's output or message, clipped to 200 characters. */
  error: string;
}

/** Failed tool calls and engine errors, and those no answer acknowledged. */
export interface SilentFailure {
  /** Tool calls that failed (isError, or a shell whose output says a non-zero exit code) plus engine errors. */
  failures: number;
  /** Failures retried with the same input and succeeding later in the same turn (not counted as silent). */
  recovered: number;
  /** The first {@link MAX_LISTED} failures that went unmentioned. */
  unmentioned: UnmentionedFailure[];
  /** How many failures went unmentioned in all. */
  unmentionedCount: number;
  /** `unmentionedCount > 0`. */
  detected: boolean;
  /**
   * Set on an engine that does not report shell exit statuses (Gemini CLI, its definition's
   * `shellExitObservable: false`) when the job ran shell commands: they may have failed unseen.
   */
  unobservable?: ShellUnobservable;
}

/** Shell calls whose outcome the engine does not report, so a failure among them cannot be seen. */
export interface ShellUnobservable {
  /** Why (names the engine). */
  reason: string;
  /** Shell calls of unknown outcome (neither marked failed nor stating an exit code). */
  shellCalls: number;
  /** Of those, the ones no answer from their turn on acknowledges (a failure among them would be silent). */
  unacknowledged: number;
  /** The first {@link MAX_LISTED} unacknowledged ones: `error` is the command line, clipped to 200 characters. */
  examples: UnmentionedFailure[];
}

/** Estimated context tokens one installed skill cost in one job. */
export interface SkillContextEntry {
  skill: string;
  /** Tokens of the skill's entry in the listing of the first model request (0 when it was not listed). */
  listingTokens: number;
  /** Tokens of the loaded skill body (0 when it was not loaded). */
  bodyTokens: number;
  loaded: boolean;
}

/**
 * The skill context cost of a job: observed only when the engine's requests were seen (the
 * scripted model); otherwise `observed: false` and the reason, never a made-up number.
 */
export type SkillContext =
  | {
      observed: true;
      /** How tokens were estimated ({@link TOKEN_ESTIMATE}). */
      method: string;
      /** Sum of the installed skills' listing entries in the first request (0 without installed skills). */
      listingTokens: number;
      /** Sum of the loaded skill bodies. */
      bodyTokens: number;
      skills: SkillContextEntry[];
    }
  | { observed: false; reason: string };

/** The behaviour record of one job. */
export interface JobBehaviour {
  /** The claims found (at most {@link MAX_CLAIMS}), each verified. */
  claims: Claim[];
  /** Claims found in all (may exceed `claims.length` when cut). */
  claimsTotal: number;
  claimsVerified: number;
  toolLoop: ToolLoop;
  silentFailure: SilentFailure;
  skillContext: SkillContext;
}

/** Consecutive identical tool calls that make a loop by default (the N = 3). */
export const DEFAULT_LOOP_REPEATS = 3;
/** Most claims kept per job. */
export const MAX_CLAIMS = 50;
/** Most characters of one answer searched for claims and acknowledgements (larger answers: their first part). */
export const MAX_SCANNED_CHARS = 256 * 1024;
/** Characters of a claim's text kept. */
export const MAX_CLAIM_TEXT_CHARS = 300;
/** Unmentioned failures listed per job. */
export const MAX_LISTED = 10;
/**
 * The token estimate: UTF-8 bytes / 4, rounded up. A real tokenizer is model-specific (Claude's
 * is not published) and none is pinned in this repository; bytes / 4 equals the scripted
 * model's own chars / 4 (src/model/plan.ts `estimateTokens`) on ASCII text and stays closer to
 * real counts on non-ASCII text, where one character is often a token or more. An estimate,
 * labelled as such in every report.
 */
export const TOKEN_ESTIMATE = 'estimate: UTF-8 bytes / 4';

/** Estimated tokens of `text` ({@link TOKEN_ESTIMATE}); 0 for the empty string. */
export function estimateTextTokens(text: string): number {
  return text === '' ? 0 : Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}
