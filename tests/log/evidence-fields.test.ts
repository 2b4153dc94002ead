import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FLOAT32_OPTIONS, Packr } from 'msgpackr';
import { decodeForReadSide, decodeForWriteSide, eventOffsets } from '../../src/log/evidence-fields.js';
import { decodeRecord, encodeRecord } from '../../src/log/record.js';
import { type LogRecord } from '../../src/kernel/record.js';
import { CATEGORIES } from '../../src/events/normalized-event.js';
import { createGraphProjection } from '../../src/projections/graph.js';
import { evidenceIndex, evidenceReadIndex } from '../../src/projections/evidence.js';
import { HEAP_PROJECTIONS } from '../../src/projections/all.js';
import type { IndexKey, IndexProjection } from '../../src/projections/types.js';

const ascii = fc.string({ minLength: 1, maxLength: 24, unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789.:-_'.split('')) });
/** Strings the decoder builds itself (ASCII) and those it leaves to msgpackr (anything else). */
const text = fc.oneof({ weight: 4, arbitrary: ascii }, { weight: 1, arbitrary: fc.string({ maxLength: 12, unit: 'binary' }) }, { weight: 1, arbitrary: fc.constant('x'.repeat(40)) });
/** Values of the members the graph reads, of every kind MessagePack has for them. */
const member = fc.oneof(
  { weight: 4, arbitrary: text },
  fc.integer(), fc.integer({ min: -(2 ** 31), max: 2 ** 32 }), fc.double(), fc.constant(2 ** 40), fc.constant(-(2 ** 40)),
  fc.boolean(), fc.constant(null), fc.constant(''), fc.array(ascii, { maxLength: 2 }), fc.dictionary(ascii, ascii, { maxKeys: 2 }),
);
const { nested } = fc.letrec((tie) => ({
  nested: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(tie('nested'), { maxLength: 3 }), fc.dictionary(ascii, tie('nested'), { maxKeys: 3 })),
}));
/** An endpoint, actor or service: what the graph reads (`host`, `ip`, `user`, `name`) among other members. */
const part = fc.option(fc.record({ host: member, ip: member, user: member, name: member, port: fc.integer(), other: nested }, { requiredKeys: [] }), { nil: null });
const time = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2090-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());

/** Attributes the detection sources' index keys are made of (src/detection/logsources.ts), among others. */
const logsourceAttributes = fc.record({
  MESSAGE: fc.oneof(text, fc.constant('pam_unix(sshd:auth): failure')), SYSLOG_IDENTIFIER: fc.oneof(text, fc.constantFrom('sshd', '/usr/sbin/sshd[42]:', 'sudo')),
  _COMM: text, SYSLOG_FACILITY: fc.constantFrom('4', '10', '3', ['4']), _TRANSPORT: fc.constantFrom('audit', 'journal'), 'APP-NAME': text, MSG: text, FACILITY: fc.constantFrom(4, 10, 1),
  Channel: fc.constantFrom('Security', 'Microsoft-Windows-Sysmon/Operational', 'System'), EventID: fc.constantFrom(4624, 1, 7045, 4688), EventType: text, other: nested,
}, { requiredKeys: [] });

const event = fc.record({
  schemaVersion: fc.constant(1),
  id: text,
  category: fc.constantFrom(...CATEGORIES),
  class: fc.oneof(text, fc.constantFrom('dns', 'network_connection', 'authentication')),
  activity: text,
  outcome: fc.constantFrom('success', 'failure'),
  time,
  ingestedAt: time,
  severity: fc.double({ min: 0, max: 10, noNaN: true }),
  source: fc.record({ adapter: fc.oneof(text, fc.constantFrom('network-monitor', 'linux-journal', 'syslog-rfc5424', 'collector', 'mesh-vpn-logs', 'vigil', 'opentelemetry-log')), instance: text, recordId: text }),
  entityKeys: fc.array(fc.oneof(fc.constantFrom('ip:10.0.0.1', 'host:web', 'domain:example.org', 'node:n1', 'meshnet:m', 'service:https', 'user:root'), text.map((t) => `ip:${t}`)), { maxLength: 6 }),
  actor: fc.option(part, { nil: undefined }),
  sourceEndpoint: fc.option(part, { nil: undefined }),
  destinationEndpoint: fc.option(part, { nil: undefined }),
  service: fc.option(part, { nil: undefined }),
  correlation: fc.option(fc.dictionary(ascii, nested, { maxKeys: 2 }), { nil: undefined }),
  attributes: fc.oneof(fc.dictionary(ascii, nested, { maxKeys: 5 }), logsourceAttributes),
}, { requiredKeys: ['schemaVersion', 'id', 'category', 'class', 'activity', 'outcome', 'time', 'ingestedAt', 'source', 'entityKeys', 'attributes'] });

const entityKey = fc.oneof(fc.constantFrom('ip:10.0.0.1', 'host:web', 'user:root', 'service:ssh'), text.map((t) => `host:${t}`));
/** A signed collector's graph facts (src/events/collector-protocol/envelope.ts). */
const fact = fc.oneof(
  fc.record({ fact: fc.constant('entity'), key: entityKey, kind: text, attributes: fc.dictionary(ascii, nested, { maxKeys: 2 }) }),
  fc.record({ fact: fc.constant('relationship'), from: entityKey, to: entityKey, type: text, attributes: fc.dictionary(ascii, nested, { maxKeys: 2 }) }),
);

const record = fc.record({
  seq: fc.integer({ min: 1, max: 2 ** 31 }),
  type: fc.constantFrom('EventsIngested', 'RawRecordsIngested', 'CollectorSubmissionAccepted'),
  events: fc.array(event, { maxLength: 6 }),
  facts: fc.array(fact, { maxLength: 4 }),
  collectorId: text,
  actor: fc.option(fc.record({ id: ascii, authentication: fc.constantFrom('token', 'loopback') }), { nil: undefined }),
}).map(({ seq, type, events, facts, collectorId, actor }): LogRecord => ({
  seq, at: '2026-11-27T10:00:00.000Z', type, prev: 'ab'.repeat(32),
  data: type === 'EventsIngested' ? { events }
    : type === 'RawRecordsIngested' ? { normalizer: 'network-monitor', logType: 'conn', records: events.map(() => ({ raw: 1 })), events }
    : collectorData(collectorId, seq, facts, events),
  ...(actor ? { actor } : {}),
}));

/** The data of an accepted signed submission, in the order its decider writes it (src/commands/collector-submit.ts). */
function collectorData(collectorId: string, sequence: number, facts: unknown[], events: unknown[]): Record<string, unknown> {
  const result = { collectorId, sequence, graph: { entities: facts.length, relationships: 0 }, acceptedEvents: events.length };
  return { collectorId, epoch: 2, sequence, digest: 'cd'.repeat(32), signature: `${'A'.repeat(86)}==`, collectedAt: '2026-11-27T09:59:59.123Z', facts, events, result };
}

/** What the read side's folds make of `records`: the graph's snapshot and every index entry written. */
function folds(records: readonly LogRecord[]): { graph: unknown; index: Array<[string, IndexKey, string]> } {
  const p = createGraphProjection();
  let g = p.initial();
  const index: Array<[string, IndexKey, string]> = [];
  const writer = { put: (db: string, key: IndexKey, value: unknown) => { index.push([db, key, Buffer.from(value as Uint8Array).toString('hex')]); }, remove: () => assert.fail('no removal') };
  for (const r of records) {
    g = p.evolve(g, r);
    evidenceReadIndex.apply(r, { get: () => undefined }, writer);
  }
  return { graph: p.snapshot!(g), index };
}

/** What the write side's folds make of `records`: every heap model's snapshot and the evidence index's entries. */
function writeFolds(records: readonly LogRecord[]): { models: unknown[]; index: Array<[string, IndexKey, string]> } {
  const states = HEAP_PROJECTIONS.map((p) => p.initial());
  const index: Array<[string, IndexKey, string]> = [];
  const written = new Map<string, unknown>();
  const writer = { put: (db: string, key: IndexKey, value: unknown) => { written.set(`${db} ${String(key)}`, value); index.push([db, key, Buffer.from(value as Uint8Array).toString('hex')]); }, remove: () => assert.fail('no removal') };
  const reader = { get: (db: string, key: IndexKey) => written.get(`${db} ${String(key)}`) };
  for (const r of records) {
    HEAP_PROJECTIONS.forEach((p, i) => { states[i] = p.evolve(states[i], r); });
    (evidenceIndex as IndexProjection).apply(r, reader, writer);
  }
  return { models: HEAP_PROJECTIONS.map((p, i) => (p.snapshot ? p.snapshot(states[i]) : states[i])), index };
}

/** Asserts that `fold` makes the same of any evidence records decoded by `decode` as of them decoded whole. */
function foldsAlike(decode: (bytes: Uint8Array) => LogRecord, fold: (records: readonly LogRecord[]) => unknown): void {
  fc.assert(fc.property(fc.array(record, { minLength: 1, maxLength: 4 }), (records) => {
    const bytes = records.map((r) => encodeRecord(r));
    assert.deepEqual(fold(bytes.map(decode)), fold(bytes.map((b) => decodeRecord(b))));
  }), { numRuns: 300 });
}

describe('decodeForWriteSide', () => {
  it('gives the write side\'s folds what a whole decode gives them, for any evidence record', () => {
    foldsAlike(decodeForWriteSide, writeFolds);
  });

  it('builds an event\'s id, category, class, time, source and attributes, and nothing else', () => {
    const e = {
      schemaVersion: 1, id: 'e1', category: 'identity', class: 'authentication', activity: 'logon', outcome: 'failure',
      time: '2026-11-27T10:00:00.000Z', ingestedAt: '2026-11-27T10:00:01.000Z',
      source: { adapter: 'linux-journal', instance: 'web1', recordId: 'r1' }, entityKeys: ['user:root'], actor: { user: 'root' },
      attributes: { MESSAGE: 'Failed password for root', SYSLOG_IDENTIFIER: 'sshd', PRIORITY: 5, list: ['a', 1, null], map: { k: true } },
    };
    const r: LogRecord = { seq: 3, at: '2026-11-27T10:00:02.000Z', type: 'RawRecordsIngested', prev: 'f'.repeat(64), data: { normalizer: 'linux-journal', records: [{}], events: [e] } };
    assert.deepEqual(decodeForWriteSide(encodeRecord(r)), {
      seq: 3, at: r.at, type: 'RawRecordsIngested', prev: r.prev,
      data: { events: [{ id: 'e1', category: 'identity', class: 'authentication', time: e.time, source: e.source, attributes: e.attributes }] },
    });
  });
});

describe('decodeForReadSide', () => {
  it('gives the read side\'s folds what a whole decode gives them, for any evidence record', () => {
    foldsAlike(decodeForReadSide, folds);
  });

  it('keeps the record\'s own fields and builds only the fields the folds read', () => {
    const e = {
      schemaVersion: 1, id: 'e1', category: 'network', class: 'network_connection', activity: 'traffic', outcome: 'success',
      time: '2026-11-27T10:00:00.000Z', ingestedAt: '2026-11-27T10:00:01.000Z', severity: 1,
      source: { adapter: 'network-monitor', instance: 'conn', recordId: 'C1' },
      entityKeys: ['ip:10.0.0.1', 'ip:192.0.2.10', 'service:https'],
      sourceEndpoint: { ip: '10.0.0.1', port: 40000 }, destinationEndpoint: { ip: '192.0.2.10', port: 443 },
      service: { name: 'https', protocol: 'tcp', port: 443 }, actor: null, attributes: { uid: 'C1', orig_bytes: 512 },
    };
    const r: LogRecord = { seq: 7, at: '2026-11-27T10:00:02.000Z', type: 'EventsIngested', prev: 'f'.repeat(64), actor: { id: 'bench', authentication: 'token' }, data: { events: [e] } };
    assert.deepEqual(decodeForReadSide(encodeRecord(r)), {
      seq: 7, at: '2026-11-27T10:00:02.000Z', type: 'EventsIngested', prev: 'f'.repeat(64), actor: { id: 'bench', authentication: 'token' },
      data: {
        events: [{
          time: e.time, category: 'network', class: 'network_connection', source: { adapter: 'network-monitor' }, entityKeys: e.entityKeys,
          actor: null, sourceEndpoint: { ip: '10.0.0.1' }, destinationEndpoint: { ip: '192.0.2.10' }, service: { name: 'https' },
        }],
      },
    });
  });

  it('steps over values of every kind in the fields it does not read, without decoding the record whole', () => {
    const attributes = { f64: 0.25, f32: 1.5, big: 2 ** 40, negative: -(2 ** 40), small: -3, u8: 200, u16: 60_000, u32: 4_000_000_000, i32: -70_000, t: true, n: null, bin: new Uint8Array(300), s: 'x'.repeat(70_000), list: Array.from({ length: 20 }, (_, i) => i), map: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])) };
    const r = encodeRecord({ seq: 1, at: 'a', type: 'EventsIngested', prev: 'p', data: { events: [{ id: 'x', time: 't', category: 'network', class: 'c', source: { adapter: 'a', instance: 'i' }, entityKeys: ['ip:1'], attributes }] } });
    const e = (decodeForReadSide(r) as LogRecord<{ events: Array<Record<string, unknown>> }>).data.events[0]!;
    assert.equal('attributes' in e, false, 'read field by field, not whole');
    assert.deepEqual(e.entityKeys, ['ip:1']);
  });

  it('lets a repeated member replace an earlier one, as msgpackr does', () => {
    const bytes = Buffer.from(encodeRecord({ seq: 1, at: 'a', type: 'EventsIngested', prev: 'p', data: { events: [{ time: 't', category: 'network', class: 'c', source: { adapter: 'a' }, entityKeys: ['ip:a', 'ip:b'], sourceEndpoint: { ip: 'a', iq: true }, destinationEndpoint: { ip: 'b' }, attributes: {} }] } }));
    bytes.set(Buffer.from('ip'), bytes.indexOf('iq')); // {ip: 'a', ip: true}: the address reads as absent
    assert.deepEqual(folds([decodeForReadSide(bytes)]), folds([decodeRecord(bytes)]));
    assert.equal((decodeForReadSide(bytes) as LogRecord<{ events: Array<{ sourceEndpoint: object }> }>).data.events[0]!.sourceEndpoint.constructor, Object);
    assert.deepEqual((decodeForReadSide(bytes) as LogRecord<{ events: Array<{ sourceEndpoint: object }> }>).data.events[0]!.sourceEndpoint, {});
  });

  it('decodes whole a record whose endpoint holds a number it does not read (float32, 64-bit) rather than reading it as absent', () => {
    const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true, useFloat32: FLOAT32_OPTIONS.ALWAYS });
    const e = { time: 't', category: 'network', class: 'c', source: { adapter: 'a' }, entityKeys: [], attributes: {} };
    for (const ip of [1.5, 2n ** 40n]) {
      const bytes = packr.pack({ seq: 1, at: 'a', type: 'EventsIngested', data: { events: [{ ...e, sourceEndpoint: { ip }, destinationEndpoint: { ip: 'b' } }] }, prev: 'p' });
      assert.deepEqual(folds([decodeForReadSide(bytes)]), folds([decodeRecord(bytes)]), String(ip));
    }
  });

  it('reads a signed submission\'s events field by field and builds the rest of its data whole', () => {
    const e = { schemaVersion: 1, id: 'e1', category: 'system', class: 'process_start', activity: 'start', outcome: 'success', time: '2026-11-27T10:00:00.000Z', ingestedAt: '2026-11-27T10:00:00.000Z', source: { adapter: 'collector', instance: 'c1', recordId: 'r1' }, entityKeys: ['host:web'], attributes: { pid: 4 } };
    const facts = [{ fact: 'entity', key: 'host:web', kind: 'host', attributes: { os: 'linux', cores: 2 } }, { fact: 'relationship', from: 'host:web', to: 'service:ssh', type: 'runs', attributes: {} }];
    const r: LogRecord = { seq: 9, at: '2026-11-27T10:00:01.000Z', type: 'CollectorSubmissionAccepted', prev: 'f'.repeat(64), actor: { id: 'c1-token', authentication: 'token' }, data: collectorData('c1', 9, facts, [e]) };
    const { events, ...rest } = r.data as { events: unknown[] };
    assert.deepEqual(decodeForReadSide(encodeRecord(r)), {
      ...r, data: { ...rest, events: [{ time: e.time, category: 'system', class: 'process_start', source: { adapter: 'collector' }, entityKeys: ['host:web'], actor: undefined, sourceEndpoint: undefined, destinationEndpoint: undefined, service: undefined }] },
    });
    assert.deepEqual(decodeForWriteSide(encodeRecord(r)), decodeRecord(encodeRecord(r)), 'the write side decodes it whole');
  });

  it('decodes every other record whole, as decodeRecord does', () => {
    const records: LogRecord[] = [
      { seq: 1, at: '2026-11-27T10:00:00.000Z', type: 'ApiRequestAudited', prev: '0'.repeat(64), data: { requestId: 'r1', status: 202, route: '/api/v1/events' } },
      { seq: 2, at: '2026-11-27T10:00:00.000Z', type: 'CollectorSubmissionRejected', prev: '0'.repeat(64), data: { reason: 'replay', collectorId: 'c1', event: { id: 'x' } } },
      { seq: 3, at: '2026-11-27T10:00:00.000Z', type: 'AccessRecorded', prev: '0'.repeat(64), data: { event: { id: 'a', attributes: { x: 1 } } } },
    ];
    for (const r of records) assert.deepEqual(decodeForReadSide(encodeRecord(r)), decodeRecord(encodeRecord(r)));
  });

  it('decodes whole an evidence record with keys in another order or a field it does not read exactly', () => {
    const packr = new Packr({ useRecords: false, mapsAsObjects: true });
    const e = { time: '2026-11-27T10:00:00.000Z', category: 'network', class: 'c', source: { adapter: 'a', instance: 'i', recordId: 'r' }, entityKeys: ['ip:1'], attributes: {}, id: 'x' };
    const dataFirst = packr.pack({ data: { events: [e] }, seq: 1, at: 'a', type: 'EventsIngested', prev: 'p' });
    assert.deepEqual(decodeForReadSide(dataFirst), decodeRecord(dataFirst));
    const nonAscii = encodeRecord({ seq: 1, at: 'a', type: 'EventsIngested', prev: 'p', data: { events: [{ ...e, class: 'connexión' }] } });
    assert.deepEqual(decodeForReadSide(nonAscii), decodeRecord(nonAscii));
  });

  it('throws for bytes that are not a record as decodeRecord does, and never reads past them', () => {
    const good = encodeRecord({ seq: 1, at: 'a', type: 'EventsIngested', prev: 'p', data: { events: [{ time: 't', category: 'network', class: 'c', source: { adapter: 'a' }, entityKeys: ['ip:1'], attributes: {} }] } });
    for (let cut = 1; cut < good.length; cut += 3) {
      const bytes = good.subarray(0, cut);
      let expected: unknown;
      try { expected = decodeRecord(bytes); } catch (err) { expected = err; }
      if (expected instanceof Error) assert.throws(() => decodeForReadSide(bytes));
      else assert.deepEqual(decodeForReadSide(bytes), expected);
    }
  });

  it('steps over attributes nested deeper than msgpackr follows', () => {
    // {seq, at, type, data: {events: [{time, category, class, source, entityKeys, attributes: [[[…]]]}]}, prev}, built by hand.
    const depth = 100_000;
    const head = encodeRecord({ seq: 1, at: 'a', type: 'EventsIngested', prev: 'p', data: { events: [{ time: 't', category: 'network', class: 'c', source: { adapter: 'a' }, entityKeys: ['ip:1'], attributes: 0 }] } });
    const at = head.lastIndexOf(0x00); // the `attributes: 0` value, the last zero byte before `prev`
    const deep = Buffer.concat([head.subarray(0, at), Buffer.alloc(depth, 0x91), Buffer.from([0xc0]), head.subarray(at + 1)]);
    const r = decodeForReadSide(deep) as LogRecord<{ events: Array<{ entityKeys: string[]; source: { adapter: string } }> }>;
    assert.deepEqual(r.data.events[0]!.entityKeys, ['ip:1']);
    assert.equal(r.data.events[0]!.source.adapter, 'a');
    assert.equal(r.prev, 'p');
  });
});

describe('eventOffsets', () => {
  it('locates every event of an evidence record: each decoded alone equals the record decoded whole', () => {
    fc.assert(fc.property(record, (r) => {
      const bytes = encodeRecord(r as LogRecord);
      const offsets = eventOffsets(bytes);
      const whole = (decodeRecord(bytes).data as { events: unknown[] }).events;
      assert.ok(offsets, 'an evidence record is located');
      assert.equal(offsets.length, whole.length + 1);
      whole.forEach((e, i) => assert.deepEqual(decodeRecord(bytes.subarray(offsets[i]!, offsets[i + 1]!)), e));
    }), { numRuns: 200 });
  });

  it('keeps a __proto__ key of an event as decodeRecord does, and answers undefined for other records', () => {
    const e = JSON.parse('{"id":"p","time":"t","attributes":{"__proto__":{"x":1}}}') as Record<string, unknown>;
    const bytes = encodeRecord({ seq: 1, at: 'a', type: 'EventsIngested', prev: 'p', data: { events: [e, { id: 'q' }] } });
    const offsets = eventOffsets(bytes)!;
    assert.deepEqual(decodeRecord(bytes.subarray(offsets[0]!, offsets[1]!)), (decodeRecord(bytes).data as { events: unknown[] }).events[0]);
    assert.equal(eventOffsets(encodeRecord({ seq: 2, at: 'a', type: 'AlertRaised', prev: 'p', data: { events: [] } })), undefined);
  });
});
