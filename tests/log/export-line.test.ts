import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clampDepth } from '../../src/kernel/json/depth.js';
import { exportLine, exportLineParts } from '../../src/log/export-line.js';
import type { LogRecord } from '../../src/kernel/record.js';

/** The export line as it was written before the fast path: one replacer for bigints and bytes, on the clamped record. */
function replacerLine(record: LogRecord, raw?: Uint8Array): string {
  const shown = raw ? { ...(clampDepth(record) as object), raw: Buffer.from(raw).toString('base64') } : clampDepth(record);
  return `${JSON.stringify(shown, (_k, val) => (typeof val === 'bigint' ? val.toString() : val instanceof Uint8Array ? Buffer.from(val).toString('base64') : val))}\n`;
}

function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { k: v } : [v];
  return v;
}

const data = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.bigInt(),
    fc.uint8Array({ maxLength: 8 }),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 }),
  ),
})).value;

describe('export lines', () => {
  it('are the same text on the fast path as through the replacer, with and without the raw bytes', () => {
    fc.assert(fc.property(data, fc.option(fc.uint8Array({ maxLength: 32 })), fc.nat({ max: 80 }), (d, raw, depth) => {
      const record: LogRecord = { seq: 7, at: '2026-11-24T00:00:00.000Z', type: 'EventsIngested', data: { d, deep: nested(depth) }, prev: 'ab'.repeat(32) };
      const expected = replacerLine(record, raw ?? undefined);
      assert.equal(exportLine(record, raw ?? undefined), expected);
      assert.equal(exportLineParts(record, raw ?? undefined).join(''), expected);
    }), { numRuns: 300 });
  });

  it('encodes only the raw bytes of a view, not the whole buffer under it', () => {
    const whole = Buffer.from('xxhelloyy');
    const record: LogRecord = { seq: 1, at: '2026-11-24T00:00:00.000Z', type: 'EventsIngested', data: {}, prev: '' };
    assert.equal(JSON.parse(exportLine(record, whole.subarray(2, 7))).raw, Buffer.from('hello').toString('base64'));
  });
});
