/**
 * The grader's context folder, described and bounded (pure): which materials it holds, what
 * the prompt says of each, and the bounded text of the transcript, the generated-files list
 * and any text cut at `limits.max_bytes`. src/run/grader.ts writes the folder.
 */
import type { AgentJudgeContext } from '../../config/types.js';
import type { Transcript } from '../../engine/types.js';
import type { WorkspaceChanges } from '../../runtime/changes.js';
import type { MaterialLine } from './prompt.js';

/** The context folder, relative to the grader's working folder (collect_artifacts skips `.skill-up`). */
export const CONTEXT_DIR = '.skill-up/judge';

/** Material file names inside {@link CONTEXT_DIR}. */
export const MATERIAL_FILES = {
  finalMessage: 'final_message.md',
  transcript: 'transcript.json',
  workspaceDiff: 'workspace.diff',
  generatedFiles: 'generated_files.json',
  skill: 'skill',
  attachments: 'attachments',
  manifest: 'manifest.json',
} as const;

/** One material as the manifest records it (alibaba/skill-up's manifest, in snake_case JSON). */
export interface Material {
  key: 'final_message' | 'transcript' | 'workspace_diff' | 'generated_files' | 'skill_source' | 'attachment';
  /** Relative to {@link CONTEXT_DIR}. */
  path: string;
  /** What it is, for the prompt. */
  label: string;
  /** Bytes written, and before the cut (text materials). */
  bytes?: number;
  originalBytes?: number;
  truncated?: boolean;
}

/** The prompt's lines for `materials` (paths relative to the grader's working folder). */
export function materialLines(materials: readonly Material[]): MaterialLine[] {
  return materials.map((m) => ({
    path: `${CONTEXT_DIR}/${m.path}`,
    what: `${m.label}${m.truncated ? ` (cut to ${m.bytes} of ${m.originalBytes} bytes)` : ''}`,
  }));
}

/**
 * `text` cut to at most `maxBytes` UTF-8 bytes (at a character boundary) with a note saying
 * how much was left out; the text itself when it fits.
 */
export function boundText(text: string, maxBytes: number): { text: string; bytes: number; originalBytes: number; truncated: boolean } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, bytes: buf.length, originalBytes: buf.length, truncated: false };
  const note = `\n[skill-up: cut here, ${buf.length} bytes in all]\n`;
  let end = Math.max(0, maxBytes - Buffer.byteLength(note));
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  const out = buf.subarray(0, end).toString('utf8') + note;
  return { text: out, bytes: Buffer.byteLength(out), originalBytes: buf.length, truncated: true };
}

/** A string cut at `max` characters with a marker. */
function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}… [cut, ${s.length} characters]` : s;
}

/**
 * The agent's transcript for the grader, as JSON of at most `maxBytes` bytes: the last
 * `maxTurns` turns (all when unset), each with its prompt, final answer, tool calls (name,
 * input, output, error), skills activated and error. Long strings are cut, shorter and shorter
 * (4096 characters down to 64) until it fits; then the earliest turns are left out. The JSON
 * says what was left out (`turns_left_out`, `strings_cut_at`).
 */
export function boundTranscript(transcript: Transcript, limits: { maxBytes: number; maxTurns?: number }): { text: string; bytes: number; originalBytes: number; truncated: boolean } {
  const all = transcript.turns;
  const turns = limits.maxTurns !== undefined && all.length > limits.maxTurns ? all.slice(-limits.maxTurns) : all;
  const shape = (cap: number, from: number) => ({
    engine: transcript.engine,
    ...(transcript.model ? { model: transcript.model } : {}),
    ...(all.length - turns.length + from > 0 ? { turns_left_out: all.length - turns.length + from } : {}),
    ...(Number.isFinite(cap) ? { strings_cut_at: cap } : {}),
    turns: turns.slice(from).map((t) => ({
      turn: t.index,
      prompt: cut(t.prompt, cap),
      final_message: cut(t.finalText, cap),
      tool_calls: t.toolCalls.map((c) => ({
        name: c.name,
        input: cut(typeof c.input === 'string' ? c.input : (JSON.stringify(c.input) ?? ''), cap),
        ...(c.output !== undefined ? { output: cut(c.output, cap) } : {}),
        ...(c.isError ? { is_error: true } : {}),
      })),
      skill_activations: t.skillActivations.map((a) => a.skill),
      ...(t.error ? { error: `${t.error.kind}: ${cut(t.error.message, cap)}` } : {}),
    })),
  });
  const full = JSON.stringify(shape(Infinity, 0), null, 2);
  const originalBytes = Buffer.byteLength(full);
  if (originalBytes <= limits.maxBytes && turns.length === all.length) return { text: full, bytes: originalBytes, originalBytes, truncated: false };
  if (originalBytes <= limits.maxBytes) return { text: full, bytes: originalBytes, originalBytes, truncated: true };
  for (let cap = 4096; cap >= 64; cap = Math.floor(cap / 2)) {
    const s = JSON.stringify(shape(cap, 0), null, 2);
    if (Buffer.byteLength(s) <= limits.maxBytes) return { text: s, bytes: Buffer.byteLength(s), originalBytes, truncated: true };
  }
  for (let from = 1; from < turns.length; from++) {
    const s = JSON.stringify(shape(64, from), null, 2);
    if (Buffer.byteLength(s) <= limits.maxBytes) return { text: s, bytes: Buffer.byteLength(s), originalBytes, truncated: true };
  }
  const last = JSON.stringify({ engine: transcript.engine, turns_left_out: all.length, note: `the transcript does not fit in ${limits.maxBytes} bytes` });
  return { text: last, bytes: Buffer.byteLength(last), originalBytes, truncated: true };
}

/**
 * The generated-files list as JSON (`{added, modified, deleted, truncated}`), at most
 * `maxBytes` bytes: past it each list keeps its first entries and says how many it left out.
 */
export function boundChanges(changes: WorkspaceChanges | undefined, maxBytes: number): { text: string; bytes: number; originalBytes: number; truncated: boolean } {
  const c = changes ?? { added: [], modified: [], deleted: [], truncated: false };
  const doc = (n: number) => {
    const list = (xs: string[]) => xs.slice(0, n);
    const left = c.added.length + c.modified.length + c.deleted.length - list(c.added).length - list(c.modified).length - list(c.deleted).length;
    return JSON.stringify({ added: list(c.added), modified: list(c.modified), deleted: list(c.deleted), ...(changes ? {} : { unknown: true }), ...(c.truncated || left ? { truncated: true } : {}), ...(left ? { left_out: left } : {}) }, null, 2);
  };
  const full = doc(Infinity);
  const originalBytes = Buffer.byteLength(full);
  if (originalBytes <= maxBytes) return { text: full, bytes: originalBytes, originalBytes, truncated: false };
  let n = Math.max(c.added.length, c.modified.length, c.deleted.length);
  while (n > 0) {
    n = Math.floor(n / 2);
    const s = doc(n);
    if (Buffer.byteLength(s) <= maxBytes) return { text: s, bytes: Buffer.byteLength(s), originalBytes, truncated: true };
  }
  const s = doc(0);
  return { text: s, bytes: Buffer.byteLength(s), originalBytes, truncated: true };
}

/** Which text materials `ctx` asks for, and for `with_skill` whether the skill's files go in. */
export function wantedMaterials(ctx: AgentJudgeContext, variant: 'with_skill' | 'without_skill'): Set<Material['key']> {
  const out = new Set<Material['key']>();
  if (ctx.finalMessage) out.add('final_message');
  if (ctx.transcript) out.add('transcript');
  if (ctx.workspaceDiff) out.add('workspace_diff');
  if (ctx.generatedFiles) out.add('generated_files');
  if (ctx.skillSource && variant === 'with_skill') out.add('skill_source');
  if (ctx.attachments.length) out.add('attachment');
  return out;
}
