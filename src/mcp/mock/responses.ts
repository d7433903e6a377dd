/**
 * `tool_responses.<tool>`: canned answers chosen by the call's arguments. The first
 * `responses[]` entry whose `when` matches (each listed key deep-equal to the argument of that
 * name; unlisted arguments are ignored) answers, else `default`, else a tool error. A string
 * answer is a template (src/mcp/mock/template.ts); any other value is answered as its JSON text.
 */
import { isDeepStrictEqual } from 'node:util';
import type { MockTool } from './spec.js';
import { parseTemplate, renderTemplate, type Template } from './template.js';
import type { ToolAnswer } from './filesystem.js';

type Answer = { kind: 'template'; template: Template } | { kind: 'json'; text: string };

/** A tool of `tool_responses` with its templates parsed once. */
export interface CompiledTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  responses: { when: Record<string, unknown>; answer: Answer }[];
  fallback?: Answer;
}

/** What a canned call answered, and how it was chosen (for the call log). */
export interface CannedAnswer extends ToolAnswer {
  /** `responses[i]`, `default`, or undefined when nothing was configured for these arguments. */
  matched?: string;
  /** Template arguments that were missing and had no default (rendered as ''). */
  missing: string[];
}

function compileAnswer(v: string | object): Answer {
  return typeof v === 'string' ? { kind: 'template', template: parseTemplate(v) } : { kind: 'json', text: JSON.stringify(v, null, 2) };
}

/**
 * Compiles one `tool_responses` entry.
 * @throws TemplateError when an answer template does not parse (checkMockSpec reports it first).
 */
export function compileTool(name: string, tool: MockTool): CompiledTool {
  const out: CompiledTool = {
    name,
    description: tool.description ?? `Mocked tool ${name}.`,
    inputSchema: tool.input_schema ?? { type: 'object', additionalProperties: true },
    responses: (tool.responses ?? []).map((r) => ({ when: r.when, answer: compileAnswer(r.response) })),
  };
  if (tool.default !== undefined) out.fallback = compileAnswer(tool.default);
  return out;
}

function matches(when: Record<string, unknown>, args: Record<string, unknown>): boolean {
  for (const key of Object.keys(when)) {
    if (!Object.prototype.hasOwnProperty.call(args, key) || !isDeepStrictEqual(args[key], when[key])) return false;
  }
  return true;
}

function render(answer: Answer, args: Record<string, unknown>): { text: string; missing: string[] } {
  return answer.kind === 'json' ? { text: answer.text, missing: [] } : renderTemplate(answer.template, args);
}

/** Answers a call of `tool` with `args`. Never throws. */
export function answerCall(tool: CompiledTool, args: Record<string, unknown>): CannedAnswer {
  const i = tool.responses.findIndex((r) => matches(r.when, args));
  if (i >= 0) return { ...render(tool.responses[i]!.answer, args), isError: false, matched: `responses[${i}]` };
  if (tool.fallback) return { ...render(tool.fallback, args), isError: false, matched: 'default' };
  return { text: `no response configured for ${tool.name} with these arguments`, isError: true, missing: [] };
}
