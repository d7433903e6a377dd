/**
 * The scripted model: a rule-driven stand-in for a model API, used by `provider: scripted`,
 * by `skill-up model-server`, and as the test double for real engine binaries.
 *
 * - `loadModelScript(file)`: YAML rules → `ModelScript` (throws `ConfigError`).
 * - `startModelServer({script, port?, logDir?, onRequest?})`: HTTP on 127.0.0.1.
 * - `runModelServerCommand(argv)`: the `skill-up model-server` command.
 * - `planResponse` / `viewConversation`: the pure core, for tests and other callers.
 */
export { loadModelScript, parseModelScript, modelScriptSchemaPath, TEMPLATE_VARIABLES } from './script.js';
export { startModelServer, PROTOCOLS, type ModelServer, type ModelServerOptions } from './server.js';
export { runModelServerCommand, describeExchange, MODEL_SERVER_USAGE, type CommandIO } from './command.js';
export { planResponse, groupSteps, fillTemplate, estimateTokens, type Step } from './plan.js';
export { viewConversation, parseSkillListing, findCwd, skillOfToolCall, type Conversation } from './conversation.js';
export { ruleMatches, firstMatch, stepIndex } from './match.js';
export { isJudgeJobId, jobIdFrom, type ExchangeLogEntry } from './log.js';
export { anthropicProtocol, parseAnthropicRequest, renderAnthropicStream } from './protocols/anthropic.js';
export type { ProtocolModule, Rendered, WireContext } from './protocols/protocol.js';
export type * from './types.js';
export { ENGINE_NAMES } from './types.js';
