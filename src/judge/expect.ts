/**
 * The `expect` gate: cheap deterministic checks run before any judge. Each check yields one
 * assertion; if any fails the case fails and no judge runs (alibaba/skill-up semantics).
 *
 * Matching on the final message is a case-sensitive substring test. File paths are
 * workspace-relative and confined to the workspace (see `paths.ts`); `golden_file` is the
 * skill author's file (absolute, or relative to the skill root).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Assertion, JudgeInput } from './types.js';
import { around, q } from './evidence.js';
import { finalMessageText, searchedEvidence, searchText, withFullText } from './text.js';
import { inspectPath, readWorkspaceFile } from './paths.js';
import { skillInvoked } from './rules.js';

/**
 * Runs every `expect` check of `input.case` in a fixed order: must_contain, must_not_contain,
 * exit_code, files_exist, files_not_exist, file_contains, golden_file.
 *
 * When the case declares neither `expect.exit_code` nor any judge, an implicit
 * `exit_code: 0` check comes first (a non-zero engine exit then fails the case, as in
 * alibaba/skill-up). Never throws for missing or unreadable files: those are failed assertions.
 */
export async function checkExpect(input: JudgeInput): Promise<Assertion[]> {
  const exp = input.case.expect;
  const out: Assertion[] = [];
  // The final message as judges read it: a large one is streamed from its file (src/judge/text.ts).
  const msg = await searchText(finalMessageText(input), [...exp.mustContain, ...exp.mustNotContain]);

  if (exp.exitCode === undefined && input.case.judges.length === 0) {
    out.push({
      text: 'exit_code: 0 (implicit: no exit_code expectation and no judge)',
      passed: input.exitCode === 0,
      evidence: `actual exit code: ${input.exitCode}`,
    });
  }

  for (const s of exp.mustContain) {
    const r = searchedEvidence(msg, s);
    out.push({ text: `must_contain: ${q(s, 120)}`, passed: r.found, evidence: r.evidence });
  }
  for (const s of exp.mustNotContain) {
    const r = searchedEvidence(msg, s);
    out.push({
      text: `must_not_contain: ${q(s, 120)}`,
      passed: !r.found,
      evidence: r.found ? r.evidence : `not found in final message (${msg.length} chars)`,
    });
  }
  if (exp.exitCode !== undefined) {
    out.push({
      text: `exit_code: ${exp.exitCode}`,
      passed: input.exitCode === exp.exitCode,
      evidence: `actual exit code: ${input.exitCode}`,
    });
  }
  for (const p of exp.filesExist) {
    const info = await inspectPath(input.workspace, p);
    out.push({ text: `files_exist: ${p}`, passed: info.exists, evidence: `${p}: ${info.description}` });
  }
  for (const p of exp.filesNotExist) {
    const info = await inspectPath(input.workspace, p);
    out.push({
      text: `files_not_exist: ${p}`,
      passed: !info.exists && !info.refused,
      evidence: `${p}: ${info.description}`,
    });
  }
  for (const fc of exp.fileContains) {
    const text = `file_contains: ${fc.path} contains ${q(fc.content, 120)}`;
    const file = await readWorkspaceFile(input.workspace, fc.path);
    if (!file.ok) {
      out.push({ text, passed: false, evidence: file.reason });
      continue;
    }
    const at = file.text.indexOf(fc.content);
    out.push({
      text,
      passed: at >= 0,
      evidence:
        at >= 0
          ? `found at offset ${at} of ${fc.path} (${file.size} bytes): ${around(file.text, at, fc.content.length)}`
          : `not found in ${fc.path} (${file.size} bytes): ${q(file.text, 200)}`,
    });
  }
  if (exp.goldenFile !== undefined) out.push(await checkGolden(exp.goldenFile, input));
  for (const [names, want, key] of [[exp.skillInvoked ?? [], true, 'skill_invoked'], [exp.skillNotInvoked ?? [], false, 'skill_not_invoked']] as const) {
    for (const name of names) {
      const c = skillInvoked(input, name, want);
      out.push({ text: `${key}: ${name}`, passed: c.holds, evidence: c.evidence });
    }
  }
  return out;
}

/** Normalises for golden comparison: CRLF → LF, trailing white space of the whole text dropped. */
export function normaliseGolden(s: string): string {
  return s.replace(/\r\n/g, '\n').trimEnd();
}

/**
 * Describes where two texts first differ, line by line: `first difference at line 3:
 * expected "…", got "…" (expected 10 lines, got 9)`. Returns undefined when equal.
 */
export function firstDifference(expected: string, actual: string): string | undefined {
  if (expected === actual) return undefined;
  const e = expected.split('\n');
  const a = actual.split('\n');
  const n = Math.max(e.length, a.length);
  for (let i = 0; i < n; i++) {
    if (e[i] !== a[i]) {
      const exp = e[i] === undefined ? '<end of file>' : q(e[i]!, 160);
      const got = a[i] === undefined ? '<end of message>' : q(a[i]!, 160);
      return `first difference at line ${i + 1}: expected ${exp}, got ${got} (expected ${e.length} lines, got ${a.length})`;
    }
  }
  return 'texts differ';
}

async function checkGolden(golden: string, input: JudgeInput): Promise<Assertion> {
  const abs = path.isAbsolute(golden) ? golden : path.resolve(input.skillDir, golden);
  const shown = path.relative(input.skillDir, abs) || abs;
  const text = `golden_file: ${shown.startsWith('..') ? abs : shown}`;
  let want: string;
  try {
    want = await readFile(abs, 'utf8');
  } catch (e) {
    return { text, passed: false, evidence: `golden file could not be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message} (${abs})` };
  }
  const diff = await withFullText(finalMessageText(input), (msg) => firstDifference(normaliseGolden(want), normaliseGolden(msg)));
  return {
    text,
    passed: diff === undefined,
    evidence: diff ?? `final message equals the golden file (${normaliseGolden(want).split('\n').length} lines, trailing white space ignored)`,
  };
}
