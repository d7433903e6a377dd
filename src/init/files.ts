/**
 * The files `skill-up init` writes, as text: `evals/eval.yaml`, two starter cases derived from
 * SKILL.md's description, and what answers the agent offline: the scripted model's rules
 * (`evals/model.yaml`) for the five CLI engines, or a small stand-in agent
 * (`evals/agent.mjs`) for `custom`. Pure: no I/O; src/init/write.ts writes them.
 *
 * The suite passes with the skill and fails without it, by construction: the model (or the
 * stand-in agent) loads the skill only when the engine lists it, and answers from it only once
 * loaded; the cases' `expect` checks hold only for those answers.
 */
import { CUSTOM_ENGINE, engineDefinitions, findEngineDefinition } from '../../engines/index.js';
import type { EngineDefinition } from '../engine/definition.js';
import { describeSkill, type SkillFacts } from './derive.js';

/** The engine `init` writes into eval.yaml: a built-in CLI engine, or `custom` (a stand-in agent). */
export type InitEngine = { kind: 'cli'; definition: EngineDefinition } | { kind: 'custom' };

/** One file to write: `path` is relative to the skill folder, `/`-separated. */
export interface InitFile {
  path: string;
  text: string;
  /** File mode, when not the default 0644 (the stand-in agent is executable). */
  mode?: number;
}

/** The engine names `--engine` accepts (canonical names; aliases are accepted too), in display order. */
export function initEngineNames(): string[] {
  return [...engineDefinitions().map((d) => d.name), CUSTOM_ENGINE];
}

/** The engine named `name` (a canonical name, an alias, or `custom`), or undefined. */
export function findInitEngine(name: string): InitEngine | undefined {
  if (name === CUSTOM_ENGINE) return { kind: 'custom' };
  const definition = findEngineDefinition(name);
  return definition ? { kind: 'cli', definition } : undefined;
}

/** The file the main-promise case asks for; the scripted model's rules key on its name. */
export const RESULT_FILE = 'result.md';

/** The starter cases' ids (their file names under evals/cases/). */
export const CASE_IDS = ['when-to-use', 'main-promise'] as const;

/** Where `init` writes, relative to the skill folder, for `engine` (eval.yaml first). */
export function initPaths(engine: InitEngine): string[] {
  return ['evals/eval.yaml', ...CASE_IDS.map((id) => `evals/cases/${id}.yaml`), engine.kind === 'custom' ? 'evals/agent.mjs' : 'evals/model.yaml'];
}

/** Everything the model (or the stand-in agent) says or writes, with and without the skill. */
interface Script {
  name: string;
  whenPrompt: string;
  resultPrompt: string;
  answerWith: string;
  answerWithout: string;
  resultWith: string;
  resultWithout: string;
  saidResultWith: string;
  saidResultWithout: string;
  /** The phrase the when-to-use case requires of the answer (only the with-skill answer has it). */
  marker: string;
  /** The line the main-promise case requires in result.md. */
  resultMarker: string;
}

/** The starter suite's prompts and answers, from SKILL.md's name, description and body. */
function script(skill: SkillFacts): Script {
  // `{{name}}` is a placeholder in prompts (a captured variable) and in the model's replies: a
  // description's own braces are spaced apart so that every text is sent as written.
  const raw = describeSkill(skill);
  const unbrace = (t: string) => t.replaceAll('{{', '{ {').replaceAll('}}', '} }');
  const parts = { promise: unbrace(raw.promise), title: unbrace(raw.title), ...(raw.whenToUse !== undefined ? { whenToUse: unbrace(raw.whenToUse) } : {}) };
  const name = skill.name;
  const marker = `${name} skill`;
  const resultMarker = `Written with the ${name} skill.`;
  const whenPrompt = parts.whenToUse
    ? `I have a task of this kind: ${parts.whenToUse}. How should I go about it?`
    : `I need help with this: ${lowerFirst(parts.promise)}. How should I go about it?`;
  const promise = /[.!?]$/.test(parts.promise) ? parts.promise : `${parts.promise}.`;
  return {
    name,
    whenPrompt,
    resultPrompt: `Show me what you can do here: "${parts.promise}". Take a small example of your choice, write the result to ${RESULT_FILE} and say what you did.`,
    answerWith: `Following the ${marker}: ${promise} I would apply its instructions step by step to your task.`,
    answerWithout: 'I can help in a general way, but I have no specific guidance for this task.',
    resultWith: `# ${parts.title}\n\n${resultMarker}\n\n${promise}\n`,
    resultWithout: '# Result\n\nA generic first attempt.\n',
    saidResultWith: `Wrote ${RESULT_FILE} following the ${marker}.`,
    saidResultWithout: `Wrote ${RESULT_FILE} with a generic first attempt.`,
    marker,
    resultMarker,
  };
}

/**
 * The files of a starter suite for `skill` on `engine`, in the order {@link initPaths} names
 * them. `skill.name` must be a valid skill name (the lint's rule: `[a-z0-9-]`); the description
 * may hold any text (every value is written as a quoted YAML scalar).
 */
export function initFiles(skill: SkillFacts, engine: InitEngine): InitFile[] {
  const s = script(skill);
  const [evalPath, whenPath, resultPath, answerPath] = initPaths(engine) as [string, string, string, string];
  const files: InitFile[] = [
    { path: evalPath, text: evalYaml(s, engine) },
    { path: whenPath, text: whenCase(s) },
    { path: resultPath, text: resultCase(s) },
  ];
  files.push(engine.kind === 'custom' ? { path: answerPath, text: agentScript(s), mode: 0o755 } : { path: answerPath, text: modelYaml(s, engine.definition) });
  return files;
}

function evalYaml(s: Script, engine: InitEngine): string {
  const head = [
    '# yaml-language-server: $schema=https://skill-up.dev/schemas/eval.schema.json',
    `# A starter suite for the ${s.name} skill, written by \`skill-up init\` from its SKILL.md.`,
  ];
  let engineBlock: string[];
  if (engine.kind === 'cli') {
    const d = engine.definition;
    head.push(
      `# It runs offline at once: ${d.label} talks to skill-up's scripted model (evals/model.yaml),`,
      '# which loads the skill when the engine lists it and answers from it. Make the cases in',
      '# evals/cases/ real requests and checks, then change the rules of evals/model.yaml to',
      '# match, or drop `provider: scripted` (and `script`) to run a real model (README "Engines").',
    );
    engineBlock = [
      'engine:',
      `  name: ${d.name}`,
      `  version: ${ver(d.testedVersion)}${pad(ver(d.testedVersion))}# pinned: installed into skill-up's cache on first use`,
      '  model:',
      '    provider: scripted          # no model API, no tokens: evals/model.yaml answers',
      ...(d.name === 'claude_code' ? ['    name: claude-sonnet-4-5'] : []),
      '    script: evals/model.yaml',
    ];
  } else {
    head.push(
      '# It runs offline at once: the agent is a small stand-in (evals/agent.mjs) that follows the',
      '# skill when it is installed in its workspace. Replace its command with your own agent',
      '# (README "Custom engines"), and make the cases in evals/cases/ real requests and checks.',
    );
    engineBlock = [
      'engine:',
      `  name: ${s.name}-agent`,
      '  custom:',
      '    transport: local',
      '    response_format: session_result',
      '    timeout_seconds: 60',
      '    local:',
      '      command: node',
      '      args: ["${skill_root}/evals/agent.mjs", "${input_file}", "${skills_dir}"]',
    ];
  }
  return [
    ...head,
    '#',
    '#   skill-up run <this skill folder>',
    'schema_version: v1alpha1',
    '',
    'environment:',
    '  type: none                    # each job in a fresh temporary folder on this machine',
    '',
    ...engineBlock,
    '',
    'cases:',
    '  files: [evals/cases/*.yaml]',
    '  defaults:',
    '    timeout_seconds: 120',
    '    max_turns: 6',
    '  parallelism: 4',
    '',
    'trials: 3',
    '',
    'benchmark:',
    '  enabled: true                 # also run every case without the skill: the uplift',
    '',
    'report:',
    '  formats: [json, junit, html, markdown]',
    '',
  ].join('\n');
}

function whenCase(s: Script): string {
  return [
    '# yaml-language-server: $schema=https://skill-up.dev/schemas/case.schema.json',
    "# Starter case written by `skill-up init` from SKILL.md's description (when the skill is for):",
    '# replace the prompt by a real request, and the checks by what a good answer must hold.',
    `title: ${q(`Uses ${s.name} for a request it is meant for`)}`,
    'tags: [starter]',
    'input:',
    `  prompt: ${q(s.whenPrompt)}`,
    'expect:',
    `  skill_invoked: ${word(s.name)}`,
    `  must_contain: [${q(s.marker)}]`,
    '',
  ].join('\n');
}

function resultCase(s: Script): string {
  return [
    '# yaml-language-server: $schema=https://skill-up.dev/schemas/case.schema.json',
    "# Starter case written by `skill-up init` from SKILL.md's description (what the skill promises):",
    `# the agent does it on an example and writes ${RESULT_FILE}; replace the prompt and the checks.`,
    `title: ${q(`Does what ${s.name} promises and writes ${RESULT_FILE}`)}`,
    'tags: [starter, smoke]',
    'input:',
    `  prompt: ${q(s.resultPrompt)}`,
    'expect:',
    `  files_exist: [${RESULT_FILE}]`,
    '  file_contains:',
    `    - { path: ${RESULT_FILE}, content: ${q(s.resultMarker)} }`,
    `  skill_invoked: ${word(s.name)}`,
    `  must_contain: [${RESULT_FILE}]`,
    'collect_artifacts: ["*.md"]',
    '',
  ].join('\n');
}

function modelYaml(s: Script, d: EngineDefinition): string {
  const n = word(s.name);
  return [
    '# yaml-language-server: $schema=https://skill-up.dev/schemas/model-script.schema.json',
    `# The scripted model of the ${s.name} starter suite, written by \`skill-up init\`.`,
    `# The first rule whose \`when\` holds answers. With the skill installed, ${d.label} lists`,
    '# the skill to the model, which loads it, then answers from it; without the skill it answers',
    "# generically, and the cases' `expect` checks fail: that difference is the uplift a run",
    '# measures. Conditions and steps: README "The scripted model".',
    'rules:',
    '  - name: load-skill',
    `    when: { skill_listed: ${n}, skill_loaded: false }`,
    '    reply:',
    `      - use_skill: ${n}`,
    '',
    '  - name: result-with-skill',
    `    when: { skill_loaded: ${n}, prompt_contains: ${RESULT_FILE} }`,
    '    reply:',
    `      - write_file: { path: ${RESULT_FILE}, content: ${q(s.resultWith)} }`,
    `      - say: ${q(s.saidResultWith)}`,
    '',
    '  - name: answer-with-skill',
    `    when: { skill_loaded: ${n} }`,
    '    reply:',
    `      - say: ${q(s.answerWith)}`,
    '',
    '  - name: result-without-skill',
    `    when: { prompt_contains: ${RESULT_FILE} }`,
    '    reply:',
    `      - write_file: { path: ${RESULT_FILE}, content: ${q(s.resultWithout)} }`,
    `      - say: ${q(s.saidResultWithout)}`,
    '',
    '  - name: answer-without-skill',
    '    reply:',
    `      - say: ${q(s.answerWithout)}`,
    '',
  ].join('\n');
}

function agentScript(s: Script): string {
  const data = {
    name: s.name,
    resultFile: RESULT_FILE,
    answerWith: s.answerWith,
    answerWithout: s.answerWithout,
    resultWith: s.resultWith,
    resultWithout: s.resultWithout,
    saidResultWith: s.saidResultWith,
    saidResultWithout: s.saidResultWithout,
  };
  return `#!/usr/bin/env node
// A stand-in agent for the ${s.name} starter suite, written by \`skill-up init --engine custom\`:
// skill-up's custom-engine contract in a few lines (README "Custom engines"). Replace it with
// your own agent in eval.yaml (engine.custom.local.command and args).
//   node agent.mjs <SessionInput file> <skills folder>
// It reads the SessionInput, follows the skill when it is installed in the workspace's skills
// folder and answers generically otherwise, and prints a SessionResult on stdout.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SKILL = ${JSON.stringify(data, null, 2)};

const input = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const prompt = input.messages.at(-1).content;
const skillMd = join(process.argv[3], SKILL.name, 'SKILL.md');
const toolCalls = [];
const skillsUsed = [];
if (existsSync(skillMd)) {
  toolCalls.push({ name: 'read_file', input: { path: skillMd }, output: readFileSync(skillMd, 'utf8') });
  skillsUsed.push(SKILL.name);
}
const withSkill = skillsUsed.length > 0;
let answer = withSkill ? SKILL.answerWith : SKILL.answerWithout;
if (prompt.includes(SKILL.resultFile)) {
  const content = withSkill ? SKILL.resultWith : SKILL.resultWithout;
  writeFileSync(join(input.workspace, SKILL.resultFile), content);
  toolCalls.push({ name: 'write_file', input: { path: SKILL.resultFile, content } });
  answer = withSkill ? SKILL.saidResultWith : SKILL.saidResultWithout;
}
process.stdout.write(JSON.stringify({ exit_code: 0, final_message: answer, tool_calls: toolCalls, skills_used: skillsUsed }));
`;
}

/**
 * A YAML double-quoted scalar of `s`: JSON's escapes are YAML's, except that YAML also breaks
 * lines at U+0085, U+2028 and U+2029 (escaped here) and reads no raw control characters.
 */
function q(s: string): string {
  return JSON.stringify(s).replace(/[\u0085\u2028\u2029\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A plain YAML scalar when `s` is a skill name as the spec allows it (`[a-z0-9-]`), else a quoted one. */
function word(s: string): string {
  return /^[a-z0-9][a-z0-9-]*$/.test(s) && !/^[0-9.-]+$/.test(s) ? s : q(s);
}

/** A version as a YAML scalar: plain when YAML reads it as a string (`2.1.332`), else quoted (`"1.0"` would be a number). */
function ver(v: string): string {
  return /^\d+\.\d+\.\d+([-+][\w.-]+)?$/.test(v) ? v : q(v);
}

/** Blanks that align a trailing comment after `version: <scalar>` at column 32. */
function pad(version: string): string {
  return ' '.repeat(Math.max(1, 32 - `  version: ${version}`.length));
}

function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}
