import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { decodeRecord, encodeRecord } from '../../src/log/record.js';
import { type LogRecord } from '../../src/kernel/record.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';

// The encoding the log has always had: one Packr of the ES module, with the stored options.
const reference = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });
const referenceBytes = (r: LogRecord) => reference.pack({ seq: r.seq, at: r.at, type: r.type, data: r.data, prev: r.prev, ...(r.actor ? { actor: r.actor } : {}) });

const record = (type: string, data: unknown, actor?: LogRecord['actor']): LogRecord => ({
  seq: 7, at: '2026-11-24T10:00:00.000Z', type, data, prev: 'ab'.repeat(32), ...(actor ? { actor } : {}),
});

describe('encodeRecord', () => {
  it('writes records that carry events (their own encoder) byte for byte as the stored encoding, and reads them back', () => {
    const events = [normalizedEvent({ id: 'e-1' }), normalizedEvent({ id: 'e-2', attributes: { ratio: 0.25, n: -3, big: 2 ** 40, ok: true, none: null, nested: { a: ['x', 1] } } })];
    for (const r of [
      record('EventsIngested', { events }),
      record('RawRecordsIngested', { normalizer: 'zeek', events }, { id: 'ingestor-user', authentication: 'token' }),
      record('ApiRequestAudited', { requestId: 'r-1', method: 'POST', route: '/api/v1/events', status: 202, durationMs: 1.5 }),
    ]) {
      const bytes = encodeRecord(r);
      assert.deepEqual(Buffer.from(bytes), Buffer.from(referenceBytes(r)), r.type);
      assert.deepEqual(decodeRecord(bytes), r);
    }
  });

  it('gives the same bytes as the stored encoding for any data, with or without events', () => {
    const value = fc.jsonValue({ maxDepth: 4 });
    const data = fc.oneof(fc.dictionary(fc.string(), value), fc.record({ events: fc.array(fc.dictionary(fc.string(), value), { maxLength: 5 }) }));
    fc.assert(fc.property(fc.string(), data, (type, d) => {
      const r = record(type, d);
      assert.deepEqual(Buffer.from(encodeRecord(r)), Buffer.from(referenceBytes(r)));
    }), { numRuns: 300 });
  });
});
