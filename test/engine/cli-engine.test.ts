/**
 * The error precedence every CLI engine shares (src/engine/cli-engine.ts `decideTurnError`),
 * once for all engines: each engine's adapter.test.ts checks only its own `ErrorFacts` (what
 * completes a turn, its no-result message, exit codes and timeout details of its own).
 */
import { describe, expect, it } from 'vitest';
import { decideTurnError, type ErrorFacts } from '../../src/engine/cli-engine.js';
import { firstErrorLine } from '../../src/engine/proc.js';
import type { EngineError } from '../../src/engine/types.js';
import { procResult } from '../support/engine.js';

const done: ErrorFacts = { completed: true, noResult: 'no result line' };
const notDone: ErrorFacts = { completed: false, noResult: 'no result line' };
const reported: { error?: EngineError } = { error: { kind: 'api', message: 'HTTP 500 from the model' } };
const clean: { error?: EngineError } = {};
const maxTurns: EngineError = { kind: 'protocol', message: 'max turns reached (3)' };

describe('decideTurnError: one precedence for every CLI engine', () => {
  it('a start failure comes first: ENOENT and EACCES are `missing`, any other `crash`, with the start error', () => {
    const enoent = procResult({ exitCode: null, startError: 'command not found: /x', startErrorCode: 'ENOENT' });
    expect(decideTurnError(enoent, reported, 1000, '', notDone)).toEqual({ kind: 'missing', message: 'command not found: /x' });
    expect(decideTurnError(procResult({ exitCode: null, startError: 'not executable', startErrorCode: 'EACCES' }), clean, 1000, '', done)?.kind).toBe('missing');
    expect(decideTurnError(procResult({ exitCode: null, startError: 'spawn failed', startErrorCode: 'EMFILE' }), clean, 1000, '', done)).toEqual({ kind: 'crash', message: 'spawn failed' });
  });

  it('then a timeout (the limit in seconds, the engine’s detail appended), before the output’s own error', () => {
    const timedOut = procResult({ exitCode: null, timedOut: true });
    expect(decideTurnError(timedOut, reported, 1500, 'stderr', done)).toEqual({ kind: 'timeout', message: 'timed out after 1.5 s (process group killed)' });
    expect(decideTurnError(timedOut, clean, 1000, '', { ...notDone, timeoutDetail: "codex's last error: Reconnecting" })).toEqual({
      kind: 'timeout',
      message: "timed out after 1.0 s (process group killed); codex's last error: Reconnecting",
    });
  });

  it('then a cancel, then stdout cut at the cap (`protocol`)', () => {
    expect(decideTurnError(procResult({ exitCode: null, cancelled: true }), reported, 1000, '', done)).toEqual({ kind: 'cancelled', message: 'cancelled (process group killed)' });
    const cut = decideTurnError(procResult({ stdoutTruncated: true, stdoutBytes: 9_000_000 }), reported, 1000, '', done);
    expect(cut?.kind).toBe('protocol');
    expect(cut?.message).toMatch(/^stdout larger than \d+ bytes \(9000000 bytes\)/);
  });

  it('then the error the output reports, before the engine’s exit error and the exit code', () => {
    expect(decideTurnError(procResult({ exitCode: 53 }), reported, 1000, 'boom', { ...notDone, exitError: maxTurns })).toEqual(reported.error);
  });

  it('then the engine’s exit error, before a non-zero exit', () => {
    expect(decideTurnError(procResult({ exitCode: 53 }), clean, 1000, 'boom', { ...notDone, exitError: maxTurns })).toEqual(maxTurns);
  });

  it('then a non-zero exit or a signal: `crash` with the last lines of stderr', () => {
    expect(decideTurnError(procResult({ exitCode: 1 }), clean, 1000, 'Error: boom\n', done)).toEqual({ kind: 'crash', message: 'exited with code 1: Error: boom' });
    expect(decideTurnError(procResult({ exitCode: null, signal: 'SIGSEGV' }), clean, 1000, '', done)).toEqual({ kind: 'crash', message: 'killed by SIGSEGV' });
    const long = Array.from({ length: 8 }, (_, i) => `line ${i + 1}`).join('\n');
    expect(decideTurnError(procResult({ exitCode: 2 }), clean, 1000, long, done)?.message).toBe('exited with code 2: line 4\nline 5\nline 6\nline 7\nline 8');
  });

  it('a crash quotes stderr’s first error line (from its head, past a long stack) and names the stderr file, saying relative to what', () => {
    const stack = ['file:///x/agent.mjs:3', '             ^', '', "TypeError: Cannot read properties of undefined (reading 'retries')", ...Array.from({ length: 40 }, (_, i) => `    at frame${i} (node:internal/x:${i}:1)`), '', 'Node.js v20.20.2'].join('\n');
    const tail = stack.split('\n').slice(-6).join('\n'); // only frames: the error line is not in it
    // Relative to the job folder, saying so; the same text for every trial that failed alike, so their reasons group.
    const ref = { file: 'outputs/turn-1.stderr.txt', head: stack };
    expect(decideTurnError(procResult({ exitCode: 1 }), clean, 1000, tail, done, ref)?.message).toBe(
      "exited with code 1: TypeError: Cannot read properties of undefined (reading 'retries') (stderr: outputs/turn-1.stderr.txt in the job folder)",
    );
    expect(decideTurnError(procResult({ exitCode: 2 }), clean, 1000, 'a\nb\n', done, { file: 'outputs/turn-2.stderr.txt', head: 'a\nb\n' })?.message).toBe('exited with code 2: a\nb (stderr: outputs/turn-2.stderr.txt in the job folder)');
    // Nothing on stderr: no file named.
    expect(decideTurnError(procResult({ exitCode: 2 }), clean, 1000, '', done, { file: 'outputs/turn-1.stderr.txt', head: '' })?.message).toBe('exited with code 2');
  });

  it('firstErrorLine: the shapes runtimes print, never a stack frame', () => {
    for (const line of ['Error: boom', 'TypeError: x is not a function', 'Error [ERR_MODULE_NOT_FOUND]: Cannot find package', 'java.lang.IllegalStateException: bad', 'ValueError: invalid literal', 'error: unexpected argument', 'error[E0425]: cannot find value', 'fatal: not a git repository', 'panic: runtime error', 'ERROR something broke']) {
      expect(firstErrorLine(`noise\n  ${line}\n    at f (x.js:1:1)`), line).toBe(line);
    }
    expect(firstErrorLine('    at ModuleJob.run (node:internal/modules/esm/module_job:325:25)\nNode.js v20')).toBeUndefined();
    expect(firstErrorLine('', 'later: Error: not at the start\nRuntimeError: second text')).toBe('RuntimeError: second text');
  });

  it('last, an exit 0 the output does not show as completed is `protocol` with the engine’s message; a completed one is no error', () => {
    expect(decideTurnError(procResult(), clean, 1000, '', notDone)).toEqual({ kind: 'protocol', message: 'no result line' });
    expect(decideTurnError(procResult(), clean, 1000, '', done)).toBeUndefined();
  });
});
