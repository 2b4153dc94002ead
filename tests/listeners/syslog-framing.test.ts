import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { frameDecoder, HEAD_BYTES, type Frame } from '../../src/services/listeners/syslog-framing.js';

/** Feeds `bytes` to a fresh decoder in the given chunk sizes and collects every frame. */
function decode(bytes: Buffer, max: number, cuts: readonly number[] = []): Frame[] {
  const d = frameDecoder(max);
  const out: Frame[] = [];
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    if (cut <= at || cut >= bytes.length) continue;
    out.push(...d.push(bytes.subarray(at, cut)));
    at = cut;
  }
  out.push(...d.push(bytes.subarray(at)));
  return out;
}

const messages = (frames: Frame[]) => frames.filter((f) => f.kind === 'message').map((f) => (f as { bytes: Buffer }).bytes.toString('utf8'));
const octet = (m: string) => `${Buffer.byteLength(m)} ${m}`;
const syslogText = fc.string({ minLength: 1, maxLength: 200, unit: 'grapheme' }).map((s) => `<13>1 - h a - - - ${s}`);

describe('syslog stream framing (RFC 6587)', () => {
  it('reads octet-counted frames however the bytes are cut', () => {
    fc.assert(fc.property(fc.array(syslogText, { minLength: 1, maxLength: 20 }), fc.array(fc.nat(5000)), (msgs, cuts) => {
      const frames = decode(Buffer.from(msgs.map(octet).join('')), 4096, cuts);
      assert.deepEqual(messages(frames), msgs);
    }));
  });

  it('reads LF-terminated frames however the bytes are cut, dropping CR and empty lines', () => {
    const lfText = syslogText.filter((s) => !s.includes('\n') && !s.includes('\r'));
    fc.assert(fc.property(fc.array(lfText, { minLength: 1, maxLength: 20 }), fc.array(fc.nat(5000)), (msgs, cuts) => {
      const frames = decode(Buffer.from(msgs.map((m, i) => `${m}${i % 2 ? '\r\n' : '\n'}`).join('\n')), 4096, cuts);
      assert.deepEqual(messages(frames), msgs);
    }));
  });

  it('skips an oversized octet-counted frame, keeps its head, and reads the next one', () => {
    const big = `<13>1 - h a - - - ${'x'.repeat(5000)}`;
    for (const cuts of [[], [3, 100, 600, 4000, 5020]]) {
      const frames = decode(Buffer.from(octet(big) + octet('<13>1 - h a - - - next')), 1000, cuts);
      assert.equal(frames.length, 2);
      assert.equal(frames[0]!.kind, 'oversized');
      assert.equal((frames[0] as { length: number }).length, Buffer.byteLength(big));
      assert.equal((frames[0] as { head: Buffer }).head.length, HEAD_BYTES);
      assert.deepEqual(messages(frames), ['<13>1 - h a - - - next']);
    }
  });

  it('skips an oversized LF frame to its end and reads the next line', () => {
    const frames = decode(Buffer.from(`<13>1 ${'y'.repeat(3000)}\n<13>1 - h a - - - after\n`), 1000, [10, 1500, 2990]);
    assert.deepEqual(frames.map((f) => f.kind), ['oversized', 'message']);
    assert.deepEqual(messages(frames), ['<13>1 - h a - - - after']);
  });

  it('closes on a broken octet count instead of guessing, and never holds more than the limit', () => {
    assert.deepEqual(decode(Buffer.from('12x <13>1 hello'), 1000).map((f) => f.kind), ['fatal']);
    assert.deepEqual(decode(Buffer.from('0 '), 1000).map((f) => f.kind), ['fatal']);
    assert.deepEqual(decode(Buffer.from('12345678901 <13>'), 1000).map((f) => f.kind), ['fatal']);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 4000 }), fc.array(fc.nat(4000)), (bytes, cuts) => {
      const d = frameDecoder(512);
      let at = 0;
      for (const cut of [...cuts, bytes.length].sort((a, b) => a - b)) {
        if (cut < at) continue;
        for (const f of d.push(Buffer.from(bytes.subarray(at, cut)))) if (f.kind === 'message') assert.ok(f.bytes.length <= 512);
        at = cut;
        assert.ok(d.pending() <= 512 + 12, `pending ${d.pending()}`);
      }
    }));
  });
});
