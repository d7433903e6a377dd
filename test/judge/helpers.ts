import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CaseSpec, ExpectSpec, JudgeSpec } from '../../src/config/types.js';
import type { ToolCall, TranscriptTurn } from '../../src/engine/types.js';
import type { JudgeInput } from '../../src/judge/types.js';

export function emptyExpect(over: Partial<ExpectSpec> = {}): ExpectSpec {
  return { mustContain: [], mustNotContain: [], filesExist: [], filesNotExist: [], fileContains: [], skillInvoked: [], skillNotInvoked: [], ...over };
}

export function makeCase(over: Partial<CaseSpec> = {}): CaseSpec {
  return {
    id: 'case-1',
    file: '/skill/evals/cases/case-1.yaml',
    tags: [],
    turns: [{ content: 'do it', capture: [] }],
    context: { files: {} },
    timeoutSeconds: 300,
    maxTurns: 10,
    trials: 1,
    expect: emptyExpect(),
    judges: [],
    collectArtifacts: [],
    ...over,
  };
}

export function turn(index: number, finalText: string, toolCalls: ToolCall[] = [], over: Partial<TranscriptTurn> = {}): TranscriptTurn {
  return {
    index,
    prompt: `prompt ${index}`,
    finalText,
    toolCalls,
    skillActivations: [],
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    durationMs: 10,
    exitCode: 0,
    rawFiles: [],
    ...over,
  };
}

/** A fresh temporary folder with the given files (relative path → content); removed by `cleanup`. */
export function tempDir(files: Record<string, string> = {}): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'skill-up-judge-'));
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, content);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function makeInput(over: {
  workspace: string;
  finalMessage?: string;
  exitCode?: number;
  expect?: Partial<ExpectSpec>;
  judges?: JudgeSpec[];
  turns?: TranscriptTurn[];
  turnStatus?: JudgeInput['turnStatus'];
  skillDir?: string;
  signal?: AbortSignal;
}): JudgeInput {
  const finalMessage = over.finalMessage ?? '';
  const turns = over.turns ?? [turn(1, finalMessage)];
  return {
    case: makeCase({ expect: emptyExpect(over.expect), judges: over.judges ?? [] }),
    transcript: { engine: 'claude_code', turns },
    finalMessage,
    exitCode: over.exitCode ?? 0,
    workspace: over.workspace,
    transcriptPath: path.join(over.workspace, '..', 'transcript.json'),
    skillDir: over.skillDir ?? over.workspace,
    turnStatus: over.turnStatus ?? turns.map(() => 'completed'),
    signal: over.signal,
  };
}
