/**
 * The line `skill-up import` prints about the engine it wrote into eval.yaml: skill-creator's
 * evals run in Claude Code against a real model, so the imported suite needs that engine's
 * credentials to run, which a new user does not expect from a file conversion (issue 15). The
 * line names the engine, the variables it reads its credentials from, and the two ways to run
 * without them (the scripted model, another engine).
 */
import type { EngineConfig } from '../config/types.js';

/** Credential variables per built-in engine, as its adapter passes them through (engines/<name>/adapter.ts `envAllow`). */
const CREDENTIALS: Readonly<Record<string, readonly string[]>> = {
  claude_code: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  gemini_cli: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
};

/**
 * The credentials line for `engine` and the suite folder `skillDir` (as the user should type
 * it), or undefined when the engine needs none: a scripted model, or a custom agent.
 */
export function credentialsLine(engine: EngineConfig, skillDir: string): string | undefined {
  if (engine.model.provider === 'scripted' || engine.name === 'custom') return undefined;
  const vars = CREDENTIALS[engine.name];
  const model = engine.model.name ? `model ${engine.model.name}` : 'its default model';
  const from = vars ? `one of ${vars.map((v) => `$${v}`).join(', ')} set in the environment` : 'its credentials in the environment';
  return [
    `engine: ${engine.displayName} with ${model}, a real one: \`skill-up run\` needs ${from}, and spends tokens`,
    `  (a login stored in your home is not used: every job gets its own engine home).`,
    `  offline, no credentials: skill-up run ${skillDir} --model-script <rules.yaml> (the scripted model; see README "The scripted model"),`,
    `  or set engine.model to {provider: scripted, script: <rules.yaml>} in eval.yaml; another engine: --engine <name>, or engine: in eval.yaml.`,
  ].join('\n');
}
