/**
 * The user simulator: writes the user message of a `respond` turn, or decides (in an
 * autonomous case) whether the simulated user replies or stops, by asking a model for a
 * strict JSON decision (decision.ts) about the conversation so far (conversation.ts). An
 * answer that is no valid decision gets exactly one correction request; a second bad answer,
 * a timeout or a failed request is an `error` outcome naming the simulator.
 *
 * `provider: scripted` calls the run's scripted model server under the job id
 * `<job id>/simulator` (its rules' `simulator: true` condition); any other provider its
 * `base_url` with the key from `api_key_env`, which is added to the redactor when read.
 */
import type { UserSimulatorConfig } from '../config/types.js';
import { cutText } from '../util/cut.js';
import { redactor } from '../util/redact.js';
import { completeChat, SimulatorCallError, type ChatMessage, type SimulatorEndpoint } from './client.js';
import { buildSimulatorPrompt, correctionPrompt, SIMULATOR_SYSTEM, type SimulatedExchange } from './conversation.js';
import { parseDecision, type DecisionMode } from './decision.js';

export type { SimulatedExchange } from './conversation.js';

/** What {@link UserSimulator.decide} is asked for one turn. */
export interface SimulatorAsk {
  /** 1-based number of the turn the message is for. */
  turn: number;
  scenario?: string;
  instruction?: string;
  history: SimulatedExchange[];
  mode: DecisionMode;
  /** The job's signal (its deadline and Ctrl-C). */
  signal: AbortSignal;
  /** Epoch ms the job must end by (Infinity = none): a request never outlives it. */
  deadline: number;
}

/** The simulator's outcome for one turn; `error` carries the job's reason. */
export type SimulatorOutcome = { action: 'reply'; message: string } | { action: 'stop'; reason: string } | { action: 'error'; reason: string; timeout?: boolean };

/** A simulator bound to one job. */
export interface UserSimulator {
  /** Never throws: every failure is an `error` outcome. */
  decide(ask: SimulatorAsk): Promise<SimulatorOutcome>;
}

/** Where a job's simulator is reached and which environment holds its key. */
export interface SimulatorSetting {
  /** The job's id; the scripted model sees `<jobId>/simulator`. */
  jobId: string;
  /** The run's scripted model server (`http://127.0.0.1:<port>`), when one runs. */
  modelBaseUrl?: string;
  /** skill-up's environment, where `api_key_env` is read. */
  env: Record<string, string | undefined>;
}

/** Characters of a bad answer quoted in the error. */
const QUOTED_ANSWER_CHARS = 120;

/**
 * The simulator of one job, or an error text (no scripted model server for `provider: scripted`,
 * the key's variable unset) that makes the job an `error` before its first turn.
 */
export function userSimulatorFor(cfg: UserSimulatorConfig, setting: SimulatorSetting): UserSimulator | string {
  const label = `user simulator (${cfg.provider}${cfg.provider === 'scripted' ? '' : `, ${cfg.protocol} model ${cfg.model}`})`;
  let ep: SimulatorEndpoint;
  if (cfg.provider === 'scripted') {
    if (!setting.modelBaseUrl) return `${label}: the scripted model server is not running in this run (no engine of the run has \`model.provider: scripted\`)`;
    const base = setting.modelBaseUrl.replace(/\/+$/, '');
    ep = { protocol: cfg.protocol, url: cfg.protocol === 'openai' ? `${base}/v1/chat/completions` : `${base}/v1/messages`, model: cfg.model, apiKey: `skill-up-job:${setting.jobId}/simulator` };
  } else {
    const keyName = cfg.apiKeyEnv ?? '';
    const key = setting.env[keyName];
    if (!key) return `${label}: the environment variable ${keyName} (user_simulator.api_key_env) is not set`;
    // Whatever its variable is called, the key is a secret from now on.
    redactor().add(key);
    const base = (cfg.baseUrl ?? '').replace(/\/+$/, '');
    ep = { protocol: cfg.protocol, url: cfg.protocol === 'openai' ? `${base}/chat/completions` : `${base}/v1/messages`, model: cfg.model, apiKey: key };
  }
  return {
    async decide(ask) {
      const messages: ChatMessage[] = [{ role: 'user', content: buildSimulatorPrompt(ask) }];
      const timeoutMs = Math.min(cfg.timeoutSeconds * 1000, ask.deadline - Date.now());
      let answer = '';
      let problem = '';
      for (let attempt = 0; attempt < 2; attempt++) {
        try {
          answer = await completeChat(ep, SIMULATOR_SYSTEM, messages, ask.signal, attempt === 0 ? timeoutMs : Math.min(cfg.timeoutSeconds * 1000, ask.deadline - Date.now()));
        } catch (e) {
          const timeout = e instanceof SimulatorCallError && e.timeout;
          const what = timeout && !ask.signal.aborted ? `${(e as Error).message} (user_simulator.timeout_seconds: ${cfg.timeoutSeconds})` : (e as Error).message;
          return { action: 'error', reason: `${label} failed for turn ${ask.turn}: ${what}`, ...(timeout ? { timeout: true } : {}) };
        }
        const parsed = parseDecision(answer, ask.mode);
        if (parsed.ok) return parsed.decision;
        problem = parsed.problem;
        messages.push({ role: 'assistant', content: answer }, { role: 'user', content: correctionPrompt(problem, ask.mode) });
      }
      return { action: 'error', reason: `${label} gave no valid decision for turn ${ask.turn} after one correction: ${problem}; its answer began: "${cutText(answer.trim(), QUOTED_ANSWER_CHARS)}"` };
    },
  };
}
