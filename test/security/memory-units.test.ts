/**
 * The pieces behind bounded memory: stored texts (src/engine/final-text.ts), the judges'
 * streamed search and gated loading (src/judge/text.ts), and result.json written job by job
 * (src/report/write.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INLINE_TEXT_BYTES, PREVIEW_HEAD_BYTES, PREVIEW_TAIL_BYTES, spillText, textFromFile } from '../../src/engine/final-text.js';
import { around } from '../../src/judge/evidence.js';
import { MAX_LOADED_TEXT_BYTES, searchText, textHead, withFullText, type SpilledText } from '../../src/judge/text.js';
import { writeResultFile } from '../../src/report/write.js';
import type { ResultDoc } from '../../src/report/result-json.js';

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'su-mem-'));
  mkdirSync(join(d, 'outputs'));
  return d;
}

/** A text over the inline limit with multi-byte characters everywhere, ending in `end`. */
function bigText(end = 'THE END'): string {
  const unit = 'ab é 😀 → line\n';
  return unit.repeat(Math.ceil((INLINE_TEXT_BYTES * 2) / Buffer.byteLength(unit))) + end;
}

describe('stored texts (src/engine/final-text.ts)', () => {
  it('keeps a small text inline and a large one as a bounded preview plus the file', async () => {
    const d = dir();
    expect(await spillText(d, 'outputs/a.txt', 'short')).toEqual({ text: 'short', bytes: 5 });
    const text = bigText();
    const s = await spillText(d, 'outputs/a.txt', text);
    expect(s.file).toBe('outputs/a.txt');
    expect(s.bytes).toBe(Buffer.byteLength(text));
    expect(readFileSync(join(d, 'outputs/a.txt'), 'utf8') === text).toBe(true);
    expect(Buffer.byteLength(s.text)).toBeLessThan(PREVIEW_HEAD_BYTES + PREVIEW_TAIL_BYTES + 1000);
    expect(text.startsWith(s.text.slice(0, 1000))).toBe(true);
    expect(s.text.endsWith('THE END')).toBe(true);
    expect(s.text).not.toContain('\ufffd');
  });

  it('reads a file as a text without holding it: trimmed like trimEnd, or by one newline', async () => {
    const d = dir();
    const text = bigText();
    writeFileSync(join(d, 'outputs/out.txt'), `${text} \n\u3000\t\n`);
    const end = await textFromFile(d, 'outputs/out.txt', 'end');
    expect(end.file).toBe('outputs/out.txt');
    expect(end.bytes).toBe(Buffer.byteLength(text));
    expect(end.text.endsWith('THE END')).toBe(true);
    writeFileSync(join(d, 'outputs/nl.txt'), `${text}\n`);
    expect((await textFromFile(d, 'outputs/nl.txt', 'newline')).bytes).toBe(Buffer.byteLength(text));
    writeFileSync(join(d, 'outputs/small.txt'), 'hello \n\n');
    expect(await textFromFile(d, 'outputs/small.txt', 'end')).toEqual({ text: 'hello', bytes: 5 });
    expect(await textFromFile(d, 'outputs/missing.txt', 'end')).toEqual({ text: '', bytes: 0 });
    // A text whose white space tail is longer than a read piece.
    writeFileSync(join(d, 'outputs/ws.txt'), `${text}${' '.repeat(200_000)}`);
    expect((await textFromFile(d, 'outputs/ws.txt', 'end')).bytes).toBe(Buffer.byteLength(text));
  });
});

describe('what judges read (src/judge/text.ts)', () => {
  it('finds what indexOf finds in a streamed text, with the same offsets and context, across every piece boundary', async () => {
    const d = dir();
    // Unique markers straddling the 64 KiB read pieces, in a text of multi-byte characters.
    const unit = 'ab é 😀 → line\n';
    let text = '';
    let bytes = 0;
    const markers: string[] = [];
    for (let k = 1; k <= 8; k++) {
      while (bytes < k * 64 * 1024 - 7 - k) {
        text += unit;
        bytes += Buffer.byteLength(unit);
      }
      const m = `<<MARK-${k}-é>>`;
      markers.push(m);
      text += m;
      bytes += Buffer.byteLength(m);
    }
    text += 'needle at the very end';
    writeFileSync(join(d, 'outputs/t.txt'), text + '\n   ');
    const spilled: SpilledText = { preview: 'p', path: join(d, 'outputs/t.txt'), bytes: Buffer.byteLength(text) };
    const needles = [...markers, 'needle at the very end', 'é 😀 → line\nab', 'not there', '😀', text.slice(-30), 'ab'];
    const found = await searchText(spilled, needles);
    expect(found.length).toBe(text.length);
    expect(found.head).toBe(text.slice(0, 1000));
    for (const n of needles) {
      const at = text.indexOf(n);
      const f = found.find(n);
      if (at < 0) expect(f).toBeUndefined();
      else expect(f).toEqual({ at, context: around(text, at, n.length) });
    }
  });

  it('loads a spilled text whole through the gate, one at a time, and refuses one over the limit', async () => {
    const d = dir();
    const text = bigText();
    writeFileSync(join(d, 'outputs/t.txt'), text);
    const spilled: SpilledText = { preview: 'p', path: join(d, 'outputs/t.txt'), bytes: Buffer.byteLength(text) };
    let inside = 0;
    let most = 0;
    const use = async (s: string) => {
      inside++;
      most = Math.max(most, inside);
      await new Promise((r) => setTimeout(r, 20));
      inside--;
      return s === text;
    };
    expect(await Promise.all([withFullText(spilled, use), withFullText(spilled, use), withFullText(spilled, use)])).toEqual([true, true, true]);
    expect(most).toBe(1);
    await expect(withFullText({ ...spilled, bytes: MAX_LOADED_TEXT_BYTES + 1 }, () => 1)).rejects.toThrow(/more than the 67108864 bytes/);
    expect(await withFullText('inline', (s) => s)).toBe('inline');
    const head = await textHead(spilled, 1001);
    expect(text.startsWith(head)).toBe(true);
    expect(Buffer.byteLength(head)).toBeLessThanOrEqual(1001);
  });
});

describe('result.json written job by job (src/report/write.ts writeResultFile)', () => {
  it('writes exactly JSON.stringify(doc, null, 2) and a newline', async () => {
    const d = dir();
    const job = (i: number) => ({ id: `c/with_skill/run-${i}`, final_message: `answer ${i}\n"quoted"`, turns: [{ index: 1, final_text: 'x', tool_calls: [{ input: { a: [1, { b: null }] } }] }], nothing: undefined });
    for (const jobs of [[], [job(1)], [job(1), job(2), job(3)]]) {
      const doc = { schema_version: '2', options: {}, absent: undefined, nested: { a: [], b: {} }, jobs, after: 1 } as unknown as ResultDoc;
      const file = join(d, 'result.json');
      await writeResultFile(file, doc);
      expect(readFileSync(file, 'utf8')).toBe(JSON.stringify(doc, null, 2) + '\n');
    }
  });
});
