/**
 * Review findings on the redactor: credential names by word part (finding 2), which suite
 * values are secrets (1c), JSON keys left whole (1b), raw capture redacted after grading
 * (1a, unit level), `-vv` stderr lines cut after redaction (3), more URL encodings (4), secrets
 * in artifact file names (5).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { envSecrets, isSecretName, REDACTED, Redactor, resetRedactor, suiteValueIsSecret } from '../../src/util/redact.js';
import { jsonText, redactTextFileInPlace, redactUntracked } from '../../src/util/out.js';
import { redactJson } from '../../src/run/events.js';
import { cutLine, runProcess, STDERR_LINE_DISPLAY } from '../../src/engine/proc.js';
import { setProcessObserver } from '../../src/engine/observe.js';
import { spillText } from '../../src/engine/final-text.js';
import { collectArtifacts } from '../../src/runtime/artifacts.js';

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'su-review-'));
}

afterEach(() => {
  resetRedactor();
  setProcessObserver(undefined);
});

describe('credential names (finding 2)', () => {
  it('takes DB_PASS, MYSQL_PWD, PGPASS, SMTP_PASS, SSHPASS, SESSION_ID, *_SESSION', () => {
    for (const n of ['DB_PASS', 'MYSQL_PWD', 'PGPASS', 'SMTP_PASS', 'SSHPASS', 'SESSION_ID', 'APP_SESSION', 'MY_API_KEY', 'DB_PASSWORD']) expect(isSecretName(n), n).toBe(true);
    const found = envSecrets({ DB_PASS: 'pass-value-1', MYSQL_PWD: 'pwd-value-22', PGPASS: 'pg-value-333', SMTP_PASS: 'smtp-value-4', SSHPASS: 'ssh-value-55', SESSION_ID: 'sess-value-6', APP_SESSION: 'app-sess-val' });
    expect(found.sort()).toEqual(['app-sess-val', 'pass-value-1', 'pg-value-333', 'pwd-value-22', 'sess-value-6', 'smtp-value-4', 'ssh-value-55']);
  });

  it('never PWD/OLDPWD themselves, PASSAGE-like words, or desktop-session descriptors', () => {
    for (const n of ['PWD', 'OLDPWD', 'PASSAGE_TEXT', 'COMPASS_HOME', 'BYPASS_LIST', 'XDG_SESSION_TYPE', 'DESKTOP_SESSION', 'SESSIONS_DIR']) expect(isSecretName(n), n).toBe(false);
    expect(envSecrets({ PWD: '/home/user/project', OLDPWD: '/home/user/elsewhere', PASSAGE_TEXT: 'a long passage' })).toEqual([]);
  });
});

describe('which suite values are secrets (finding 1c)', () => {
  it('a plain word under a non-credential name is not; anything else is', () => {
    expect(suiteValueIsSecret('VARIANT_LABEL', 'with_skill')).toBe(false);
    expect(suiteValueIsSecret('KEYNAME', 'final_message')).toBe(false);
    expect(suiteValueIsSecret('STAGE', 'production')).toBe(false);
    expect(suiteValueIsSecret('GREETING', 'Hello, World')).toBe(true);
    expect(suiteValueIsSecret('LABEL', 'release42x')).toBe(true);
    expect(suiteValueIsSecret('DB_PASS', 'hunter_two')).toBe(true);
    expect(suiteValueIsSecret('APIKEY', 'abcdefghij')).toBe(true);
    expect(suiteValueIsSecret('SESSION_ID', 'abcdefghij')).toBe(true);
  });

  it("skill-up's own words are never secrets, whoever registers them", () => {
    const r = new Redactor(['with_skill', 'without_skill', 'completed', 'cancelled', '[REDACTED]', 'real-secret-1']);
    expect(r.values()).toEqual(['real-secret-1']);
    expect(r.redact('a/with_skill/run-1 without_skill completed')).toBe('a/with_skill/run-1 without_skill completed');
  });
});

describe('JSON keys (finding 1b)', () => {
  it('identifier keys are never redacted; values are; other keys are', () => {
    resetRedactor(new Redactor(['final_message', 'Hello, World']));
    const v = { final_message: 'say final_message', 'Hello, World': 1, nested: [{ final_message: 'Hello, World' }] };
    expect(JSON.parse(jsonText(v, 0))).toEqual({ final_message: `say ${REDACTED}`, [REDACTED]: 1, nested: [{ final_message: REDACTED }] });
    expect(redactJson(v, [])).toEqual({ final_message: `say ${REDACTED}`, [REDACTED]: 1, nested: [{ final_message: REDACTED }] });
  });
});

describe('URL encodings (finding 4)', () => {
  const secret = "pa(ss)word!*'x/y+z ü";
  it('RFC 3986 strict, Python quote() and quote_plus(), encodeURI, either case', () => {
    const r = new Redactor([secret]);
    const strict = encodeURIComponent(secret).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
    const python = strict.replace(/%2F/g, '/');
    const forms = [strict, strict.toLowerCase(), python, python.replace(/%20/g, '+'), strict.replace(/%20/g, '+'), encodeURI(secret), encodeURI(secret).toLowerCase(), encodeURIComponent(secret)];
    expect(python).toBe('pa%28ss%29word%21%2A%27x/y%2Bz%20%C3%BC');
    expect(encodeURI(secret)).toBe("pa(ss)word!*'x/y+z%20%C3%BC");
    for (const f of forms) expect(r.redact(`<${f}>`), f).toBe(`<${REDACTED}>`);
  });
});

describe('raw capture, redacted after grading (finding 1a)', () => {
  it('engine output reaches its file raw and untracked; redactUntracked cleans it at job end', async () => {
    resetRedactor(new Redactor(['Hello, World']));
    const dir = tmp();
    const outputs = join(dir, 'outputs');
    mkdirSync(outputs);
    const r = await runProcess('/bin/sh', ['-c', 'echo "out Hello, World"; echo "err Hello, World" >&2'], { cwd: dir, env: { PATH: process.env.PATH }, stdoutFile: join(outputs, 'turn-1.stdout.txt'), stderrFile: join(outputs, 'turn-1.stderr.txt'), timeoutMs: 10_000 });
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(outputs, 'turn-1.stdout.txt'), 'utf8')).toBe('out Hello, World\n');
    const big = `${'y'.repeat(70_000)} Hello, World`;
    const stored = await spillText(dir, 'outputs/turn-1.final.txt', big);
    expect(stored.bytes).toBe(Buffer.byteLength(big));
    expect(readFileSync(join(dir, 'outputs/turn-1.final.txt'), 'utf8') === big).toBe(true);
    // At job end: the final text with its new length, then every untracked file.
    expect(await redactTextFileInPlace(join(dir, 'outputs/turn-1.final.txt'), stored.bytes)).toBe(Buffer.byteLength(`${'y'.repeat(70_000)} ${REDACTED}`));
    await redactUntracked(outputs);
    expect(readFileSync(join(outputs, 'turn-1.stdout.txt'), 'utf8')).toBe(`out ${REDACTED}\n`);
    expect(readFileSync(join(outputs, 'turn-1.stderr.txt'), 'utf8')).toBe(`err ${REDACTED}\n`);
  });

  it('redactTextFileInPlace keeps the trailing rest apart and reports an unchanged file as is', async () => {
    resetRedactor(new Redactor(['Hello, World']));
    const f = join(tmp(), 'a.txt');
    writeFileSync(f, 'say Hello, World\n\n');
    expect(await redactTextFileInPlace(f, 16)).toBe(4 + REDACTED.length);
    expect(readFileSync(f, 'utf8')).toBe(`say ${REDACTED}\n\n`);
    expect(await redactTextFileInPlace(f, 14)).toBe(14);
  });
});

describe('-vv stderr lines (finding 3)', () => {
  const secret = 'STRADDLE-secret-0123456789abcdef';
  const pieces = [secret.slice(0, 10), secret.slice(-10), secret.slice(8, 24)];

  it('cutLine redacts before cutting: a secret straddling the cut is never shown in part', () => {
    resetRedactor(new Redactor([secret]));
    const line = `${'a'.repeat(STDERR_LINE_DISPLAY - 16)}${secret}${'b'.repeat(100)}`;
    const shown = cutLine(line);
    for (const p of pieces) expect(shown).not.toContain(p);
    expect(shown).toMatch(/… \[\+\d+ bytes\]$/);
    expect(shown.length).toBeLessThanOrEqual(STDERR_LINE_DISPLAY + 30);
    expect(cutLine('short line')).toBe('short line');
  });

  it('a long line from a process is shown once, cut, with no part of a secret at 4096 or 65536', async () => {
    resetRedactor(new Redactor([secret]));
    const lines: string[] = [];
    setProcessObserver({ stderrLine: (_job, l) => lines.push(l) });
    const dir = tmp();
    const script = `const s=${JSON.stringify(secret)};process.stderr.write('a'.repeat(4096-16)+s+'b'.repeat(65536-4096-32)+s+'c'.repeat(10000)+'\\nnext line\\n'+'d'.repeat(70000)+s)`;
    const r = await runProcess(process.execPath, ['-e', script], { cwd: dir, env: { PATH: process.env.PATH }, stdoutFile: join(dir, 'o.txt'), stderrFile: join(dir, 'e.txt'), timeoutMs: 20_000 });
    expect(r.exitCode).toBe(0);
    expect(lines).toHaveLength(3);
    const total = 4096 - 16 + 32 + (65536 - 4096 - 32) + 32 + 10000;
    expect(lines[0]!.startsWith('a'.repeat(100))).toBe(true);
    const m = /… \[\+(\d+) bytes\]$/.exec(lines[0]!);
    expect(m).not.toBeNull();
    expect(lines[0]!.length).toBeLessThanOrEqual(STDERR_LINE_DISPLAY + 30);
    // Shown + skipped = the whole line (the shown part holds a 10-character marker for 32 bytes).
    expect(Buffer.byteLength(lines[0]!.slice(0, m!.index)) + Number(m![1])).toBe(total - 32 + REDACTED.length);
    expect(lines[1]).toBe('next line');
    for (const l of lines) for (const p of pieces) expect(l).not.toContain(p);
  });
});

describe('artifact file names (finding 5)', () => {
  it('a secret in a collected file or folder name is redacted in the copy and in the list', async () => {
    resetRedactor(new Redactor(['Hello, World']));
    const ws = tmp();
    mkdirSync(join(ws, 'dir-Hello, World'));
    writeFileSync(join(ws, 'name-Hello, World.txt'), 'body Hello, World');
    writeFileSync(join(ws, 'dir-Hello, World', 'x.txt'), 'x');
    const dest = join(tmp(), 'outputs', 'workspace');
    mkdirSync(dest, { recursive: true });
    const got = await collectArtifacts(ws, ['**'], dest);
    expect(got).toEqual([`dir-${REDACTED}/x.txt`, `name-${REDACTED}.txt`]);
    expect(readFileSync(join(dest, `name-${REDACTED}.txt`), 'utf8')).toBe(`body ${REDACTED}`);
    expect(readFileSync(join(dest, `dir-${REDACTED}`, 'x.txt'), 'utf8')).toBe('x');
  });
});
