/**
 * The pure part of `agent_judge` (design.md: "A judge never spawns an engine itself"): the
 * grader's prompts, its context folder's description and bounds, reading its answers, and the
 * verdict over `repeats` runs. src/run/grader.ts runs the grader through the engine layer.
 */
export { GRADER_PROMPT_MARKER, graderPrompt, correctionPrompt } from './prompt.js';
export { parseGraderReply, findResultsJson } from './parse.js';
export { combineRuns, meetsThreshold, agentJudgeVerdict, type GraderRun } from './verdict.js';
export { CONTEXT_DIR, MATERIAL_FILES, boundText, boundTranscript, boundChanges, materialLines, wantedMaterials, type Material } from './context.js';
