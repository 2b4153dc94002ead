import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { RecordType, eventsOfRecord } from '../../src/events/record-types.js';
import { decodeForReadSide } from '../../src/log/evidence-fields.js';
import { asRecord, carriedBy } from '../../src/log/retention/plan.js';
import { encodeRecord } from '../../src/log/record.js';
import { type LogRecord } from '../../src/kernel/record.js';
import { createGraphProjection, touchEntity, type GraphState } from '../../src/projections/graph.js';
import { queryGraph } from '../../src/projections/graph-query.js';
import { makeEvent } from '../helpers/instance.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** A record of one connection event from `a` to `b` at second `s`. */
function connection(seq: number, a: number, b: number, s: number): LogRecord {
  const time = new Date(Date.UTC(2026, 10, 22, 9, 0, s)).toISOString();
  const event = makeEvent({ id: `e${seq}`, time, entityKeys: [`ip:10.0.0.${a}`, `ip:10.0.0.${b}`], sourceEndpoint: { ip: `10.0.0.${a}` }, destinationEndpoint: { ip: `10.0.0.${b}`, port: 22 } });
  return { seq, at: time, type: RecordType.EventsIngested, data: { events: [event] }, prev: '' };
}

describe('the graph is bounded by configuration, not by history', () => {
  it('keeps at most the configured entities and relationships, sparing what was seen again', () => {
    const p = createGraphProjection({ entities: 4, relationships: 3 });
    let g = p.initial();
    g = p.evolve(g, connection(1, 1, 2, 0));
    g = p.evolve(g, connection(2, 3, 4, 1));
    assert.equal(g.entities.size, 4);
    g = p.evolve(g, connection(3, 1, 2, 2)); // 1 and 2 seen again at the limit: spared once
    g = p.evolve(g, connection(4, 5, 6, 3));
    assert.ok(g.entities.size <= 4 && g.relationships.size <= 3);
    assert.deepEqual([...g.entities.keys()].sort(), ['ip:10.0.0.1', 'ip:10.0.0.2', 'ip:10.0.0.5', 'ip:10.0.0.6']);
    assert.equal(queryGraph(g, { entity: 'ip:10.0.0.3', limit: 10 }), undefined, 'a forgotten entity is not in the graph');
    assert.ok(queryGraph(g, { entity: 'ip:10.0.0.1', limit: 10 }), 'a recent one is');
    assert.ok(g.evicted >= 2);
  });

  it('evicts the same way live, restored from a checkpoint, and rebuilt (property)', () => {
    const step = fc.tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), fc.nat(3600));
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 80 }), fc.nat(80), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 8 }), (steps, cut, entities, relationships) => {
      const p = createGraphProjection({ entities, relationships });
      const records = steps.map(([a, b, s], i) => connection(i + 1, a, b, s));
      let live = p.initial();
      for (const r of records) {
        live = p.evolve(live, r);
        assert.ok(live.entities.size <= entities && live.relationships.size <= relationships);
      }
      let resumed: GraphState = p.initial();
      const at = Math.min(cut, records.length);
      for (const r of records.slice(0, at)) resumed = p.evolve(resumed, r);
      resumed = p.restore!(packr.unpack(packr.pack(p.snapshot!(resumed))));
      for (const r of records.slice(at)) resumed = p.evolve(resumed, r);
      assert.deepEqual(p.snapshot!(resumed), p.snapshot!(live));
      for (const key of live.entities.keys()) assert.deepEqual(queryGraph(resumed, { entity: key, limit: 100 }), queryGraph(live, { entity: key, limit: 100 }));
    }), { numRuns: 300 });
  });

  it('forgets entities in the order of a plain CLOCK model, across many evictions (property)', () => {
    /** The model: keys oldest first; past the limit the oldest goes, unless seen again at the limit (then it moves to the end once). */
    const model = (keys: readonly number[], max: number): string[] => {
      const order: string[] = [];
      const again = new Set<string>();
      for (const k of keys.map((n) => `host:h${n}`)) {
        if (!order.includes(k)) {
          order.push(k);
          while (order.length > max) {
            const oldest = order.shift()!;
            if (again.delete(oldest)) order.push(oldest);
          }
        } else if (order.length >= max) again.add(k);
      }
      return order;
    };
    const run = (keys: readonly number[], max: number) => {
      const g = createGraphProjection({ entities: max, relationships: 1 }).initial();
      keys.forEach((n, i) => touchEntity(g, `host:h${n}`, new Date(Date.UTC(2026, 10, 22, 0, 0, i)).toISOString()));
      return [...g.entities.keys()];
    };
    fc.assert(fc.property(fc.array(fc.nat(40), { maxLength: 600 }), fc.integer({ min: 1, max: 12 }), (keys, max) => {
      assert.deepEqual(run(keys, max), model(keys, max));
    }), { numRuns: 300 });
    // Long enough for the map's table to be rebuilt many times under the iterator.
    const long = Array.from({ length: 30_000 }, (_, i) => (i * 7919) % 3001);
    assert.deepEqual(run(long, 500), model(long, 500));
  });
});

describe('the graph keeps only its own strings', () => {
  // The log's decoder (msgpackr) returns strings as slices of longer ones; a graph keeping such a
  // slice would keep its whole event alive. The read side's decoder returns the strings the graph
  // keeps as strings of their own, whether it read the record field by field or decoded it whole,
  // and so for the records a retention cut carried forward. Here each event carries 1.2 KB of short
  // strings (what msgpackr reads in one run) that no graph model keeps.
  const event = (seq: number, i: number, userKey: string) => makeEvent({
    id: `e${seq}-${i}`, time: new Date(Date.UTC(2026, 10, 22, 9, 0, 0, seq * 1000 + i)).toISOString(),
    entityKeys: [`ip:10.${seq}.${i >> 8}.${i & 255}`, 'ip:192.0.2.10', ...(i === 0 ? [userKey] : [])], sourceEndpoint: { ip: `10.${seq}.${i >> 8}.${i & 255}` },
    destinationEndpoint: { ip: '192.0.2.10', port: 443 }, attributes: Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`a${k}`, `${seq}-${i}-${k}-`.padEnd(30, 'x')])),
  });
  const evidence = (userKey: string) => (seq: number): Uint8Array => encodeRecord({
    seq, at: '2026-11-22T09:00:00.000Z', type: RecordType.EventsIngested, prev: '',
    data: { events: Array.from({ length: 1000 }, (_, i) => event(seq, i, userKey)) },
  });
  /** A record carrying forward a thousand access records of one event each, as a retention cut writes it. */
  const carriedForward = (seq: number): Uint8Array => encodeRecord({
    seq, at: '2026-11-22T09:00:00.000Z', type: 'RecordsCarriedForward', prev: '',
    data: { records: Array.from({ length: 1000 }, (_, i) => ({ seq: seq * 1000 + i, hash: 'h', at: '2026-11-22T09:00:00.000Z', type: 'AccessRecorded', data: { event: event(seq, i, 'user:zoe') }, prev: '' })) },
  });
  const cases = [
    { name: 'read field by field', make: evidence('user:zoe'), decodedWhole: false as boolean | undefined },
    // A non-ASCII string among the fields the read side builds: the record is decoded whole.
    { name: 'decoded whole', make: evidence('user:zoë'), decodedWhole: true },
    // The read side folds each carried record as the original it was.
    { name: 'carried forward', make: carriedForward, decodedWhole: undefined },
  ];
  for (const { name, make, decodedWhole } of cases) {
    it(`does not keep the records it folded alive (${name})`, () => {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      const p = createGraphProjection();
      const bytes = Array.from({ length: 20 }, (_, i) => make(i + 1));
      // The case decodes as it says: only a record decoded whole holds its events' attributes.
      if (decodedWhole !== undefined) assert.equal('attributes' in eventsOfRecord(decodeForReadSide(bytes[0]!))[0]!, decodedWhole);
      gc();
      const before = process.memoryUsage().heapUsed;
      let g = p.initial();
      for (const b of bytes) {
        const r = decodeForReadSide(b);
        for (const folded of carriedBy(r)?.map(asRecord) ?? [r]) g = p.evolve(g, folded);
      }
      gc();
      const kept = process.memoryUsage().heapUsed - before;
      assert.equal(g.entities.size, 20_002);
      // The graph of these 20,000 events keeps 8 to 10 MiB; keeping its events' strings alive, 40 to 46.
      assert.ok(kept < 25 * 1024 * 1024, `the graph of 20,000 events keeps ${(kept / 1048576).toFixed(1)} MiB`);
    });
  }
});
