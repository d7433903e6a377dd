/**
 * The redactor (src/util/redact.ts) and the output layer (src/util/out.ts): which values are
 * secrets, every encoding searched, overlapping secrets, secrets split across stream chunks,
 * the no-secret fast path, and each write function.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  envSecrets,
  MIN_SECRET_LENGTH,
  REDACTED,
  Redactor,
  resetRedactor,
  secretVariants,
  trieSource,
  urlSecrets,
} from '../../src/util/redact.js';
import { appendText, copyRedacted, createRedactingWriteStream, jsonText, redactFileInPlace, redactUntracked, writeJson, writeJsonSync, writeText, writeTextSync } from '../../src/util/out.js';
import { redact, secretValues } from '../../src/report/redact.js';
import { redactJson } from '../../src/run/events.js';

const SECRET = 'S3cr3t-Value_42';

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'su-redact-'));
}

/** Base64 of `pre + s + post` (each alignment of `s` inside a larger blob). */
function embedded64(s: string, pre: string, post = 'tail!'): string {
  return Buffer.from(pre + s + post).toString('base64');
}

afterEach(() => resetRedactor());

describe('which values are secrets', () => {
  it('takes credential-named variables, never short values or placeholders', () => {
    const found = envSecrets({
      MY_API_KEY: 'key-value-123',
      GITHUB_TOKEN: 'ghp-token-value',
      DB_PASSWORD: 'hunter2-long',
      SESSION_COOKIE: 'cookie-value-1',
      SHORT_TOKEN: 'abc1234', // 7 characters: too short
      ANTHROPIC_API_KEY: 'dummy',
      OPENAI_API_KEY: 'skill-up-job:case/with_skill/run-1',
      GIT_AUTHOR_NAME: 'Jane Q. Public', // AUTHOR is not AUTH
      EDITOR: 'vim-is-my-editor',
      LANG: 'C.UTF-8',
    });
    expect(found.sort()).toEqual(['cookie-value-1', 'ghp-token-value', 'hunter2-long', 'key-value-123']);
    expect(MIN_SECRET_LENGTH).toBe(8);
  });

  it('finds URL passwords (userinfo) and credential query parameters in any variable', () => {
    expect(envSecrets({ DATABASE_URL: 'postgres://user:pa%40ssw0rd@host:5432/db' }).sort()).toEqual(['pa%40ssw0rd', 'pa@ssw0rd', 'user:pa%40ssw0rd'].sort());
    expect(urlSecrets('https://x-access-token:ghs_abcdefgh12345678@github.com/o/r.git')).toContain('ghs_abcdefgh12345678');
    expect(urlSecrets('https://TOKENONLYabcdef@github.com/o/r')).toContain('TOKENONLYabcdef');
    expect(urlSecrets('https://api.example/v1?api_key=QUERYKEY12345&page=2')).toEqual(['QUERYKEY12345', 'QUERYKEY12345']);
    expect(urlSecrets('https://user@example.com/')).toEqual(['user', 'user']); // filtered later by length
    expect(envSecrets({ HOMEPAGE: 'https://example.com/a?page=12345678' })).toEqual([]);
  });

  it('finds literal credential shapes under any name', () => {
    const found = envSecrets({ NOTES: 'use sk-ant-api03-abcdefghijkl and AKIAABCDEFGHIJKLMNOP please', X: 'eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl' });
    expect(found).toEqual(expect.arrayContaining(['sk-ant-api03-abcdefghijkl', 'AKIAABCDEFGHIJKLMNOP', 'eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl']));
  });

  it('keeps the older API working: secretValues and redact(text, list)', () => {
    resetRedactor(new Redactor());
    expect(secretValues({ A_TOKEN: 'short', B_TOKEN: 'long-enough-token' })).toEqual(['long-enough-token']);
    expect(redact('x long-enough-token y', ['long-enough-token'])).toBe(`x ${REDACTED} y`);
    expect(redact('nothing here', [])).toBe('nothing here');
    const same = { a: ['b'] };
    expect(redactJson(same, [])).toBe(same);
  });
});

describe('encodings', () => {
  const tricky = 'p@ss w/rd"&<x>\\é9';
  const r = new Redactor([SECRET, tricky]);

  it('redacts the plain value', () => {
    expect(r.redact(`a ${SECRET} b ${SECRET}`)).toBe(`a ${REDACTED} b ${REDACTED}`);
  });

  it('redacts URL-encoded forms (upper and lower case hex, + for spaces)', () => {
    const enc = encodeURIComponent(tricky);
    for (const form of [enc, enc.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), enc.replace(/%20/g, '+')]) {
      expect(r.redact(`q=${form}&x=1`)).toBe(`q=${REDACTED}&x=1`);
    }
  });

  it('redacts JSON-escaped forms, once and twice, script-safe and ASCII-only', () => {
    const once = JSON.stringify({ v: tricky });
    expect(r.redact(once)).toBe(`{"v":"${REDACTED}"}`);
    const twice = JSON.stringify({ v: once });
    expect(r.redact(twice)).not.toContain('p@ss');
    const scriptSafe = JSON.stringify(tricky).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
    expect(r.redact(scriptSafe)).toBe(`"${REDACTED}"`);
    const ascii = JSON.stringify(tricky).replace(/é/g, '\\u00e9');
    expect(r.redact(ascii)).toBe(`"${REDACTED}"`);
  });

  it('redacts HTML/XML-escaped forms', () => {
    const html = tricky.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    expect(r.redact(`<td>${html}</td>`)).toBe(`<td>${REDACTED}</td>`);
  });

  it('redacts base64 at all three alignments, standard and URL-safe, inside larger blobs', () => {
    for (const pre of ['', 'a', 'ab', 'abc', 'user:', 'Authorization: Basic ']) {
      const blob = embedded64(SECRET, pre);
      expect(r.redact(blob), pre).toContain(REDACTED);
      // What is left cannot be decoded back into the secret.
      expect(Buffer.from(r.redact(blob).replace(REDACTED, ''), 'base64').toString('latin1')).not.toContain(SECRET.slice(2, -2));
      const url = blob.replace(/\+/g, '-').replace(/\//g, '_');
      expect(r.redact(url), `url ${pre}`).toContain(REDACTED);
    }
    expect(secretVariants(SECRET).filter((v) => /^[A-Za-z0-9+/_-]+$/.test(v) && v !== SECRET).length).toBeGreaterThanOrEqual(3);
  });

  it('redacts bytes (UTF-8) and leaves binary data around them intact', () => {
    const bin = Buffer.concat([Buffer.from([0, 255, 128, 10]), Buffer.from(tricky, 'utf8'), Buffer.from([0xc3, 0x28, 0xff])]);
    const outBuf = r.redactBytes(bin);
    expect(outBuf).toEqual(Buffer.concat([Buffer.from([0, 255, 128, 10]), Buffer.from(REDACTED), Buffer.from([0xc3, 0x28, 0xff])]));
  });
});

describe('matching', () => {
  it('prefers the longest secret where secrets share a start, and leaves no whole secret where they overlap', () => {
    const r = new Redactor(['abcdefgh', 'abcdefghijkl', 'ijklmnopqr']);
    expect(r.redact('x abcdefghijkl y')).toBe(`x ${REDACTED} y`);
    expect(r.redact('x abcdefgh y')).toBe(`x ${REDACTED} y`);
    const overlapped = r.redact('abcdefghijklmnopqr');
    for (const s of ['abcdefgh', 'abcdefghijkl', 'ijklmnopqr']) expect(overlapped).not.toContain(s);
  });

  it('compiles a trie that matches exactly the longest word at each position', () => {
    const words = ['abc', 'abcd', 'abx', 'b.c', 'a|b', '(x)', 'zz'];
    const re = new RegExp(trieSource(words), 'g');
    expect('abcd abc abx b.c bxc a|b (x) zz'.match(re)).toEqual(['abcd', 'abc', 'abx', 'b.c', 'a|b', '(x)', 'zz']);
    // Random words against a naive longest-first search.
    const rand = (n: number) => Array.from({ length: n }, () => 'abc'[Math.floor(Math.random() * 3)]).join('');
    for (let round = 0; round < 50; round++) {
      const ws = Array.from({ length: 8 }, () => rand(2 + Math.floor(Math.random() * 4)));
      const text = rand(60);
      const sorted = [...new Set(ws)].sort((a, b) => b.length - a.length);
      const naive = new RegExp(sorted.join('|'), 'g');
      expect(text.replace(new RegExp(trieSource(ws), 'g'), '#')).toBe(text.replace(naive, '#'));
    }
  });

  it('handles very long secrets (a PEM private key) without deep recursion', () => {
    const pem = `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(6000)}\n-----END PRIVATE KEY-----`;
    expect(envSecrets({ TLS_PEM: pem })).toContain(pem);
    const r = new Redactor([pem]);
    expect(r.redact(`key: ${pem}!`)).toBe(`key: ${REDACTED}!`);
  });

  it('fast path: no secret, same objects back', () => {
    const r = new Redactor();
    const s = `anything ${SECRET}`;
    const b = Buffer.from(s);
    const v = { a: [s] };
    expect(r.empty).toBe(true);
    expect(r.redact(s)).toBe(s);
    expect(r.redactBytes(b)).toBe(b);
    expect(r.redactValue(v)).toBe(v);
    const withSecret = new Redactor([SECRET]);
    const clean = { a: ['nothing here'] };
    expect(withSecret.redactValue(clean)).toBe(clean);
    expect(withSecret.redactBytes(Buffer.from('nothing'))).toEqual(Buffer.from('nothing'));
  });

  it('redacts JSON values string by string, so escapes stay whole and the JSON stays valid', () => {
    const r = new Redactor(['q"u\\ote-secret']);
    const text = r.jsonText({ 'key q"u\\ote-secret': 'v q"u\\ote-secret', n: 1 }, 2);
    expect(JSON.parse(text)).toEqual({ [`key ${REDACTED}`]: `v ${REDACTED}`, n: 1 });
  });
});

describe('byte streams: secrets across chunk boundaries', () => {
  const r = new Redactor([SECRET, 'another-secret-value-that-is-longer']);
  const text = Buffer.from(`head ${SECRET} mid ${encodeURIComponent('another-secret-value-that-is-longer')} ${embedded64(SECRET, 'ab')} ${SECRET}${SECRET} tail`);
  const expected = r.redactBytes(text);

  it('gives the same bytes for every single split point', () => {
    for (let cut = 0; cut <= text.length; cut++) {
      const s = r.byteStream();
      const got = Buffer.concat([s.push(text.subarray(0, cut)), s.push(text.subarray(cut)), s.end()]);
      expect(got.toString(), `cut at ${cut}`).toBe(expected.toString());
    }
  });

  it('gives the same bytes for random chunkings, one byte at a time included', () => {
    for (let round = 0; round < 100; round++) {
      const s = r.byteStream();
      const parts: Buffer[] = [];
      for (let i = 0; i < text.length; ) {
        const n = round === 0 ? 1 : 1 + Math.floor(Math.random() * 9);
        parts.push(s.push(text.subarray(i, i + n)));
        i += n;
      }
      parts.push(s.end());
      expect(Buffer.concat(parts).toString()).toBe(expected.toString());
    }
  });

  it('holds back at most maxBytes - 1 bytes', () => {
    const s = r.byteStream();
    const emitted = s.push(Buffer.alloc(10_000, 0x61));
    expect(emitted.length).toBe(10_000 - (r.maxBytes - 1));
  });
});

describe('the output layer', () => {
  it('writeText, writeTextSync, appendText, writeJson, writeJsonSync redact', async () => {
    resetRedactor(new Redactor([SECRET]));
    const dir = tmp();
    await writeText(join(dir, 'a.txt'), `a ${SECRET}`);
    writeTextSync(join(dir, 'sub', 'b.txt'), `b ${SECRET}`, { mkdir: true });
    await appendText(join(dir, 'a.txt'), `\nc ${SECRET}`);
    await writeJson(join(dir, 'c.json'), { k: SECRET }, { atomic: true, newline: true });
    writeJsonSync(join(dir, 'new', 'd.json'), { k: SECRET }, { mkdir: true });
    await writeText(join(dir, 'e.bin'), Buffer.from(`x${SECRET}`), { mkdir: true, mode: 0o600 });
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe(`a ${REDACTED}\nc ${REDACTED}`);
    expect(readFileSync(join(dir, 'sub', 'b.txt'), 'utf8')).toBe(`b ${REDACTED}`);
    expect(readFileSync(join(dir, 'c.json'), 'utf8')).toBe(`{\n  "k": "${REDACTED}"\n}\n`);
    expect(JSON.parse(readFileSync(join(dir, 'new', 'd.json'), 'utf8'))).toEqual({ k: REDACTED });
    expect(readFileSync(join(dir, 'e.bin'), 'utf8')).toBe(`x${REDACTED}`);
    expect(jsonText({ k: SECRET }, 0)).toBe(`{"k":"${REDACTED}"}`);
  });

  it('the redacting write stream catches secrets split across writes and applies backpressure', async () => {
    resetRedactor(new Redactor([SECRET]));
    const file = join(tmp(), 'stream.txt');
    const s = createRedactingWriteStream(file);
    const body = `start ${SECRET} middle ${'x'.repeat(100_000)} ${SECRET} end`;
    let sawFull = false;
    for (let i = 0; i < body.length; i += 7) if (!s.write(Buffer.from(body.slice(i, i + 7)))) sawFull = true;
    await new Promise<void>((res) => s.end(res));
    expect(sawFull).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(body.replaceAll(SECRET, REDACTED));
  });

  it('the stream reports a file it cannot open as an error', async () => {
    const s = createRedactingWriteStream(join(tmp(), 'missing-dir', 'x.txt'));
    const err = await new Promise<Error>((res) => s.once('error', res));
    expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('copies and re-redacts files written by others (copyRedacted, redactFileInPlace, redactUntracked)', async () => {
    resetRedactor(new Redactor([SECRET]));
    const dir = tmp();
    writeFileSync(join(dir, 'src.txt'), `copy ${SECRET}`);
    await copyRedacted(join(dir, 'src.txt'), join(dir, 'dst.txt'));
    expect(readFileSync(join(dir, 'dst.txt'), 'utf8')).toBe(`copy ${REDACTED}`);
    writeFileSync(join(dir, 'inplace.txt'), `in ${SECRET}`);
    await redactFileInPlace(join(dir, 'inplace.txt'));
    expect(readFileSync(join(dir, 'inplace.txt'), 'utf8')).toBe(`in ${REDACTED}`);
    await redactFileInPlace(join(dir, 'nope.txt')); // missing: nothing
    const outputs = join(dir, 'job', 'outputs');
    mkdirSync(join(outputs, 'deep'), { recursive: true });
    writeFileSync(join(outputs, 'deep', 'engine-wrote.txt'), `engine ${SECRET}`);
    await writeText(join(outputs, 'ours.txt'), 'ours');
    await redactUntracked(outputs);
    expect(readFileSync(join(outputs, 'deep', 'engine-wrote.txt'), 'utf8')).toBe(`engine ${REDACTED}`);
    await redactUntracked(join(dir, 'absent'));
  });
});

describe('the console', () => {
  it('redacts every write to stdout and stderr once installed (skill-up bin.ts)', () => {
    const mod = resolve(import.meta.dirname, '../../dist/src/util/redact.js');
    const script = `import { installConsoleRedaction } from ${JSON.stringify(mod)};
installConsoleRedaction();
process.stdout.write('out ' + process.env.MY_SECRET_TOKEN + '\\n');
process.stderr.write(Buffer.from('err ' + process.env.MY_SECRET_TOKEN + '\\n'));
console.log('log %s', process.env.MY_SECRET_TOKEN);`;
    const r = execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: { PATH: process.env.PATH, MY_SECRET_TOKEN: SECRET }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(r).toBe(`out ${REDACTED}\nlog ${REDACTED}\n`);
    expect(r).not.toContain(SECRET);
  });
});
