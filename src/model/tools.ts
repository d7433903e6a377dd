/**
 * Maps abstract actions (`use_skill`, `write_file`, `run`, `read_file`) onto the tools an
 * engine offered in its request. Each protocol module supplies a `ToolTable`: for every
 * action, the tool names to look for in order, each with a builder for the tool's input.
 * Builders choose argument names from the tool's input schema when the engine sent one
 * (e.g. `file_path` vs `filePath` vs `absolute_path`), so one builder serves many engines.
 */
import { posix, win32 } from 'node:path';
import type { Action, ToolActionKind, ToolSpec } from './types.js';

/** Values a builder may need besides the action itself. */
export interface ActionContext {
  /** Engine working directory (for absolute paths); unknown → paths stay as written. */
  cwd?: string;
  /** Skill name → absolute SKILL.md path from the engine's listing (Codex roots table; `skillFilesOf`). */
  skillFiles?: Record<string, string>;
}

export type ToolAction = Extract<Action, { kind: ToolActionKind }>;

/** One tool that can carry an action, and how to build its input. */
export interface ToolCandidate {
  name: string;
  build(action: ToolAction, tool: ToolSpec, ctx: ActionContext): Record<string, unknown>;
}

/** Per action kind, candidate tools in preference order. */
export type ToolTable = Record<ToolActionKind, ToolCandidate[]>;

export type MappedAction =
  | { ok: true; name: string; input: Record<string, unknown> }
  /** `wanted`: the first candidate's name, for the "not offered" message. */
  | { ok: false; wanted: string };

/**
 * Finds the first candidate the engine offered (exact name first, then case-insensitive)
 * and builds its input. Tools in a namespace (an MCP server's, on Codex) never carry an
 * abstract action: a server's `read_file` is not the engine's.
 */
export function mapToolAction(action: ToolAction, tools: ToolSpec[], table: ToolTable, ctx: ActionContext): MappedAction {
  const candidates = table[action.kind];
  const flat = tools.filter((t) => t.namespace === undefined);
  for (const exact of [true, false]) {
    for (const c of candidates) {
      const tool = flat.find((t) => (exact ? t.name === c.name : t.name.toLowerCase() === c.name.toLowerCase()));
      if (tool) return { ok: true, name: tool.name, input: c.build(action, tool, ctx) };
    }
  }
  return { ok: false, wanted: candidates[0]?.name ?? action.kind };
}

/** Property names the tool's schema declares (properties and required). */
export function schemaKeys(tool: ToolSpec): string[] {
  const s = tool.schema;
  if (!s) return [];
  return [...Object.keys(s.properties ?? {}), ...(Array.isArray(s.required) ? s.required : [])];
}

/** First of `preferred` the schema declares, else `preferred[0]`. */
export function pickKey(tool: ToolSpec, preferred: string[]): string {
  const keys = schemaKeys(tool);
  return preferred.find((k) => keys.includes(k)) ?? preferred[0]!;
}

/** Joins a relative path to `cwd` (POSIX, or Windows when cwd looks like `C:\…`). */
export function absolutePath(p: string, cwd: string | undefined): string {
  if (!cwd) return p;
  const lib = /^[A-Za-z]:[\\/]/.test(cwd) ? win32 : posix;
  return lib.isAbsolute(p) ? p : lib.join(cwd, p);
}

const PATH_KEYS = ['file_path', 'filePath', 'absolute_path', 'path'];
const CONTENT_KEYS = ['content', 'contents', 'text'];

/** Skill tool: `{skill: name}` (or the schema's `name` / `command`). */
export const skillInput: ToolCandidate['build'] = (a, tool) => ({
  [pickKey(tool, ['skill', 'name', 'command'])]: (a as Extract<ToolAction, { kind: 'use_skill' }>).skill,
});

/** File writer: absolute path + content under the schema's key names. */
export const writeInput: ToolCandidate['build'] = (a, tool, ctx) => {
  const w = a as Extract<ToolAction, { kind: 'write_file' }>;
  return { [pickKey(tool, PATH_KEYS)]: absolutePath(w.path, ctx.cwd), [pickKey(tool, CONTENT_KEYS)]: w.content };
};

/** File reader: absolute path under the schema's key name. */
export const readInput: ToolCandidate['build'] = (a, tool, ctx) => ({
  [pickKey(tool, PATH_KEYS)]: absolutePath((a as Extract<ToolAction, { kind: 'read_file' }>).path, ctx.cwd),
});

/**
 * Shell: `{command}` (or `cmd`), plus `description` when the schema declares one or sends
 * no properties at all (Claude's `Bash` takes an optional description).
 */
export const shellInput: ToolCandidate['build'] = (a, tool) => {
  const r = a as Extract<ToolAction, { kind: 'run' }>;
  const input: Record<string, unknown> = { [pickKey(tool, ['command', 'cmd'])]: r.command };
  const keys = schemaKeys(tool);
  if (keys.includes('description') || !tool.schema?.properties) input.description = r.description ?? describeCommand(r.command);
  return input;
};

function describeCommand(cmd: string): string {
  const one = cmd.replace(/\s+/g, ' ').trim();
  return `Run: ${one.length > 60 ? one.slice(0, 57) + '...' : one}`;
}
