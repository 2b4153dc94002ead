import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeRecord, encodeRecord } from '../../src/log/record.js';
import { type LogRecord } from '../../src/kernel/record.js';
import { decodeBounded } from '../../src/log/bounded-msgpack.js';
import { decodeForReadSide, decodeForWriteSide } from '../../src/log/evidence-fields.js';
import { sameEvent } from '../../src/projections/evidence.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';

const record = (type: string, data: unknown): LogRecord => ({ seq: 3, at: '2026-11-24T10:00:00.000Z', type, data, prev: 'ab'.repeat(32) });
/** An event as the edge accepts it: parsed JSON, so `__proto__` is an own key. */
const parsedEvent = (id: string, attributesJson: string) => JSON.parse(JSON.stringify(normalizedEvent({ id })).replace(/"attributes":\{[^}]*\}/, `"attributes":${attributesJson}`)) as NormalizedEvent;

describe('decodeRecord and map keys named like Object.prototype members', () => {
  it('reads a `__proto__` key back as the own key it was written as, setting no prototype', () => {
    const e = parsedEvent('p-1', '{"top":{"__proto_":"kept","__proto__":{"polluted":1},"constructor":2,"prototype":3}}');
    const bytes = encodeRecord(record('EventsIngested', { events: [e] }));
    for (const [name, decoded] of [['decodeRecord', decodeRecord(bytes)], ['decodeBounded', decodeBounded(bytes)], ['decodeForWriteSide', decodeForWriteSide(bytes)]] as const) {
      const top = ((decoded as LogRecord<{ events: NormalizedEvent[] }>).data.events[0]!.attributes as Record<string, Record<string, unknown>>).top!;
      assert.deepEqual(Object.keys(top), ['__proto_', '__proto__', 'constructor', 'prototype'], name);
      assert.equal(Object.getPrototypeOf(top), Object.prototype, name);
      assert.equal(top.__proto_, 'kept', name);
      assert.deepEqual(Object.getOwnPropertyDescriptor(top, '__proto__')?.value, { polluted: 1 }, name);
    }
    assert.ok(sameEvent(e, decodeRecord<{ events: NormalizedEvent[] }>(bytes).data.events[0]!), 'the stored event is the acknowledged one');
    assert.equal(decodeForReadSide(bytes).type, 'EventsIngested');
    // A record without events (another encoder) and a raw record, as stored.
    const raw = JSON.parse('{"uid":"C1","__proto__":{"x":1},"deep":[{"__proto__":null}]}') as Record<string, unknown>;
    for (const r of [record('ApiRequestAudited', { body: raw }), record('RawRecordsIngested', { normalizer: 'network-monitor', records: [raw], events: [] })]) {
      assert.deepEqual(decodeRecord(encodeRecord(r)), r, r.type);
      assert.deepEqual(decodeBounded(encodeRecord(r)), r, r.type);
    }
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });

  it('reads back every JSON value it wrote, whatever its keys (property)', () => {
    const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', '__proto_', 'constructor', 'prototype', 'toString'));
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small', maxDepth: 4 }, fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null),
        fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(key, tie('value'), { maxKeys: 4 })),
    })).value;
    fc.assert(fc.property(fc.array(fc.dictionary(key, json, { maxKeys: 4 }), { minLength: 1, maxLength: 3 }), (attrs) => {
      // Through JSON text, as the edge receives it (JSON.parse keeps `__proto__` as an own key).
      const events = attrs.map((a, i) => JSON.parse(JSON.stringify({ ...normalizedEvent({ id: `q-${i}` }), attributes: a })) as NormalizedEvent);
      const bytes = encodeRecord(record('EventsIngested', { events }));
      const whole = decodeRecord<{ events: NormalizedEvent[] }>(bytes);
      whole.data.events.forEach((d, i) => assert.ok(sameEvent(events[i]!, d)));
      assert.deepEqual(whole, decodeBounded(bytes));
      // The write side's fields, whether it read them itself or (for a `__proto__` key) decoded the record whole.
      const fields = (e: NormalizedEvent) => ({ id: e.id, category: e.category, class: e.class, time: e.time, source: e.source, attributes: e.attributes });
      assert.deepEqual((decodeForWriteSide(bytes).data as { events: NormalizedEvent[] }).events.map(fields), whole.data.events.map(fields));
    }), { numRuns: 300 });
  });
});
